"""The registered datasets, built from the real files in ../shared/data: counts, label
sets, exact examples, quirks, folds, held-out dev splits and ``python -m seedsweep.data``."""
import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from seedsweep.config import base
from seedsweep import data as data_lib
from seedsweep.errors import UserError
from seedsweep.inputs import cache
from tests.conftest import in_tier
from tests.conftest import REPO


def load(name, **fields):
  config = base.get_base_config().data
  config.name = name
  for k, v in fields.items():
    config[k] = v
  return data_lib.load_dataset(config)


def texts(dataset, split, view=0):
  """The examples of ``split`` decoded back from the vocabulary ids (lower-cased)."""
  v = dataset.views[view]
  words = v.vocab.words
  return [' '.join(words[t] for t in v.tokens[v.starts[r]:v.starts[r] + v.lengths[r]])
          for r in v.rows[split]]


def label_counts(dataset, split, view=0):
  rows = dataset.views[view].rows[split]
  return dict(zip(dataset.label_names,
                  np.bincount(dataset.labels[rows], minlength=dataset.num_classes)))


# The datasets the README tier's runs read anyway; --all prepares every one (the
# phrases and IMDB take the longest).
SPLITS_IN_TIER = [
    ('sst/binary', {'train': 6920, 'dev': 872, 'test': 1821}, 2),
    ('trec/coarse', {'train': 5452, 'test': 500}, 6),
    ('atis', {'train': 4478, 'dev': 500, 'test': 893}, 26)]


@pytest.mark.slow
@pytest.mark.parametrize('name, sizes, classes', in_tier([
    ('sst/fine', {'train': 8544, 'dev': 1101, 'test': 2210}, 5),
    ('sst/binary', {'train': 6920, 'dev': 872, 'test': 1821}, 2),
    ('sst/fine_phrases', {'train': 159274, 'dev': 1101, 'test': 2210}, 5),
    ('sst/binary_phrases', {'train': 77616, 'dev': 872, 'test': 1821}, 2),
    ('trec/coarse', {'train': 5452, 'test': 500}, 6),
    ('trec/fine', {'train': 5452, 'test': 500}, 50),
    ('imdb', {'train': 25000, 'test': 25000}, 2),
    ('atis', {'train': 4478, 'dev': 500, 'test': 893}, 26),
    ('atis/jointslu', {'train': 4978, 'test': 893}, 26),
], *SPLITS_IN_TIER))
def test_split_sizes_and_number_of_classes(name, sizes, classes):
  dataset = load(name)
  assert dataset.sizes() == sizes
  assert dataset.num_classes == classes


@pytest.mark.slow
def test_sst_labels_examples_and_quirks():
  fine = load('sst/fine')
  assert label_counts(fine, 'train') == {
      'very negative': 1092, 'negative': 2218, 'neutral': 1624, 'positive': 2322,
      'very positive': 1288}
  # 'accorsi' never occurs in training: the vocabulary is training words only.
  assert texts(fine, 'dev')[0] == ("it 's a lovely film with lovely performances by "
                                   'buy and <unk> .')
  # PTB escapes are undone: no -lrb- token, and '(' is a word.
  words = set(fine.vocab.words)
  assert '-lrb-' not in words and '(' in words and '\\/' not in words
  # The three no-break-space tokens stay single tokens (e.g. "8 1/2").
  assert '8\u00a01/2' in words
  binary = load('sst/binary')
  assert label_counts(binary, 'test') == {'negative': 912, 'positive': 909}
  phrases = load('sst/binary_phrases')
  # Dev and test stay sentence-level with phrase training.
  for split in ('dev', 'test'):
    a, b = phrases.views[0].rows[split], binary.views[0].rows[split]
    np.testing.assert_array_equal(phrases.labels[a], binary.labels[b])
    np.testing.assert_array_equal(phrases.raw_lengths[a], binary.raw_lengths[b])


def test_trec_labels_and_the_byte_that_is_not_utf8():
  coarse = load('trec/coarse')
  assert label_counts(coarse, 'train') == {'ABBR': 86, 'DESC': 1162, 'ENTY': 1250,
                                           'HUM': 1223, 'LOC': 835, 'NUM': 896}
  assert label_counts(coarse, 'test') == {'ABBR': 9, 'DESC': 138, 'ENTY': 94,
                                          'HUM': 65, 'LOC': 81, 'NUM': 113}
  assert texts(coarse, 'test')[0] == 'how far is it from denver to <unk> ?'
  assert 'sister\u00f0city' in coarse.vocab.words  # latin-1 0xF0, train line 66
  fine = load('trec/fine')
  assert 'LOC:city' in fine.label_names and 'HUM:desc' in fine.label_names
  assert sum(c > 0 for c in label_counts(fine, 'test').values()) == 42


@pytest.mark.slow
@pytest.mark.parametrize('name, n, first', in_tier([
    ('mr', 10662, 'simplistic , silly and tedious .'),
    ('subj', 10000, None),
], ('mr', 10662, 'simplistic , silly and tedious .')))
def test_cross_validated_datasets_have_ten_deterministic_stratified_folds(name, n,
                                                                          first):
  dataset = load(name)
  assert len(dataset.labels) == n and len(dataset.views) == 10
  assert dataset.protocol['folds']['num_folds'] == 10
  tests = [v.rows['test'] for v in dataset.views]
  assert sorted(np.concatenate(tests).tolist()) == list(range(n))  # a partition
  for view in dataset.views:
    assert len(view.rows['train']) + len(view.rows['test']) == n
    assert not set(view.rows['train']) & set(view.rows['test'])
    counts = np.bincount(dataset.labels[view.rows['test']])
    assert abs(int(counts[0]) - int(counts[1])) <= 1  # stratified
  # Each fold's vocabulary comes from its own training rows only.
  v = dataset.views[3]
  train_words = {w for t in texts(dataset, 'train', 3) for w in t.split()}
  assert set(v.vocab.words[2:]) == train_words
  again = load(name)
  assert all(np.array_equal(a.rows['test'], b.rows['test'])
             for a, b in zip(dataset.views, again.views))
  if first:
    assert first in texts(dataset, 'train', 0) + texts(dataset, 'test', 0)


def test_mr_is_cp1252():
  words = set(load('mr').vocab.words)
  assert any('\u00e9' in w for w in words)      # 0xE9 é
  assert any('\u2014' in w for w in words) or any('\u2013' in w for w in words)


def test_atis_intents_tags_and_multi_intent_classes():
  atis = load('atis')
  assert 'atis_flight+atis_airfare' in atis.label_names
  assert not any('#' in n for n in atis.label_names)
  assert len(atis.tag_names) == 127 and 'O' in atis.tag_names
  assert 'B-fromloc.city_name' in atis.tag_names
  view = atis.views[0]
  assert len(atis.tags) == len(view.tokens)  # one tag per token
  first = view.rows['train'][0]
  start, n = view.starts[first], view.lengths[first]
  assert [atis.tag_names[t] for t in atis.tags[start:start + n]][-3:] == [
      'B-toloc.city_name', 'B-round_trip', 'I-round_trip']
  jointslu = load('atis/jointslu')
  assert jointslu.sizes() == {'train': 4978, 'test': 893}


@pytest.mark.slow
@pytest.mark.full  # IMDB read whole (tests/test_imdb.py reads a small archive)
def test_imdb_labels():
  imdb = load('imdb')
  assert label_counts(imdb, 'train') == {'negative': 12500, 'positive': 12500}
  assert label_counts(imdb, 'test') == {'negative': 12500, 'positive': 12500}
  assert '<br' not in imdb.vocab.words


@pytest.mark.slow
def test_held_out_dev_is_deterministic_disjoint_and_recorded():
  trec = load('trec/coarse', dev_holdout=1000.0)
  assert trec.sizes() == {'train': 4452, 'dev': 1000, 'test': 500}
  view = trec.views[0]
  assert not set(view.rows['train']) & set(view.rows['dev'])
  assert trec.protocol['dev_holdout']['dev_sizes'] == [1000]
  again = load('trec/coarse', dev_holdout=1000.0)
  np.testing.assert_array_equal(view.rows['dev'], again.views[0].rows['dev'])
  # The vocabulary comes from the remaining training rows only.
  assert set(view.vocab.words[2:]) == {w for t in texts(trec, 'train') for w in t.split()}
  assert load('trec/coarse', dev_holdout=0.1).sizes()['dev'] == 545
  mr = load('mr', dev_holdout=0.1)
  assert all(len(v.rows['dev']) in (959, 960) for v in mr.views)
  with pytest.raises(UserError, match='has its own dev split'):
    load('sst/binary', dev_holdout=0.1)
  with pytest.raises(UserError, match='dev_holdout'):
    load('trec/coarse', dev_holdout=6000.0)


def test_oov_delete_drops_unknown_tokens():
  keep = load('trec/coarse', min_count=5)
  drop = load('trec/coarse', min_count=5, oov='delete')
  rows = keep.views[0].rows['test']
  unknown = [(keep.views[0].tokens[keep.views[0].starts[r]:][:keep.views[0].lengths[r]]
              == 1).sum() for r in rows]
  np.testing.assert_array_equal(drop.views[0].lengths[rows],
                                keep.views[0].lengths[rows] - np.array(unknown))


def test_unknown_dataset_and_folds_on_a_dataset_without_cv_are_named():
  with pytest.raises(UserError, match="config.data.name='sst'"):
    load('sst')
  with pytest.raises(UserError, match='not cross-validated'):
    load('trec/coarse', folds=(1,))


@pytest.mark.slow
def test_python_m_data_prints_statistics_as_json():
  out = subprocess.run([sys.executable, '-m', 'seedsweep.data', 'trec/coarse', '--json'],
                       cwd=REPO, capture_output=True, text=True, check=True)
  stats = json.loads(out.stdout)
  assert stats['splits'] == {'train': 5452, 'test': 500}
  assert stats['classes']['test']['NUM'] == 113
  assert stats['raw_files']['trec/TREC_10.label'].startswith('033f22c0')
  text = subprocess.run([sys.executable, '-m', 'seedsweep.data', 'mr'], cwd=REPO,
                        capture_output=True, text=True, check=True).stdout
  assert '10-fold cross-validation' in text


@pytest.mark.slow
@pytest.mark.full  # the build lock's own test: processes on an empty cache (--all)
def test_processes_started_together_on_an_empty_cache_build_a_dataset_once(tmp_path):
  """Sweep shards (or test workers) launched at once share one TFDS folder, and
  write nothing outside the cache (TFDS left an empty temporary folder per builder)."""
  (tmp_path / 'tmp').mkdir()
  env = dict(os.environ, SEEDSWEEP_CACHE=str(tmp_path), TMPDIR=str(tmp_path / 'tmp'))
  env.pop('SEEDSWEEP_TFDS_DIR', None)
  procs = [subprocess.Popen([sys.executable, '-m', 'seedsweep.data', 'trec/coarse', '--json'],
                            cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True) for _ in range(3)]
  outs = [p.communicate(timeout=300) for p in procs]
  for p, (_, err) in zip(procs, outs):
    assert p.returncode == 0, err
  assert all(json.loads(out)['splits'] == {'train': 5452, 'test': 500}
             for out, _ in outs)
  builds = [d for d in glob.glob(str(tmp_path / 'tfds' / '*' / '*' / '*' / '*'))
            if os.path.isdir(d)]
  assert len(builds) == 1, builds  # one version folder, no leftover incomplete ones
  assert os.listdir(tmp_path / 'tmp') == []
  assert cache.damaged(builds[0]) is None  # one good entry, its integrity recorded

"""Your own data (config.data.name='files'): TSV/JSONL parsing, errors with file and
line, and any model training on it through config alone."""
import csv
import json
import os

import numpy as np
import pytest

from seedsweep.config import base
from seedsweep import data as data_lib
from seedsweep.data import user_files
from seedsweep.errors import UserError
from tests.conftest import SHARED_DATA, run_launch


def test_tsv_and_jsonl_with_tags(tmp_path):
  tsv = tmp_path / 'a.tsv'
  tsv.write_text('good\tvery nice film\nbad\tawful\n\n', encoding='utf-8')
  assert user_files.read_file(str(tsv)) == [('very nice film', 'good', None),
                                            ('awful', 'bad', None)]
  jsonl = tmp_path / 'a.jsonl'
  jsonl.write_text(json.dumps({'text': 'fly to boston', 'label': 'flight',
                               'tags': ['O', 'O', 'B-city']}) + '\n' +
                   json.dumps({'text': 'fares', 'label': 'fare', 'tags': 'O'}) + '\n')
  assert user_files.read_file(str(jsonl))[0] == ('fly to boston', 'flight', 'O O B-city')


@pytest.mark.parametrize('name, content, message', [
    ('x.tsv', 'good\tnice\nonly-one-field\n', r'x.tsv:2: 1 TAB-separated fields'),
    ('x.tsv', 'good\tnice film\tO\n', r'x.tsv:1: 1 tags for 2 tokens'),
    ('x.tsv', 'sentence\tgrade\nnice film\t1\n', r"x.tsv:1: the header .* no label "
     r"column 'label'"),
    ('x.tsv', 'sentence\tlabel\nnice film\n', r'x.tsv:2: 1 fields; expected the 2'),
    ('x.csv', 'text,label\n"nice, film,1\n', r'x.csv:2: unexpected end of data; expected CSV rows'),
    ('x.tsv', b'good\tnice \xff film\n', r'x.tsv: not UTF-8 text'),
    ('x.jsonl', '{"text": "a", "label": "b"}\n{"text": "a"\n', r'x.jsonl:2: not valid JSON'),
    ('x.jsonl', '{"text": "a"}\n', r'x.jsonl:1: expected an object with "text" and'),
    ('x.xlsx', 'a,b\n', r"unknown extension '.xlsx'"),
])
def test_malformed_files_name_file_and_line(tmp_path, name, content, message):
  path = tmp_path / name
  if isinstance(content, bytes):
    path.write_bytes(content)
  else:
    path.write_text(content, encoding='utf-8')
  with pytest.raises(UserError, match=message):
    user_files.read_file(str(path))


def test_header_rows_name_the_columns_and_csv_quoting_is_read(tmp_path):
  glue = tmp_path / 'glue.tsv'  # GLUE's SST-2 layout: header, sentence first
  glue.write_text('sentence\tlabel\nit \'s a " charming film \t1\ndull\t0\n')
  assert user_files.read_file(str(glue)) == [('it \'s a " charming film', '1', None),
                                             ('dull', '0', None)]
  quoted = tmp_path / 'q.csv'
  quoted.write_text('id,Label,Text,tags\n7,pos,"nice, ""warm"" film",O O O\n')
  assert user_files.read_file(str(quoted)) == [('nice, "warm" film', 'pos', 'O O O')]
  named = tmp_path / 'n.tsv'
  named.write_text('review\tstars\nnice film\t5\n')
  columns = user_files.Columns(text='review', label='stars')
  assert user_files.read_file(str(named), columns) == [('nice film', '5', None)]
  jsonl = tmp_path / 'n.jsonl'
  jsonl.write_text('{"review": "nice film", "stars": 5}\n')
  assert user_files.read_file(str(jsonl), columns) == [('nice film', '5', None)]
  headerless = tmp_path / 'h.tsv'  # naming columns needs a header naming them
  headerless.write_text('5\tnice film\n')
  with pytest.raises(UserError, match=r"h.tsv:1: the header \['5', 'nice film'\] has "
                     r"no text column 'review' and no label column 'stars'"):
    user_files.read_file(str(headerless), columns)


def _rows(pairs):
  return [user_files.tfds_base.Example(t, l, None) for t, l in pairs]


SENTENCES = [f'sentence number {w} is here' for w in
             ('one two three four five six seven eight nine ten eleven twelve thirteen '
              'fourteen fifteen sixteen seventeen eighteen nineteen twenty').split()]


@pytest.mark.parametrize('splits, message', [
    # text<TAB>label read as label<TAB>text: every "label" distinct.
    ({'train': [(str(i % 2), s) for i, s in enumerate(SENTENCES)]},
     r'train.tsv: the label column has 20 distinct values in 20 rows'),
    ({'train': [(str(i % 2), s) for i, s in enumerate(SENTENCES[:6])]},
     r'train.tsv: the text column is numeric in 6 of 6 rows'),
    ({'train': [(s, 'pos') for s in SENTENCES[:6]]},
     r"train.tsv: every train example has the label 'pos'"),
    ({'train': [(s, 'ab'[i % 2]) for i, s in enumerate(SENTENCES[:6])],
      'dev': [('fine', 'a'), ('good', 'c'), ('ok', 'c')]},
     r"dev.tsv: 2 examples have labels that .*train.tsv lacks \('c'\)"),
])
def test_files_that_look_misread_are_refused(splits, message):
  paths = {split: f'/data/{split}.tsv' for split in splits}
  with pytest.raises(UserError, match=message):
    user_files.check_splits({k: _rows(v) for k, v in splits.items()}, paths)
  # A good train split passes.
  user_files.check_splits({'train': _rows([(s, 'ab'[i % 2])
                                           for i, s in enumerate(SENTENCES)])},
                          {'train': '/data/train.tsv'})


def test_files_dataset_builds_from_config_and_encodes_tags(tmp_path, monkeypatch):
  monkeypatch.setenv('SEEDSWEEP_TFDS_DIR', str(tmp_path / 'tfds'))
  jsonl = tmp_path / 'train.jsonl'
  jsonl.write_text('\n'.join(json.dumps({'text': t, 'label': l, 'tags': g}) for t, l, g in [
      ('fly to boston', 'flight', 'O O B-city'), ('fares to denver', 'fare',
                                                  'O O B-city'),
      ('cheapest fare', 'fare', 'O O')]) + '\n')
  config = base.get_base_config().data
  config.name = 'files'
  config.files.train = str(jsonl)
  dataset = data_lib.load_dataset(config)
  assert dataset.label_names == ('fare', 'flight') and dataset.sizes() == {'train': 3}
  assert dataset.tag_names == ('B-city', 'O')
  np.testing.assert_array_equal(dataset.tags[:3], [1, 1, 0])
  config.files.train = ''
  with pytest.raises(UserError, match='config.data.files.train'):
    data_lib.load_dataset(config)


def test_a_train_file_alone_is_refused_before_training(tmp_path, monkeypatch):
  """Nothing to evaluate on: one line saying what to add (it used to end in an
  IndexError inside the eval plan)."""
  from seedsweep.run import experiment  # pylint: disable=g-import-not-at-top
  from tests.conftest import small_config  # pylint: disable=g-import-not-at-top
  monkeypatch.setenv('SEEDSWEEP_TFDS_DIR', str(tmp_path / 'tfds'))
  with open(tmp_path / 'train.tsv', 'w', encoding='utf-8') as f:
    f.writelines(f'{label}\t{text}\n' for text, label in _sst2('train', 50))
  config = small_config()
  config.data.name = 'files'
  config.data.files.train = str(tmp_path / 'train.tsv')
  config.train.selection = 'last'
  with pytest.raises(UserError, match=r"dataset 'files' has a train split only: .*"
                     r'config.data.files.test'):
    experiment.build(config)


def _sst2(split, n):
  """The first ``n`` ``(sentence, label)`` pairs of the real SST-2 ``split``."""
  with open(os.path.join(SHARED_DATA, 'sst', 'stsa', f'stsa.binary.{split}'),
            encoding='utf-8') as f:
    return [(line[2:].strip(), line[0]) for line in f][:n]


@pytest.mark.slow
@pytest.mark.full  # a user's data trained: test_user_code.py; these files read: above
def test_glue_csv_and_headerless_sst2_files_train_end_to_end(tmp_path):
  """Real SST-2 sentences in the layouts people have them: GLUE's TSV (header,
  ``sentence<TAB>label``), a quoted CSV with a header, and headerless label<TAB>text."""
  with open(tmp_path / 'train.tsv', 'w', encoding='utf-8') as f:
    f.write('sentence\tlabel\n')
    f.writelines(f'{text} \t{label}\n' for text, label in _sst2('train', 600))
  with open(tmp_path / 'dev.csv', 'w', encoding='utf-8', newline='') as f:
    writer = csv.writer(f)
    writer.writerow(['label', 'text'])
    writer.writerows((label, text) for text, label in _sst2('dev', 150))
  with open(tmp_path / 'test.tsv', 'w', encoding='utf-8') as f:
    f.writelines(f'{label}\t{text}\n' for text, label in _sst2('test', 150))
  out = run_launch('--config=experiments/demo.py:quick', f'--workdir={tmp_path / "run"}',
                   '--config.data.name=files', '--config.seeds=(1,2)',
                   f'--config.data.files.train={tmp_path / "train.tsv"}',
                   f'--config.data.files.dev={tmp_path / "dev.csv"}',
                   f'--config.data.files.test={tmp_path / "test.tsv"}',
                   '--config.train.num_epochs=1', '--config.train.progress=False',
                   env={'SEEDSWEEP_TFDS_DIR': str(tmp_path / 'tfds')})
  assert out.returncode == 0, out.stderr[-3000:]
  # Nothing is downloaded: no TFDS "Downloading and preparing" lines or warnings.
  assert 'preparing dataset seedsweep_files once' in out.stdout  # through print_fn
  assert 'Downloading' not in out.stderr + out.stdout, out.stderr
  assert 'dataset_info' not in out.stderr, out.stderr
  results = json.loads((tmp_path / 'run' / 'results.json').read_text())
  assert len(results['metrics']['test_accuracy']) == 2
  assert results['provenance']['data']['sizes'] == {'train': 600, 'dev': 150,
                                                    'test': 150}
  assert results['provenance']['data']['classes'] == ['0', '1']


def test_swapped_columns_stop_the_run_before_training(tmp_path, monkeypatch):
  """The common ``text<TAB>label`` order without a header used to train on the
  labels as text (0 % accuracy, no warning)."""
  monkeypatch.setenv('SEEDSWEEP_TFDS_DIR', str(tmp_path / 'tfds'))
  with open(tmp_path / 'train.tsv', 'w', encoding='utf-8') as f:
    f.writelines(f'{text}\t{label}\n' for text, label in _sst2('train', 300))
  config = base.get_base_config().data
  config.name = 'files'
  config.files.train = str(tmp_path / 'train.tsv')
  with pytest.raises(UserError, match=r'train.tsv: the label column has 300 distinct '
                     r'values in 300 rows'):
    data_lib.load_dataset(config)

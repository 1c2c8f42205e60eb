"""A workdir is self-contained (issue 90, item 4): a run keeps the dataset it was
built from (run/saved_data.py) and the folder its relative paths mean
(started_in.json), so predict, eval and verify answer the same after its training
files were edited or moved, and from any folder."""
import json
import os
import random
import shutil

import numpy as np
import pytest

import seedsweep
from seedsweep.errors import UserError
from seedsweep.run import loop
from seedsweep.run import pieces as pieces_lib
from seedsweep.run import prepare
from seedsweep.run import saved_data
from seedsweep.run import verify
from seedsweep.run import workdir as workdir_lib
from tests.conftest import small_config
from tests.test_embeddings import write_glove

GOOD, BAD = ('good', 'great', 'fine', 'nice'), ('bad', 'awful', 'poor', 'dull')
TEXTS = ['a good great film', 'the dull awful plot', 'nice fine film', 'poor bad the']
quiet = lambda *_: None


def write_files(folder, rows=(120, 24, 24)):
  """train/dev/test CSVs of two classes whose words tell them apart."""
  rng = random.Random(0)
  folder.mkdir(parents=True, exist_ok=True)
  for split, n in zip(('train', 'dev', 'test'), rows):
    lines = ['text,label']
    for _ in range(n):
      label = rng.choice(('pos', 'neg'))
      words = (GOOD if label == 'pos' else BAD) + ('the', 'a', 'film')
      lines.append(' '.join(rng.choice(words) for _ in range(6)) + ',' + label)
    (folder / f'{split}.csv').write_text('\n'.join(lines) + '\n')


def files_config(**data):
  """The demo's quick model on the CSVs of data/ (relative paths, as a user types)."""
  config = small_config(seeds=(1, 2), epochs=2)
  config.data.name = 'files'
  config.data.num_buckets = 1
  for split in ('train', 'dev', 'test'):
    config.data.files[split] = f'data/{split}.csv'
  for key, value in data.items():
    config.data[key] = value
  return config


@pytest.fixture(scope='module')
def project(tmp_path_factory):
  """A project folder: data/*.csv and a run trained from it with relative paths."""
  folder = tmp_path_factory.mktemp('project')
  write_files(folder / 'data')
  here = os.getcwd()
  os.chdir(folder)
  try:
    loop.train(files_config(), 'run', print_fn=quiet)
  finally:
    os.chdir(here)
  return folder


def _copy(project, tmp_path):
  copy = tmp_path / 'project'
  shutil.copytree(project, copy)
  return copy


def test_the_saved_dataset_reads_back_as_it_was_built(project):
  built = pieces_lib.build(prepare.check_config(files_config(), str(project))).data
  saved = saved_data.load(str(project / 'run'), files_config().data, tables='shape')
  assert saved.summary() == built.summary()
  assert saved.label_names == built.label_names and saved.checksums == built.checksums
  for a, b in zip(saved.views, built.views):
    assert a.vocab == b.vocab and a.rows.keys() == b.rows.keys()
    for got, want in [(a.tokens, b.tokens), (a.starts, b.starts),
                      (a.lengths, b.lengths)] + [(a.rows[s], b.rows[s]) for s in a.rows]:
      assert got.dtype == want.dtype and np.array_equal(got, want)
  assert json.loads((project / 'run' / workdir_lib.STARTED_IN).read_text()) == {
      'from_workdir': '..', 'folder': str(project)}


@pytest.mark.slow
def test_edited_and_moved_training_files_change_no_answer(project, tmp_path,
                                                          monkeypatch):
  copy = _copy(project, tmp_path)
  workdir = str(copy / 'run')
  monkeypatch.chdir(tmp_path)  # another folder than the run's: paths resolved once
  before = seedsweep.predict(workdir, TEXTS, print_fn=quiet)
  results = json.loads((copy / 'run' / 'results.json').read_text())
  train = copy / 'data' / 'train.csv'
  lines = train.read_text().splitlines()
  # Two words swapped throughout (their ids would swap in a vocabulary built now)
  # and a row added: the run's own vocabulary and classes answer all the same.
  swapped = [l.replace('good', '@').replace('bad', 'good').replace('@', 'bad')
             for l in lines] + ['a new row of words,neutral']
  train.write_text('\n'.join(swapped) + '\n')
  assert seedsweep.predict(workdir, TEXTS, print_fn=quiet) == before
  shutil.move(str(copy / 'data'), str(copy / 'moved'))
  assert seedsweep.predict(workdir, TEXTS, print_fn=quiet) == before
  evaluated = seedsweep.evaluate(workdir, print_fn=quiet)
  assert evaluated['summary'] == results['summary']
  lines = []
  out = verify.verify(None, workdir, print_fn=lines.append)
  assert out['reproduced'], lines
  assert sorted(c.split(':')[0] for c in out['inputs_changed']) == [
      'data dev', 'data test', 'data train'], out
  assert any('its data files cannot be read now' in l for l in lines), lines


@pytest.mark.slow
def test_a_project_moved_whole_uses_its_own_files(project, tmp_path, monkeypatch):
  """started_in.json is kept relative to the workdir: a copy of the project with its
  run inside reads the copy's files (an edit of the copy's is seen), not the
  original's."""
  copy = _copy(project, tmp_path)
  monkeypatch.chdir(copy)
  run = prepare.prepare_existing(None, 'run')
  assert run.config.data.files.train == str(copy / 'data' / 'train.csv')
  assert run.checked.as_dict['data']['files']['train'] == 'data/train.csv'
  # The command that trained it, from the copy's folder: the same run, finished.
  assert loop.train(files_config(), 'run', print_fn=quiet)['finished']


def test_the_same_relative_flags_from_another_folder_name_other_files(project,
                                                                      tmp_path,
                                                                      monkeypatch):
  elsewhere = tmp_path / 'elsewhere'
  write_files(elsewhere / 'data', rows=(60, 12, 12))
  monkeypatch.chdir(elsewhere)
  with pytest.raises(UserError, match=r'(?s)holds a run of another config .*'
                                      r'data\.files\.train'):
    loop.train(files_config(), str(project / 'run'), print_fn=quiet)


def test_a_damaged_saved_dataset_is_one_line_naming_it(project, tmp_path):
  copy = _copy(project, tmp_path)
  (copy / 'run' / saved_data.FILE).write_bytes(b'not a zip')
  with pytest.raises(UserError, match=r'dataset\.npz is damaged .* Delete it to build '
                                      r'the run from its data files again') as e:
    seedsweep.predict(str(copy / 'run'), TEXTS, print_fn=quiet)
  assert '\n' not in str(e.value)


def test_the_vectors_tables_made_again_equal_those_built(tmp_path, monkeypatch):
  """A run from vectors keeps no table (hundreds of MB for some): a resume or verify
  makes it again from the vectors file, bit for bit."""
  monkeypatch.setenv('SEEDSWEEP_CACHE', str(tmp_path / 'cache'))
  write_glove(tmp_path / 'v.txt', 32, words=('the', 'film', 'movie', 'not', '<unk>'))
  config = small_config()
  config.data.vectors.path = str(tmp_path / 'v.txt')
  for oov_init in ('random', 'zero'):
    config.data.vectors.oov_init = oov_init
    built = pieces_lib.build(prepare.check_config(config)).data
    saved_data.save(str(tmp_path), built)
    again = saved_data.load(str(tmp_path), config.data, tables='file')
    shape = saved_data.load(str(tmp_path), config.data, tables='shape')
    for got, want in zip(again.embedding_tables, built.embedding_tables):
      assert got.dtype == want.dtype and np.array_equal(got, want), oov_init
    assert shape.embedding_tables[0].shape == built.embedding_tables[0].shape
    assert again.vectors['sha256'] == built.vectors['sha256']

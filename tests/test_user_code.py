"""Your own model and dataset without editing the package (config.model.name and
config.data.name as ``file.py:Name`` references, data/user_code.py), and Parquet
files as user data: trained, described, verified, reported and asked from a folder
outside the checkout."""
import json
import os
import subprocess
import sys

import pytest

import seedsweep
from seedsweep import data as data_lib
from seedsweep.config import base
from seedsweep.data import user_files
from seedsweep.errors import UserError

MODEL = '''
import flax.linen as nn
import jax.numpy as jnp

from seedsweep.models import baselines
from seedsweep.models.output import ModelOutput


class MeanOfWords(nn.Module):
  """The mean of a sentence's word vectors, then a dense layer."""
  vocab_size: int
  num_classes: int
  embed_dim: int = 16

  @nn.compact
  def __call__(self, batch, *, train: bool):
    vectors, mask = baselines.embed_batch(batch, self.vocab_size, self.embed_dim)
    total = (vectors * mask[..., None]).sum(axis=1)
    mean = total / jnp.maximum(mask.sum(axis=1, keepdims=True), 1)
    return ModelOutput(logits=nn.Dense(self.num_classes)(mean))


class NotAModel:
  pass
'''

READER = '''
import random

GOOD, BAD = ('good', 'great', 'fine', 'fun', 'warm'), ('bad', 'dull', 'poor', 'cold')
FILLER = ('the', 'film', 'was', 'a', 'plot', 'very', 'and', 'story')


def rows(n, seed):
  rng = random.Random(seed)
  out = []
  for _ in range(n):
    label = rng.choice(('pos', 'neg'))
    words = [rng.choice(FILLER) for _ in range(rng.randint(3, 9))]
    words.insert(rng.randrange(len(words)), rng.choice(GOOD if label == 'pos' else BAD))
    out.append((' '.join(words), label))
  return out


def read(data_config):
  return {'train': rows(300, 1), 'dev': rows(60, 2), 'test': rows(60, 3)}
'''

EXPERIMENT = '''
from seedsweep.config import base


def get_config(arg=''):
  config = base.get_base_config()
  config.data.name = 'my_data.py:read'
  config.data.num_buckets = 1
  config.model.name = 'my_model.py:MeanOfWords'
  config.model.embed_dim = 8
  config.optimizer.name = 'adam'
  config.optimizer.learning_rate = 0.01
  config.train.batch_size = 32
  config.train.num_epochs = 5
  config.train.progress = False
  return config
'''


@pytest.fixture
def user_folder(tmp_path):
  folder = tmp_path / 'my_project'
  folder.mkdir()
  (folder / 'my_model.py').write_text(MODEL)
  (folder / 'my_data.py').write_text(READER)
  (folder / 'my_experiment.py').write_text(EXPERIMENT)
  return folder


def _command(*args, cwd, env=None):
  return subprocess.run([sys.executable, '-m', 'seedsweep', *args], cwd=cwd,
                        capture_output=True, text=True, timeout=600,
                        env={**os.environ, **(env or {})})


@pytest.mark.slow
def test_a_model_and_reader_of_ones_own_folder_train_ten_seeds_and_verify(
    user_folder, tmp_path, monkeypatch):
  workdir = tmp_path / 'run'
  tfds = {'SEEDSWEEP_TFDS_DIR': str(tmp_path / 'tfds')}
  proc = _command('--config=my_experiment.py', f'--workdir={workdir}', cwd=user_folder,
                  env=tfds)
  assert proc.returncode == 0, proc.stderr[-3000:]
  results = json.loads((workdir / 'results.json').read_text())
  assert results['seeds'] == list(range(1, 11))
  accuracies = results['metrics']['test_accuracy']
  assert sum(accuracies) / len(accuracies) > 75  # the sentiment words are learnt
  assert set(results['provenance']['user_code']) == {'my_model.py:MeanOfWords',
                                                    'my_data.py:read'}
  proc = _command('--mode=verify', f'--workdir={workdir}', cwd=user_folder, env=tfds)
  assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
  described = _command('--config=my_experiment.py', '--mode=describe', '--json',
                       cwd=user_folder, env=tfds)
  assert described.returncode == 0, described.stderr[-2000:]
  assert 'embedding' in described.stdout
  monkeypatch.chdir(user_folder)  # the references are relative to where one runs
  answer = seedsweep.predict(str(workdir), ['the film was great', 'a dull plot'])
  assert answer['labels'] == ['pos', 'neg']
  report = seedsweep.report(str(workdir), plots=False, print_fn=lambda *a: None)
  assert report['rows'][0]['model'] == 'my_model.py:MeanOfWords'


def test_a_reader_gives_a_dataset_cached_by_its_content(user_folder, tmp_path,
                                                        monkeypatch):
  monkeypatch.setenv('SEEDSWEEP_TFDS_DIR', str(tmp_path / 'tfds'))
  config = base.get_base_config().data
  config.name = f'{user_folder}/my_data.py:read'
  dataset = data_lib.load_dataset(config)
  assert dataset.label_names == ('neg', 'pos')
  assert dataset.sizes() == {'train': 300, 'dev': 60, 'test': 60}
  prepared = sorted(p.name for p in (tmp_path / 'tfds').iterdir())
  assert len(prepared) == 1 and prepared[0].startswith('reader_')


@pytest.mark.parametrize('name, message', [
    ('{d}/nowhere.py:read', 'no file'),
    ('{d}/my_data.py:reed', "defines no 'reed'"),
    ('{d}/my_model.py:NotAModel', 'expected a subclass of seedsweep.inputs.tfds_base.'
     'RawTextBuilder or a reader function'),
    ('no_such_module_here:read', 'cannot import no_such_module_here'),
])
def test_a_bad_dataset_reference_is_one_line(user_folder, name, message):
  config = base.get_base_config().data
  config.name = name.format(d=user_folder)
  with pytest.raises(UserError, match=message):
    data_lib.load_dataset(config)


@pytest.mark.parametrize('name, message', [
    ('{d}/my_model.py:NotAModel', 'expected a flax.linen.Module or flax.nnx.Module '
     'class'),
    ('{d}/my_model.py:nn', 'is module; expected a flax.linen.Module or flax.nnx.Module '
     'class'),
])
def test_a_bad_model_reference_is_one_line(user_folder, name, message):
  from seedsweep import models  # pylint: disable=g-import-not-at-top
  with pytest.raises(UserError, match=message):
    models.build_model({'name': name.format(d=user_folder)}, vocab_size=5,
                       num_classes=2)


def test_a_reader_returning_bad_rows_names_split_and_row(user_folder):
  (user_folder / 'bad.py').write_text(
      'def read(c):\n  return {"train": [("a b", "x"), ("c",)]}\n')
  config = base.get_base_config().data
  config.name = f'{user_folder}/bad.py:read'
  with pytest.raises(UserError, match=r"split train row 1: \('c',\); expected"):
    data_lib.load_dataset(config)


def test_parquet_files_read_like_jsonl_with_the_same_column_choices(tmp_path):
  pa = pytest.importorskip('pyarrow')
  pq = pytest.importorskip('pyarrow.parquet')
  path = str(tmp_path / 'train.parquet')
  pq.write_table(pa.table({'sentence': ['a fine film', 'dull'], 'label': [1, 0],
                           'idx': [0, 1]}), path)
  assert user_files.read_file(path) == [('a fine film', '1', None), ('dull', '0', None)]
  pq.write_table(pa.table({'review': ['a fine film'], 'stars': ['5']}), path)
  with pytest.raises(UserError, match=r"columns \['review', 'stars'\]; expected a "
                     'text column'):
    user_files.read_file(path)
  assert user_files.read_file(path, user_files.Columns('review', 'stars')) == [
      ('a fine film', '5', None)]
  (tmp_path / 'broken.parquet').write_bytes(b'PAR1 not really')
  with pytest.raises(UserError, match='broken.parquet: not a readable Parquet file'):
    user_files.read_file(str(tmp_path / 'broken.parquet'))

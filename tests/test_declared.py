"""A model or a dataset is one file (docs/design.md, "How to add a model" and "How to
add a dataset"): the registries and the tests' tables are derived from what each
module of models/ and data/ declares (seedsweep/declared.py), so none is kept by hand
and none can be forgotten."""
import importlib
import os
import shutil
import subprocess
import sys
import textwrap
import types

import pytest

from seedsweep import data as data_lib
from seedsweep import declared
from seedsweep import models
from seedsweep.data import raw_files
from seedsweep.data.spec import DatasetSpec
from seedsweep.errors import UserError
from seedsweep.models import registered
from tests import golden_runs
from tests.conftest import REPO
from tests.conftest import SHARED_DATA
from tests.conftest import user_environment

# A new model family and a new dataset, each in one file and nothing else.
TOY_MODEL = '''
import flax.linen as nn
from seedsweep.models import pooling
from seedsweep.models import registered
from seedsweep.models.baselines import embed_batch
from seedsweep.models.dropout import Dropout
from seedsweep.models.output import ModelOutput


class ToyMean(nn.Module):
  """Mean of word vectors, dropped out, then a dense layer."""
  vocab_size: int
  num_classes: int
  embed_dim: int = 300
  dropout: float = 0.5

  @nn.compact
  def __call__(self, batch, *, train: bool):
    x, mask = embed_batch(batch, self.vocab_size, self.embed_dim)
    x = Dropout(self.dropout, deterministic=not train)(pooling.masked_mean(x, mask))
    return ModelOutput(logits=nn.Dense(self.num_classes, name='classifier')(x))


MODELS = {'toy_mean': registered.Named(ToyMean, small={'embed_dim': 4}, paper={})}
'''
TOY_DATASET = '''
from seedsweep.data import trec
from seedsweep.data.spec import DatasetSpec

SHA256 = {'toy/train_5500.label': '{train}', 'toy/TREC_10.label': '{test}'}
DATASETS = {'toy/coarse': DatasetSpec(trec.SeedsweepTrec, 'coarse', tuple(SHA256),
                                      label_names=trec.LABELS_COARSE)}
'''
# Run in a fresh process whose models/ and data/ are copies with the two files added.
CHILD = '''
import sys
import seedsweep
seedsweep.__path__.insert(0, sys.argv[1])  # the copies come before the checkout's
import jax
from seedsweep import data, models
from seedsweep.data import raw_files
from tests import test_dropout, test_models
assert models.__path__ == [sys.argv[1] + '/models'], models.__path__
model = models.build_model({'name': 'toy_mean', **test_dropout.SMALL['toy_mean']},
                           vocab_size=30, num_classes=3)
batch = {'tokens': jax.numpy.ones((2, 5), 'int32'), 'lengths': jax.numpy.array([5, 2])}
params = jax.eval_shape(lambda: model.init(jax.random.key(0), batch, train=False))
print(sorted(models.REGISTRY), test_models.PAPER_SIZES['toy_mean'],
      params['params']['embedding']['embedding'].shape)
print(sorted(data.REGISTRY), sorted(k for k in raw_files.recorded() if 'toy' in k))
for name, spec_of in (('toy_men', models.model_class), ('toy/corse', data.spec_of)):
  try:
    spec_of(name)
  except seedsweep.UserError as e:
    print(e)
'''


def _copy_with(tmp_path, folder, name, text):
  """``tmp_path/folder``: a copy of the checkout's ``folder`` with file ``name`` added."""
  shutil.copytree(os.path.join(REPO, folder), tmp_path / folder,
                  ignore=shutil.ignore_patterns('__pycache__'))
  (tmp_path / folder / name).write_text(text)


def test_a_model_file_and_a_dataset_file_are_all_a_new_one_needs(tmp_path):
  """Written into copies of models/ and data/, each is registered, built by name,
  in the tests' tables, recorded, and the closest name to a misspelt one."""
  recorded = raw_files.recorded()
  _copy_with(tmp_path, 'models', 'toy.py', TOY_MODEL)
  _copy_with(tmp_path, 'data', 'toy.py', TOY_DATASET.replace(
      '{train}', recorded['trec/train_5500.label']).replace(
          '{test}', recorded['trec/TREC_10.label']))
  proc = subprocess.run([sys.executable, '-c', CHILD, str(tmp_path)], cwd=REPO,
                        capture_output=True, text=True, timeout=300, check=False,
                        env=user_environment())
  assert proc.returncode == 0, proc.stderr[-3000:]
  lines = proc.stdout.strip().splitlines()
  assert lines[0] == f'{sorted([*models.REGISTRY, "toy_mean"])} {{}} (30, 4)'
  assert lines[1] == (f'{sorted([*data_lib.REGISTRY, "toy/coarse"])} '
                      "['toy/TREC_10.label', 'toy/train_5500.label']")
  assert "config.model.name='toy_men' is not a registered model (did you mean " \
      "'toy_mean'?)" in lines[2]
  assert "config.data.name='toy/corse' is not a registered dataset (did you mean " \
      "'toy/coarse'?)" in lines[3]


def test_a_name_two_modules_declare_is_refused_naming_both():
  first = types.SimpleNamespace(__name__='seedsweep.models.a', MODELS={'x': 1})
  second = types.SimpleNamespace(__name__='seedsweep.models.b', MODELS={'x': 2, 'y': 3})
  assert declared.merged([first], 'MODELS') == {'x': 1}
  with pytest.raises(UserError, match=r"^MODELS name 'x' is declared by both "
                     r'seedsweep.models.a and seedsweep.models.b; expected one'):
    declared.merged([first, second], 'MODELS')


def test_the_registries_are_the_modules_declarations():
  """Every module of models/ and data/ that declares entries is in the registry, with
  nothing else there: the scan finds them all."""
  folder = os.path.join(REPO, 'models')
  declaring = [m for m in sorted(os.listdir(folder)) if m.endswith('.py') and
               '\nMODELS = ' in open(os.path.join(folder, m), encoding='utf-8').read()]
  assert [f.__name__ for f in models.FAMILIES] == [
      f'seedsweep.models.{m[:-3]}' for m in declaring]
  assert {n: (v.cls, dict(v.fixed)) for n, v in models.NAMED.items()} == models.REGISTRY
  assert {'lstm', 'bilstm', 'dclstm', 'joint_slu'} <= set(models.REGISTRY)
  assert all(isinstance(s, DatasetSpec) for s in data_lib.REGISTRY.values())
  assert data_lib.REGISTRY == declared.merged(data_lib.MODULES, 'DATASETS')
  assert {'demo', 'sst/binary', 'trec/coarse', 'files'} <= set(data_lib.REGISTRY)


def test_each_dataset_records_the_raw_files_it_reads_in_its_own_module():
  """A spec's raw files are all recorded in the module that declares it, and the
  record is the offline copy's (which keeps some more: ATIS's atis-2 files)."""
  for module in data_lib.MODULES:
    for name, spec in module.DATASETS.items():
      assert set(spec.raw_files) <= set(getattr(module, 'SHA256', {})), name
  sums = os.path.join(SHARED_DATA, 'SHA256SUMS')
  if os.path.isfile(sums):
    with open(sums, encoding='utf-8') as f:
      listed = dict(reversed(line.split(None, 1)) for line in f if line.strip())
    listed = {k.strip(): v for k, v in listed.items()}
    assert {k: listed.get(k) for k in raw_files.recorded()} == raw_files.recorded()


def test_every_experiment_file_is_run_by_its_model_familys_tests():
  """Each file of experiments/ (but the shared _common ones) is a golden run, trained
  or traced by the tests, as its family's PAPER_CONFIGS says: a new one that no
  family names fails here."""
  named = set()
  for family in models.FAMILIES:
    paper = registered.paper_configs(family)
    named |= {config.split(':')[0][len('experiments/'):-3]
              for config in paper.golden.values()}
    named |= {name for name, _ in paper.trained + paper.traced}
  folder = os.path.dirname(importlib.import_module('seedsweep.experiments').__file__)
  files = {f[:-3] for f in os.listdir(folder) if f.endswith('.py')
           and not f.startswith('_') and not f.endswith('_common.py')}
  assert named == files
  assert set(golden_runs.GOLDEN) == {name for family in models.FAMILIES for name in
                                     registered.paper_configs(family).golden}


def test_a_family_without_paper_configs_has_none():
  assert registered.paper_configs(textwrap) == registered.PaperConfigs()

"""The model contract (seedsweep.models.contract): a user's own model, linen or NNX,
checked when the run is built, each mistake one line naming the file and the class;
what the contract allows (a bare logits array, flax's own Dropout, an nnx.Module)
trains, a member with the same bits alone as among others."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import seedsweep
from seedsweep import api
from seedsweep.errors import UserError
from seedsweep.run import describe
from tests.conftest import REPO, built_once, in_tier, user_environment

HEAD = '''
import flax.linen as nn
import jax.numpy as jnp
from flax import nnx

from seedsweep.models import baselines
from seedsweep.models import pooling
from seedsweep.models.dropout import Dropout
from seedsweep.models.output import ModelOutput


def mean_of_words(batch, vocab_size, dim, name='embedding'):
  if name == 'embedding':
    x, mask = baselines.embed_batch(batch, vocab_size, dim)
  else:
    x = nn.Embed(vocab_size, dim, name=name)(batch['tokens'])
    mask = pooling.length_mask(batch['lengths'], batch['tokens'].shape[1])
  return pooling.masked_mean(x, mask), x
'''

# name -> (class body after the fields, what the error says)
CLASS = '''

class {name}(nn.Module):
  vocab_size: int
  num_classes: int
  embed_dim: int = 32
  dropout: float = 0.0
{body}'''

BODIES = {
    'OneTooMany': '''
  @nn.compact
  def __call__(self, batch, *, train: bool):
    mean, _ = mean_of_words(batch, self.vocab_size, self.embed_dim)
    return ModelOutput(logits=nn.Dense(self.num_classes + 1)(mean))
''',
    'OneTooFew': '''
  @nn.compact
  def __call__(self, batch, *, train: bool):
    mean, _ = mean_of_words(batch, self.vocab_size, self.embed_dim)
    return ModelOutput(logits=nn.Dense(self.num_classes - 1)(mean))
''',
    'NoTrain': '''
  @nn.compact
  def __call__(self, batch):
    mean, _ = mean_of_words(batch, self.vocab_size, self.embed_dim)
    return nn.Dense(self.num_classes)(mean)
''',
    'NotPooled': '''
  @nn.compact
  def __call__(self, batch, *, train: bool):
    _, words = mean_of_words(batch, self.vocab_size, self.embed_dim)
    return ModelOutput(logits=nn.Dense(self.num_classes)(words))
''',
    'OtherTableName': '''
  @nn.compact
  def __call__(self, batch, *, train: bool):
    mean, _ = mean_of_words(batch, self.vocab_size, self.embed_dim, name='words')
    return nn.Dense(self.num_classes)(mean)
''',
    'IntLogits': '''
  @nn.compact
  def __call__(self, batch, *, train: bool):
    mean, _ = mean_of_words(batch, self.vocab_size, self.embed_dim)
    return nn.Dense(self.num_classes)(mean).astype(jnp.int32)
''',
    'LengthShaped': '''
  @nn.compact
  def __call__(self, batch, *, train: bool):
    _, words = mean_of_words(batch, self.vocab_size, self.embed_dim)
    return nn.Dense(self.num_classes)(words.mean(axis=2))  # a kernel [time, classes]
''',
    # What the contract allows.
    'Bare': '''
  @nn.compact
  def __call__(self, batch, *, train: bool):
    mean, _ = mean_of_words(batch, self.vocab_size, self.embed_dim)
    return nn.Dense(self.num_classes)(mean)
''',
    'Wrapped': '''
  @nn.compact
  def __call__(self, batch, *, train: bool):
    mean, _ = mean_of_words(batch, self.vocab_size, self.embed_dim)
    return ModelOutput(logits=nn.Dense(self.num_classes)(mean))
''',
    'FlaxDropout': '''
  @nn.compact
  def __call__(self, batch, *, train: bool):
    mean, _ = mean_of_words(batch, self.vocab_size, self.embed_dim)
    mean = nn.Dropout(self.dropout, deterministic=not train)(mean)
    return nn.Dense(self.num_classes)(mean)
''',
    'OwnDropout': '''
  @nn.compact
  def __call__(self, batch, *, train: bool):
    mean, _ = mean_of_words(batch, self.vocab_size, self.embed_dim)
    mean = Dropout(self.dropout, deterministic=not train)(mean)
    return nn.Dense(self.num_classes)(mean)
''',
}

NNX = '''

class NNXMean(nnx.Module):
  def __init__(self, vocab_size: int, num_classes: int, embed_dim: int = 32,
               dropout: float = 0.0, *, rngs: nnx.Rngs):
    self.embedding = nnx.Embed(vocab_size, embed_dim, rngs=rngs)
    self.dropout = nnx.Dropout(dropout, rngs=rngs)
    self.out = nnx.Linear(embed_dim, num_classes, rngs=rngs)

  def __call__(self, batch, *, train: bool):
    tokens = batch['tokens']
    mask = pooling.length_mask(batch['lengths'], tokens.shape[1])
    x = batch['word_vectors'] if 'word_vectors' in batch else self.embedding(tokens)
    return self.out(self.dropout(pooling.masked_mean(x, mask)))


class NNXReadsTable(NNXMean):
  def __call__(self, batch, *, train: bool):
    return self.out(self.embedding(batch['tokens']).mean(axis=1))


class NNXNoRngs(nnx.Module):
  def __init__(self, vocab_size: int, num_classes: int):
    self.out = nnx.Linear(4, num_classes, rngs=nnx.Rngs(0))

  def __call__(self, batch, *, train: bool):
    return self.out(batch['tokens'][:, :4].astype(jnp.float32))


class NNXBatchNorm(nnx.Module):
  def __init__(self, vocab_size: int, num_classes: int, embed_dim: int = 32, *,
               rngs: nnx.Rngs):
    self.embedding = nnx.Embed(vocab_size, embed_dim, rngs=rngs)
    self.norm = nnx.BatchNorm(embed_dim, rngs=rngs)
    self.out = nnx.Linear(embed_dim, num_classes, rngs=rngs)

  def __call__(self, batch, *, train: bool):
    return self.out(self.norm(self.embedding(batch['tokens']).mean(axis=1)))
'''


@pytest.fixture(scope='module')
def model_file(tmp_path_factory):
  folder = tmp_path_factory.mktemp('my_code')
  path = folder / 'models.py'
  classes = ''.join(CLASS.format(name=n, body=b) for n, b in BODIES.items())
  path.write_text(HEAD + classes + NNX)
  return str(path)


def demo_config(model, seeds=(1, 2), epochs=1, **fields):
  """The demo's quick config (one length bucket of 32 tokens) with a user's model."""
  config = api.load_config('demo:quick,bow')
  config.model.name = model
  for k, v in fields.items():
    config.model[k] = v
  config.seeds = tuple(seeds)
  config.train.num_epochs = epochs
  config.train.progress = False
  config.data.num_buckets = 1
  config.data.max_length = 32
  return config


def train(config, workdir):
  return seedsweep.train(config, str(workdir), print_fn=lambda *a, **k: None)


@pytest.mark.parametrize('name, message', [
    ('OneTooMany', r"returned logits \[3, 3\] for a batch of 3 sentences of 7 tokens "
     r'\(called with train=False\); expected \[batch, num_classes\] = \[3, 2\]; '
     'its last layer has 3 outputs, the data 2 classes'),
    ('OneTooFew', r'returned logits \[3, 1\] .* expected \[batch, num_classes\] = '
     r'\[3, 2\]; its last layer has 1 outputs'),
    ('NoTrain', r'NoTrain.__call__\(self, batch\) takes no train argument; expected '
     r'__call__\(self, batch, \*, train: bool\)'),
    ('NotPooled', r'returned logits \[3, 7, 2\] .* one value per token: pool over '
     'time first'),
    ('IntLogits', 'returned logits of dtype int32 .*expected a float dtype'),
    ('LengthShaped', r'ScopeParamShapeError: .* at .*models.py, line \d+, called as '
     r'model.apply.* \(initialised on 9 tokens: no parameter may depend on the '
     r'length\)'),
    ('NNXNoRngs', r'NNXNoRngs.__init__ takes no rngs; expected __init__\(self, '
     r'vocab_size: int, num_classes: int, ..., \*, rngs: nnx.Rngs\)'),
    ('NNXBatchNorm', r"keeps variables in \['BatchStat'\] besides params"),
])
def test_a_model_breaking_the_contract_is_one_line_before_training(
    model_file, tmp_path, name, message):
  with pytest.raises(UserError, match=message) as error:
    train(demo_config(f'{model_file}:{name}'), tmp_path / 'run')
  text = str(error.value)
  assert '\n' not in text
  assert text.startswith(f"config.model.name='{model_file}:{name}': ")
  assert text.endswith('(the model contract: seedsweep.models.contract, docs/data.md)')
  assert not (tmp_path / 'run' / 'results.json').exists()


def test_describe_checks_the_model_too(model_file):
  with pytest.raises(UserError, match=r'returned logits \[3, 3\] .* expected '
                     r'\[batch, num_classes\] = \[3, 2\]'):
    describe.describe(demo_config(f'{model_file}:OneTooMany'))


def test_word_vectors_need_the_table_named_embedding(model_file, tmp_path):
  vectors = tmp_path / 'vectors.txt'
  rng = np.random.default_rng(0)
  vectors.write_text(''.join(
      w + ' ' + ' '.join(f'{x:.4f}' for x in rng.normal(size=32)) + '\n'
      for w in ('the', 'film', 'movie', 'not')))
  config = demo_config(f'{model_file}:OtherTableName')
  config.data.vectors.path = str(vectors)
  with pytest.raises(UserError, match=r"has no parameter embedding/embedding \(its "
                     r"parameters: \['Dense_0', 'words'\]\); config.data.vectors.path "
                     r"needs its word table there, \[vocab_size, dim\] = \[\d+, dim\]"):
    train(config, tmp_path / 'run')
  config.model.name = f'{model_file}:Wrapped'  # the same model, its table named right
  assert describe.describe(config)['params_embeddings'] > 0


def test_row_updates_need_a_model_that_takes_the_batch_word_vectors(model_file,
                                                                   tmp_path):
  config = demo_config(f'{model_file}:OtherTableName')
  config.optimizer.name = 'sgd'  # 'auto' takes row-sparse table updates for SGD
  with pytest.raises(UserError, match=r"no parameter embedding/embedding .*"
                     r"config.optimizer.embedding_update='auto' \(= 'rows' for sgd\)"):
    train(config, tmp_path / 'run')


def test_row_updates_refuse_a_model_that_reads_its_table_itself(model_file, tmp_path):
  config = demo_config(f'{model_file}:NNXReadsTable')
  config.optimizer.name = 'adagrad'  # 'auto': row-sparse table updates
  with pytest.raises(UserError, match=r"NNXReadsTable': reads its word table although "
                     r"the step handed it batch\['word_vectors'\] .* or set "
                     '--config.optimizer.embedding_update=dense'):
    train(config, tmp_path / 'run')


@pytest.mark.slow
def test_a_bare_logits_array_trains_as_its_model_output(model_file, tmp_path):
  bare = train(demo_config(f'{model_file}:Bare'), tmp_path / 'bare')
  wrapped = train(demo_config(f'{model_file}:Wrapped'), tmp_path / 'wrapped')
  assert bare['metrics'] == wrapped['metrics']  # the same bits
  assert min(bare['metrics']['test_accuracy']) > 0


# The README tier: linen's nn.Dropout (the refusal is the same check for NNX); an
# nnx.Dropout trains in the tier's NNX member test (dropout 0.3).
@pytest.mark.slow
@pytest.mark.parametrize('name', in_tier(['FlaxDropout', 'NNXMean'], 'FlaxDropout'))
def test_flax_own_dropout_trains_and_refuses_only_a_stacked_rate(model_file, tmp_path,
                                                                 name):
  results = train(demo_config(f'{model_file}:{name}', dropout=0.3), tmp_path / 'run')
  assert np.isfinite(results['metrics']['test_loss']).all()
  without = train(demo_config(f'{model_file}:{name}', dropout=0.0), tmp_path / 'none')
  assert results['metrics'] != without['metrics']  # the dropout draws masks
  config = demo_config(f'{model_file}:{name}', dropout=0.3)
  config.stack.fields = ('model.dropout',)
  config.stack.points = ((0.1,), (0.3,))
  with pytest.raises(UserError, match=r'tests config.model.dropout in Python .* use '
                     'seedsweep.models.dropout.Dropout, which takes a traced rate'):
    train(config, tmp_path / 'stacked')


@pytest.mark.slow
def test_the_package_dropout_stacks_its_rate_in_a_users_model(model_file, tmp_path):
  config = demo_config(f'{model_file}:OwnDropout', seeds=(1,), dropout=0.3)
  config.stack.fields = ('model.dropout',)
  config.stack.points = ((0.1,), (0.3,))
  results = train(config, tmp_path / 'run')
  assert len(results['metrics']['test_loss']) == 2  # two points in one program


@pytest.mark.slow
def test_an_nnx_member_has_the_same_bits_alone_and_among_others(model_file, tmp_path):
  name = f'{model_file}:NNXMean'
  alone = train(demo_config(name, seeds=(2,), dropout=0.3), tmp_path / 'alone')
  # Seeds (1, 2): the programs of the NNX dropout test's first run (--all).
  group = train(demo_config(name, seeds=(1, 2), dropout=0.3), tmp_path / 'group')
  for metric, values in alone['metrics'].items():
    assert values[0] == group['metrics'][metric][1], metric
  assert group['metrics']['test_loss'][0] != group['metrics']['test_loss'][1]


def _command(*args, cwd):
  """``seedsweep ARGS`` run in ``cwd``, importing this checkout's package."""
  path = os.pathsep.join(p for p in (REPO, os.environ.get('PYTHONPATH')) if p)
  return subprocess.run([sys.executable, '-m', 'seedsweep', *args], cwd=cwd,
                        capture_output=True, text=True, timeout=900,
                        env={**user_environment(), 'PYTHONPATH': path})


def manual_run(tmp_path_factory, example) -> str:
  """docs/data.md's command for examples/EXAMPLE.py, run from a folder of one's own
  with the examples copied in (``mine``), trained to ``run``: made once per run of
  the suite (tests/test_verdict.py compares the NNX one too); tests copy it."""
  def build(folder):
    mine = os.path.join(folder, 'mine')
    shutil.copytree(os.path.join(REPO, 'examples'), os.path.join(mine, 'examples'))
    proc = _command('--config=demo:quick,bow',
                    f'--config.model.name=examples/{example}.py:CNNClassifier',
                    '--config.seeds=(1,2)', f'--workdir={os.path.join(folder, "run")}',
                    cwd=mine)
    assert proc.returncode == 0, proc.stderr[-3000:]
  return built_once(tmp_path_factory, f'manual_{example}', build)


@pytest.mark.slow
@pytest.mark.parametrize('example', in_tier(['nnx_cnn', 'linen_cnn'], 'nnx_cnn'))
def test_the_manuals_own_models_train_predict_and_verify(example, tmp_path,
                                                         tmp_path_factory):
  """docs/data.md's commands for examples/nnx_cnn.py and examples/linen_cnn.py, run
  from a folder of one's own with the example copied in (the trained run shared with
  tests/test_verdict.py, copied here)."""
  shutil.copytree(manual_run(tmp_path_factory, example), tmp_path, dirs_exist_ok=True)
  folder, workdir = tmp_path / 'mine', tmp_path / 'run'
  results = json.loads((workdir / 'results.json').read_text())
  assert results['seeds'] == [1, 2]
  assert min(results['metrics']['test_accuracy']) > 50
  (folder / 'texts.txt').write_text('the film was great\na dull plot\n')
  proc = _command('--mode=predict', f'--workdir={workdir}', '--input=texts.txt',
                  cwd=folder)
  assert proc.returncode == 0, proc.stderr[-3000:]
  answers = [json.loads(line) for line in proc.stdout.splitlines()
             if line.startswith('{')]
  assert len(answers) == 2, proc.stdout[-2000:]
  proc = _command('--mode=verify', f'--workdir={workdir}', cwd=folder)
  assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
  report = seedsweep.report(str(workdir), plots=False, print_fn=lambda *a, **k: None)
  assert report['rows'][0]['model'] == f'examples/{example}.py:CNNClassifier'

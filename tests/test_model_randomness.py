"""A model's randomness, checked when the run is built (seedsweep.models.contract
.check_randomness, from seedsweep/run/own_model.py): host randomness in ``init`` or
in a training step refused in one line naming the file, the class and what differed;
a model whose parameters ignore the init key warned about, one returning
probabilities hinted at, both through the run's print_fn; the packaged models and
the manual's own models pass without a word, and the check compiles nothing for a
model without a softmax."""
import os

import jax
import pytest

import seedsweep
from seedsweep import models
from seedsweep import notices
from seedsweep.errors import UserError
from seedsweep.models import contract
from seedsweep.run import describe
from tests.conftest import REPO, in_tier

MODELS = '''
import random

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from seedsweep.models import baselines
from seedsweep.models import pooling


def mean_of_words(module, batch):
  x, mask = baselines.embed_batch(batch, module.vocab_size, 16)
  return pooling.masked_mean(x, mask)


class Base(nn.Module):
  vocab_size: int
  num_classes: int


class NumpyInit(Base):
  @nn.compact
  def __call__(self, batch, *, train: bool):
    w = self.param('w', lambda key, shape: jnp.asarray(np.random.normal(size=shape),
                                                        jnp.float32), (16, 2))
    return mean_of_words(self, batch) @ w


class PythonRandomInit(Base):
  @nn.compact
  def __call__(self, batch, *, train: bool):
    scale = self.param('scale', lambda key: jnp.float32(random.gauss(0, 1)))
    return nn.Dense(self.num_classes)(mean_of_words(self, batch)) * scale


class UnseededGenerator(Base):
  @nn.compact
  def __call__(self, batch, *, train: bool):
    draw = np.random.default_rng()
    bias = self.param('bias', lambda key, n: jnp.asarray(draw.normal(size=n),
                                                         jnp.float32), 2)
    return nn.Dense(self.num_classes)(mean_of_words(self, batch)) + bias


class NumpyDropout(Base):
  @nn.compact
  def __call__(self, batch, *, train: bool):
    x = mean_of_words(self, batch)
    if train:
      x = x * (np.random.uniform(size=x.shape) > 0.5)
    return nn.Dense(self.num_classes)(x)


class NNXNumpyInit(nnx.Module):
  def __init__(self, vocab_size: int, num_classes: int, *, rngs: nnx.Rngs):
    self.embedding = nnx.Embed(vocab_size, 16, rngs=rngs)
    self.out = nnx.Param(jnp.asarray(np.random.normal(size=(16, num_classes)),
                                     jnp.float32))

  def __call__(self, batch, *, train: bool):
    return self.embedding(batch['tokens']).mean(axis=1) @ self.out


class IgnoresKey(Base):
  @nn.compact
  def __call__(self, batch, *, train: bool):
    table = self.param('table', nn.initializers.ones, (self.vocab_size, 16))
    dense = nn.Dense(self.num_classes, kernel_init=nn.initializers.zeros)
    return dense(table[batch['tokens']].mean(axis=1))


FIXED = jax.random.key(42)  # a key of its own, made once: a constant of its traces


class FixedKey(Base):
  @nn.compact
  def __call__(self, batch, *, train: bool):
    table = self.param('table', lambda key, shape: jax.random.normal(FIXED, shape),
                       (self.vocab_size, 16))
    return nn.Dense(self.num_classes, kernel_init=nn.initializers.zeros)(
        table[batch['tokens']].mean(axis=1))


class Probabilities(Base):
  @nn.compact
  def __call__(self, batch, *, train: bool):
    return nn.softmax(nn.Dense(self.num_classes)(mean_of_words(self, batch)))


class Fine(Base):
  dropout: float = 0.3

  @nn.compact
  def __call__(self, batch, *, train: bool):
    x = nn.Dropout(self.dropout, deterministic=not train)(mean_of_words(self, batch))
    return nn.log_softmax(nn.Dense(self.num_classes)(x))  # log-probabilities: logits
'''


@pytest.fixture(scope='module')
def model_file(tmp_path_factory):
  path = tmp_path_factory.mktemp('my_code') / 'models.py'
  path.write_text(MODELS)
  return str(path)


def demo_config(model):
  """The demo's quick config (its only model field embed_dim dropped) with
  ``model``, one seed, one epoch."""
  config = seedsweep.load_config('demo:quick,bow')
  config.model.name = model
  del config.model['embed_dim']
  config.seeds = (1,)
  config.train.num_epochs = 1
  config.train.progress = False
  config.data.num_buckets = 1
  return config


def said(config):
  """The lines ``--mode=describe`` of ``config`` says (the run's check's own)."""
  lines = []
  with notices.to(lines.append):
    describe.describe(config)
  return lines


INIT = ('two inits with one key gave other parameters: it draws from host randomness '
        r"\(np.random, Python's random, an unseeded np.random.default_rng\(\)\), which "
        r"no seed reproduces; draw from the init key instead \(self.param's "
        r"initialiser gets it, or self.make_rng\('params'\); in NNX rngs.params\(\)\)")
STEP = (r'two traces of model.apply\(..., train=True\) with one input gave other '
        r"programs: it draws from host randomness in __call__ .* draw from "
        r"self.make_rng\('dropout'\) instead")


REFUSED = {'NumpyInit': INIT, 'PythonRandomInit': INIT, 'UnseededGenerator': INIT,
           'NNXNumpyInit': INIT, 'NumpyDropout': STEP}


@pytest.mark.parametrize('name', in_tier(list(REFUSED), 'NumpyInit', 'NumpyDropout'))
def test_host_randomness_is_refused_in_one_line_before_training(model_file, tmp_path,
                                                                 name):
  with pytest.raises(UserError, match=REFUSED[name]) as error:
    seedsweep.train(demo_config(f'{model_file}:{name}'), str(tmp_path / 'run'),
                    print_fn=lambda *a, **k: None)
  text = str(error.value)
  assert '\n' not in text
  assert text.startswith(f"config.model.name='{model_file}:{name}': ")
  assert text.endswith('(the model contract: seedsweep.models.contract, docs/data.md)')
  assert not (tmp_path / 'run' / 'results.json').exists()


def test_a_key_it_ignores_is_warned_about_and_probabilities_hinted_at(model_file):
  ignores = said(demo_config(f'{model_file}:IgnoresKey'))
  assert ignores == [
      f"warning: config.model.name='{model_file}:IgnoresKey': no parameter depends on "
      'the init key, so every seed starts from the same parameters and seeds differ '
      "only in data order and dropout; draw initial values from the key (self.param's "
      "initialiser, self.make_rng('params'); in NNX rngs.params())"]
  fixed = said(demo_config(f'{model_file}:FixedKey'))  # jax's, but not the engine's
  assert len(fixed) == 1 and 'no parameter depends on the init key' in fixed[0]
  probabilities = said(demo_config(f'{model_file}:Probabilities'))
  assert probabilities == [
      f"hint: config.model.name='{model_file}:Probabilities': its logits look like "
      'probabilities (each row non-negative and summing to 1 on a test batch); the '
      'loss applies its own softmax to the logits: return the scores before the '
      'softmax']
  assert said(demo_config(f'{model_file}:Fine')) == []  # log-probabilities are logits


@pytest.mark.slow
@pytest.mark.full
def test_the_warning_reaches_the_runs_print_fn(model_file, tmp_path):
  lines = []
  results = seedsweep.train(demo_config(f'{model_file}:IgnoresKey'),
                            str(tmp_path / 'run'), print_fn=lines.append)
  assert results['seeds'] == [1]
  warned = [line for line in lines if 'no parameter depends on the init key' in line]
  assert len(warned) == 1 and warned[0].startswith('warning: config.model.name='), lines


def _checked(model, where):
  """The randomness check's lines for ``model`` (its contract checked first)."""
  _, params = contract.check(model, where, num_classes=3, vocab_size=40)
  return contract.check_randomness(model, params, where, num_classes=3, vocab_size=40)


# The packaged classifiers (the joint tagger's batch carries tags, which the
# contract's batch has not): scans, custom gradients, fixed fields.
CLASSIFIERS = sorted(n for n in models.NAMED if n != 'joint_slu')


@pytest.mark.parametrize('name', in_tier(CLASSIFIERS, 'bilstm', 'bow'))
def test_the_packaged_models_pass_without_a_word(name):
  """Two traces of each give one program, bit for bit, and its parameters follow
  the key."""
  model = models.build_model({'name': name, **models.NAMED[name].small},
                             vocab_size=40, num_classes=3)
  assert _checked(model, name) == []


@pytest.mark.parametrize('example', ['linen_cnn', 'nnx_cnn'])
def test_the_manuals_own_models_pass_and_nothing_is_compiled(example):
  compiled = []
  jax.monitoring.register_event_duration_secs_listener(
      lambda event, seconds, **_: compiled.append(event)
      if event == '/jax/core/compile/backend_compile_duration' else None)
  name = os.path.join(REPO, 'examples', f'{example}.py') + ':CNNClassifier'
  model = models.build_model({'name': name}, vocab_size=40, num_classes=3)
  _, params = contract.check(model, name, num_classes=3, vocab_size=40)
  compiled.clear()
  assert contract.check_randomness(model, params, name, num_classes=3,
                                   vocab_size=40) == []
  assert compiled == []  # traces only: no softmax, so no call is compiled


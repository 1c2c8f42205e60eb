"""The models' Dropout (models/dropout.py): flax's bits for a static rate, the identity
for a traced zero, and every registered model with its rates (and the joint model's
rho, beta) as traced scalars, under jit, vmap and lax.map (the engine's forms); the
same of the NNX one (models/nnx_dropout.py), and an NNX model of one's own stacked
over its rate."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import seedsweep
from seedsweep import models
from seedsweep.models.dropout import Dropout

STACKABLE = ('dropout', 'embed_dropout', 'rho', 'beta')
from tests.conftest import in_tier


def _x(shape=(4, 7, 33), seed=0):
  return jnp.asarray(np.random.default_rng(seed).normal(size=shape), jnp.float32)


def _apply(module, x, key):
  return module.apply({}, x, rngs={'dropout': key})


@pytest.mark.parametrize('rate', [0.2, 0.5])
def test_static_rate_gives_flax_dropout_bits(rate):
  x = _x()
  for seed in range(3):
    key = jax.random.key(seed)
    ours = _apply(Dropout(rate, deterministic=False), x, key)
    theirs = _apply(nn.Dropout(rate, deterministic=False), x, key)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert 0 < float((ours == 0).mean()) < 1
  # Deterministic and a static zero: the input itself, no rng needed.
  assert Dropout(rate, deterministic=True).apply({}, x) is x
  assert Dropout(0.0).apply({}, x) is x


def test_static_rate_inside_a_model_keeps_flax_names_and_streams():
  class Net(nn.Module):
    dropout_cls: type

    @nn.compact
    def __call__(self, x):
      x = self.dropout_cls(0.3, deterministic=False)(x)
      return self.dropout_cls(0.6, deterministic=False)(x * 2)

  x, key = _x(), jax.random.key(5)
  ours = Net(Dropout).apply({}, x, rngs={'dropout': key})
  theirs = Net(nn.Dropout).apply({}, x, rngs={'dropout': key})
  np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize('rate', [0.2, 0.5, 0.1, 0.3, 0.05])
def test_traced_rate_matches_the_static_rate(rate):
  x, key = _x(), jax.random.key(1)
  static = _apply(Dropout(rate), x, key)
  traced = jax.jit(lambda r: _apply(Dropout(r), x, key))(jnp.float32(rate))
  np.testing.assert_allclose(np.asarray(traced), np.asarray(static), rtol=1e-6, atol=0)
  np.testing.assert_array_equal(np.asarray(traced) == 0, np.asarray(static) == 0)


def test_traced_zero_rate_returns_the_input_bitwise():
  x = _x().at[0, 0, :3].set(jnp.array([-0.0, jnp.inf, -jnp.inf]))
  key = jax.random.key(2)
  out = jax.jit(lambda r, x: _apply(Dropout(r), x, key))(jnp.float32(0), x)
  np.testing.assert_array_equal(np.asarray(out).view(np.uint32),
                                np.asarray(x).view(np.uint32))
  # Deterministic with a traced rate: no rng needed either.
  out = jax.jit(lambda r: Dropout(r, deterministic=True).apply({}, x))(jnp.float32(0.4))
  np.testing.assert_array_equal(np.asarray(out), np.asarray(x))


def test_traced_rate_gradient_is_finite_up_to_rate_one():
  x, key = _x(), jax.random.key(3)
  for rate in (0.0, 0.5, 1.0):
    g = jax.grad(lambda x, r: _apply(Dropout(r), x, key).sum())(x, jnp.float32(rate))
    assert np.all(np.isfinite(np.asarray(g)))
  out = _apply(Dropout(jnp.float32(1.0)), x, key)
  np.testing.assert_array_equal(np.asarray(out), 0)


# Small sizes for every registered model (each model module's MODELS); the joint
# model also gets slot tags.
SMALL = {name: dict(named.small) for name, named in models.NAMED.items()}
# Two members' values: every field differs between them, and one of each pair is 0
# for the rates (a traced zero against a static zero, which draws no rng).
MEMBERS = ({'dropout': 0.3, 'embed_dropout': 0.0, 'rho': 0.1, 'beta': 0.1},
           {'dropout': 0.0, 'embed_dropout': 0.2, 'rho': 0.25, 'beta': 0.5})
NUM_TAGS = 7


def _batch(vocab=30, lengths=(10, 6, 2), seed=0):
  rng = np.random.default_rng(seed)
  return {'tokens': jnp.asarray(rng.integers(1, vocab, (len(lengths), 10)), jnp.int32),
          'lengths': jnp.asarray(lengths, jnp.int32),
          'tags': jnp.asarray(rng.integers(0, NUM_TAGS, (len(lengths), 10)), jnp.int32),
          'labels': jnp.asarray(rng.integers(0, 4, len(lengths)), jnp.int32)}


def _compared(out):
  """The outputs the engine trains on: logits, and the penalty and tag logits where
  the model has them."""
  return {k: getattr(out, k) for k in ('logits', 'tag_logits', 'penalty')
          if getattr(out, k) is not None}


def _assert_same(got, want, where):
  assert got.keys() == want.keys(), where
  for k in want:
    np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-6,
                               atol=1e-6, err_msg=f'{where}: {k}')


@pytest.mark.slow
@pytest.mark.parametrize('name', in_tier(sorted(models.REGISTRY), 'bilstm'))
def test_model_with_traced_rates_equals_the_static_model(name):
  model = models.build_model({'name': name, **SMALL[name]}, vocab_size=30,
                             num_classes=4, num_tags=NUM_TAGS)
  fields = [f for f in STACKABLE if hasattr(model, f)]
  assert 'dropout' in fields
  batch, key = _batch(), jax.random.key(7)
  params = jax.jit(lambda b: model.init(jax.random.key(0), b, train=False))(batch)

  def run(m):
    return _compared(m.apply(params, batch, train=True, rngs={'dropout': key}))

  static = [jax.jit(lambda m=model.clone(**{f: v[f] for f in fields}): run(m))()
            for v in MEMBERS]
  # The members really differ (each field has an effect somewhere).
  assert not np.allclose(static[0]['logits'], static[1]['logits'])

  def traced(values):  # values: {field: f32 scalar}
    return run(model.clone(**values))

  # The engine's two forms over members (a lone traced member is lax.map's body).
  stacked = {f: jnp.asarray([v[f] for v in MEMBERS], jnp.float32) for f in fields}
  for how, fn in (('vmap', jax.jit(jax.vmap(traced))),
                  ('lax.map', jax.jit(lambda s: jax.lax.map(traced, s)))):
    out = fn(stacked)
    for i in range(len(MEMBERS)):
      _assert_same(jax.tree.map(lambda a, i=i: a[i], out), static[i],
                   f'{name} {how} member {i}')


# NNX (models/nnx_dropout.py): nnx.Dropout's bits for a static rate, the linen
# Dropout's for a traced one, and an NNX model of one's own stacked over its rate.
NNX_MODEL = '''
from flax import nnx
from seedsweep.models import nnx_dropout, pooling


class NNXMean(nnx.Module):
  def __init__(self, vocab_size: int, num_classes: int, embed_dim: int = 16,
               dropout: float = 0.0, *, rngs: nnx.Rngs):
    self.embedding = nnx.Embed(vocab_size, embed_dim, rngs=rngs)
    self.dropout = nnx_dropout.Dropout(dropout, rngs=rngs)
    self.out = nnx.Linear(embed_dim, num_classes, rngs=rngs)

  def __call__(self, batch, *, train: bool):
    tokens = batch['tokens']
    mask = pooling.length_mask(batch['lengths'], tokens.shape[1])
    x = batch['word_vectors'] if 'word_vectors' in batch else self.embedding(tokens)
    return self.out(self.dropout(pooling.masked_mean(x, mask)))
'''


@pytest.fixture(scope='module')
def nnx_model(tmp_path_factory):
  path = tmp_path_factory.mktemp('my_nnx') / 'nnx_model.py'
  path.write_text(NNX_MODEL)
  return f'{path}:NNXMean'


def _nnx(rate, seed=3, **kwargs):
  from flax import nnx  # pylint: disable=g-import-not-at-top
  from seedsweep.models import nnx_dropout  # pylint: disable=g-import-not-at-top
  return nnx_dropout.Dropout(rate, rngs=nnx.Rngs(dropout=seed), **kwargs)


@pytest.mark.parametrize('rate', [0.2, 0.5])
def test_nnx_static_rate_gives_nnx_dropout_bits_and_a_traced_one_the_same_mask(rate):
  from flax import nnx  # pylint: disable=g-import-not-at-top
  x = _x()
  theirs = nnx.Dropout(rate, rngs=nnx.Rngs(dropout=3))(x)
  np.testing.assert_array_equal(np.asarray(_nnx(rate)(x)), np.asarray(theirs))
  traced = jax.jit(lambda r: _nnx(r)(x))(jnp.float32(rate))
  np.testing.assert_allclose(np.asarray(traced), np.asarray(theirs), rtol=1e-6, atol=0)
  np.testing.assert_array_equal(np.asarray(traced) == 0, np.asarray(theirs) == 0)
  kept = jax.jit(lambda r: _nnx(r, broadcast_dims=(1,))(x))(jnp.float32(rate))
  assert np.all((np.asarray(kept) == 0) == (np.asarray(kept) == 0)[:, :1])
  module = _nnx(jnp.float32(rate))
  module.eval()  # eval mode (the adapter's train=False): the input itself
  assert module(x) is x


def test_nnx_traced_zero_is_the_input_bitwise_and_one_has_a_finite_gradient():
  x = _x().at[0, 0, :3].set(jnp.array([-0.0, jnp.inf, -jnp.inf]))
  out = jax.jit(lambda r, x: _nnx(r)(x))(jnp.float32(0), x)
  np.testing.assert_array_equal(np.asarray(out).view(np.uint32),
                                np.asarray(x).view(np.uint32))
  for rate in (0.0, 0.5, 1.0):
    g = jax.grad(lambda x, r: _nnx(r)(x).sum())(_x(), jnp.float32(rate))
    assert np.all(np.isfinite(np.asarray(g)))


@pytest.mark.slow
def test_an_nnx_model_with_a_traced_rate_equals_its_static_model(nnx_model):
  """Through the NNX adapter, as the engine calls it: members' rates traced under
  vmap and lax.map give each member's static model; the contract finds the rate
  traceable, so a sweep stacks it (the planner's own check)."""
  from seedsweep.models import contract  # pylint: disable=g-import-not-at-top
  from seedsweep.sweep import runner  # pylint: disable=g-import-not-at-top
  model = models.build_model({'name': nnx_model, 'dropout': 0.3}, vocab_size=30,
                             num_classes=4)
  batch, key = _batch(), jax.random.key(7)
  params = jax.jit(lambda b: model.init({'params': jax.random.key(0)}, b,
                                        train=False))(batch)

  def run(m):
    return m.apply(params, batch, train=True, rngs={'dropout': key}).logits

  rates = (0.3, 0.0)
  static = [jax.jit(lambda m=model.clone(dropout=r): run(m))() for r in rates]
  assert not np.allclose(static[0], static[1])
  traced = lambda r: run(model.clone(dropout=r))
  stacked = jnp.asarray(rates, jnp.float32)
  for how, fn in (('vmap', jax.jit(jax.vmap(traced))),
                  ('lax.map', jax.jit(lambda s: jax.lax.map(traced, s)))):
    out = fn(stacked)
    for i, want in enumerate(static):
      np.testing.assert_allclose(np.asarray(out[i]), np.asarray(want), rtol=1e-6,
                                 atol=1e-6, err_msg=f'{how} member {i}')
  traced_fields, _ = contract.check(model, 'test', num_classes=4, vocab_size=30,
                                    stackable=('dropout',), stacked=('dropout',))
  assert traced_fields == ('dropout',)
  assert runner.tested_in_python(
      seedsweep.load_config('demo:quick', model__name=nnx_model),
      [{'model.dropout': 0.1}, {'model.dropout': 0.3}], 'test') == ()


@pytest.mark.slow
def test_an_nnx_model_trains_stacked_over_its_rate_as_each_rate_alone(nnx_model,
                                                                     tmp_path):
  """Two dropout rates of an NNX model of one's own in one program: each point's
  member has the numbers of its run alone (both trace the rate)."""
  def config(**overrides):
    return seedsweep.load_config('demo:quick,bow', model__name=nnx_model, seeds=(1,),
                                 train__num_epochs=1, train__progress=False,
                                 data__num_buckets=1, data__max_length=32, **overrides)
  stacked = seedsweep.train(config(stack__fields=('model.dropout',),
                                   stack__points=((0.1,), (0.4,))),
                            str(tmp_path / 'stacked'), print_fn=lambda *a, **k: None)
  alone = seedsweep.train(config(model__dropout=0.4), str(tmp_path / 'alone'),
                          print_fn=lambda *a, **k: None)
  for metric, values in alone['metrics'].items():
    assert stacked['metrics'][metric][1] == values[0], metric
  assert stacked['metrics']['test_loss'][0] != stacked['metrics']['test_loss'][1]

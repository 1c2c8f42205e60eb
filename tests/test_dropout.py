"""The models' Dropout (models/dropout.py): flax's bits for a static rate, the identity
for a traced zero, and every registered model with its rates (and the joint model's
rho, beta) as traced scalars, under jit, vmap and lax.map (the engine's forms)."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

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

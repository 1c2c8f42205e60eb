import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from seedsweep.errors import UserError
from seedsweep import models
from seedsweep.models import pooling
from seedsweep.models import recurrent
from tests.conftest import in_tier
from tests.conftest import REPO


def _sigmoid(z):
  return 1 / (1 + np.exp(-z))


def numpy_lstm(x, w_x, b, w_h, length):
  """The LSTM equations, one time step at a time: gates [i, f, g, o]."""
  hidden = w_h.shape[0]
  h, c, out = np.zeros(hidden), np.zeros(hidden), []
  for t in range(length):
    z = x[t] @ w_x + b + h @ w_h
    i, f, g, o = np.split(z, 4)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    h = _sigmoid(o) * np.tanh(c)
    out.append(h)
  return np.array(out), h, c


def _inputs(batch=3, time=7, features=5, seed=0):
  rng = np.random.default_rng(seed)
  x = rng.normal(size=(batch, time, features)).astype(np.float32)
  lengths = np.array([7, 3, 5])[:batch]
  return x, lengths


def test_lstm_matches_numpy_equations():
  x, lengths = _inputs()
  mask = pooling.length_mask(jnp.asarray(lengths), x.shape[1])
  layer = recurrent.LSTM(hidden=4)
  params = layer.init(jax.random.key(0), x, mask)
  p = jax.tree.map(np.asarray, params['params']['forward'])
  # Random non-zero biases so that the bias path is checked too.
  p['input']['bias'] = np.random.default_rng(1).normal(size=16).astype(np.float32)
  hs, (h_last, c_last) = layer.apply({'params': {'forward': p}}, x, mask)
  for b, n in enumerate(lengths):
    ref, h_ref, c_ref = numpy_lstm(x[b].astype(np.float64), p['input']['kernel'],
                                   p['input']['bias'], p['recurrent'], n)
    np.testing.assert_allclose(hs[b, :n], ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(hs[b, n:], 0.0)
    np.testing.assert_allclose(h_last[b], h_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c_last[b], c_ref, rtol=1e-5, atol=1e-6)


def test_bilstm_backward_direction_reads_each_sentence_reversed_within_its_length():
  x, lengths = _inputs()
  mask = pooling.length_mask(jnp.asarray(lengths), x.shape[1])
  layer = recurrent.BiLSTM(hidden=4)
  params = layer.init(jax.random.key(0), x, mask)
  out = np.asarray(layer.apply(params, x, mask))
  p = jax.tree.map(np.asarray, params['params'])
  for b, n in enumerate(lengths):
    fwd, _, _ = numpy_lstm(x[b], p['forward']['input']['kernel'],
                           p['forward']['input']['bias'], p['forward']['recurrent'], n)
    bwd, _, _ = numpy_lstm(x[b, :n][::-1], p['backward']['input']['kernel'],
                           p['backward']['input']['bias'], p['backward']['recurrent'], n)
    np.testing.assert_allclose(out[b, :n, :4], fwd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[b, :n, 4:], bwd[::-1], rtol=1e-5, atol=1e-6)


def _autodiff_scan(gates_x, w_h, mask):
  """The LSTM recurrence as a plain scan, differentiated by JAX (the reference)."""
  num, batch, _, features = gates_x.shape

  def step(carry, inputs):
    h, c = carry
    g_x, m = inputs
    h_new, c_new = recurrent.lstm_cell(g_x + jnp.einsum('dbh,dhk->dbk', h, w_h), c)
    m = m[..., None]
    return (jnp.where(m, h_new, h), jnp.where(m, c_new, c)), jnp.where(m, h_new, 0.0)

  zeros = jnp.zeros((num, batch, features // 4))
  carry, hs = jax.lax.scan(step, (zeros, zeros), (jnp.moveaxis(gates_x, 2, 0),
                                                  jnp.moveaxis(mask, 2, 0)))
  return jnp.moveaxis(hs, 0, 2), carry


@pytest.mark.slow
def test_lstm_scan_backward_pass_equals_autodiff_of_the_recurrence():
  """The hand-written backward pass (one dW contraction after the scan) gives the
  gradients of the plain scan, through outputs, final states and held padding."""
  rng = np.random.default_rng(0)
  d, b, t, h = 2, 5, 9, 4
  gates = jnp.asarray(rng.normal(size=(d, b, t, 4 * h)), jnp.float32)
  w_h = jnp.asarray(0.5 * rng.normal(size=(d, h, 4 * h)), jnp.float32)
  mask = pooling.length_mask(jnp.array([9, 1, 4, 0, 7]), t)
  mask = jnp.stack([mask, jnp.flip(mask, 1)])  # held steps first and last
  w_out, w_h_last, w_c_last = (jnp.asarray(rng.normal(size=s), jnp.float32)
                               for s in ((d, b, t, h), (d, b, h), (d, b, h)))

  def loss(scan):
    def f(gates, w_h):
      hs, (h_last, c_last) = scan(gates, w_h, mask)
      return (hs * w_out).sum() + (h_last * w_h_last).sum() + (c_last * w_c_last).sum()
    return f

  ours = jax.grad(loss(recurrent.lstm_scan), argnums=(0, 1))(gates, w_h)
  reference = jax.grad(loss(_autodiff_scan), argnums=(0, 1))(gates, w_h)
  for a, r in zip(ours, reference):
    np.testing.assert_allclose(a, r, rtol=1e-5, atol=1e-6)
  # The forward pass is the reference's, bit for bit.
  for a, r in zip(jax.tree.leaves(recurrent.lstm_scan(gates, w_h, mask)),
                  jax.tree.leaves(_autodiff_scan(gates, w_h, mask))):
    np.testing.assert_array_equal(a, r)


@pytest.mark.slow
@pytest.mark.parametrize('name,pool', in_tier(
    [('bilstm', 'last'), ('bilstm', 'mean'), ('lstm', 'last'), ('lstm', 'max'),
     ('bow', None)], ('bilstm', 'last')))
def test_padding_never_changes_logits(name, pool):
  fields = {'name': name, 'embed_dim': 8}
  if pool:
    fields.update(hidden=6, pooling=pool)
  model = models.build_model(fields, vocab_size=50, num_classes=3)
  rng = np.random.default_rng(0)
  lengths = np.array([5, 2, 7])
  short = np.zeros((3, 7), np.int32)
  for b, n in enumerate(lengths):
    short[b, :n] = rng.integers(2, 50, n)
  # Longer padding, filled with garbage ids that must be ignored.
  long = np.concatenate([short, np.zeros((3, 9), np.int32)], axis=1)
  for b, n in enumerate(lengths):
    long[b, n:] = rng.integers(2, 50, long.shape[1] - n)
  params = model.init(jax.random.key(0), {'tokens': short, 'lengths': lengths},
                      train=False)
  a = model.apply(params, {'tokens': short, 'lengths': lengths}, train=False).logits
  b = model.apply(params, {'tokens': long, 'lengths': lengths}, train=False).logits
  assert a.shape == (3, 3)
  np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_build_model_errors_name_the_config_key():
  with pytest.raises(UserError, match=r"config.model.name='gru'.*expected one of"):
    models.build_model({'name': 'gru'}, vocab_size=5, num_classes=2)
  with pytest.raises(UserError, match=r"\['hiden'\].*bilstm"):
    models.build_model({'name': 'bilstm', 'hiden': 3}, vocab_size=5, num_classes=2)
  with pytest.raises(UserError, match=r"config.model.pooling='median'"):
    models.build_model({'name': 'lstm', 'pooling': 'median'}, vocab_size=5,
                       num_classes=2)


# Every registered model at the sizes of its paper (each model module's MODELS).
PAPER_SIZES = {name: dict(named.paper) for name, named in models.NAMED.items()}


@pytest.mark.slow
@pytest.mark.full  # every model at paper sizes; each model's own file runs it small
def test_initialising_several_seeds_terminates_for_every_model():
  """jit(vmap(init)) over seed keys stalls XLA:CPU for models with orthogonal
  initialisers (flax's OptimizedLSTMCell, our Bi-LSTM at hidden 150); the engine's
  init path (seedsweep.engine.state.create_train_state) must finish, at paper sizes too."""
  script = textwrap.dedent(f'''
      import sys; sys.path.insert(0, {REPO!r})
      import jax, optax
      from seedsweep import models
      from seedsweep.engine import state
      for name, sizes in sorted({PAPER_SIZES!r}.items()):
        fields = {{'name': name, 'embed_dim': 300, **sizes}}
        model = models.build_model(fields, vocab_size=1000, num_classes=5)
        jax.block_until_ready(state.create_train_state(model, optax.adam(1e-3), (1, 2, 3)))
      print('ok')
  ''')
  proc = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                        timeout=300, check=False)
  assert proc.returncode == 0 and 'ok' in proc.stdout, proc.stderr[-2000:]


def test_seed_init_is_the_same_alone_and_in_a_group():
  import optax  # pylint: disable=g-import-not-at-top
  from seedsweep.engine import state  # pylint: disable=g-import-not-at-top
  model = models.build_model({'name': 'bilstm', 'embed_dim': 8, 'hidden': 6},
                             vocab_size=30, num_classes=2)
  group = state.create_train_state(model, optax.adam(1e-3), (4, 9, 2))
  alone = state.create_train_state(model, optax.adam(1e-3), (9,))
  for g, a in zip(jax.tree.leaves(group.params), jax.tree.leaves(alone.params)):
    np.testing.assert_array_equal(g[1], a[0])
    if np.ptp(g[1]) > 0:  # random leaves (not the zero biases) differ between seeds
      assert not np.array_equal(g[0], g[1])


@pytest.mark.parametrize('name, field, value, message', [
    ('bilstm', 'hidden', 0, r'config.model.hidden=0; expected an int >= 1'),
    ('bilstm', 'hidden', 2.5, r'config.model.hidden=2.5; expected an int >= 1'),
    ('bilstm', 'dropout', 1.0, r'config.model.dropout=1.0; expected a rate in \[0, 1\)'),
    ('joint_slu', 'latent', 'yes', r"config.model.latent='yes'; expected True or False"),
    ('clstm', 'widths', (3, 0), r'config.model.widths=\(3, 0\); expected a non-empty '
     r'tuple of positive ints'),
    ('bilstm', 'hidden', 2**40, r'config.model.hidden=1099511627776; expected an int '
     r'below 2\*\*31'),
    ('mtlstm', 'init_scale', -0.1, r'config.model.init_scale=-0.1; expected a number > 0'),
    ('joint_slu', 'beta', float('nan'), r'config.model.beta=nan; expected a finite'),
    ('joint_slu', 'beta', -1.0, r'config.model.beta=-1.0; expected a number >= 0'),
    ('joint_slu', 'rho', 1.0, r'config.model.rho=1.0; expected a rate in \(0, 1\)'),
    ('dclstm', 'th', 0, r'config.model.th=0; expected an int >= 1'),
    ('dlstm', 'layers', 5000, r'config.model.layers=5000; expected at most 1024'),
])
def test_model_fields_of_the_wrong_type_or_range_are_refused_by_name(name, field, value,
                                                                     message):
  with pytest.raises(UserError, match=message):
    models.build_model({'name': name, field: value}, vocab_size=10, num_classes=2)


def test_dense_layers_need_units_unless_there_are_none():
  with pytest.raises(UserError, match=r'config.model.dh=0 with config.model.dl=3; '
                                      r'expected dh >= 1'):
    models.build_model({'name': 'dclstm', 'dl': 3, 'dh': 0}, vocab_size=10,
                       num_classes=2)
  models.build_model({'name': 'dclstm', 'dl': 0, 'dh': 0}, vocab_size=10, num_classes=2)

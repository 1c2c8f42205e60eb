"""MT-LSTM: the three implementations agree with each other (values and gradients)
and with a step-by-step NumPy implementation of the paper's equations 8-15."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from seedsweep import models
from seedsweep.errors import UserError
from seedsweep.models import mtlstm
from tests.conftest import in_tier
from tests.conftest import assert_logits_ignore_padding
from tests.test_dclstm import count_without_embeddings


def random_blocks(rng, embed_dim, sizes, strategy, scale=0.5):
  """Per-group ``(input, bias, recurrent, peephole)`` NumPy arrays (float64)."""
  groups = len(sizes)
  out = []
  for k, s in enumerate(sizes):
    s_in = sum(sizes[j] for j in mtlstm.senders(k, groups, strategy))
    out.append((rng.uniform(-scale, scale, (embed_dim, 4 * s)),
                rng.uniform(-0.1, 0.1, 4 * s),
                rng.uniform(-scale, scale, (s_in, 4 * s)),
                rng.uniform(-scale, scale, (s_in, 3 * s))))
  return out


def numpy_mtlstm(x, blocks, sizes, strategy):
  """Eqs. 8-15 step by step for one sequence ``x [len, m]``: the held ``h`` after
  the last word, groups in order. Time is 1-indexed; group k fires when t % 2^k == 0
  (k 0-indexed); peepholes read c_{t-1}."""
  groups = len(sizes)
  off = np.concatenate([[0], np.cumsum(sizes)])
  h, c = np.zeros(off[-1]), np.zeros(off[-1])
  sig = lambda z: 1 / (1 + np.exp(-z))
  for t in range(1, len(x) + 1):
    new_h, new_c = h.copy(), c.copy()
    for k in range(groups):
      if t % 2 ** k:
        continue
      w, b, u, v = blocks[k]
      src = mtlstm.senders(k, groups, strategy)
      h_in = np.concatenate([h[off[j]:off[j + 1]] for j in src])
      c_in = np.concatenate([c[off[j]:off[j + 1]] for j in src])
      s = sizes[k]
      z = x[t - 1] @ w + b + h_in @ u
      peep = c_in @ v
      i, f, o = (sig(z[g * s:(g + 1) * s] + peep[g * s:(g + 1) * s]) for g in range(3))
      cell = f * c[off[k]:off[k + 1]] + i * np.tanh(z[3 * s:])
      new_c[off[k]:off[k + 1]] = cell
      new_h[off[k]:off[k + 1]] = o * np.tanh(cell)
    h, c = new_h, new_c
  return h


def jax_inputs(x, blocks, lengths):
  """``(x, groups, lengths)`` as the implementations take them (float32)."""
  f32 = lambda a: jnp.asarray(a, jnp.float32)
  return (f32(x), [tuple(f32(a) for a in b) for b in blocks],
          jnp.asarray(lengths, jnp.int32))


CASES = [([7], 11), ([4, 3, 3], 19), ([2, 2, 2, 2, 2], 37)]


@pytest.mark.slow
@pytest.mark.parametrize('strategy', in_tier(mtlstm.STRATEGIES, mtlstm.STRATEGIES[0]))
@pytest.mark.parametrize('sizes, time', in_tier(CASES, CASES[1]))
def test_every_implementation_matches_the_numpy_equations(sizes, time, strategy):
  rng = np.random.default_rng(len(sizes))
  blocks = random_blocks(rng, 5, sizes, strategy)
  x = rng.normal(size=(4, time, 5))
  period = 2 ** (len(sizes) - 1)
  lengths = [time, period * (time // period), time - 2, 1]  # multiple of P or not
  args = jax_inputs(x, blocks, lengths)
  for name, final in mtlstm.FINAL_STATE.items():
    out = np.asarray(final(*args, sizes, strategy))
    for b, n in enumerate(lengths):
      np.testing.assert_allclose(out[b], numpy_mtlstm(x[b, :n], blocks, sizes, strategy),
                                 rtol=2e-5, atol=2e-6, err_msg=f'{name} length {n}')


@pytest.mark.slow
@pytest.mark.full  # values: the NumPy test above; this one compiles three programs
@pytest.mark.parametrize('strategy', mtlstm.STRATEGIES)
@pytest.mark.parametrize('groups', [1, 3, 4])  # 5 groups: the NumPy test's CASES
def test_the_three_paths_agree_in_value_and_gradient(groups, strategy):
  sizes = mtlstm.group_sizes(3 * groups + 1, groups)
  period = 2 ** (groups - 1)
  time = period + 3  # every group fires, the slowest once; lengths cut its period
  rng = np.random.default_rng(groups)
  blocks = random_blocks(rng, 4, sizes, strategy)
  lengths = [time, period, period - 1 if period > 1 else 2, 3]
  x, mask_w = rng.normal(size=(4, time, 4)), rng.normal(size=(4, sum(sizes)))
  xs, groups, lens = jax_inputs(x, blocks, lengths)

  def loss(xs, groups, final):
    return jnp.sum(jnp.sin(final(xs, groups, lens, sizes, strategy)) * mask_w)

  # Jitted: one program a path (eagerly, some two hundred small ones a case).
  value_and_grad = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)), static_argnums=2)
  results = {name: value_and_grad(xs, groups, final)
             for name, final in mtlstm.FINAL_STATE.items()}
  ref_value, ref_grads = results['masked']
  for name, (value, grads) in results.items():
    np.testing.assert_allclose(value, ref_value, rtol=1e-5, atol=1e-6, err_msg=name)
    for got, want in zip(jax.tree.leaves(grads), jax.tree.leaves(ref_grads)):
      np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=name)


@pytest.mark.slow
@pytest.mark.parametrize('name', in_tier(mtlstm.IMPLEMENTATIONS,
                                         mtlstm.IMPLEMENTATIONS[0]))
def test_a_group_whose_period_exceeds_the_length_gives_zeros(name):
  sizes = [2] * 5  # periods 1, 2, 4, 8, 16
  rng = np.random.default_rng(0)
  blocks = random_blocks(rng, 3, sizes, 'f2s')
  args = jax_inputs(rng.normal(size=(2, 20, 3)), blocks, [3, 20])
  out = np.asarray(mtlstm.FINAL_STATE[name](*args, sizes, 'f2s'))
  # Length 3: groups 1-2 fired (periods 1, 2), groups 3-5 never did.
  assert np.all(out[0, :4] != 0) and np.all(out[0, 4:] == 0)
  # Length 20: every group fired (group 5 at t = 16).
  assert np.all(out[1] != 0)


@pytest.mark.slow
def test_one_group_is_a_plain_lstm_with_full_peepholes():
  """``groups=1``: one scan, every step active; equal to the LSTM equations."""
  rng = np.random.default_rng(3)
  blocks = random_blocks(rng, 4, [6], 'f2s')
  x = rng.normal(size=(1, 9, 4))
  sig = lambda z: 1 / (1 + np.exp(-z))
  w, b, u, v = blocks[0]
  h, c = np.zeros(6), np.zeros(6)
  for t in range(9):
    z = x[0, t] @ w + b + h @ u
    peep = c @ v
    i, f, o = sig(z[:6] + peep[:6]), sig(z[6:12] + peep[6:12]), sig(z[12:18] + peep[12:])
    c = f * c + i * np.tanh(z[18:])
    h = o * np.tanh(c)
  for final in mtlstm.FINAL_STATE.values():
    out = final(*jax_inputs(x, blocks, [9]), [6], 'f2s')
    np.testing.assert_allclose(out[0], h, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize('strategy', mtlstm.STRATEGIES)
def test_parameter_count_holds_only_the_allowed_blocks(strategy):
  model = models.build_model({'name': 'mtlstm', 'embed_dim': 100, 'hidden': 60,
                              'groups': 3, 'strategy': strategy},
                             vocab_size=50, num_classes=2)
  expected = mtlstm.parameter_count(100, 60, 3, strategy, 2)
  assert count_without_embeddings(model) == expected
  # 20/20/20: each group 4*20*101 input+bias, 7*20*(senders) recurrent+peephole.
  assert expected == 3 * 4 * 20 * 101 + 7 * 20 * (20 + 40 + 60) + 60 * 2 + 2
  # One group: an LSTM of 60 with full peepholes, 49.4K (docs/models.md §2.1).
  assert mtlstm.parameter_count(100, 60, 1, 'f2s', 2) - 122 == 49_440


def test_group_sizes_give_the_extra_units_to_the_fastest_groups():
  assert mtlstm.group_sizes(55, 3) == [19, 18, 18]
  assert mtlstm.group_sizes(100, 5) == [20] * 5


@pytest.mark.slow
@pytest.mark.full  # padding: test_models.py; the implementations agree: above
@pytest.mark.parametrize('implementation', mtlstm.IMPLEMENTATIONS)
def test_logits_do_not_depend_on_padding(implementation):
  assert_logits_ignore_padding(models.build_model(
      {'name': 'mtlstm', 'embed_dim': 6, 'hidden': 9, 'groups': 3,
       'implementation': implementation}, vocab_size=30, num_classes=3))


@pytest.mark.parametrize('field, value', [('strategy', 'both'),
                                          ('implementation', 'fast'), ('groups', 0)])
def test_bad_options_name_the_config_field(field, value):
  batch = {'tokens': jnp.ones((1, 4), jnp.int32), 'lengths': jnp.array([4])}
  # Refused when the model is built (sizes) or initialised (options it checks).
  with pytest.raises((ValueError, UserError), match=f'config.model.{field}='):
    models.build_model({'name': 'mtlstm', 'embed_dim': 4, 'hidden': 6, field: value},
                       vocab_size=10, num_classes=2).init(jax.random.key(0), batch,
                                                          train=False)

"""DLSTM: a NumPy step-by-step implementation of the paper's equations, receptive
fields, parameter counts, padding, and gradients reaching every parameter."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from seedsweep import models
from seedsweep.errors import UserError
from seedsweep.models import dlstm
from tests.conftest import assert_logits_ignore_padding
from tests.test_dclstm import count_without_embeddings


def random_layer(rng, k, h, peephole='full'):
  return (rng.normal(size=(k, 4 * h)) * 0.5, rng.normal(size=(h, 4 * h)) * 0.5,
          rng.normal(size=(h, h) if peephole == 'full' else (h,)) * 0.5,
          rng.normal(size=4 * h) * 0.1)


def numpy_layer(x, kernel, recurrent, peephole, bias, cell):
  """Eqs. 2-12 word by word for ``x [time, k]`` (three units): ``sum_j h_j``."""
  sig = lambda v: 1 / (1 + np.exp(-v))
  peep = (lambda c: c @ peephole) if peephole.ndim == 2 else (lambda c: c * peephole)
  time, h = len(x), recurrent.shape[0]
  cells = np.zeros((3, time, h))
  outs = np.zeros((3, time, h))
  for t in range(time):
    p = x[t] @ kernel + bias
    i, cand, _, o = np.split(p, 4)
    cells[0, t] = sig(i) * np.tanh(cand)
    outs[0, t] = sig(o + peep(cells[0, t])) * np.tanh(cells[0, t])
    for j in (1, 2):
      q = p + outs[j - 1, t] @ recurrent
      i, cand, f, o = np.split(q, 4)
      lower_prev = cells[j - 1, t - 1] if t > 0 else np.zeros(h)
      if cell == 'literal':  # eq. 10 as printed
        cells[j, t] = sig(i) * np.tanh(cand) * lower_prev + sig(f) * cells[j - 1, t]
      else:  # the unit's own previous cell
        own_prev = cells[j, t - 1] if t > 0 else np.zeros(h)
        cells[j, t] = sig(f) * own_prev + sig(i) * np.tanh(cand) * lower_prev
      outs[j, t] = sig(o + peep(cells[j, t])) * np.tanh(cells[j, t])
  return outs.sum(0)


@pytest.mark.parametrize('peephole', dlstm.PEEPHOLES)
@pytest.mark.parametrize('cell', dlstm.CELLS)
def test_layer_matches_a_numpy_implementation_of_the_equations(cell, peephole):
  rng = np.random.default_rng(1)
  x = rng.normal(size=(2, 9, 5))
  params = random_layer(rng, 5, 4, peephole)
  out = dlstm.dlstm_layer(jnp.asarray(x, jnp.float32),
                          *[jnp.asarray(p, jnp.float32) for p in params], cell=cell)
  for b in range(2):
    np.testing.assert_allclose(out[b], numpy_layer(x[b], *params, cell),
                               rtol=1e-4, atol=1e-5)


def moved_positions(layers, position, cell='literal', time=14):
  """Positions of the top layer's output that change when word ``position`` does."""
  rng = np.random.default_rng(2)
  params = [random_layer(rng, 5 if l == 0 else 4, 4) for l in range(layers)]

  def run(x):
    for p in params:
      x = dlstm.dlstm_layer(x, *[jnp.asarray(a, jnp.float32) for a in p], cell=cell)
    return np.asarray(x[0])

  x = rng.normal(size=(1, time, 5)).astype(np.float32)
  nudged = x.copy()
  nudged[0, position] += 1.0
  diff = np.abs(run(jnp.asarray(nudged)) - run(jnp.asarray(x))).max(axis=-1)
  return list(np.nonzero(diff > 0)[0])


def test_receptive_field_is_the_trigram_after_one_layer_and_seven_words_after_three():
  assert moved_positions(1, 4) == [4, 5, 6]
  assert moved_positions(3, 4) == list(range(4, 11))
  assert moved_positions(3, 0) == list(range(0, 7))


def test_own_cell_reading_carries_a_word_to_every_later_position():
  assert moved_positions(1, 4, cell='own') == list(range(4, 14))


def test_parameter_count_is_the_papers():
  model = models.build_model({'name': 'dlstm', 'embed_dim': 300, 'hidden': 256},
                             vocab_size=50, num_classes=2)
  expected = 635_904 + 2 * 590_848 + 768 * 2 + 2  # docs/models.md §1.1
  assert dlstm.parameter_count(300, 256, 3, 2) == expected
  assert count_without_embeddings(model) == expected


def small(**kw):
  return models.build_model({'name': 'dlstm', 'embed_dim': 6, 'hidden': 5, **kw},
                            vocab_size=30, num_classes=3)


@pytest.mark.slow
@pytest.mark.full  # padding: test_models.py
@pytest.mark.parametrize('cell', dlstm.CELLS)
def test_logits_do_not_depend_on_padding(cell):
  assert_logits_ignore_padding(small(cell=cell))


@pytest.mark.slow
@pytest.mark.full  # a gradient to every parameter: test_clstm.py
@pytest.mark.parametrize('peephole', dlstm.PEEPHOLES)
def test_the_gradient_reaches_every_parameter(peephole):
  model = small(peephole=peephole)
  batch = {'tokens': jnp.asarray([[3, 4, 5, 6], [7, 8, 0, 0]]),
           'lengths': jnp.asarray([4, 2]), 'labels': jnp.asarray([0, 2])}
  params = model.init(jax.random.key(0), batch, train=False)['params']

  def loss(p):
    logits = model.apply({'params': p}, batch, train=True,
                         rngs={'dropout': jax.random.key(1)}).logits
    return -jnp.take_along_axis(jax.nn.log_softmax(logits),
                                batch['labels'][:, None], axis=1).mean()

  grads = jax.grad(loss)(params)
  for path, g in jax.tree_util.tree_flatten_with_path(grads)[0]:
    if 'embedding' in jax.tree_util.keystr(path):
      continue  # only the batch's rows move
    assert np.any(np.asarray(g) != 0), jax.tree_util.keystr(path)


@pytest.mark.parametrize('field, value', [('cell', 'typo'), ('peephole', 'none'),
                                          ('layers', 0)])
def test_bad_options_name_the_config_field(field, value):
  batch = {'tokens': jnp.ones((1, 4), jnp.int32), 'lengths': jnp.array([4])}
  # Refused when the model is built (sizes) or initialised (options it checks).
  with pytest.raises((ValueError, UserError), match=f'config.model.{field}='):
    small(**{field: value}).init(jax.random.key(0), batch, train=False)

"""DC-Bi-LSTM: parameter counts of the paper's tables, padding invariance, a NumPy
reference of the equations, and a training step that moves every parameter."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from seedsweep import models
from seedsweep.models import dclstm
from seedsweep.run import describe
from tests.conftest import in_tier


def count_without_embeddings(model, length=8):
  params = jax.eval_shape(lambda: model.init(
      {'params': jax.random.key(0)}, {'tokens': jnp.zeros((1, length), jnp.int32),
                                      'lengths': jnp.full((1,), length)},
      train=False))['params']
  return sum(r['params'] for r in describe.parameter_rows(params) if not r['embedding'])


# (dl, dh, th) -> parameters with 5 classes, embeddings excluded (docs/models.md §3.1).
PAPER_TABLES = {
    (15, 13, 100): 1_407_565,  # Table 1/3 main model, "1.40M"
    (0, 0, 300): 1_445_405,    # Table 3 row 1: Bi-LSTM 300, "1.44M"
    (5, 40, 100): 1_443_405, (10, 20, 100): 1_443_405, (20, 10, 100): 1_443_405,  # T3
    (0, 0, 100): 321_805,      # Tables 4/5 row 1: Bi-LSTM 100, "0.32M"
    (5, 10, 100): 542_205, (10, 10, 100): 802_605, (15, 10, 100): 1_103_005,  # T4
    (10, 5, 100): 542_205, (10, 15, 100): 1_103_005,  # Table 5 (dh 10, 20 above)
}


@pytest.mark.parametrize('sizes, expected', sorted(PAPER_TABLES.items()))
def test_parameter_counts_equal_the_papers_tables(sizes, expected):
  dl, dh, th = sizes
  model = models.build_model({'name': 'dclstm', 'dl': dl, 'dh': dh, 'th': th},
                             vocab_size=100, num_classes=5)
  assert count_without_embeddings(model) == expected
  assert dclstm.parameter_count(dl, dh, th, 5) == expected


def test_stacked_baseline_reads_only_the_layer_below():
  model = models.build_model({'name': 'stacked_bilstm', 'dl': 3, 'dh': 10, 'th': 20},
                             vocab_size=100, num_classes=2)
  assert count_without_embeddings(model) == dclstm.parameter_count(
      3, 10, 20, 2, dense=False)
  assert dclstm.parameter_count(3, 10, 20, 2, dense=False) < dclstm.parameter_count(
      3, 10, 20, 2)


def small(dense=True, **kw):
  return dclstm.DenseBiLSTM(vocab_size=30, num_classes=3, embed_dim=6, dl=2, dh=3,
                            th=4, dense=dense, **kw)


def batch_of(tokens, lengths):
  return {'tokens': jnp.asarray(tokens, jnp.int32), 'lengths': jnp.asarray(lengths)}


@pytest.mark.slow
@pytest.mark.full  # padding: test_models.py
def test_outputs_do_not_depend_on_padding():
  model = small()
  rng = np.random.default_rng(0)
  tokens = rng.integers(2, 30, (3, 9))
  lengths = np.array([9, 4, 1])
  b = batch_of(tokens, lengths)
  params = model.init({'params': jax.random.key(1)}, b, train=False)
  out = model.apply(params, b, train=False).logits
  garbage = np.where(np.arange(9)[None] < lengths[:, None], tokens, 7)
  wider = np.concatenate([garbage, rng.integers(2, 30, (3, 5))], axis=1)
  np.testing.assert_allclose(model.apply(params, batch_of(wider, lengths), train=False).logits,
                             out, rtol=1e-5, atol=1e-6)
  # Alone in its own batch, cut to its length, a sentence gets the same logits.
  alone = model.apply(params, batch_of(tokens[1:2, :4], lengths[1:2]), train=False).logits
  np.testing.assert_allclose(alone[0], out[1], rtol=1e-5, atol=1e-6)


def _sigmoid(x):
  return 1 / (1 + np.exp(-x))


def numpy_lstm(x, kernel, bias, recurrent):
  """The paper's LSTM over ``x [T, in]``: ``[i;f;g;o] = W[x;h] + b`` (our gate order)."""
  hidden = recurrent.shape[0]
  h, c, out = np.zeros(hidden), np.zeros(hidden), []
  for t in range(len(x)):
    z = x[t] @ kernel + h @ recurrent + bias
    i, f, g, o = np.split(z, 4)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    h = _sigmoid(o) * np.tanh(c)
    out.append(h)
  return np.array(out)


def numpy_dclstm(p, tokens, length, dense, widths):
  """DC-Bi-LSTM eqs. 11-12 of one sentence by explicit concatenation."""
  e = p['embedding']['embedding'][tokens[:length]]
  outputs = [e]
  for l, w in enumerate(widths):
    layer = p[f'layer_{l + 1}']
    x = np.concatenate(outputs, -1) if dense else outputs[-1]
    k, b = layer['kernel'], layer['bias']
    fw = numpy_lstm(x, k[:, :4 * w], b[:4 * w], layer['recurrent_forward'])
    bw = numpy_lstm(x[::-1], k[:, 4 * w:], b[4 * w:], layer['recurrent_backward'])[::-1]
    outputs.append(np.concatenate([fw, bw], -1))
  pooled = outputs[-1].mean(0)
  return pooled @ p['classifier']['kernel'] + p['classifier']['bias']


@pytest.mark.slow
@pytest.mark.parametrize('projection', in_tier(['concat', 'blocks'], 'concat'))
@pytest.mark.parametrize('dense', in_tier([True, False], True))
def test_matches_a_numpy_implementation_of_the_papers_equations(dense, projection):
  model = small(dense, projection=projection)
  rng = np.random.default_rng(1)
  tokens = rng.integers(2, 30, (2, 7))
  lengths = np.array([7, 3])
  b = batch_of(tokens, lengths)
  params = model.init({'params': jax.random.key(2)}, b, train=False)
  # Random (not zero) biases, so every term of the equations is exercised.
  params = jax.tree.map(lambda x: x + 0.1 * jax.random.normal(jax.random.key(3), x.shape),
                        params)
  out = np.asarray(model.apply(params, b, train=False).logits)
  p = jax.tree.map(lambda x: np.asarray(x, np.float64), params['params'])
  for i in range(2):
    np.testing.assert_allclose(
        out[i], numpy_dclstm(p, tokens[i], lengths[i], dense, model.widths()),
        rtol=1e-4, atol=1e-5)


def test_an_unknown_projection_is_a_clear_error():
  with pytest.raises(ValueError, match="config.model.projection='fused'"):
    small(projection='fused').init({'params': jax.random.key(0)},
                                   batch_of(np.ones((1, 4)), [4]), train=False)


def test_forget_gate_biases_start_at_one():
  model = small()
  b = batch_of(np.ones((1, 4)), [4])
  bias = model.init({'params': jax.random.key(0)}, b, train=False)['params'][
      'layer_1']['bias'].reshape(2, 4, 3)
  np.testing.assert_array_equal(bias[:, 1], 1.0)
  np.testing.assert_array_equal(bias[:, [0, 2, 3]], 0.0)


@pytest.mark.slow
@pytest.mark.full  # a gradient to every parameter: test_clstm.py
def test_one_gradient_step_reaches_every_parameter():
  model = small()
  rng = np.random.default_rng(4)
  b = batch_of(rng.integers(2, 30, (4, 6)), [6, 5, 2, 1])
  params = model.init({'params': jax.random.key(5)}, b, train=False)['params']
  labels = jnp.array([0, 1, 2, 1])

  def loss(p):
    logits = model.apply({'params': p}, b, train=True,
                         rngs={'dropout': jax.random.key(6)}).logits
    return -jax.nn.log_softmax(logits)[jnp.arange(4), labels].mean()

  grads = jax.grad(loss)(params)
  for path, g in jax.tree_util.tree_leaves_with_path(grads):
    if 'embedding' in jax.tree_util.keystr(path):
      continue  # only the rows of the words in the batch move
    assert np.abs(np.asarray(g)).max() > 0, jax.tree_util.keystr(path)

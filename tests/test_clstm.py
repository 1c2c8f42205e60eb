"""C-LSTM: the classifying state is the last real window; a NumPy reference of the
equations; padding invariance; the literal and multi-width variants."""
import jax
import numpy as np
import pytest

from seedsweep import models
from seedsweep.models import clstm
from tests.test_dclstm import batch_of
from tests.test_dclstm import count_without_embeddings
from tests.test_dclstm import numpy_lstm


@pytest.mark.parametrize('filters, hidden, classes, approx', [
    (150, 150, 2, (135_150, 180_600)),  # SST: "135K conv + 181K LSTM"
    (300, 300, 6, (270_300, 721_200)),  # TREC: "270K conv + 721K LSTM"
])
def test_parameter_counts_match_the_paper(filters, hidden, classes, approx):
  model = models.build_model({'name': 'clstm', 'filters': filters, 'hidden': hidden},
                             vocab_size=50, num_classes=classes)
  expected = sum(approx) + hidden * classes + classes
  assert count_without_embeddings(model) == expected
  assert clstm.parameter_count(filters, hidden, classes) == expected


def small(**kw):
  return clstm.CLSTM(vocab_size=30, num_classes=3, embed_dim=5, filters=4, hidden=6,
                     **kw)


def numpy_clstm(p, tokens, length, k=3):
  """Eqs. 1-4 of one sentence: windows of its real words only, state at the last."""
  x = p['embedding']['embedding'][tokens[:length]]
  if length < k:
    x = np.concatenate([x, np.zeros((k - length, x.shape[1]))])
  conv = p[f'conv_{k}']
  q = np.array([np.maximum(0, sum(x[j + i] @ conv['kernel'][i] for i in range(k))
                           + conv['bias']) for j in range(len(x) - k + 1)])
  lstm = p['lstm']['forward']
  h = numpy_lstm(q, lstm['input']['kernel'], lstm['input']['bias'], lstm['recurrent'])
  return h[-1] @ p['classifier']['kernel'] + p['classifier']['bias']


@pytest.mark.slow
def test_the_last_real_window_classifies_and_matches_numpy():
  model = small()
  rng = np.random.default_rng(0)
  tokens = rng.integers(2, 30, (4, 9))
  lengths = np.array([9, 5, 3, 2])
  b = batch_of(tokens, lengths)
  params = model.init({'params': jax.random.key(1)}, b, train=False)
  params = jax.tree.map(lambda x: x + 0.1 * jax.random.normal(jax.random.key(2), x.shape),
                        params)
  out = np.asarray(model.apply(params, b, train=False).logits)
  p = jax.tree.map(lambda x: np.asarray(x, np.float64), params['params'])
  for i in range(4):
    np.testing.assert_allclose(out[i], numpy_clstm(p, tokens[i], lengths[i]),
                               rtol=1e-4, atol=1e-5)
  # Words after the last real one (any ids, any padded length) change nothing.
  garbage = np.where(np.arange(9)[None] < lengths[:, None], tokens, 11)
  wider = np.concatenate([garbage, rng.integers(2, 30, (4, 7))], axis=1)
  np.testing.assert_allclose(model.apply(params, batch_of(wider, lengths), train=False).logits,
                             out, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
@pytest.mark.full  # variants of the NumPy check above
def test_literal_variant_reads_every_padded_window_up_to_maxlen():
  model = small(literal=True, maxlen=12)
  rng = np.random.default_rng(3)
  tokens = rng.integers(2, 30, (2, 6))
  lengths = np.array([6, 3])
  b = batch_of(tokens, lengths)
  params = model.init({'params': jax.random.key(4)}, b, train=False)
  out = model.apply(params, b, train=False).logits
  # The batch's own padded length does not matter: everything is padded to maxlen.
  wider = batch_of(np.pad(tokens, ((0, 0), (0, 4))), lengths)
  np.testing.assert_allclose(model.apply(params, wider, train=False).logits, out, rtol=1e-5)
  # The end padding is a learned vector, so a sentence's padding matters.
  moved = jax.tree.map(lambda x: x, params)
  moved['params']['pad_vector'] = moved['params']['pad_vector'] + 1.0
  assert not np.allclose(model.apply(moved, b, train=False).logits, out)
  primary = small()
  assert not np.allclose(primary.apply(
      primary.init({'params': jax.random.key(4)}, b, train=False), b, train=False).logits, out)


@pytest.mark.slow
@pytest.mark.full  # variants of the NumPy check above
def test_multi_width_variant_cuts_every_map_to_the_shortest():
  model = small(widths=(2, 3, 4))
  b = batch_of(np.arange(2, 16).reshape(2, 7), [7, 4])
  params = model.init({'params': jax.random.key(0)}, b, train=False)
  assert params['params']['lstm']['forward']['input']['kernel'].shape == (12, 24)
  assert model.apply(params, b, train=False).logits.shape == (2, 3)


@pytest.mark.slow
def test_one_gradient_step_reaches_every_parameter():
  model = small(widths=(3, 4))
  b = batch_of(np.random.default_rng(5).integers(2, 30, (4, 6)), [6, 5, 2, 4])
  params = model.init({'params': jax.random.key(5)}, b, train=False)['params']

  def loss(p):
    logits = model.apply({'params': p}, b, train=True,
                         rngs={'dropout': jax.random.key(6)}).logits
    return jax.nn.logsumexp(logits, -1).mean() - logits[:, 0].mean()

  grads = jax.grad(loss)(params)
  for path, g in jax.tree_util.tree_leaves_with_path(grads):
    assert np.abs(np.asarray(g)).max() > 0, jax.tree_util.keystr(path)

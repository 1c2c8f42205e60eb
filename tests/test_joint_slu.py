"""The joint slot-filling and intent model: teacher forcing against greedy decoding,
the attention heads, the sparsity penalty, the convolution window, gradients."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from seedsweep.models import joint_slu
from tests.conftest import in_tier


def model(**kw):
  fields = dict(vocab_size=30, num_classes=4, num_tags=7, embed_dim=8, tag_dim=5,
                filters=6, hidden=9)
  fields.update(kw)
  return joint_slu.JointSLU(**fields)


def batch(seed=0, lengths=(10, 6, 2)):
  rng = np.random.default_rng(seed)
  return {'tokens': jnp.asarray(rng.integers(1, 30, (len(lengths), 10))),
          'lengths': jnp.asarray(lengths),
          'tags': jnp.asarray(rng.integers(0, 7, (len(lengths), 10))),
          'labels': jnp.asarray(rng.integers(0, 4, len(lengths)))}


@pytest.mark.slow
@pytest.mark.parametrize('head', in_tier(joint_slu.HEADS, 'sparse'))
def test_teacher_forcing_on_the_greedy_tags_reproduces_greedy_decoding(head):
  m, b = model(head=head), batch()
  params = m.init(jax.random.key(0), b, train=False)
  greedy = m.apply(params, b, train=False, greedy=True)
  forced = m.apply(params, {**b, 'tags': greedy.predicted_tags}, train=False,
                   greedy=False)
  for key in ('tag_logits', 'logits', 'attention', 'penalty'):
    np.testing.assert_allclose(getattr(forced, key), getattr(greedy, key), rtol=1e-5,
                               atol=1e-6)
  real = np.arange(10)[None] < np.asarray(b['lengths'])[:, None]
  np.testing.assert_array_equal(np.asarray(greedy.predicted_tags)[real],
                                np.asarray(greedy.tag_logits.argmax(-1))[real])
  # Other previous tags give other outputs: the tags really are fed back.
  other = m.apply(params, {**b, 'tags': (greedy.predicted_tags + 1) % 7}, train=False,
                  greedy=False)
  assert not np.allclose(other.tag_logits, greedy.tag_logits)


@pytest.mark.slow
def test_sparse_attention_weights_are_sigmoids_not_a_distribution():
  b = batch(lengths=(10, 6, 2))
  mask = np.arange(10)[None] < np.asarray(b['lengths'])[:, None]
  outs = {}
  for head in joint_slu.HEADS:
    m = model(head=head)
    outs[head] = m.apply(m.init(jax.random.key(1), b, train=False), b,
                         train=False).attention
  sparse = np.asarray(outs['sparse'])
  assert np.all((sparse > 0) & (sparse < 1) | ~mask) and np.all(sparse[~mask] == 0)
  assert not np.allclose(sparse.sum(1), 1.0)
  np.testing.assert_allclose(np.asarray(outs['softmax']).sum(1), 1.0, rtol=1e-6)
  np.testing.assert_allclose(np.asarray(outs['mean'])[mask.nonzero()],
                             np.repeat(1 / np.array([10, 6, 2]), [10, 6, 2]))


def test_sparsity_penalty_matches_a_hand_computation():
  weights = jnp.asarray([[0.2, 0.4, 0.9], [0.6, 0.0, 0.0]])
  mask = jnp.asarray([[True, True, True], [True, False, False]])
  rho, beta = 0.1, 0.5
  kl = lambda q: rho * np.log(rho / q) + (1 - rho) * np.log((1 - rho) / (1 - q))
  # t=1: (0.2 + 0.6) / 2; t=2: 0.4 alone; t=3: 0.9 alone.
  expected = beta * (kl(0.4) + kl(0.4) + kl(0.9))
  assert float(joint_slu.sparsity_penalty(weights, mask, rho, beta)) == pytest.approx(
      expected, rel=1e-5)
  m, b = model(head='sparse', rho=rho, beta=beta), batch()
  out = m.apply(m.init(jax.random.key(0), b, train=False), b, train=False)
  mask = np.arange(10)[None] < np.asarray(b['lengths'])[:, None]
  assert float(out.penalty) == pytest.approx(
      float(joint_slu.sparsity_penalty(out.attention, jnp.asarray(mask), rho, beta)))
  assert float(model(head='mean').apply(m.init(jax.random.key(0), b, train=False), b,
                                        train=False).penalty) == 0.0


@pytest.mark.slow
def test_a_word_reaches_the_states_up_to_three_tokens_before_it():
  """Widths 3, 5, 7: the window of token t ends at t + 3; the LSTM carries forward."""
  m, b = model(), batch(lengths=(10,))
  params = m.init(jax.random.key(0), b, train=False)
  base = m.apply(params, b, train=False).tag_logits[0]
  nudged = {**b, 'tokens': b['tokens'].at[0, 6].set((b['tokens'][0, 6] + 1) % 30)}
  moved = np.abs(m.apply(params, nudged, train=False).tag_logits[0] - base).max(-1) > 0
  assert list(np.nonzero(moved)[0]) == [3, 4, 5, 6, 7, 8, 9]


VARIANTS = [{}, {'latent': True, 'num_tags': 0}, {'cnn': False},
            {'cnn': False, 'independent': True}, {'cnn': False, 'num_tags': 0}]


@pytest.mark.slow
@pytest.mark.full  # a gradient to every parameter: test_clstm.py
@pytest.mark.parametrize('variant', VARIANTS)
def test_one_gradient_step_reaches_every_parameter(variant):
  m, b = model(**variant), batch()
  params = m.init(jax.random.key(0), b, train=False)['params']

  def loss(p):
    out = m.apply({'params': p}, b, train=True, rngs={'dropout': jax.random.key(2)})
    logp = jax.nn.log_softmax(out.logits)
    total = -jnp.take_along_axis(logp, b['labels'][:, None], 1).mean() + out.penalty
    if out.tag_logits is not None:
      mask = jnp.arange(10)[None] < b['lengths'][:, None]
      tag_logp = jnp.take_along_axis(jax.nn.log_softmax(out.tag_logits),
                                     b['tags'][..., None], -1)[..., 0]
      total -= (tag_logp * mask).sum(1).mean()
    return total

  grads = jax.grad(loss)(params)
  for path, g in jax.tree_util.tree_flatten_with_path(grads)[0]:
    name = jax.tree_util.keystr(path)
    if 'embedding' in name and 'tag_embedding' not in name:
      continue  # only the batch's word rows move
    assert np.any(np.asarray(g) != 0), name


@pytest.mark.parametrize('fields, message', [
    ({'head': 'max'}, 'config.model.head='),
    ({'num_tags': 0}, 'config.model.num_tags=0'),
    ({'latent': True, 'cnn': False}, 'config.model.latent=True'),
    ({'widths': (3, 4)}, 'config.model.widths='),
    ({'independent': True}, 'config.model.independent=True'),
])
def test_bad_options_name_the_config_field(fields, message):
  m, b = model(**fields), batch()
  with pytest.raises(ValueError, match=message):
    m.init(jax.random.key(0), b, train=False)


@pytest.mark.slow
@pytest.mark.full  # the golden joint_atis_quick's config and programs (--all)
def test_quick_atis_config_reports_slot_f1_and_intent_error_per_seed(tmp_path):
  import seedsweep  # pylint: disable=g-import-not-at-top
  from tests import golden_runs  # pylint: disable=g-import-not-at-top
  # The golden run's config (tests/golden_runs.py), so the two share compiled
  # programs, whichever compiles them first.
  config = seedsweep.load_config(golden_runs.GOLDEN['joint_atis_quick'],
                                 train__progress=False)
  results = seedsweep.train(config, str(tmp_path), print_fn=lambda *a: None)
  metrics = results['metrics']
  for split in ('dev', 'test'):
    assert len(metrics[f'{split}_slot_f1']) == 2
    assert all(0 < f <= 100 for f in metrics[f'{split}_slot_f1'])
    np.testing.assert_allclose(metrics[f'{split}_intent_error'],
                               100 - np.asarray(metrics[f'{split}_accuracy']))
  assert results['paper']['value'] == 96.98
  assert results['paper']['other'] == {'test_intent_error': 5.12}

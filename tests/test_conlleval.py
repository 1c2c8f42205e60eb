"""Slot F1 by chunks, as conlleval counts them, on hand-worked sentences."""
import pytest

from seedsweep.engine import conlleval


@pytest.mark.parametrize('tags, expected', [
    (['O', 'O'], set()),
    (['B-a', 'I-a', 'O', 'B-b'], {('a', 0, 1), ('b', 3, 3)}),
    (['B-a', 'B-a'], {('a', 0, 0), ('a', 1, 1)}),           # B always opens a chunk
    (['I-a', 'I-a', 'O'], {('a', 0, 1)}),                    # a broken I- opens one too
    (['O', 'I-a', 'B-a', 'I-a'], {('a', 1, 1), ('a', 2, 3)}),
    (['B-a', 'I-b', 'I-b'], {('a', 0, 0), ('b', 1, 2)}),     # a type change splits
    (['B-a', 'I-a', 'I-a'], {('a', 0, 2)}),                  # runs to the end
    (['B-to.city', 'O', 'I-to.city'], {('to.city', 0, 0), ('to.city', 2, 2)}),
])
def test_chunks(tags, expected):
  assert conlleval.chunks(tags) == expected


def test_corpus_f1_counts_chunks_over_sentences():
  gold = [['B-from', 'I-from', 'O', 'B-to'], ['B-day', 'O']]
  pred = [['B-from', 'O', 'O', 'B-to'],      # from (0,0) wrong span; to right
          ['B-day', 'B-time']]               # day right; time spurious
  # gold chunks 3, predicted 4, correct 2: P 50, R 66.67, F1 57.14
  assert conlleval.chunk_counts(gold, pred) == (2, 4, 3)
  precision, recall, f1 = conlleval.f1_from_counts(2, 4, 3)
  assert precision == pytest.approx(50.0)
  assert recall == pytest.approx(200 / 3)
  assert f1 == pytest.approx(2 * 50 * (200 / 3) / (50 + 200 / 3))
  assert conlleval.slot_f1(gold, pred) == pytest.approx(f1)


def test_a_broken_i_sequence_matches_a_gold_chunk_of_the_same_span():
  assert conlleval.slot_f1([['B-a', 'I-a', 'O']], [['I-a', 'I-a', 'O']]) == 100.0
  assert conlleval.slot_f1([['B-a', 'I-a', 'O']], [['B-a', 'I-b', 'O']]) == 0.0


def test_o_only_sentences_and_empty_predictions():
  assert conlleval.slot_f1([['O']], [['O']]) == 0.0  # no chunks at all: 0, as conlleval
  assert conlleval.f1_from_counts(0, 0, 5) == (0.0, 0.0, 0.0)


def test_bad_input_is_named():
  with pytest.raises(ValueError, match="slot tag 'X-a'"):
    conlleval.chunks(['X-a'])
  with pytest.raises(ValueError, match='2 gold and 1 predicted'):
    conlleval.chunk_counts([['O', 'O']], [['O']])


def test_chunk_sums_in_jit_equal_the_counts_on_random_sequences():
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  names = ['O', 'B-a', 'I-a', 'B-b', 'I-b', 'B-c.d', 'I-c.d']
  prefix, kind = conlleval.tag_tables(names)
  rng = np.random.default_rng(0)
  lengths = rng.integers(0, 12, 64)
  gold = rng.integers(0, len(names), (64, 12))
  # Predictions: gold with some tags changed, so that some chunks match.
  pred = np.where(rng.random((64, 12)) < 0.2, rng.integers(0, len(names), (64, 12)), gold)
  weights = (rng.random(64) < 0.9).astype(np.float32)
  mask = np.arange(12)[None] < lengths[:, None]
  sums = jax.jit(conlleval.chunk_sums)(jnp.asarray(gold), jnp.asarray(pred),
                                       jnp.asarray(mask), jnp.asarray(prefix),
                                       jnp.asarray(kind), jnp.asarray(weights))
  keep = weights > 0
  expected = conlleval.chunk_counts(
      [[names[t] for t in g[:n]] for g, n in zip(gold[keep], lengths[keep])],
      [[names[t] for t in p[:n]] for p, n in zip(pred[keep], lengths[keep])])
  assert expected[0] > 20  # the case exercises matches and mismatches
  assert (sums['slot_correct'], sums['slot_predicted'], sums['slot_gold']) == expected

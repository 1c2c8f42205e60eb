"""Slot F1 by chunks, as conlleval counts them, on hand-worked sentences."""
import pytest

from training import conlleval


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

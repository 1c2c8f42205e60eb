"""Slot-filling F1 by chunks, counted the way the CoNLL ``conlleval`` script counts.

Tags are IOB strings (``B-fromloc.city_name``, ``I-fromloc.city_name``, ``O``), as in
ATIS. A chunk is a run of tokens of one type, delimited by these rules between
consecutive tokens of one sentence:

* a chunk starts at ``B-``, at an ``I-`` after ``O`` (a "broken" ``I-`` still opens a
  chunk), and at an ``I-`` whose type differs from the previous token's;
* a chunk ends before ``B-`` and ``O``, and before a token of another type.

``O`` tokens belong to no chunk. A predicted chunk is correct when a gold chunk has the
same type, start and end. Precision, recall and F1 are corpus-level (chunks summed
over sentences), in percent.
"""
from typing import Iterable, List, Sequence, Set, Tuple

import jax.numpy as jnp
from jax import lax
import numpy as np

Chunk = Tuple[str, int, int]  # (type, first token, last token)


def split_tag(tag: str) -> Tuple[str, str]:
  """``'B-city'`` -> ``('B', 'city')``; ``'O'`` -> ``('O', '')``."""
  if tag == 'O':
    return 'O', ''
  prefix, sep, kind = tag.partition('-')
  if not sep or prefix not in ('B', 'I') or not kind:
    raise ValueError(f'slot tag {tag!r}: expected O, or B- or I- followed by a type')
  return prefix, kind


def _ends(prev: str, prev_type: str, tag: str, kind: str) -> bool:
  """Does the chunk open at the previous token end before this one?"""
  return prev != 'O' and (tag in ('B', 'O') or kind != prev_type)


def _starts(prev: str, prev_type: str, tag: str, kind: str) -> bool:
  """Does a chunk start at this token?"""
  return tag != 'O' and (tag == 'B' or prev == 'O' or kind != prev_type)


def chunks(tags: Sequence[str]) -> Set[Chunk]:
  """The chunks of one sentence's tag sequence."""
  found, start, prev, prev_type = set(), None, 'O', ''
  for t, tag in enumerate(tags):
    prefix, kind = split_tag(tag)
    if start is not None and _ends(prev, prev_type, prefix, kind):
      found.add((prev_type, start, t - 1))
      start = None
    if _starts(prev, prev_type, prefix, kind):
      start = t
    prev, prev_type = prefix, kind
  if start is not None:
    found.add((prev_type, start, len(tags) - 1))
  return found


def chunk_counts(gold: Iterable[Sequence[str]], predicted: Iterable[Sequence[str]]):
  """``(correct, predicted, gold)`` chunk counts over sentences."""
  correct = n_pred = n_gold = 0
  for g, p in zip(gold, predicted, strict=True):
    if len(g) != len(p):
      raise ValueError(f'a sentence has {len(g)} gold and {len(p)} predicted tags')
    gc, pc = chunks(g), chunks(p)
    correct += len(gc & pc)
    n_pred += len(pc)
    n_gold += len(gc)
  return correct, n_pred, n_gold


def f1_from_counts(correct: int, predicted: int, gold: int) -> Tuple[float, float, float]:
  """``(precision, recall, F1)`` in percent (0 where undefined, as conlleval)."""
  precision = 100.0 * correct / predicted if predicted else 0.0
  recall = 100.0 * correct / gold if gold else 0.0
  f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
  return precision, recall, f1


def slot_f1(gold: Iterable[Sequence[str]], predicted: Iterable[Sequence[str]]) -> float:
  """Chunk F1 (%) of predicted against gold tag sequences, sentence by sentence."""
  return f1_from_counts(*chunk_counts(gold, predicted))[2]


def decode(ids: Sequence[int], names: Sequence[str]) -> List[str]:
  """Tag ids -> tag strings."""
  return [names[i] for i in ids]


# The same counts inside jit, over padded batches of tag ids: a chunk is correct when
# gold and prediction both start one at a token, of one type, ending at one token.
PREFIX_IDS = {'O': 0, 'B': 1, 'I': 2}


def tag_tables(tag_names: Sequence[str]):
  """``(prefix [tags], kind [tags])`` int32 NumPy arrays: each tag's O/B/I code
  (:data:`PREFIX_IDS`) and its chunk type's index (-1 for O)."""
  parts = [split_tag(t) for t in tag_names]
  kinds = sorted({k for _, k in parts if k})
  index = {k: i for i, k in enumerate(kinds)}
  return (np.asarray([PREFIX_IDS[p] for p, _ in parts], np.int32),
          np.asarray([index.get(k, -1) for _, k in parts], np.int32))


def _boundaries(ids, mask, prefix_of, kind_of):
  """Per token of ``ids [batch, time]``: (chunk starts here, chunk type, index of the
  last token of the chunk that starts here)."""
  o, b, i = PREFIX_IDS['O'], PREFIX_IDS['B'], PREFIX_IDS['I']
  prefix = jnp.where(mask, jnp.asarray(prefix_of)[ids], o)
  kind = jnp.where(mask, jnp.asarray(kind_of)[ids], -1)
  prev_p = jnp.pad(prefix[:, :-1], ((0, 0), (1, 0)), constant_values=o)
  prev_k = jnp.pad(kind[:, :-1], ((0, 0), (1, 0)), constant_values=-1)
  next_p = jnp.pad(prefix[:, 1:], ((0, 0), (0, 1)), constant_values=o)
  next_k = jnp.pad(kind[:, 1:], ((0, 0), (0, 1)), constant_values=-1)
  start = (prefix != o) & ((prefix == b) | (prev_p == o) | (kind != prev_k))
  end = (prefix != o) & ((next_p != i) | (next_k != kind))
  time = ids.shape[1]
  end_index = jnp.where(end, jnp.arange(time)[None], time)
  last = lax.cummin(end_index, axis=1, reverse=True)
  return start, kind, last


def chunk_sums(gold_ids, predicted_ids, mask, prefix_of, kind_of, weights=None):
  """``{'slot_correct', 'slot_predicted', 'slot_gold'}`` chunk counts of a padded
  batch ``[batch, time]`` (``mask`` True on real tokens; ``weights [batch]`` 0 drops
  a row), equal to :func:`chunk_counts` on the unpadded sequences."""
  g_start, g_kind, g_last = _boundaries(gold_ids, mask, prefix_of, kind_of)
  p_start, p_kind, p_last = _boundaries(predicted_ids, mask, prefix_of, kind_of)
  w = jnp.ones(gold_ids.shape[:1]) if weights is None else weights
  row = lambda x: (x.astype(jnp.float32).sum(axis=1) * w).sum()
  return {'slot_correct': row(g_start & p_start & (g_kind == p_kind) & (g_last == p_last)),
          'slot_predicted': row(p_start), 'slot_gold': row(g_start)}

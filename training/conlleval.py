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

"""Vocabulary built from the training split only, and token encoding.

Ids: 0 is padding, 1 is the shared unknown word; real words follow in order of
decreasing training count (ties broken alphabetically), so a vocabulary is a pure
function of the training texts and the config.
"""
import collections
import dataclasses
import itertools
from typing import Iterable, List, Sequence, Tuple

import numpy as np

PAD, UNK = '<pad>', '<unk>'
PAD_ID, UNK_ID = 0, 1
OOV_POLICIES = ('unk', 'delete')


def tokenize_texts(texts: Iterable[str], lowercase: bool,
                   max_length: int = 0) -> List[List[str]]:
  """Each text's tokens, cut to its first ``max_length`` (0: all): how a dataset's
  texts, and new texts given to a trained run, become tokens.

  Texts are pre-tokenised and split on ASCII spaces only: splitting on Unicode
  whitespace would break tokens that contain a no-break space (three SST leaves do).
  """
  token_lists = []
  for text in texts:
    tokens = (text.lower() if lowercase else text).split(' ')
    if '' in tokens or '\n' in tokens:
      tokens = [t for t in tokens if t and t != '\n']
    token_lists.append(tokens[:max_length] if max_length else tokens)
  return token_lists


@dataclasses.dataclass(frozen=True)
class Vocabulary:
  words: Tuple[str, ...]  # index -> word; words[0] == PAD, words[1] == UNK

  @classmethod
  def build(cls, token_lists: Iterable[Sequence[str]], min_count: int = 1,
            extra: Iterable[str] = (), keep=None):
    """Training words seen ``min_count`` times, by decreasing count, then ``extra``.

    ``extra`` words (e.g. dev/test words that have a pretrained vector) follow the
    training words in the given order; ``keep``, if given, is the set of words allowed
    in the vocabulary at all.
    """
    counts = collections.Counter()
    for tokens in token_lists:
      counts.update(tokens)
    kept = sorted((w for w, c in counts.items()
                   if c >= min_count and (keep is None or w in keep)),
                  key=lambda w: (-counts[w], w))
    seen = set(kept)
    for w in extra:
      if w not in seen and (keep is None or w in keep):
        seen.add(w)
        kept.append(w)
    return cls((PAD, UNK, *kept))

  def __len__(self):
    return len(self.words)

  @property
  def index(self):
    """``{word: id}``, the inverse of ``words``."""
    return {w: i for i, w in enumerate(self.words)}

  def encode(self, token_lists: Sequence[Sequence[str]], oov: str = 'unk'):
    """Token lists -> (ids int32 [n, max_len], lengths int32 [n]), right-padded.

    ``oov='unk'`` maps unknown words to ``UNK_ID``; ``oov='delete'`` drops them.
    """
    if oov not in OOV_POLICIES:
      raise ValueError(f'config.data.oov={oov!r}; expected one of {OOV_POLICIES}')
    index = self.index
    rows = []
    for tokens in token_lists:
      ids = [index.get(t, UNK_ID) for t in tokens]
      if oov == 'delete':
        ids = [i for i in ids if i != UNK_ID]
      rows.append(ids)
    lengths = np.array([len(r) for r in rows], np.int32)
    out = np.zeros((len(rows), max(1, lengths.max(initial=0))), np.int32)
    for i, r in enumerate(rows):
      out[i, :len(r)] = r
    return out, lengths

  def encode_flat(self, token_lists: Sequence[Sequence[str]], oov: str = 'unk'):
    """Token lists -> (ids int32 [total], lengths int32 [n]): all rows concatenated."""
    if oov not in OOV_POLICIES:
      raise ValueError(f'config.data.oov={oov!r}; expected one of {OOV_POLICIES}')
    lengths = np.fromiter(map(len, token_lists), np.int64, count=len(token_lists))
    total = int(lengths.sum())
    # index.get(token, UNK_ID) of every token
    ids = np.fromiter(map(self.index.get, itertools.chain.from_iterable(token_lists),
                          itertools.repeat(UNK_ID)), np.int32, count=total)
    if oov == 'delete':
      in_vocab = ids != UNK_ID
      row = np.repeat(np.arange(len(lengths)), lengths)
      lengths = np.bincount(row[in_vocab], minlength=len(lengths))
      ids = ids[in_vocab]
    return ids, lengths.astype(np.int32)

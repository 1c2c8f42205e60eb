"""Encoded datasets: pooled examples, train/dev/test views, per-view vocabularies.

All examples of a dataset (its TFDS splits, train first) are *pooled*: row ``i`` of
``labels`` is one example. A :class:`View` is one way to use the pool: which rows
train, select (dev) and test, the vocabulary built from its training rows only, and
every row encoded with that vocabulary. A dataset with its own splits has one view;
a cross-validated one (MR, Subj) has one view per fold; a held-out dev split moves
rows of a view's training part to its dev part.

Tokens are stored flat (ragged), not padded: view ``v`` holds ``tokens`` int32
``[total_tokens_v]`` and, per row, ``starts`` and ``lengths`` int32 ``[rows]``, so a
long-tailed dataset (IMDB) costs its real tokens only, and a batch is gathered inside
jit by :func:`seedsweep.inputs.pipeline.gather_batch`.

:func:`encode` makes a dataset's :class:`EncodedDataset` from its pooled examples
(:mod:`seedsweep.inputs.pool`).
"""
import dataclasses
import os
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from seedsweep.errors import UserError
from seedsweep.inputs import cache
from seedsweep.inputs import embeddings as embeddings_lib
from seedsweep.inputs import folds as folds_lib
from seedsweep.inputs import pool as pool_lib
from seedsweep.inputs import vectors as vectors_lib
from seedsweep.inputs import vocabulary as vocab_lib

HOLDOUT_SALT = 0xDE5  # seeds the held-out dev permutation (with the fold number)
FOLD_SEED = 0         # seeds the cross-validation folds (inputs/folds.py)
SUMMARY_CLASSES = 10  # class names a run's first line shows (EncodedDataset.summary)


@dataclasses.dataclass(frozen=True)
class View:
  name: str                      # '' (the dataset's own splits) or 'fold<k>'
  rows: Dict[str, np.ndarray]    # split -> int32 pooled rows, ascending
  vocab: vocab_lib.Vocabulary
  tokens: np.ndarray             # int32 [total_tokens], flat
  starts: np.ndarray             # int32 [rows] offset of each row in tokens
  lengths: np.ndarray            # int32 [rows]

  def split_lengths(self, split: str) -> np.ndarray:
    """int32 ``[rows of split]``: the token count of each row of ``split``, in row order."""
    return self.lengths[self.rows[split]]


@dataclasses.dataclass(frozen=True)
class EncodedDataset:
  name: str
  label_names: Tuple[str, ...]
  labels: np.ndarray                  # int32 [rows]
  views: Tuple[View, ...]
  sources: Dict[str, Tuple[int, int]]  # TFDS split -> (first pooled row, count)
  checksums: Dict[str, str]           # TFDS split -> sha256 of its decoded examples
  raw_checksums: Dict[str, str]       # raw file -> sha256
  protocol: dict                      # folds / held-out dev: how the views were made
  raw_lengths: np.ndarray             # int32 [rows], whitespace tokens before the vocab
  num_classes: int                    # the number of label classes
  vocab_size: int                     # embedding rows: the largest vocabulary of a view
  cross_validated: bool               # whether the views are cross-validation folds
  tag_names: Tuple[str, ...] = ()     # tagging datasets: tag classes
  tags: Optional[np.ndarray] = None   # int32 [total_tokens] aligned with every view
  # Pretrained vectors (inputs/embeddings.py): (table float32 [views, vocab_size, d],
  # use bool [views, vocab_size]); None without config.data.vectors.path.
  embedding_tables: Optional[Tuple[np.ndarray, np.ndarray]] = None
  # The vectors file for the provenance: path, bytes, sha256, what trained it, and how
  # many of the dataset's distinct words it has (inputs/vectors.file_record).
  vectors: Optional[dict] = None

  @property
  def vocab(self) -> vocab_lib.Vocabulary:
    """The vocabulary of the first view (the only one without cross-validation)."""
    return self.views[0].vocab

  def split_names(self) -> Tuple[str, ...]:
    """The splits the dataset has, of ``('train', 'dev', 'test')``, in that order."""
    return tuple(s for s in ('train', 'dev', 'test') if s in self.views[0].rows)

  def sizes(self) -> Dict[str, int]:
    """Examples per split (of the first view)."""
    return {s: int(len(self.views[0].rows[s])) for s in self.split_names()}

  def summary(self) -> str:
    """The line a run starts with, so that a misread dataset shows before training:
    "dataset 'files': 2 classes ('neg', 'pos'); examples: train 6920, dev 872, test
    1821" (the first fold's for a cross-validated one; its tags when it has them)."""
    shown = ', '.join(repr(n) for n in self.label_names[:SUMMARY_CLASSES])
    more = len(self.label_names) - SUMMARY_CLASSES
    classes = f'{shown}, ... {more} more' if more > 0 else shown
    sizes = ', '.join(f'{split} {n}' for split, n in self.sizes().items())
    folds = (f' (fold 1 of {len(self.views)})' if self.cross_validated else '')
    tags = f'; {len(self.tag_names)} tags' if self.tag_names else ''
    return (f'dataset {self.name!r}: {self.num_classes} classes ({classes}); '
            f'examples: {sizes}{folds}{tags}')


def holdout(train_rows: np.ndarray, amount: float, fold: int,
            where: str) -> Tuple[np.ndarray, np.ndarray]:
  """Splits ``train_rows`` into (train, dev): a fixed permutation, first ``n`` to dev.

  ``amount`` < 1 is a fraction (rounded to the nearest example), >= 1 a count. The
  permutation is ``np.random.default_rng([HOLDOUT_SALT, fold])`` over the rows in
  ascending order, so the split depends on the dataset and fold only.
  """
  n_train = len(train_rows)
  n = int(round(amount * n_train)) if amount < 1 else int(amount)
  if amount != int(amount) and amount > 1 or not 0 < n < n_train:
    raise UserError(f'{where}={amount!r} leaves {n} of {n_train} training examples '
                    'for dev; expected a fraction in (0, 1) or a count in '
                    f'1..{n_train - 1}')
  perm = np.random.default_rng([HOLDOUT_SALT, fold]).permutation(n_train)
  dev = np.sort(train_rows[perm[:n]])
  train = np.sort(train_rows[perm[n:]])
  return train.astype(np.int32), dev.astype(np.int32)


def partitions(sources: Dict[str, Tuple[int, int]], labels: np.ndarray, data_config,
               cv: bool) -> Tuple[List[Tuple[str, Dict[str, np.ndarray]]], dict]:
  """The views' rows: ``[(name, {split: rows})]`` and a description of the protocol.

  ``sources``: each TFDS split's (first pooled row, count); ``cv``: one pooled split
  cross-validated in ``data_config.num_folds`` folds.
  """
  amount = float(data_config.dev_holdout or 0.0)
  protocol: dict = {}
  if cv:
    k = int(data_config.num_folds)
    fold_ids = folds_lib.cv_folds(len(labels), k, seed=FOLD_SEED, labels=labels)
    parts = []
    for f in range(k):
      train, test = folds_lib.split_fold(fold_ids, f, k)
      parts.append((f'fold{f}', {'train': train.astype(np.int32),
                                 'test': test.astype(np.int32)}))
    protocol['folds'] = {'num_folds': k, 'seed': FOLD_SEED, 'stratified': True,
                         'sizes': [int((fold_ids == f).sum()) for f in range(k)]}
  else:
    parts = [('', {s: np.arange(a, a + n, dtype=np.int32)
                   for s, (a, n) in sources.items()})]
  if amount:
    if 'dev' in parts[0][1]:
      raise UserError(f'config.data.dev_holdout={amount!r}, but dataset '
                      f'{data_config.name!r} has its own dev split; set it to 0')
    for f, (_, rows) in enumerate(parts):
      rows['train'], rows['dev'] = holdout(rows['train'], amount, f,
                                           'config.data.dev_holdout')
    protocol['dev_holdout'] = {'amount': amount, 'salt': HOLDOUT_SALT,
                               'dev_sizes': [len(r['dev']) for _, r in parts]}
  return parts, protocol


def encode_view(name: str, rows: Dict[str, np.ndarray], token_lists: Sequence[List[str]],
                min_count: int, oov: str, extra_words: Sequence[str] = (),
                keep: Optional[set] = None) -> View:
  """Vocabulary from the view's training rows (plus ``extra_words``), then all rows.

  ``keep``, if given, restricts the vocabulary to those words (e.g. the words that
  have a pretrained vector); other words are out of vocabulary.
  """
  vocab = vocab_lib.Vocabulary.build((token_lists[i] for i in rows['train']), min_count,
                                     extra=extra_words, keep=keep)
  tokens, lengths = vocab.encode_flat(token_lists, oov)
  starts = np.zeros(len(lengths), np.int64)
  np.cumsum(lengths[:-1], out=starts[1:])
  return View(name, rows, vocab, tokens, starts.astype(np.int32), lengths)


def _vectors_cache() -> str:
  """Where looked-up vectors are cached (inputs/vectors.py)."""
  return os.path.join(cache.cache_root(), 'vectors')


def _vocabulary_words(data_config, token_lists):
  """What pretrained vectors (``config.data.vectors.path`` set) change in the
  vocabularies.

  Returns ``(looked_up, words, keep, extra_for, record)``: the vectors of ``words``,
  the words a vocabulary may hold (None: any), a function of a view's rows giving the
  words added after its training words, and the vectors file's record for the
  provenance (``vectors.file_record`` and how many of the dataset's words it has).
  """
  vcfg = data_config.vectors
  words = sorted({w for tokens in token_lists for w in tokens})
  cache_dir = _vectors_cache()
  looked_up = embeddings_lib.lookup(data_config, words, cache_dir)
  with_vector = {w for w, f in zip(words, looked_up[1]) if f}
  record = dict(vectors_lib.file_record(vcfg.path, cache_dir),
                dataset_words=len(words), dataset_words_found=len(with_vector))
  keep = with_vector if vcfg.only_found else None

  def extra_for(rows):
    """Dev/test words with a vector, when they join the vocabulary (C-LSTM)."""
    if not vcfg.add_eval_words:
      return ()
    eval_rows = np.concatenate([rows[s] for s in rows if s != 'train'])
    return sorted({w for i in eval_rows for w in token_lists[i]} & with_vector)

  return looked_up, words, keep, extra_for, record


def _tags(name: str, tag_strings, oov: str, max_length: int = 0):
  """``(tag_names, flat int32 tag ids)`` of a tagged dataset (some ``tag_strings``
  set); with ``max_length`` each example keeps its first tags, like its tokens."""
  if oov == 'delete':
    raise UserError(f"config.data.oov='delete' cannot be used with the tagged "
                    f'dataset {name!r}: deleting tokens would misalign their tags')
  tag_lists = [t.split(' ') if t else [] for t in tag_strings]
  if max_length:
    tag_lists = [t[:max_length] for t in tag_lists]
  tag_names = tuple(sorted({t for tl in tag_lists for t in tl}))
  index = {t: i for i, t in enumerate(tag_names)}
  return tag_names, np.asarray([index[t] for tl in tag_lists for t in tl], np.int32)


def encode(name: str, pool: pool_lib.Pool, data_config, cross_validation: bool,
           raw_checksums: Dict[str, str]) -> EncodedDataset:
  """Dataset ``name``'s pooled examples as views with their vocabularies, tokens,
  tags and pretrained vectors, as ``data_config`` says; ``cross_validation``: one
  pooled split, k-fold cross-validated."""
  oov = data_config.oov
  max_length = data_config.max_length
  if not isinstance(max_length, int) or max_length < 0:
    raise UserError(f'config.data.max_length={max_length!r}; expected an int >= 0 '
                    '(0 = keep every token)')
  token_lists = vocab_lib.tokenize_texts(pool.texts, data_config.lowercase, max_length)
  parts, protocol = partitions(pool.positions, pool.labels, data_config,
                               cross_validation)
  if max_length:
    protocol['max_length'] = max_length
  if data_config.vectors.path:  # pretrained vectors: the one place the option is read
    looked_up, words, keep, extra_for, vectors = _vocabulary_words(data_config,
                                                                   token_lists)
  else:
    looked_up, keep, extra_for, vectors = None, None, lambda rows: (), None
  views = tuple(encode_view(view_name, rows, token_lists, data_config.min_count, oov,
                            extra_for(rows), keep)
                for view_name, rows in parts)
  tables = None
  if looked_up is not None:
    tables = embeddings_lib.tables([v.vocab for v in views],
                                   {w: i for i, w in enumerate(words)}, *looked_up,
                                   data_config)
  tag_names, tags = ((), None)
  if any(pool.tag_strings):  # a tagging dataset (ATIS)
    tag_names, tags = _tags(name, pool.tag_strings, oov, max_length)
  return EncodedDataset(
      name=name, label_names=pool.label_names, labels=pool.labels, views=views,
      sources=pool.positions, checksums=pool.checksums, raw_checksums=raw_checksums,
      protocol=protocol,
      raw_lengths=np.array([len(t) for t in token_lists], np.int32),
      num_classes=len(pool.label_names),
      vocab_size=max(len(v.vocab.words) for v in views),
      cross_validated=bool(protocol.get('folds')),
      tag_names=tag_names, tags=tags, embedding_tables=tables, vectors=vectors)


def with_vectors(data: EncodedDataset, data_config,
                 unk_found: bool = False) -> EncodedDataset:
  """``data`` (a run's saved dataset: run/saved_data.py) with its pretrained tables
  made again from ``config.data.vectors.path`` for its vocabularies, and the file's
  record as it is now. The rows are those :func:`encode` gave: each word's row is a
  function of the word and the file alone. ``unk_found``: the file gave ``<unk>`` a
  row when the run was built (a dataset token of that spelling)."""
  skip = {vocab_lib.PAD} | (set() if unk_found else {vocab_lib.UNK})
  words = sorted({w for view in data.views for w in view.vocab.words} - skip)
  cache_dir = _vectors_cache()
  looked_up = embeddings_lib.lookup(data_config, words, cache_dir)
  tables = embeddings_lib.tables([v.vocab for v in data.views],
                                 {w: i for i, w in enumerate(words)}, *looked_up,
                                 data_config)
  record = dict(data.vectors or {},
                **vectors_lib.file_record(data_config.vectors.path, cache_dir))
  return dataclasses.replace(data, embedding_tables=tables, vectors=record)


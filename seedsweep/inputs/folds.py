"""Deterministic k-fold cross-validation for datasets without a test split (MR, Subj).

Fold policy (reproducible by hand with numpy >= 1.17)::

  perm = np.random.default_rng(seed).permutation(num_examples)
  if labels is not None:                       # stratified
    perm = perm[np.argsort(labels[perm], kind='stable')]
  fold_ids = np.empty(num_examples, np.int32)
  fold_ids[perm] = np.arange(num_examples) % num_folds

That is, examples (indices into the dataset's documented reading order) are dealt
round-robin to folds 0, 1, ..., num_folds - 1 in the order of one seeded permutation.
Every fold gets ``num_examples // num_folds`` or one more example. With ``labels``, the
permutation is regrouped by class (ascending label, random order inside a class) before
dealing, so each fold also gets ``n_c // num_folds`` or one more example of every class
``c``. Fold ``f`` is the test set of run ``f``; the other folds are its training set.
"""
from typing import Optional, Sequence, Tuple

import numpy as np

from seedsweep.errors import UserError


def cv_folds(num_examples: int, num_folds: int = 10, seed: int = 0,
             labels: Optional[Sequence[int]] = None) -> np.ndarray:
  """Fold id (int32 in ``[0, num_folds)``) of each example; see the module docstring.

  Args:
    num_examples: size of the dataset.
    num_folds: number of folds (at least 2, at most ``num_examples``).
    seed: seeds ``np.random.default_rng``; the folds are a pure function of the
      arguments.
    labels: optional class of each example, ``[num_examples]``; stratifies the folds.
  """
  num_examples, num_folds = int(num_examples), int(num_folds)
  if num_folds < 2 or num_folds > num_examples:
    raise UserError(f'config.data.num_folds={num_folds} is invalid for a dataset of '
                    f'{num_examples} examples; expected 2 <= num_folds <= '
                    f'{num_examples} (seedsweep/inputs/folds.py)')
  perm = np.random.default_rng(seed).permutation(num_examples)
  if labels is not None:
    labels = np.asarray(labels)
    if labels.shape != (num_examples,):
      raise ValueError(f'labels has shape {labels.shape}; expected ({num_examples},)')
    perm = perm[np.argsort(labels[perm], kind='stable')]
  fold_ids = np.empty(num_examples, np.int32)
  fold_ids[perm] = np.arange(num_examples) % num_folds
  return fold_ids


def split_fold(fold_ids: np.ndarray, fold: int,
               num_folds: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
  """``(train_indices, test_indices)`` of one fold, each sorted ascending (int64).

  Args:
    fold_ids: output of :func:`cv_folds`.
    fold: the held-out fold, ``0 <= fold < num_folds``.
    num_folds: defaults to ``max(fold_ids) + 1``.
  """
  fold_ids = np.asarray(fold_ids)
  if num_folds is None:
    num_folds = int(fold_ids.max()) + 1 if fold_ids.size else 0
  if (isinstance(fold, bool) or not isinstance(fold, (int, np.integer))
      or not 0 <= fold < num_folds):
    raise UserError(f'fold {fold!r} (config.data.folds) is out of range; expected '
                    f'an integer in 0..{num_folds - 1} ({num_folds}-fold '
                    'cross-validation, '
                    'seedsweep/inputs/folds.py)')
  return np.flatnonzero(fold_ids != fold), np.flatnonzero(fold_ids == fold)

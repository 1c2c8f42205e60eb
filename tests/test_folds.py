"""Tests of the deterministic k-fold cross-validation (inputs/folds.py)."""
import numpy as np
import pytest

from seedsweep.inputs import folds
from seedsweep.errors import UserError


def _recipe(n, k, seed, labels=None):
  """The module docstring's recipe, verbatim."""
  perm = np.random.default_rng(seed).permutation(n)
  if labels is not None:
    perm = perm[np.argsort(np.asarray(labels)[perm], kind='stable')]
  fold_ids = np.empty(n, np.int32)
  fold_ids[perm] = np.arange(n) % k
  return fold_ids


@pytest.mark.parametrize('n,k', [(10662, 10), (10000, 10), (23, 5), (2, 2)])
def test_folds_are_balanced_and_deterministic(n, k):
  ids = folds.cv_folds(n, k, seed=3)
  assert ids.dtype == np.int32 and ids.shape == (n,)
  sizes = np.bincount(ids, minlength=k)
  assert len(sizes) == k and sizes.max() - sizes.min() <= 1 and sizes.sum() == n
  np.testing.assert_array_equal(ids, folds.cv_folds(n, k, seed=3))
  np.testing.assert_array_equal(ids, _recipe(n, k, 3))


def test_seed_changes_the_folds():
  assert not np.array_equal(folds.cv_folds(1000), folds.cv_folds(1000, seed=1))


def test_default_mr_folds_are_pinned():
  ids = folds.cv_folds(10662)
  np.testing.assert_array_equal(ids, _recipe(10662, 10, 0))
  assert np.bincount(ids).tolist() == [1067, 1067] + [1066] * 8


def test_stratified_folds_balance_every_class():
  labels = np.array([0] * 5331 + [1] * 5331)
  ids = folds.cv_folds(len(labels), 10, seed=0, labels=labels)
  np.testing.assert_array_equal(ids, _recipe(len(labels), 10, 0, labels))
  for c in (0, 1):
    per_fold = np.bincount(ids[labels == c], minlength=10)
    assert per_fold.max() - per_fold.min() <= 1
  sizes = np.bincount(ids)
  assert sizes.max() - sizes.min() <= 1
  # Uneven classes too.
  labels = np.random.default_rng(5).integers(0, 3, 101)
  ids = folds.cv_folds(101, 4, seed=2, labels=labels)
  for c in range(3):
    per_fold = np.bincount(ids[labels == c], minlength=4)
    assert per_fold.max() - per_fold.min() <= 1


def test_split_fold_partitions_the_examples():
  ids = folds.cv_folds(57, 10, seed=4)
  tests = []
  for f in range(10):
    train, test = folds.split_fold(ids, f)
    assert (ids[test] == f).all() and (ids[train] != f).all()
    assert len(train) + len(test) == 57
    assert list(train) == sorted(train) and list(test) == sorted(test)
    tests += test.tolist()
  assert sorted(tests) == list(range(57))
  train, test = folds.split_fold(ids, np.int64(9))
  assert len(test) == np.sum(ids == 9)


@pytest.mark.parametrize('fold', [-1, 10, 11, 1.0, '0', True, None])
def test_split_fold_rejects_a_fold_out_of_range(fold):
  ids = folds.cv_folds(100, 10)
  with pytest.raises(UserError, match=r'config\.data\.fold.*0\.\.9'):
    folds.split_fold(ids, fold)


def test_split_fold_with_explicit_num_folds():
  ids = folds.cv_folds(100, 5)
  with pytest.raises(UserError, match='config.data.fold'):
    folds.split_fold(ids, 5, num_folds=5)
  assert len(folds.split_fold(ids, 4, num_folds=5)[1]) == 20


@pytest.mark.parametrize('n,k', [(100, 1), (100, 0), (5, 6)])
def test_cv_folds_rejects_bad_num_folds(n, k):
  with pytest.raises(UserError, match='config.data.num_folds'):
    folds.cv_folds(n, k)


def test_cv_folds_rejects_labels_of_the_wrong_length():
  with pytest.raises(ValueError, match='labels'):
    folds.cv_folds(10, 2, labels=[0, 1])

"""Losses and metrics of sentence classification.

``loss`` is the mean over the batch's real examples (``weights`` 1) of the per-example
cross-entropy (MODELS.md §0). ``eval_sums`` returns additive statistics so that a split
evaluated in chunks gives exactly its metrics; ``finalize`` turns sums into metrics
(accuracy in percent).
"""
import jax.numpy as jnp
import numpy as np
import optax


SUM_KEYS = ('correct', 'loss', 'count')


def loss(logits, batch):
  """Scalar mean cross-entropy over examples with weight 1."""
  ce = optax.softmax_cross_entropy_with_integer_labels(logits, batch['labels'])
  w = batch['weights']
  return (ce * w).sum() / jnp.maximum(w.sum(), 1.0)


def eval_sums(logits, batch):
  """``{'correct', 'loss', 'count'}`` summed over the batch's real examples."""
  w = batch['weights']
  ce = optax.softmax_cross_entropy_with_integer_labels(logits, batch['labels'])
  correct = (logits.argmax(-1) == batch['labels']).astype(jnp.float32)
  return {'correct': (correct * w).sum(), 'loss': (ce * w).sum(), 'count': w.sum()}


def finalize(sums):
  """Sums (any leading shape, e.g. ``[seeds]``) -> ``{'accuracy' (%), 'loss'}``.

  Runs on the host in float64, so an accuracy is exactly ``100 * correct / count``.
  """
  sums = {k: np.asarray(v, np.float64) for k, v in sums.items()}
  count = np.maximum(sums['count'], 1.0)
  return {'accuracy': 100.0 * sums['correct'] / count, 'loss': sums['loss'] / count}

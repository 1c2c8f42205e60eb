"""Losses and metrics of sentence classification, and of joint tagging.

``loss`` is the mean over the batch's real examples (``weights`` 1) of the per-example
cross-entropy (docs/models.md §0), from a model's :class:`~seedsweep.models.output.ModelOutput`. The
joint model (docs/models.md §5) also sets per-token ``tag_logits``, whose cross-entropy is
summed over each sentence's tokens, and a ``penalty`` added once.
``eval_sums`` returns additive statistics so that a split evaluated in chunks gives
exactly its metrics (slot chunks are counted in jit, seedsweep/engine/conlleval.py);
``finalize`` turns sums into metrics (accuracy, F1 and error in percent).
"""
import jax.numpy as jnp
import numpy as np
import optax

from seedsweep.engine import conlleval
from seedsweep.engine import hosts
from seedsweep.models.output import ModelOutput


SUM_KEYS = ('correct', 'loss', 'count')


def _token_mask(batch):
  return jnp.arange(batch['tokens'].shape[-1])[None] < batch['lengths'][:, None]


def _per_example(out: ModelOutput, batch):
  """``[batch]``: each example's sentence cross-entropy, plus the sum over its tokens
  of the tag cross-entropy when the model tags."""
  ce = optax.softmax_cross_entropy_with_integer_labels(out.logits, batch['labels'])
  if out.tag_logits is not None:
    tag_ce = optax.softmax_cross_entropy_with_integer_labels(out.tag_logits,
                                                             batch['tags'])
    ce = ce + (tag_ce * _token_mask(batch)).sum(axis=1)
  return ce


def loss(out: ModelOutput, batch):
  """Scalar mean per-example loss over examples with weight 1 (+ the penalty)."""
  ce = _per_example(out, batch)
  w = batch['weights']
  total = (ce * w).sum() / jnp.maximum(w.sum(), 1.0)
  return total if out.penalty is None else total + out.penalty


def eval_sums(out: ModelOutput, batch, tag_tables=None):
  """``{'correct', 'loss', 'count'}`` summed over the batch's real examples; with
  predicted tags also the slot chunk counts (``tag_tables``: the dataset's
  :func:`seedsweep.engine.conlleval.tag_tables`)."""
  w = batch['weights']
  ce = _per_example(out, batch)
  correct = (out.logits.argmax(-1) == batch['labels']).astype(jnp.float32)
  sums = {'correct': (correct * w).sum(), 'loss': (ce * w).sum(), 'count': w.sum()}
  if out.predicted_tags is not None:
    sums.update(conlleval.chunk_sums(batch['tags'], out.predicted_tags,
                                     _token_mask(batch), *tag_tables, w))
  return sums


def finalize(sums):
  """Sums (any leading shape, e.g. ``[seeds]``) -> ``{'accuracy' (%), 'loss'}``.

  Runs on the host in float64, so an accuracy is exactly ``100 * correct / count``.
  """
  sums = {k: hosts.fetch(v, np.float64) for k, v in sums.items()}
  count = np.maximum(sums['count'], 1.0)
  out = {'accuracy': 100.0 * sums['correct'] / count, 'loss': sums['loss'] / count}
  if 'slot_correct' in sums:  # the joint model: slot F1 and intent error rate
    out['slot_f1'] = np.vectorize(lambda c, p, g: conlleval.f1_from_counts(c, p, g)[2])(
        sums['slot_correct'], sums['slot_predicted'], sums['slot_gold'])
    out['intent_error'] = 100.0 - out['accuracy']
  return out

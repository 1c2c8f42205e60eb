"""Row-sparse updates of the word-embedding table (``config.optimizer.embedding_update``).

A batch touches a few hundred rows of a ``[vocab, dim]`` table, but the dense path
builds the table's full gradient and updates every row of it and of its optimiser
state each step: on a CPU that memory traffic is ~30 % of a C-LSTM step (notes,
"Speed"). The sparse paths look the batch's word vectors up outside the model
(``batch['word_vectors']``, read by ``models.baselines.embed_batch``), differentiate
with respect to those vectors, sum their gradients per distinct row, and run the
same optax transformation on those rows only (the other parameters as usual):

* ``'dense'`` (default): the plain gradient of the whole table.
* ``'rows'``: exact where a zero gradient leaves a row and its optimiser state
  unchanged: SGD without momentum and AdaGrad (+ value clipping). Same numbers as
  ``'dense'`` up to the summation order of a global-norm clip.
* ``'lazy'``: any optimiser, rows untouched by a batch keep their parameters and
  moments (Adam's and RMSprop's moments decay only when their row is used; the step
  count is global). A different optimiser from dense Adam/RMSprop: an explicit choice.

Shapes: ``tokens [batch, time]``; ``rows [batch * time]`` (distinct ids, padded with
``vocab``, an index past the table that gathers zeros and whose writes are dropped).
"""
from typing import Tuple

import jax
import jax.numpy as jnp

from seedsweep.config import checks as config_checks
from seedsweep.errors import UserError

UPDATES = ('dense', 'rows', 'lazy')
EXACT_FOR = ('sgd', 'adagrad')  # sgd only without momentum
TABLE = ('embedding', 'embedding')  # the table's path in the params


def check(opt_config, l2_mask, static: bool) -> str:
  """The validated ``embedding_update`` of ``opt_config``; UserError otherwise."""
  mode = opt_config.embedding_update
  config_checks.one_of('optimizer.embedding_update', mode, UPDATES)
  if mode == 'dense':
    return mode
  if static:
    raise UserError(f'config.optimizer.embedding_update={mode!r} with '
                    'config.data.vectors.static=True: a frozen table has no updates; '
                    "use 'dense'")
  if l2_mask.get(TABLE[0], {}).get(TABLE[1]):
    raise UserError(f'config.optimizer.embedding_update={mode!r}, but config.l2.params '
                    'matches the embedding table: its L2 gradient touches every row; '
                    "use 'dense' or leave the table out of config.l2.params")
  momentum = opt_config.momentum
  if mode == 'rows' and (opt_config.name not in EXACT_FOR or
                         (opt_config.name == 'sgd' and momentum)):
    raise UserError(
        f"config.optimizer.embedding_update='rows' is exact only for {EXACT_FOR} "
        f'(sgd without momentum), not {opt_config.name!r}'
        + (f' with momentum {momentum}' if momentum else '')
        + "; use 'lazy' (rows' moments change only when the row is used: a different "
          "optimiser) or 'dense'")
  return mode


def batch_rows(tokens, vocab: int) -> Tuple[jax.Array, jax.Array]:
  """``(rows [n], inverse [n])`` for ``n = tokens.size``: the distinct ids of the
  batch (padded with ``vocab``) and, per token, the index of its row in ``rows``."""
  flat = tokens.reshape(-1)
  rows, inverse = jnp.unique(flat, size=flat.shape[0], fill_value=vocab,
                             return_inverse=True)
  return rows, inverse.reshape(-1)


def _is_table(path, leaf, shape) -> bool:
  keys = tuple(getattr(k, 'key', None) for k in path[-len(TABLE):])
  return keys == TABLE and getattr(leaf, 'shape', None) == tuple(shape)


def gather(tree, rows, shape):
  """``tree`` (params, gradients or optimiser state) with every table-shaped leaf at
  the table's path cut down to ``rows`` (zeros for the padding id)."""
  return jax.tree_util.tree_map_with_path(
      lambda p, a: jnp.take(a, rows, axis=0, mode='fill', fill_value=0)
      if _is_table(p, a, shape) else a, tree)


def scatter(full, sub, rows, shape):
  """``sub``'s leaves, the table-shaped ones written into ``full``'s at ``rows``."""
  return jax.tree_util.tree_map_with_path(
      lambda p, a, s: a.at[rows].set(s, mode='drop') if _is_table(p, a, shape) else s,
      full, sub)

"""Row-sparse updates of the word-embedding table (``config.optimizer.embedding_update``).

A batch touches a few hundred rows of a ``[vocab, dim]`` table, but the dense path
updates every row of it and of its optimiser state each step: on a CPU that is most
of a C-LSTM step (docs/log.md, "Speed (issue 16)"). The sparse paths cut the batch's
rows out of the stacked table and optimiser state before the seed map
(:func:`batch_rows`, :func:`gather`), run each seed's step on its rows only, and
write them back after it (:func:`scatter`), in place.

* ``'dense'`` (default): the plain gradient of the whole table.
* ``'rows'``: the dense optimiser where a zero gradient moves no parameter
  (:data:`EXACT_FOR`); rows that sat out updates catch up when next used
  (:func:`catch_up`, :func:`clocked`): the numbers of ``'dense'`` up to rounding.
* ``'lazy'``: any optimiser; untouched rows keep their parameters and moments (not
  dense Adam/RMSprop: an explicit choice).
"""
import inspect
from typing import Any, NamedTuple, Optional, Tuple

import jax
import jax.numpy as jnp
import optax

from seedsweep.config import checks as config_checks
from seedsweep.errors import UserError

UPDATES = ('auto', 'dense', 'rows', 'lazy')
# The optimisers 'rows' is exact for -> the config field of the factor by which a
# zero gradient scales a row's optimiser state (None: it leaves the state as it is).
EXACT_FOR = {'sgd': None, 'adagrad': None, 'rmsprop': 'decay', 'adadelta': 'rho'}
WITH_MOMENTUM = ('sgd', 'rmsprop')  # not exact with momentum: a zero gradient moves
TABLE = ('embedding', 'embedding')  # the table's path in the params


def check(opt_config, l2_mask, static: bool) -> str:
  """The validated ``embedding_update`` of ``opt_config`` ('auto' resolved: 'rows'
  where it is exact, else 'dense'); UserError otherwise."""
  mode = opt_config.embedding_update
  config_checks.one_of('optimizer.embedding_update', mode, UPDATES)
  name, momentum = opt_config.name, opt_config.momentum
  table_l2 = l2_mask.get(TABLE[0], {}).get(TABLE[1])
  # Whether 'rows' equals the dense update up to rounding for this config.
  exact = (not static and not table_l2 and name in EXACT_FOR
           and not (name in WITH_MOMENTUM and momentum))
  if mode == 'auto':
    return 'rows' if exact else 'dense'
  if mode == 'dense':
    return mode
  if static:
    raise UserError(f'config.optimizer.embedding_update={mode!r} with '
                    'config.data.vectors.static=True: a frozen table has no updates; '
                    "use 'dense'")
  if table_l2:
    raise UserError(f'config.optimizer.embedding_update={mode!r}, but config.l2.params '
                    'matches the embedding table: its L2 gradient touches every row; '
                    "use 'dense' or leave the table out of config.l2.params")
  if mode == 'rows' and not exact:
    raise UserError(
        f"config.optimizer.embedding_update='rows' is exact only for "
        f'{tuple(EXACT_FOR)} ({" and ".join(WITH_MOMENTUM)} without momentum), not '
        f'{name!r}' + (f' with momentum {momentum}' if momentum else '')
        + "; use 'lazy' (rows' moments change only when the row is used: a different "
          "optimiser) or 'dense'")
  return mode


def decay_factor(opt_config) -> Optional[float]:
  """The factor by which a zero gradient scales a row's optimiser state under
  ``opt_config`` (RMSprop's ``decay``, AdaDelta's ``rho``; optax's default where
  unset), or None where it leaves the state unchanged."""
  field = EXACT_FOR.get(opt_config.name)
  if field is None:
    return None
  value = opt_config.get(field)
  if value is None:
    value = inspect.signature(getattr(optax, opt_config.name)).parameters[field].default
  return float(value)


# ------------------------------------------------------------- rows that sat out


class ClockState(NamedTuple):
  """:func:`clocked`'s state: the optimiser's own, the updates applied so far, and
  per table row the count at which its state was last brought up to date."""
  inner: Any
  applied: jax.Array  # () int32
  current: Any        # {'embedding': {'embedding': [vocab] int32}}


def clocked(tx: optax.GradientTransformation) -> optax.GradientTransformation:
  """``tx`` that counts its updates and, per table row, the count at which the row
  was last updated: what :func:`catch_up` needs. Every row an update sees (all of
  them under a dense update, the batch's under ``'rows'``) is current after it."""
  def init(params):
    vocab = params[TABLE[0]][TABLE[1]].shape[:1]
    return ClockState(tx.init(params), jnp.zeros((), jnp.int32),
                      {TABLE[0]: {TABLE[1]: jnp.zeros(vocab, jnp.int32)}})

  def update(updates, state, params=None):
    updates, inner = tx.update(updates, state.inner, params)
    applied = state.applied + 1
    current = jax.tree.map(lambda c: jnp.full_like(c, applied), state.current)
    return updates, ClockState(inner, applied, current)

  return optax.GradientTransformation(init, update)


def catch_up(cut_state: ClockState, factor: float) -> ClockState:
  """The seed-stacked :class:`ClockState` ``cut_state``, cut to each seed's batch rows
  (:func:`gather`), with each row's optimiser state scaled by ``factor ** k`` for the
  ``k`` updates it sat out, and the rows current: the state a dense update would
  have given them.

  Products only (:func:`integer_power`), outside the seed map, so a seed's bits do
  not depend on the seeds beside it: XLA:CPU codes the optimiser's own arithmetic
  (``rsqrt``) differently when these products are fused into it.
  """
  current = cut_state.current[TABLE[0]][TABLE[1]]  # [seeds, n]
  scale = integer_power(factor, cut_state.applied[:, None] - current)

  def decay(path, leaf):
    if not _at_table(path) or leaf.shape[:2] != scale.shape:
      return leaf
    return leaf * scale.astype(leaf.dtype).reshape(scale.shape +
                                                   (1,) * (leaf.ndim - 2))

  return ClockState(
      jax.tree_util.tree_map_with_path(decay, cut_state.inner), cut_state.applied,
      {TABLE[0]: {TABLE[1]: jnp.broadcast_to(cut_state.applied[:, None],
                                             current.shape)}})


def integer_power(base: float, exponent) -> jax.Array:
  """``base ** exponent`` (float32, ``exponent`` an int32 array >= 0) by repeated
  squaring: products only, each rounded as IEEE prescribes, so an element's bits do
  not depend on how XLA vectorises the array (as a ``pow`` of floats may)."""
  result = jnp.ones(exponent.shape, jnp.float32)
  square = jnp.float32(base)
  for bit in range(31):
    result = jnp.where((exponent >> bit) & 1 == 1, result * square, result)
    square = square * square
  return result


# ------------------------------------------------------------ rows of the batch


def batch_rows(tokens, vocab: int) -> Tuple[jax.Array, jax.Array]:
  """``(rows [n], inverse [n])`` for ``n = tokens.size``: the distinct ids of one
  seed's batch (padded with ``vocab``) and, per token, the index of its row."""
  flat = tokens.reshape(-1)
  rows, inverse = jnp.unique(flat, size=flat.shape[0], fill_value=vocab,
                             return_inverse=True)
  return rows, inverse.reshape(-1)


def _at_table(path) -> bool:
  return tuple(getattr(k, 'key', None) for k in path[-len(TABLE):]) == TABLE


def _is_stacked_row_leaf(path, leaf, vocab: int) -> bool:
  """A ``[seeds, vocab, ...]`` leaf at the table's path: the table, its optimiser
  state, :class:`ClockState`'s ``current``."""
  shape = getattr(leaf, 'shape', ())
  return _at_table(path) and len(shape) >= 2 and shape[1] == vocab


def gather(tree, rows, vocab: int):
  """``tree`` (seed-stacked params or optimiser state) with every ``[seeds, vocab,
  ...]`` leaf at the table's path cut down to each seed's ``rows`` ``[seeds, n]``
  (zeros for the padding id): ``[seeds, n, ...]``."""
  cut = jax.vmap(lambda a, r: jnp.take(a, r, axis=0, mode='fill', fill_value=0))
  return jax.tree_util.tree_map_with_path(
      lambda p, a: cut(a, rows) if _is_stacked_row_leaf(p, a, vocab) else a, tree)


def scatter(full, sub, rows, vocab: int):
  """``sub`` (:func:`gather`'s cut of ``full``, updated) with its cut leaves written
  back into ``full``'s at ``rows``; its other leaves as they are."""
  put = jax.vmap(lambda a, r, s: a.at[r].set(s, mode='drop'))
  return jax.tree_util.tree_map_with_path(
      lambda p, a, s: put(a, rows, s) if _is_stacked_row_leaf(p, a, vocab) else s,
      full, sub)

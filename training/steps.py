"""The jitted seed-parallel steps: train, evaluate, select the best dev epoch.

Every function works on the seed-stacked :class:`~training.state.TrainState`. How the
seed axis is mapped is a config choice (``config.train.seed_parallel``):

* ``vmap``: one batched program (the form for GPUs/TPUs and for sharding over devices);
* ``map``: ``jax.lax.map`` over seeds inside the same jit, each seed's step run with
  the shapes of a single-seed run, so a seed's numbers are bitwise the same alone and
  in any group (the CPU default; benchmarks/seed_parallel.py compares the forms).

Both give every seed its own numbers; see WORKSPACE_NOTES.md (determinism policy).
"""
from typing import Callable, Dict, Sequence

import jax
import jax.numpy as jnp
import optax

from data import pipeline
from training import objectives
from training import optimizers
from training import rngs
from training.state import TrainState

SEED_PARALLEL_MODES = ('vmap', 'map')


def seed_parallel(fn: Callable, mode: str, in_axes: Sequence = None) -> Callable:
  """Maps ``fn`` over a leading seed axis of the arguments whose ``in_axes`` is 0.

  Arguments with ``in_axes`` None are shared by all seeds.
  """
  if mode == 'vmap':
    return jax.vmap(fn, in_axes=0 if in_axes is None else tuple(in_axes))
  if mode != 'map':
    raise ValueError(f'config.train.seed_parallel={mode!r}; expected one of '
                     f'{SEED_PARALLEL_MODES}')

  def mapped(*args):
    axes = [0] * len(args) if in_axes is None else list(in_axes)
    per_seed = [a for a, ax in zip(args, axes) if ax == 0]

    def body(xs):
      it = iter(xs)
      return fn(*[next(it) if ax == 0 else a for a, ax in zip(args, axes)])

    return jax.lax.map(body, per_seed)

  return mapped


class Steps:
  """The compiled functions of one experiment (model, optimiser, L2, seed mapping)."""

  def __init__(self, model, tx: optax.GradientTransformation, l2_mask, l2_coef: float,
               mode: str, plan: pipeline.TrainPlan):
    self.model, self.tx, self.mode, self.plan = model, tx, mode, plan
    self.l2_mask, self.l2_coef = l2_mask, l2_coef
    self.epoch_orders = jax.jit(self._epoch_orders)
    self.train_step = jax.jit(self._train_step, static_argnames=('length',),
                              donate_argnums=(0,))
    self.eval_batch = jax.jit(self._eval_batch, static_argnames=('length',))
    self.select_best = jax.jit(self._select_best, donate_argnums=(0,))

  def _seed_update(self, params, opt_state, batch, dropout_key):
    """One optimiser step of one seed: ``(params, opt_state, loss)``."""
    def loss_fn(p):
      logits = self.model.apply({'params': p}, batch, train=True,
                                rngs={'dropout': dropout_key})
      data_loss = objectives.loss(logits, batch)
      return data_loss + optimizers.l2_penalty(p, self.l2_mask, self.l2_coef), data_loss

    grads, data_loss = jax.grad(loss_fn, has_aux=True)(params)
    updates, opt_state = self.tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, data_loss

  def _train_step(self, state: TrainState, seeds, split: Dict[str, jax.Array], orders,
                  slot, epoch, position, *, length: int):
    """Advances every seed by one batch.

    ``orders`` ``[seeds, slots, batch]`` come from :meth:`epoch_orders`; ``slot`` is the
    batch slot visited at ``position`` of ``epoch``. Returns the new state and the
    ``[seeds]`` training losses.
    """
    batch = pipeline.gather_batch(split, orders[:, slot], length)  # [seeds, batch, ...]
    keys = jax.vmap(rngs.dropout_key, in_axes=(0, None, None))(seeds, epoch, position)
    params, opt_state, loss = seed_parallel(self._seed_update, self.mode)(
        state.params, state.opt_state, batch, keys)
    return state.replace(step=state.step + 1, params=params, opt_state=opt_state), loss

  def _eval_batch(self, params, split: Dict[str, jax.Array], idx, *, length: int):
    """Additive eval statistics ``{name: [seeds]}`` of the examples ``idx [batch]``.

    One batch per call: its shape is the same for every split and chunk of a padded
    length, so dev and test share one compilation per length.
    """
    def seed_sums(p, batch):
      logits = self.model.apply({'params': p}, batch, train=False)
      return objectives.eval_sums(logits, batch)

    batch = pipeline.gather_batch(split, idx, length)  # shared by all seeds
    return seed_parallel(seed_sums, self.mode, in_axes=(0, None))(params, batch)

  @staticmethod
  def _select_best(state: TrainState, score, epoch) -> TrainState:
    """Keeps each seed's parameters when its dev ``score`` [seeds] beats its best.

    Ties keep the earlier epoch.
    """
    better = score > state.best_score

    def pick(new, old):
      return jnp.where(better.reshape((-1,) + (1,) * (new.ndim - 1)), new, old)

    return state.replace(
        best_params=jax.tree.map(pick, state.params, state.best_params),
        best_score=jnp.where(better, score, state.best_score),
        best_epoch=jnp.where(better, epoch, state.best_epoch))

  def _epoch_orders(self, seeds, epoch):
    """``[seeds, slots, batch]``: each seed's batches for ``epoch`` (pure in both)."""
    return jax.vmap(lambda s: self.plan.seed_order(rngs.data_key(s, epoch)))(seeds)

"""The seed-stacked train state: every leaf has a leading ``[seeds]`` axis."""
import dataclasses
from typing import Any

import flax
import jax
import jax.numpy as jnp
import numpy as np

from seedsweep.engine import portable as portable_lib
from seedsweep.engine import rngs


@flax.struct.dataclass
class TrainState:
  step: jax.Array        # [seeds] int32, optimiser steps taken
  params: Any            # [seeds, ...] current parameters
  opt_state: Any         # [seeds, ...]
  best_params: Any       # [seeds, ...] parameters at each seed's best dev epoch
  best_score: jax.Array  # [seeds] float32, best dev score so far (-inf: none yet)
  best_epoch: jax.Array  # [seeds] int32, 1-based epoch of best_params (0: none yet)
  # [seeds] int32: the 1-based step whose train loss was first NaN or infinite (0:
  # none); from that step on the seed takes no step (config.train.nan_policy).
  nonfinite_step: jax.Array


# Fields added after checkpoints were made: their value in a state restored from one.
ADDED_FIELDS = {'nonfinite_step': lambda n: jnp.zeros((n,), jnp.int32)}


def before_added_fields(state: TrainState) -> dict:
  """``state``'s fields as a checkpoint made before :data:`ADDED_FIELDS` holds them
  (a restore target for such a checkpoint)."""
  return {f.name: getattr(state, f.name) for f in dataclasses.fields(state)
          if f.name not in ADDED_FIELDS}


def with_added_fields(fields: dict) -> TrainState:
  """A state from :func:`before_added_fields`' dict, added fields at their defaults."""
  n = fields['step'].shape[0]
  return TrainState(**fields, **{k: make(n) for k, make in ADDED_FIELDS.items()})


def init_params(model, seed):
  """Parameters of one seed, from ``jax.random.key(seed)`` alone."""
  # A one-example batch of 8 tokens: what fixes the parameter shapes.
  sample = {'tokens': jnp.zeros((1, 8), jnp.int32),
            'lengths': jnp.full((1,), 8, jnp.int32)}
  return model.init({'params': rngs.init_key(seed)}, sample, train=False)['params']


def with_pretrained(params, table, use):
  """``params`` with the embedding rows where ``use`` [vocab] taken from ``table``
  [vocab, d] (pretrained vectors, inputs/embeddings.py); other rows keep their init."""
  emb = params['embedding']['embedding']
  new = jnp.where(use[:, None], table.astype(emb.dtype), emb)
  return {**params, 'embedding': {**params['embedding'], 'embedding': new}}


def create_train_state(model, tx, seeds, view_ids=None, tables=None,
                       portable: bool = False, sharding=None) -> TrainState:
  """Initial state of every seed, stacked on a leading ``[seeds]`` axis.

  One jitted program initialises the seeds one after another (``lax.map``), each
  from its own key. Not ``jax.vmap``: batched QR (behind orthogonal initialisers) in
  ``jax.jit(jax.vmap(init))`` can stall XLA:CPU for minutes (a Bi-LSTM of hidden 150
  did not finish in 5 minutes with jax 0.10.2; flax's OptimizedLSTMCell hits the same).
  Initialisation runs once per run, so the sequential form costs nothing that
  matters. tests/test_models.py keeps this path honest.

  ``tables``, if given, is ``(table [views, vocab, d], use [views, vocab])`` of
  pretrained vectors; member ``i`` takes the rows of view ``view_ids[i]``. ``portable``:
  the program in the form of :func:`seedsweep.engine.portable.make_portable` (an
  orthogonal initialiser's QR without LAPACK). ``sharding``: where the stacked state
  is born (the members split over a mesh), None for the default device.
  """
  def create(seeds, view_ids, tables):
    def one(args):
      seed, view = args
      params = init_params(model, seed)
      if tables is not None:
        params = with_pretrained(params, tables[0][view], tables[1][view])
      return params, tx.init(params)

    params, opt_state = jax.lax.map(one, (seeds, view_ids))
    n = seeds.shape[0]
    return TrainState(
        step=jnp.zeros((n,), jnp.int32), params=params, opt_state=opt_state,
        best_params=jax.tree.map(jnp.copy, params),
        best_score=jnp.full((n,), -jnp.inf, jnp.float32),
        best_epoch=jnp.zeros((n,), jnp.int32), nonfinite_step=jnp.zeros((n,), jnp.int32))

  seeds = np.asarray(seeds, np.int32)
  view_ids = np.zeros_like(seeds) if view_ids is None else np.asarray(view_ids, np.int32)
  form = portable_lib.make_portable if portable else lambda fn: fn
  placed = {} if sharding is None else {'out_shardings': sharding}
  return jax.jit(form(create), **placed)(*jax.device_put((seeds, view_ids, tables)))

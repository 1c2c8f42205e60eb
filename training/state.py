"""The seed-stacked train state: every leaf has a leading ``[seeds]`` axis."""
from typing import Any

import flax
import jax
import jax.numpy as jnp

from training import rngs


@flax.struct.dataclass
class TrainState:
  step: jax.Array        # [seeds] int32, optimiser steps taken
  params: Any            # [seeds, ...] current parameters
  opt_state: Any         # [seeds, ...]
  best_params: Any       # [seeds, ...] parameters at each seed's best dev epoch
  best_score: jax.Array  # [seeds] float32, best dev score so far (-inf: none yet)
  best_epoch: jax.Array  # [seeds] int32, 1-based epoch of best_params (0: none yet)


def sample_batch(length: int = 8):
  """A one-example batch that fixes parameter shapes at initialisation."""
  return {'tokens': jnp.zeros((1, length), jnp.int32),
          'lengths': jnp.full((1,), length, jnp.int32)}


def init_params(model, seed):
  """Parameters of one seed, from ``jax.random.key(seed)`` alone."""
  return model.init({'params': rngs.init_key(seed)}, sample_batch(),
                    train=False)['params']


def create_train_state(model, tx, seeds) -> TrainState:
  """Initial state of every seed, stacked on a leading ``[seeds]`` axis.

  One jitted program initialises the seeds one after another (``lax.map``), each
  from its own key. Not ``jax.vmap``: batched QR (behind orthogonal initialisers) in
  ``jax.jit(jax.vmap(init))`` can stall XLA:CPU for minutes (a Bi-LSTM of hidden 150
  did not finish in 5 minutes with jax 0.10.2; flax's OptimizedLSTMCell hits the same).
  Initialisation runs once per run, so the sequential form costs nothing that
  matters. tests/test_state.py keeps this path honest.
  """
  def one(seed):
    params = init_params(model, seed)
    return params, tx.init(params)

  def create(seeds):
    params, opt_state = jax.lax.map(one, seeds)
    n = seeds.shape[0]
    return TrainState(
        step=jnp.zeros((n,), jnp.int32), params=params, opt_state=opt_state,
        best_params=jax.tree.map(jnp.copy, params),
        best_score=jnp.full((n,), -jnp.inf, jnp.float32),
        best_epoch=jnp.zeros((n,), jnp.int32))

  return jax.jit(create)(jnp.asarray(seeds, jnp.int32))

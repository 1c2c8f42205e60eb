"""Optimisers and L2 penalties from ``config.optimizer`` and ``config.l2``.

``config.optimizer.name`` is one of :data:`OPTIMIZERS`; each reads only the fields it
needs (listed there). Optional clipping (``clip_global_norm``, ``clip_value``; 0 = off)
comes first in the chain. L2 is a loss term ``coef * sum ||W||^2`` over the parameters
whose '/'-joined path matches one of ``config.l2.params`` (regular expressions), as
docs/models.md §0 prescribes, so it interacts with adaptive optimisers as in the papers.
"""
import re
from typing import Callable, Dict, Tuple

import jax
import jax.numpy as jnp
import optax
from flax import traverse_util

from seedsweep.config import keys
from seedsweep.errors import UserError

OPTIMIZERS: Dict[str, Tuple[Callable, Tuple[str, ...]]] = {
    'sgd': (optax.sgd, ('momentum', 'nesterov')),
    # The papers' AdaGrad starts from a zero accumulator: set initial_accumulator_value.
    'adagrad': (optax.adagrad, ('initial_accumulator_value', 'eps')),
    'adadelta': (optax.adadelta, ('rho', 'eps')),
    'rmsprop': (optax.rmsprop, ('decay', 'eps', 'momentum', 'centered')),
    'adam': (optax.adam, ('b1', 'b2', 'eps')),
}


def make_optimizer(opt_config, hparams=None) -> optax.GradientTransformation:
  """The chain of ``opt_config``; ``hparams`` ({``optimizer.<field>``: scalar},
  traced or not) replaces the learning rate and clip thresholds it names. A clip
  named there is in the chain whatever its value (an infinite one passes the
  updates through unchanged), so every member's state has one structure."""
  hparams = hparams or {}
  value = lambda field: hparams.get(f'optimizer.{field}', opt_config[field])
  name = opt_config.name
  if name not in OPTIMIZERS:
    raise UserError(f'config.optimizer.name={name!r} is not an optimizer'
                    f'{keys.did_you_mean(name, OPTIMIZERS)}; expected one of '
                    f'{sorted(OPTIMIZERS)} (seedsweep/engine/optimizers.py)')
  factory, fields = OPTIMIZERS[name]
  kwargs = {f: opt_config[f] for f in fields
            if f in opt_config and opt_config[f] is not None}
  chain = []
  if opt_config.clip_global_norm or 'optimizer.clip_global_norm' in hparams:
    chain.append(optax.clip_by_global_norm(value('clip_global_norm')))
  if opt_config.clip_value or 'optimizer.clip_value' in hparams:
    chain.append(optax.clip(value('clip_value')))
  chain.append(factory(value('learning_rate'), **kwargs))
  return optax.chain(*chain)


def l2_mask(params, patterns) -> dict:
  """Boolean pytree like ``params``: True where a path matches one of ``patterns``."""
  regexes = []
  for p in patterns:
    try:
      regexes.append(re.compile(p))
    except re.error as e:
      raise UserError(f'config.l2.params: {p!r} is not a regular expression ({e})')
  flat = traverse_util.flatten_dict(params, sep='/')
  return traverse_util.unflatten_dict(
      {k: any(r.search(k) for r in regexes) for k in flat}, sep='/')


def l2_penalty(params, mask, coef: float):
  """``coef * sum ||W||^2`` over the masked parameters (0 when ``coef`` is a
  Python 0; a traced ``coef`` always computes the term)."""
  if isinstance(coef, (int, float)) and not coef:
    return jnp.zeros((), jnp.float32)
  terms = jax.tree.map(lambda p, m: jnp.sum(p * p) if m else 0.0, params, mask)
  return coef * sum(jax.tree.leaves(terms))


def embedding_mask(params) -> dict:
  """Boolean pytree like ``params``: True for the word-embedding table(s)."""
  flat = traverse_util.flatten_dict(params, sep='/')
  return traverse_util.unflatten_dict(
      {k: 'embedding' in k.split('/')[:-1] for k in flat}, sep='/')


def freeze(tx: optax.GradientTransformation, frozen_mask) -> optax.GradientTransformation:
  """``tx`` for the parameters where ``frozen_mask`` is False; the others never move
  (static pretrained embeddings: their updates are zero and they keep no state)."""
  labels = jax.tree.map(lambda m: 'frozen' if m else 'train', frozen_mask)
  return optax.multi_transform({'train': tx, 'frozen': optax.set_to_zero()}, labels)

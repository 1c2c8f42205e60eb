"""Dropout whose rate may be a traced scalar.

The engine can run several hyperparameter points in one jitted program: a model's
dropout rates then arrive as per-member traced scalars (``model.clone(dropout=r)``
inside ``jax.lax.map`` / ``jax.vmap`` over members). ``flax.linen.Dropout`` tests its
rate in Python (``rate == 0``, ``rate == 1``), which a tracer cannot answer, so every
model uses this :class:`Dropout` instead.

It keeps flax's contract so that nothing else moves:

* the class is named ``Dropout``, so submodules are still auto-named ``Dropout_0``,
  ``Dropout_1``, ... and draw from the same ``'dropout'`` RNG streams;
* called as ``Dropout(rate, deterministic=not train)(x)``;
* with a static (Python number) rate it gives exactly flax's bits for the same rng:
  a static 0 (or ``deterministic``) is the identity without an RNG draw; otherwise
  each element is kept with probability ``keep = 1 - rate`` (a Bernoulli mask from
  ``make_rng('dropout')``) and scaled by ``1 / keep``;
* with a traced rate the same mask and scaling are computed in the array dtype; a
  traced rate of 0 keeps every element and divides by exactly 1, so it returns the
  input bit for bit (the RNG is still drawn; no other module's stream depends on it).
"""
import numbers
from typing import Any, Optional

import flax.linen as nn
import jax
import jax.numpy as jnp


class Dropout(nn.Module):
  """Inverted dropout with a static or traced ``rate`` (the drop probability)."""
  rate: Any
  deterministic: bool = False

  @nn.compact
  def __call__(self, inputs, deterministic: Optional[bool] = None):
    if deterministic is None:
      deterministic = self.deterministic
    if deterministic:
      return inputs
    rate = self.rate
    # A Python (or NumPy) number is known while tracing; an array or a tracer is not.
    if isinstance(rate, numbers.Number) and not isinstance(rate, bool):
      if rate == 0:
        return inputs
      if rate == 1:  # nothing kept; avoids 0 / 0 in the gradient
        return jnp.zeros_like(inputs)
      keep = 1.0 - rate  # in Python, as flax computes it: the same bits
      scale = keep
    else:
      keep = 1 - jnp.asarray(rate, jnp.float32)
      # keep = 0 (rate 1) keeps nothing; dividing by 1 then avoids inf * 0 = nan
      # in the gradient. Any other keep is used as is.
      scale = jnp.where(keep > 0, keep, 1).astype(inputs.dtype)
    kept = jax.random.bernoulli(self.make_rng('dropout'), keep, inputs.shape)
    return jnp.where(kept, inputs / scale, jnp.zeros((), inputs.dtype))

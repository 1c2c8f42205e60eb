"""NNX dropout whose rate may be a traced scalar: what :mod:`seedsweep.models.dropout`
is to linen, for a ``flax.nnx`` model of a user's own.

A stacked run hands each member's dropout rate to the model as a traced scalar (the
NNX adapter, models/nnx_adapter.py, constructs the module with it). ``nnx.Dropout``
tests its rate in Python (``rate == 0``), which a tracer cannot answer, so a model
whose rate a sweep stacks uses this :class:`Dropout` instead::

    from seedsweep.models import nnx_dropout
    self.dropout = nnx_dropout.Dropout(dropout, rngs=rngs)

It is ``nnx.Dropout`` (a subclass: the same arguments, ``train()``/``eval()`` and
random stream), and with a static (Python number) rate it is ``nnx.Dropout``'s own
call, so it gives exactly its bits. With a traced rate the mask and the scaling
are those of the linen :class:`seedsweep.models.dropout.Dropout`: computed in the
array dtype, a traced 0 keeps every element and divides by exactly 1 (the input,
bit for bit; the key is still drawn), a traced 1 keeps none without a NaN gradient.
Kept apart from models/dropout.py because ``flax.nnx`` takes a second to import.
"""
import numbers

import jax
import jax.numpy as jnp
from flax import nnx


def is_static(rate) -> bool:
  """Whether ``rate`` is a number known while tracing (not an array or a tracer)."""
  return isinstance(rate, numbers.Number) and not isinstance(rate, bool)


class Dropout(nnx.Dropout):
  """Inverted dropout (``nnx.Dropout``) with a static or traced ``rate``."""

  def __call__(self, inputs, *, deterministic=None, rngs=None):
    """``inputs`` masked and scaled by ``1 / (1 - rate)``; as they are when
    deterministic (``eval()`` mode)."""
    if is_static(self.rate):
      return super().__call__(inputs, deterministic=deterministic, rngs=rngs)
    if self.deterministic if deterministic is None else deterministic:
      return inputs
    key = _key(self.rngs if rngs is None else rngs, self.rng_collection)
    keep = 1 - jnp.asarray(self.rate, jnp.float32)
    # keep = 0 (rate 1) keeps nothing; dividing by 1 then avoids inf * 0 = nan in the
    # gradient. Any other keep is used as is.
    scale = jnp.where(keep > 0, keep, 1).astype(inputs.dtype)
    shape = list(inputs.shape)
    for dim in self.broadcast_dims:
      shape[dim] = 1
    kept = jnp.broadcast_to(jax.random.bernoulli(key, keep, shape), inputs.shape)
    return jnp.where(kept, inputs / scale, jnp.zeros((), inputs.dtype))


def _key(rngs, collection: str):
  """The key ``nnx.Dropout`` would draw from ``rngs`` (Rngs, a stream or a key)."""
  if rngs is None:
    raise ValueError('Dropout in training mode was given no rngs (nnx.Dropout\'s '
                     'rule: pass rngs= to its constructor or its call)')
  if isinstance(rngs, nnx.Rngs):
    return rngs[collection]()
  if isinstance(rngs, nnx.RngStream):
    return rngs()
  return rngs

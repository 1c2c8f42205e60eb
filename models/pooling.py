"""Masked pooling over time.

Every function takes hidden states ``h`` of shape ``[batch, time, features]`` and a
boolean ``mask`` of shape ``[batch, time]`` (True on real tokens) and returns
``[batch, features]``. Padded positions never change the result.
"""
import jax.numpy as jnp


def length_mask(lengths, max_length: int):
  """``[batch] -> [batch, time]`` boolean mask, True where ``t < length``."""
  return jnp.arange(max_length)[None, :] < lengths[:, None]


def masked_mean(h, mask):
  """Mean over the real positions of each sequence (divides by its length)."""
  m = mask[..., None].astype(h.dtype)
  return (h * m).sum(axis=1) / jnp.maximum(m.sum(axis=1), 1.0)


def masked_max(h, mask):
  """Max over the real positions of each sequence (zeros for an empty one)."""
  neg = jnp.finfo(h.dtype).min
  out = jnp.where(mask[..., None], h, neg).max(axis=1)
  return jnp.where(mask.any(axis=1, keepdims=True), out, 0.0)


def last_real(h, mask):
  """State at the last real position ``length - 1`` (not at ``time - 1``)."""
  last = jnp.maximum(mask.sum(axis=1) - 1, 0)
  return jnp.take_along_axis(h, last[:, None, None], axis=1)[:, 0]


POOLINGS = {'mean': masked_mean, 'max': masked_max, 'last': last_real}


def pool(kind: str, h, mask):
  """Dispatches to one of :data:`POOLINGS` by name."""
  if kind not in POOLINGS:
    raise ValueError(
        f'config.model.pooling={kind!r} is not a pooling; expected one of '
        f'{sorted(POOLINGS)}')
  return POOLINGS[kind](h, mask)

"""LSTM layers over right-padded batches, recurrences in ``jax.lax.scan``.

The cell is our own (fused gates ``[i, f, g, o]``, input projection hoisted out of the
scan), not ``flax.linen.OptimizedLSTMCell``: ``jax.jit(jax.vmap(init))`` over seed keys
hangs for a module containing that cell on jax 0.10 / flax 0.12 (tests/test_models.py
guards against it coming back).

Shapes: inputs ``[batch, time, features]``, ``mask`` ``[batch, time]`` (True on real
tokens), outputs ``[batch, time, hidden]`` with zeros at padded positions.
"""
import flax.linen as nn
import jax
import jax.numpy as jnp


def reverse_within_length(x, mask):
  """Reverses each sequence inside its own length; padding stays in place.

  ``rev[b, t] = len_b - 1 - t`` for ``t < len_b`` else ``t``. The permutation is an
  involution, so applying it twice restores ``x``.
  """
  lengths = mask.sum(axis=1)
  t = jnp.arange(mask.shape[1])[None, :]
  idx = jnp.where(mask, lengths[:, None] - 1 - t, t)
  return jnp.take_along_axis(x, idx[..., None], axis=1)


def lstm_cell(z, c):
  """One LSTM update from fused pre-activations ``z [.., 4h]`` (gates ``[i, f, g, o]``)
  and the previous cell ``c [.., h]``: ``(h, c)``."""
  i, f, g, o = jnp.split(z, 4, axis=-1)
  c_new = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
  return jax.nn.sigmoid(o) * jnp.tanh(c_new), c_new


def lstm_scan(gates_x, w_h, mask, unroll: int = 1):
  """Runs ``D`` independent LSTMs (e.g. two directions) in one scan.

  Args:
    gates_x: ``[D, batch, time, 4 * hidden]``, the hoisted ``x W_x + b``.
    w_h: ``[D, hidden, 4 * hidden]`` recurrent weights.
    mask: ``[batch, time]``; on padded steps the state is held.
    unroll: scan unrolling (1 is fastest to compile and run on CPU).

  Returns:
    ``hs [D, batch, time, hidden]`` (zeros at padding) and the final ``(h, c)``, each
    ``[D, batch, hidden]``: the state at each sequence's last real token.
  """
  num, batch, _, features = gates_x.shape
  hidden = features // 4

  def step(carry, inputs):
    h, c = carry
    g_x, m = inputs
    h_new, c_new = lstm_cell(g_x + jnp.einsum('dbh,dhk->dbk', h, w_h), c)
    m = m[None, :, None]
    return ((jnp.where(m, h_new, h), jnp.where(m, c_new, c)),
            jnp.where(m, h_new, 0.0))

  zeros = jnp.zeros((num, batch, hidden), gates_x.dtype)
  carry, hs = jax.lax.scan(step, (zeros, zeros),
                           (jnp.moveaxis(gates_x, 2, 0), jnp.swapaxes(mask, 0, 1)),
                           unroll=unroll)
  return jnp.moveaxis(hs, 0, 2), carry


class LSTMWeights(nn.Module):
  """The parameters of one LSTM direction, applied to a whole sequence at once.

  ``input`` (Dense, lecun-normal kernel and zero bias) and ``recurrent``
  (orthogonal ``[hidden, 4 * hidden]``).
  """
  hidden: int

  @nn.compact
  def __call__(self, x):
    """``x [batch, time, in]`` -> ``(x W_x + b [batch, time, 4h], W_h [h, 4h])``."""
    gates_x = nn.Dense(4 * self.hidden, name='input')(x)
    w_h = self.param('recurrent', nn.initializers.orthogonal(),
                     (self.hidden, 4 * self.hidden), jnp.float32)
    return gates_x, w_h


class LSTM(nn.Module):
  """Unidirectional LSTM: ``x [batch, time, in]`` -> ``(hs, (h_last, c_last))``."""
  hidden: int
  unroll: int = 1

  @nn.compact
  def __call__(self, x, mask):
    gates_x, w_h = LSTMWeights(self.hidden, name='forward')(x)
    hs, (h, c) = lstm_scan(gates_x[None], w_h[None], mask, self.unroll)
    return hs[0], (h[0], c[0])


class BiLSTM(nn.Module):
  """Forward and backward LSTMs, concatenated: ``[batch, time, 2 * hidden]``.

  The backward direction reads each sequence reversed within its own length, so it
  starts at the last real token whatever the padding. Both directions advance in the
  same scan (half the sequential steps of two scans).
  """
  hidden: int
  unroll: int = 1

  @nn.compact
  def __call__(self, x, mask):
    gx_f, wh_f = LSTMWeights(self.hidden, name='forward')(x)
    gx_b, wh_b = LSTMWeights(self.hidden, name='backward')(
        reverse_within_length(x, mask))
    hs, _ = lstm_scan(jnp.stack([gx_f, gx_b]), jnp.stack([wh_f, wh_b]), mask,
                      self.unroll)
    return jnp.concatenate([hs[0], reverse_within_length(hs[1], mask)], axis=-1)

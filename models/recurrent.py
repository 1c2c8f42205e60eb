"""LSTM layers over right-padded batches, recurrences in ``jax.lax.scan``.

The cell is our own (fused gates ``[i, f, g, o]``, input projection hoisted out of the
scan), not ``flax.linen.OptimizedLSTMCell``: ``jax.jit(jax.vmap(init))`` over seed keys
hangs for a module containing that cell on jax 0.10 / flax 0.12 (tests/test_models.py
guards against it coming back).

Shapes: inputs ``[batch, time, features]``, ``mask`` ``[batch, time]`` (True on real
tokens), outputs ``[batch, time, hidden]`` with zeros at padded positions.
"""
import functools

import flax.linen as nn
import jax
import jax.numpy as jnp


def gate_activations(z):
  """``(i, f, g, o)`` of fused pre-activations ``z [.., 4h]``: sigmoid, sigmoid, tanh,
  sigmoid."""
  i, f, g, o = jnp.split(z, 4, axis=-1)
  return jax.nn.sigmoid(i), jax.nn.sigmoid(f), jnp.tanh(g), jax.nn.sigmoid(o)


def lstm_cell(z, c):
  """One LSTM update from fused pre-activations ``z [.., 4h]`` (gates ``[i, f, g, o]``)
  and the previous cell ``c [.., h]``: ``(h, c)``."""
  i, f, g, o = gate_activations(z)
  c_new = f * c + i * g
  return o * jnp.tanh(c_new), c_new


def lstm_scan(gates_x, w_h, mask, unroll: int = 1):
  """Runs ``D`` independent LSTMs (e.g. two directions) in one scan.

  Args:
    gates_x: ``[D, batch, time, 4 * hidden]``, the hoisted ``x W_x + b``.
    w_h: ``[D, hidden, 4 * hidden]`` recurrent weights.
    mask: ``[batch, time]`` shared by the ``D`` LSTMs, or ``[D, batch, time]``; on
      masked steps the state is held.
    unroll: scan unrolling (1 is fastest to compile and run on CPU).

  Returns:
    ``hs [D, batch, time, hidden]`` (zeros at masked steps) and the final ``(h, c)``,
    each ``[D, batch, hidden]``: the state after each sequence's last unmasked step.

  Differentiated by :func:`_time_major_scan`'s own backward pass (below), not by
  autodiff through the scan.
  """
  num = gates_x.shape[0]
  mask = jnp.broadcast_to(mask, (num,) + mask.shape[-2:])
  hs, carry = _time_major_scan(jnp.moveaxis(gates_x, 2, 0), w_h,
                               jnp.moveaxis(mask, 2, 0), unroll)
  return jnp.moveaxis(hs, 0, 2), carry


def _run_forward(gates_t, w_h, mask_t, unroll, keep: bool):
  """The forward scan over time-major inputs; ``keep``: also return the residuals
  the backward pass needs (each step's ``h``, ``c``, gate activations ``[D, batch,
  4h]`` and ``tanh(c)``)."""
  num, batch, features = gates_t.shape[1:]
  zeros = jnp.zeros((num, batch, features // 4), gates_t.dtype)

  def step(carry, inputs):  # one time step of the D LSTMs
    h, c = carry
    g_x, m = inputs
    i, f, g, o = gate_activations(g_x + jnp.einsum('dbh,dhk->dbk', h, w_h))
    c_new = f * c + i * g
    tanh_c = jnp.tanh(c_new)
    h_new = o * tanh_c
    m = m[..., None]
    new_carry = (jnp.where(m, h_new, h), jnp.where(m, c_new, c))
    out = jnp.where(m, h_new, 0.0)
    acts = jnp.concatenate([i, f, g, o], -1)
    return new_carry, ((out, h, c, acts, tanh_c) if keep else out)

  return jax.lax.scan(step, (zeros, zeros), (gates_t, mask_t), unroll=unroll)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _time_major_scan(gates_t, w_h, mask_t, unroll):
  """``gates_t [time, D, batch, 4h]``, ``mask_t [time, D, batch]`` ->
  ``(hs [time, D, batch, h], (h, c) [D, batch, h])``."""
  carry, hs = _run_forward(gates_t, w_h, mask_t, unroll, keep=False)
  return hs, carry


def _time_major_scan_fwd(gates_t, w_h, mask_t, unroll):
  carry, (hs, h_prev, c_prev, acts, tanh_c) = _run_forward(gates_t, w_h, mask_t,
                                                           unroll, keep=True)
  return (hs, carry), (w_h, mask_t, h_prev, c_prev, acts, tanh_c)


def _time_major_scan_bwd(unroll, residuals, cotangents):
  """Backpropagation through time, one small matmul per step.

  The scan carries only ``(dh, dc)`` and emits each step's pre-activation gradient
  ``dz``; the recurrent weights' gradient is then one contraction over (time, batch)
  instead of a per-step outer product accumulated through the loop.
  """
  w_h, mask_t, h_prev, c_prev, acts, tanh_c = residuals
  d_hs, (dh_last, dc_last) = cotangents

  def step(carry, inputs):
    dh, dc = carry
    d_out, m, c0, a, tc = inputs
    m = m[..., None]
    i, f, g, o = jnp.split(a, 4, axis=-1)
    dh_new = jnp.where(m, dh + d_out, 0.0)
    dc_new = jnp.where(m, dc, 0.0) + dh_new * o * (1.0 - tc * tc)
    dz = jnp.concatenate([dc_new * g * i * (1.0 - i), dc_new * c0 * f * (1.0 - f),
                          dc_new * i * (1.0 - g * g), dh_new * tc * o * (1.0 - o)], -1)
    dh_prev = jnp.where(m, 0.0, dh) + jnp.einsum('dbk,dhk->dbh', dz, w_h)
    dc_prev = jnp.where(m, 0.0, dc) + dc_new * f
    return (dh_prev, dc_prev), dz

  (_, _), dz = jax.lax.scan(step, (dh_last, dc_last),
                            (d_hs, mask_t, c_prev, acts, tanh_c),
                            reverse=True, unroll=unroll)
  d_w = jnp.einsum('tdbh,tdbk->dhk', h_prev, dz)
  return dz, d_w, None


_time_major_scan.defvjp(_time_major_scan_fwd, _time_major_scan_bwd)


def bidirectional_scan(gates_fw, gates_bw, w_h, mask, unroll: int = 1):
  """A forward and a backward LSTM over right-padded sequences, in one scan.

  The backward LSTM reads the time axis flipped, with the mask flipped too: it meets
  each sequence's padding first, where its zero state is held, and then the real
  tokens from the last to the first. So it starts at each sequence's last real token
  with no per-sequence gather (whose transpose, a scatter, was the slowest part of
  the backward pass on CPU).

  Args:
    gates_fw, gates_bw: ``[batch, time, 4 * hidden]`` hoisted input projections.
    w_h: ``[2, hidden, 4 * hidden]``, forward then backward.
    mask: ``[batch, time]``.

  Returns:
    ``[batch, time, 2 * hidden]``: forward and backward states at each position,
    zeros at padding.
  """
  hs, _ = lstm_scan(jnp.stack([gates_fw, jnp.flip(gates_bw, 1)]), w_h,
                    jnp.stack([mask, jnp.flip(mask, 1)]), unroll)
  return jnp.concatenate([hs[0], jnp.flip(hs[1], 1)], axis=-1)


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

  The backward direction starts at each sequence's last real token whatever the
  padding (:func:`bidirectional_scan`). Both directions advance in the same scan
  (half the sequential steps of two scans).
  """
  hidden: int
  unroll: int = 1

  @nn.compact
  def __call__(self, x, mask):
    gx_f, wh_f = LSTMWeights(self.hidden, name='forward')(x)
    gx_b, wh_b = LSTMWeights(self.hidden, name='backward')(x)
    return bidirectional_scan(gx_f, gx_b, jnp.stack([wh_f, wh_b]), mask, self.unroll)

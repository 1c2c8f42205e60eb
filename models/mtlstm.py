"""MT-LSTM (Liu et al. 2015): multi-timescale LSTM (MODELS.md §2).

The hidden state (``hidden`` units in all) is split into ``groups`` groups; group ``k``
(1-indexed) has period ``T_k = 2^(k-1)``. Time is 1-indexed: group ``k`` updates at step
``t`` only when ``t mod T_k == 0`` and otherwise holds its ``(h, c)``. Group ``k``'s gates
read the word vector and the held states of its *senders* ``S(k)``: groups ``j <= k``
(fast-to-slow, ``f2s``) or ``j >= k`` (slow-to-fast, ``s2f``), through recurrent blocks
``U^{j->k}`` and peephole blocks ``V^{j->k}`` on ``c_{t-1}`` (input, forget and output
gates). The classifier reads every group's held ``h`` at the last real token; a group
whose period exceeds the length never fires and gives zeros. ``groups=1`` is a plain
LSTM with full peepholes (the paper's LSTM baseline, same code).

Three implementations of the recurrence (``implementation``), equal in value and
gradient (tests/test_mtlstm.py) and timed by benchmarks/mtlstm_paths.py:

* ``masked``: one scan over time computing every group each step, the inactive ones
  held by a mask (the reference; costs the full LSTM each step);
* ``unrolled``: a scan over super-steps of one full period ``P = 2^(g-1)``, its ``P``
  micro-steps unrolled in Python, each computing only its statically known active
  groups (always the ``a`` fastest ones);
* ``strided``: one scan per group over its own activation steps ``t = T_k, 2 T_k, ..``,
  groups in dependency order (fast to slow for f2s, slow to fast for s2f). Senders'
  contributions are gathered from their finished trajectories and projected outside
  the scan, so group ``k`` costs ``len / T_k`` small steps.

Parameters per group ``k`` (``s_k`` units, senders ``S_k`` units in all, ascending group
order): ``input [m, 4 s_k]`` and ``bias [4 s_k]`` (gates ``[i, f, o, c]``), ``recurrent
[S_k, 4 s_k]``, ``peephole [S_k, 3 s_k]``: only the blocks the strategy allows exist, so
no dead weight is trained or regularised.

Shapes: tokens ``[batch, time]``; input projections ``xp [batch, time, 4, hidden]``
(gate-major, units in group order); final state ``[batch, hidden]``; logits
``[batch, classes]``.
"""
from typing import List, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from models.baselines import embed_batch
from models.baselines import symmetric_uniform

STRATEGIES = ('f2s', 's2f')
IMPLEMENTATIONS = ('masked', 'unrolled', 'strided')


def group_sizes(hidden: int, groups: int) -> List[int]:
  """Near-equal split of ``hidden`` units, the extra units to the fastest groups
  (QC: 55 units in 3 groups -> 19/18/18, MODELS.md §2.1)."""
  return [len(a) for a in np.array_split(np.arange(hidden), groups)]


def senders(k: int, groups: int, strategy: str) -> List[int]:
  """The groups (0-indexed, ascending) whose state group ``k`` reads."""
  return list(range(k + 1)) if strategy == 'f2s' else list(range(k, groups))


def parameter_count(embed_dim: int, hidden: int, groups: int, strategy: str,
                    num_classes: int) -> int:
  """Parameters without embeddings, softmax included."""
  sizes = group_sizes(hidden, groups)
  total = 0
  for k, s in enumerate(sizes):
    s_in = sum(sizes[j] for j in senders(k, groups, strategy))
    total += 4 * s * (embed_dim + 1) + 7 * s * s_in
  return total + hidden * num_classes + num_classes


def _offsets(sizes: Sequence[int]) -> np.ndarray:
  return np.concatenate([[0], np.cumsum(sizes)]).astype(int)


def _cell(z, peep, c_prev):
  """``z [.., 4, s]`` (gates i, f, o, c), ``peep [.., 3, s]`` -> ``(h, c)``."""
  gates = jax.nn.sigmoid(z[..., :3, :] + peep)
  c = gates[..., 1, :] * c_prev + gates[..., 0, :] * jnp.tanh(z[..., 3, :])
  return gates[..., 2, :] * jnp.tanh(c), c


def full_matrices(recurrent, peephole, sizes, strategy):
  """The per-group blocks placed into masked full matrices ``U [d, 4, d]`` and
  ``V [d, 3, d]`` (rows: sender units, columns: receiver units; zero where the
  strategy forbids a connection)."""
  off, groups = _offsets(sizes), len(sizes)
  d = off[-1]
  u = jnp.zeros((d, 4, d), recurrent[0].dtype)
  v = jnp.zeros((d, 3, d), peephole[0].dtype)
  for k in range(groups):
    src = senders(k, groups, strategy)
    rows = slice(off[src[0]], off[src[-1] + 1])
    cols = slice(off[k], off[k + 1])
    u = u.at[rows, :, cols].set(recurrent[k].reshape(-1, 4, sizes[k]))
    v = v.at[rows, :, cols].set(peephole[k].reshape(-1, 3, sizes[k]))
  return u, v


def masked_final(xp, recurrent, peephole, lengths, sizes, strategy, unroll=1):
  """Reference: one scan over time, all groups each step, inactive ones held."""
  batch, time = xp.shape[:2]
  off = _offsets(sizes)
  u, v = full_matrices(recurrent, peephole, sizes, strategy)
  unit_period = np.repeat([2 ** k for k in range(len(sizes))], sizes)

  def step(carry, inputs):
    h, c = carry
    x_t, t = inputs
    z = x_t + jnp.einsum('bd,dge->bge', h, u)
    h_new, c_new = _cell(z, jnp.einsum('bd,dge->bge', c, v), c)
    active = ((t % unit_period) == 0)[None, :] & (t <= lengths)[:, None]
    return (jnp.where(active, h_new, h), jnp.where(active, c_new, c)), None

  zeros = jnp.zeros((batch, off[-1]), xp.dtype)
  (h, _), _ = jax.lax.scan(step, (zeros, zeros),
                           (jnp.moveaxis(xp, 1, 0), jnp.arange(1, time + 1)),
                           unroll=unroll)
  return h


def unrolled_final(xp, recurrent, peephole, lengths, sizes, strategy, unroll=1):
  """A scan over super-steps of one full period, micro-steps unrolled in Python.

  At micro-step ``p`` (1-indexed within the period) the active groups are those with
  ``p mod T_k == 0``: the ``a_p`` fastest ones, units ``[0, n_p)``. Under f2s they read
  only units ``[0, n_p)``; under s2f every unit.
  """
  batch, time = xp.shape[:2]
  off, groups = _offsets(sizes), len(sizes)
  u, v = full_matrices(recurrent, peephole, sizes, strategy)
  period = 2 ** (groups - 1)
  supers = -(-time // period)
  pad = supers * period - time
  xs = jnp.pad(xp, ((0, 0), (0, pad), (0, 0), (0, 0)))
  xs = jnp.moveaxis(xs.reshape(batch, supers, period, *xp.shape[2:]), 1, 0)
  active_units = [off[sum(1 for k in range(groups) if p % 2 ** k == 0)]
                  for p in range(1, period + 1)]

  def step(carry, inputs):
    h, c = carry
    x_super, s = inputs  # [batch, period, 4, d], super-step index (0-based)
    for p, n in enumerate(active_units):
      rows = n if strategy == 'f2s' else off[-1]
      z = x_super[:, p, :, :n] + jnp.einsum('bd,dge->bge', h[:, :rows], u[:rows, :, :n])
      peep = jnp.einsum('bd,dge->bge', c[:, :rows], v[:rows, :, :n])
      h_new, c_new = _cell(z, peep, c[:, :n])
      real = (s * period + p + 1 <= lengths)[:, None]
      h = jnp.concatenate([jnp.where(real, h_new, h[:, :n]), h[:, n:]], axis=1)
      c = jnp.concatenate([jnp.where(real, c_new, c[:, :n]), c[:, n:]], axis=1)
    return (h, c), None

  zeros = jnp.zeros((batch, off[-1]), xp.dtype)
  (h, _), _ = jax.lax.scan(step, (zeros, zeros), (xs, jnp.arange(supers)),
                           unroll=unroll)
  return h


def strided_trajectories(xp, recurrent, peephole, sizes, strategy, unroll=1):
  """Each group's states indexed by activation number: ``(hs, cs)``, lists over
  groups of ``[n_k + 1, batch, s_k]`` with ``n_k = time // T_k`` and entry 0 the zero
  initial state. Group ``j``'s held state at time ``tau`` is entry ``tau // T_j``."""
  batch, time = xp.shape[:2]
  off, groups = _offsets(sizes), len(sizes)
  order = range(groups) if strategy == 'f2s' else range(groups - 1, -1, -1)
  hs, cs = [None] * groups, [None] * groups
  for k in order:
    size, period = sizes[k], 2 ** k
    steps = time // period
    zeros = jnp.zeros((1, batch, size), xp.dtype)
    if steps == 0:
      hs[k] = cs[k] = zeros
      continue
    src = senders(k, groups, strategy)
    row = lambda j, src=src: slice(off[j] - off[src[0]], off[j + 1] - off[src[0]])
    u = recurrent[k].reshape(-1, 4, size)
    v = peephole[k].reshape(-1, 3, size)
    # Inputs at this group's activation times t = a * T_k (position t - 1).
    z = jnp.moveaxis(xp[:, period - 1::period, :, off[k]:off[k + 1]][:, :steps], 1, 0)
    peep = jnp.zeros(z.shape[:2] + (3, size), xp.dtype)
    when = np.arange(1, steps + 1) * period - 1  # t - 1: the senders' held states
    for j in src:
      if j == k:
        continue
      held_h, held_c = hs[j][when // 2 ** j], cs[j][when // 2 ** j]
      z = z + jnp.einsum('nbd,dge->nbge', held_h, u[row(j)])
      peep = peep + jnp.einsum('nbd,dge->nbge', held_c, v[row(j)])
    u_own, v_own = u[row(k)], v[row(k)]

    def step(carry, inputs, u_own=u_own, v_own=v_own):
      h, c = carry
      z_t, peep_t = inputs
      h, c = _cell(z_t + jnp.einsum('bd,dge->bge', h, u_own),
                   peep_t + jnp.einsum('bd,dge->bge', c, v_own), c)
      return (h, c), (h, c)

    _, (h_traj, c_traj) = jax.lax.scan(step, (zeros[0], zeros[0]), (z, peep),
                                       unroll=unroll)
    hs[k] = jnp.concatenate([zeros, h_traj])
    cs[k] = jnp.concatenate([zeros, c_traj])
  return hs, cs


def strided_final(xp, recurrent, peephole, lengths, sizes, strategy, unroll=1):
  """Per-group strided scans; each group's held state at ``len`` is gathered."""
  hs, _ = strided_trajectories(xp, recurrent, peephole, sizes, strategy, unroll)
  batch = jnp.arange(xp.shape[0])
  return jnp.concatenate([traj[lengths // 2 ** k, batch]
                          for k, traj in enumerate(hs)], axis=1)


FINAL_STATE = {'masked': masked_final, 'unrolled': unrolled_final,
               'strided': strided_final}


class MTGroupParams(nn.Module):
  """One group's weights: ``(input [m, 4s], bias [4s], recurrent [S, 4s],
  peephole [S, 3s])``, uniform in ``(-scale, scale)``, zero bias."""
  in_features: int
  size: int
  sender_units: int
  scale: float

  @nn.compact
  def __call__(self):
    init = symmetric_uniform(self.scale)
    s = self.size
    return (self.param('input', init, (self.in_features, 4 * s), jnp.float32),
            self.param('bias', nn.initializers.zeros, (4 * s,), jnp.float32),
            self.param('recurrent', init, (self.sender_units, 4 * s), jnp.float32),
            self.param('peephole', init, (self.sender_units, 3 * s), jnp.float32))


class MTLSTM(nn.Module):
  """MT-LSTM sentence classifier (registered as ``mtlstm``; ``groups=1`` is the
  paper's LSTM baseline)."""
  vocab_size: int
  num_classes: int
  embed_dim: int = 100
  hidden: int = 60    # total over groups
  groups: int = 3
  strategy: str = 'f2s'
  implementation: str = 'strided'
  init_scale: float = 0.1  # U(-0.1, 0.1) for every weight (and the word vectors)
  dropout: float = 0.0     # the paper uses none; on word vectors and the final state
  unroll: int = 1

  def group_sizes(self) -> List[int]:
    return group_sizes(self.hidden, self.groups)

  @nn.compact
  def __call__(self, batch, *, train: bool):
    if self.strategy not in STRATEGIES:
      raise ValueError(f'config.model.strategy={self.strategy!r}; expected one of '
                       f'{STRATEGIES}')
    if self.implementation not in IMPLEMENTATIONS:
      raise ValueError(f'config.model.implementation={self.implementation!r}; expected '
                       f'one of {IMPLEMENTATIONS}')
    if not 1 <= self.groups <= self.hidden:
      raise ValueError(f'config.model.groups={self.groups}; expected 1 to hidden '
                       f'({self.hidden})')
    x, mask = embed_batch(batch, self.vocab_size, self.embed_dim, self.init_scale)
    x = nn.Dropout(self.dropout, deterministic=not train)(x)
    sizes = self.group_sizes()
    params = [MTGroupParams(self.embed_dim, s,
                            sum(sizes[j] for j in senders(k, self.groups, self.strategy)),
                            self.init_scale, name=f'group_{k + 1}')()
              for k, s in enumerate(sizes)]
    xp = input_projections(x, [p[0] for p in params], [p[1] for p in params], sizes)
    final = FINAL_STATE[self.implementation](
        xp, [p[2] for p in params], [p[3] for p in params], mask.sum(axis=1), sizes,
        self.strategy, self.unroll)
    final = nn.Dropout(self.dropout, deterministic=not train)(final)
    return nn.Dense(self.num_classes, name='classifier',
                    kernel_init=symmetric_uniform(self.init_scale))(final)


def input_projections(x, kernels, biases, sizes) -> jax.Array:
  """``x [batch, time, m]`` -> ``[batch, time, 4, d]``: every group's ``W_k x + b_k``
  for all steps in one matmul, gate-major."""
  w = jnp.concatenate([k.reshape(-1, 4, s) for k, s in zip(kernels, sizes)], axis=-1)
  b = jnp.concatenate([b.reshape(4, s) for b, s in zip(biases, sizes)], axis=-1)
  return jnp.einsum('btm,mgd->btgd', x, w) + b


"""MT-LSTM (Liu et al. 2015): multi-timescale LSTM (docs/models.md §2).

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
gradient (tests/test_mtlstm.py; timed by benchmarks/mtlstm_paths.py): ``masked`` (one
scan computing every group each step: the reference), ``unrolled`` (a scan over
super-steps of one full period, computing only the active groups) and ``strided``
(one scan per group over its own activation steps: group ``k`` costs ``len / T_k``).

Parameters per group ``k``: ``input``, ``bias``, ``recurrent`` and ``peephole`` blocks
(gates ``[i, f, o, c]``), only those the strategy allows, so no dead weight is trained
or regularised. Tokens ``[batch, time]`` -> logits ``[batch, classes]``.
"""
from typing import List, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from seedsweep.models.baselines import embed_batch
from seedsweep.models.baselines import symmetric_uniform
from seedsweep.models.dropout import Dropout
from seedsweep.models.output import ModelOutput
from seedsweep.models import registered

STRATEGIES = ('f2s', 's2f')
IMPLEMENTATIONS = ('masked', 'unrolled', 'strided')


def group_sizes(hidden: int, groups: int) -> List[int]:
  """Near-equal split of ``hidden`` units, the extra units to the fastest groups
  (QC: 55 units in 3 groups -> 19/18/18, docs/models.md §2.1)."""
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
  """``z [.., 4s]`` (gates i, f, o, c), ``peep [.., 3s]`` (i, f, o) -> ``(h, c)``."""
  s = c_prev.shape[-1]
  gates = jax.nn.sigmoid(z[..., :3 * s] + peep)
  c = gates[..., s:2 * s] * c_prev + gates[..., :s] * jnp.tanh(z[..., 3 * s:])
  return gates[..., 2 * s:] * jnp.tanh(c), c


def _gate_major(mats, sizes, gates: int):
  """Per-group ``[rows, gates * s_k]`` -> ``[rows, gates * d]``, columns ordered
  gate by gate, each gate's units in group order."""
  return jnp.concatenate([m[:, g * s:(g + 1) * s] for g in range(gates)
                          for m, s in zip(mats, sizes)], axis=1)


def full_matrices(groups, sizes, strategy):
  """``(W [m, 4d], b [4d], U [d, 4d], V [d, 3d])``: every group's weights in one
  gate-major layout, with zero rows where the strategy forbids a connection."""
  off, g = _offsets(sizes), len(sizes)

  def rows_of(mat, k):  # a receiver's sender rows placed among all d units
    src = senders(k, g, strategy)
    return jnp.pad(mat, ((off[src[0]], off[-1] - off[src[-1] + 1]), (0, 0)))

  return (_gate_major([w for w, _, _, _ in groups], sizes, 4),
          _gate_major([b[None] for _, b, _, _ in groups], sizes, 4)[0],
          _gate_major([rows_of(u, k) for k, (_, _, u, _) in enumerate(groups)], sizes, 4),
          _gate_major([rows_of(v, k) for k, (_, _, _, v) in enumerate(groups)], sizes, 3))


def masked_final(x, groups, lengths, sizes, strategy, unroll=1):
  """Reference: one scan over time, all groups each step, inactive ones held."""
  batch, time = x.shape[:2]
  w, b, u, v = full_matrices(groups, sizes, strategy)
  xp = x @ w + b
  unit_period = np.repeat([2 ** k for k in range(len(sizes))], sizes)

  def step(carry, inputs):
    h, c = carry
    x_t, t = inputs
    h_new, c_new = _cell(x_t + h @ u, c @ v, c)
    active = ((t % unit_period) == 0)[None, :] & (t <= lengths)[:, None]
    return (jnp.where(active, h_new, h), jnp.where(active, c_new, c)), None

  zeros = jnp.zeros((batch, sum(sizes)), x.dtype)
  (h, _), _ = jax.lax.scan(step, (zeros, zeros),
                           (jnp.moveaxis(xp, 1, 0), jnp.arange(1, time + 1)),
                           unroll=unroll)
  return h


def unrolled_final(x, groups, lengths, sizes, strategy, unroll=1):
  """A scan over super-steps of one full period, micro-steps unrolled in Python.

  At micro-step ``p`` (1-indexed within the period) the active groups are those with
  ``p mod T_k == 0``: the ``a_p`` fastest ones, units ``[0, n_p)``. Under f2s they read
  only units ``[0, n_p)``; under s2f every unit. Each micro-step's weights (the
  active columns) are cut once, outside the scan.
  """
  batch, time = x.shape[:2]
  off, g = _offsets(sizes), len(sizes)
  d = off[-1]
  w, b, u, v = full_matrices(groups, sizes, strategy)
  period = 2 ** (g - 1)
  supers = -(-time // period)
  xp = jnp.pad(x @ w + b, ((0, 0), (0, supers * period - time), (0, 0)))
  xs = jnp.moveaxis(xp.reshape(batch, supers, period, 4, d), 1, 0)
  micro = []  # (active units n, sender rows, U [rows, 4n], V [rows, 3n])
  for p in range(1, period + 1):
    n = off[sum(1 for k in range(g) if p % 2 ** k == 0)]
    rows = n if strategy == 'f2s' else d
    micro.append((n, rows, u.reshape(d, 4, d)[:rows, :, :n].reshape(rows, 4 * n),
                  v.reshape(d, 3, d)[:rows, :, :n].reshape(rows, 3 * n)))

  def step(carry, inputs):
    h, c = carry
    x_super, s = inputs  # [batch, period, 4, d], super-step index (0-based)
    for p, (n, rows, u_p, v_p) in enumerate(micro):
      z = x_super[:, p, :, :n].reshape(batch, 4 * n) + h[:, :rows] @ u_p
      h_new, c_new = _cell(z, c[:, :rows] @ v_p, c[:, :n])
      real = (s * period + p + 1 <= lengths)[:, None]
      h = jnp.concatenate([jnp.where(real, h_new, h[:, :n]), h[:, n:]], axis=1)
      c = jnp.concatenate([jnp.where(real, c_new, c[:, :n]), c[:, n:]], axis=1)
    return (h, c), None

  zeros = jnp.zeros((batch, d), x.dtype)
  (h, _), _ = jax.lax.scan(step, (zeros, zeros), (xs, jnp.arange(supers)),
                           unroll=unroll)
  return h


def _held(traj, sender_period: int, period: int, steps: int):
  """A sender's held states at a receiver's activation times ``t = a * period``
  (``a = 1..steps``), read at ``t - 1``: entry ``(t - 1) // sender_period`` of its
  activation-indexed ``traj [n + 1, ..]``. Periods are powers of two, so this is a
  strided slice (faster sender) or a repeat (slower sender): no gather, and no
  scatter in the backward pass."""
  if sender_period <= period:
    r = period // sender_period
    return traj[r - 1::r][:steps]
  r = sender_period // period
  return jnp.repeat(traj[:(steps - 1) // r + 1], r, axis=0)[:steps]


def strided_trajectories(x, groups, sizes, strategy, unroll=1):
  """Each group's states indexed by activation number: ``(hs, cs)``, lists over
  groups of ``[n_k + 1, batch, s_k]`` with ``n_k = time // T_k`` and entry 0 the zero
  initial state. Group ``j``'s held state at time ``tau`` is entry ``tau // T_j``."""
  batch, time = x.shape[:2]
  off, g = _offsets(sizes), len(sizes)
  order = range(g) if strategy == 'f2s' else range(g - 1, -1, -1)
  hs, cs = [None] * g, [None] * g
  for k in order:
    size, period = sizes[k], 2 ** k
    steps = time // period
    zeros = jnp.zeros((1, batch, size), x.dtype)
    if steps == 0:
      hs[k] = cs[k] = zeros
      continue
    w, b, u, v = groups[k]
    src = senders(k, g, strategy)
    row = lambda j, src=src: slice(off[j] - off[src[0]], off[j + 1] - off[src[0]])
    v = jnp.pad(v, ((0, 0), (0, size)))  # peepholes add to i, f, o only
    # Projections of the words at this group's activation times (position t - 1).
    z = jnp.moveaxis(x[:, period - 1::period][:, :steps], 1, 0) @ w + b
    for j in src:
      if j != k:
        z = z + (_held(hs[j], 2 ** j, period, steps) @ u[row(j)]
                 + _held(cs[j], 2 ** j, period, steps) @ v[row(j)])
    own = jnp.concatenate([u[row(k)], v[row(k)]])  # [h, c] @ own: one matmul a step

    def step(carry, z_t, own=own):
      h, c = carry
      pre = z_t + jnp.concatenate([h, c], axis=-1) @ own
      h, c = _cell(pre, 0.0, c)
      return (h, c), (h, c)

    _, (h_traj, c_traj) = jax.lax.scan(step, (zeros[0], zeros[0]), z, unroll=unroll)
    hs[k] = jnp.concatenate([zeros, h_traj])
    cs[k] = jnp.concatenate([zeros, c_traj])
  return hs, cs


def strided_final(x, groups, lengths, sizes, strategy, unroll=1):
  """Per-group strided scans; each group's held state at ``len`` is gathered."""
  hs, _ = strided_trajectories(x, groups, sizes, strategy, unroll)
  batch = jnp.arange(x.shape[0])
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
  embed_dim: int = 100  # the word vectors' size
  hidden: int = 60    # total over groups
  groups: int = 3     # timescales: group k updates every 2^(k-1) steps
  strategy: str = 'f2s'  # f2s: groups read faster ones, s2f: slower ones
  implementation: str = 'strided'  # masked, unrolled or strided: equal in value
  init_scale: float = 0.1  # U(-0.1, 0.1) for every weight (and the word vectors)
  dropout: float = 0.0     # the paper uses none; on word vectors and the final state
  unroll: int = 1          # time steps per iteration of the scans (speed)

  def group_sizes(self) -> List[int]:
    """Units of each group, fastest first (:func:`group_sizes` of ``hidden``)."""
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
    x = Dropout(self.dropout, deterministic=not train)(x)
    sizes = self.group_sizes()
    params = [MTGroupParams(self.embed_dim, s,
                            sum(sizes[j] for j in senders(k, self.groups, self.strategy)),
                            self.init_scale, name=f'group_{k + 1}')()
              for k, s in enumerate(sizes)]
    final = FINAL_STATE[self.implementation](x, params, mask.sum(axis=1), sizes,
                                             self.strategy, self.unroll)
    final = Dropout(self.dropout, deterministic=not train)(final)
    return ModelOutput(logits=nn.Dense(
        self.num_classes, name='classifier',
        kernel_init=symmetric_uniform(self.init_scale))(final))


# The registry's name of this family (models/registered.py) and its paper configs as
# the tests run them.
MODELS = {
    'mtlstm': registered.Named(MTLSTM, small={'embed_dim': 6, 'hidden': 6, 'groups': 3},
                               paper={'hidden': 100, 'groups': 5}),
}
PAPER_CONFIGS = registered.PaperConfigs(
    golden={'mtlstm_trec_quick': 'experiments/mtlstm_trec.py:quick'},
    trained=(('mtlstm_trec', 's2f,quick'),),
    traced=(('mtlstm_sst', 'binary,quick'), ('mtlstm_imdb', 'quick')))

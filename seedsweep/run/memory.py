"""How much memory a run needs, estimated from its shapes before anything compiles.

A run holds, besides what the process holds before any array (``runtime``): the
dataset's arrays on device (shared by every member), each member's state (parameters,
optimiser state, best parameters) and, while a train step runs, each member's
gradients and new parameters and optimiser state (``step``), plus the activations a
backward pass keeps from its forward pass (the residuals of ``jax.vjp``) at the
largest training batch. Under ``map`` the members step one after another, so one
member's activations are live at a time; under ``vmap`` every member's are.

Every figure but ``runtime`` is computed from ``jax.eval_shape``, so nothing
compiles; ``runtime`` and the factors of each backend's :class:`Constants` (XLA's
copies around ``lax.map``'s stacked outputs, temporaries of the fused kernels, freed
memory the allocator keeps) were measured, the CPU's in the process's RSS
(docs/log.md, results log, 2026-11-28), a GPU's in its device memory
(docs/gpu.md, "Measured"; docs/design.md, "Memory and members in groups"). The
estimate is what ``--mode=describe`` shows and what ``config.runtime.memory_budget``
is held to.
"""
import dataclasses
import functools
import os
from typing import Dict, Optional

import jax
import jax.numpy as jnp
import numpy as np

from seedsweep.engine import rngs
from seedsweep.engine import state as state_lib
from seedsweep.engine import steps as steps_lib
from seedsweep.errors import UserError
from seedsweep.inputs import pipeline

MIB = 2 ** 20


@dataclasses.dataclass(frozen=True)
class Constants:
  """What a backend's process holds beside the arrays this module counts."""
  # The process before any array of the run, in the memory the budget counts (MiB).
  runtime_mib: float
  # XLA's buffers beside the dataset's arrays, in their bytes.
  overhead: float
  # What a member's state and step hold, in their bytes: copies XLA makes around
  # lax.map's stacked outputs, freed memory the allocator keeps, or (on a GPU, the
  # state donated) the new parameters written over the old.
  member_overhead: float
  # What a member's counted activations (TRAIN_ACTIVATIONS x the residuals) hold at
  # peak, XLA's buffers around them included: XLA:GPU fuses and frees most of them.
  activations: float


# Measured. The CPU: Python, jax, XLA's CPU client and the dataset's host copies in
# the RSS; 10 and 30 Bi-LSTM SST-2 members over 8 steps, 225-325 MiB a member, 152
# counted (docs/log.md, results log, 2026-11-28). A GPU: peak_bytes_in_use of the
# H200 check (docs/gpu.md, "Measured", 2026-12-04), Bi-LSTM and DLSTM SST-2 at 1, 10
# and 100 members under vmap and 1 and 10 under map: these constants estimate each
# of the ten within 1.11-1.40x its peak, never under (tests/test_memory.py holds
# them to that table). A TPU takes the GPU's, unmeasured.
CONSTANTS = {'cpu': Constants(runtime_mib=500.0, overhead=1.1, member_overhead=2.0,
                              activations=1.1),
             'gpu': Constants(runtime_mib=40.0, overhead=1.0, member_overhead=1.0,
                              activations=0.25)}
# A train step's activations at peak, in residuals of its forward pass: the
# residuals, their cotangents and the backward pass's temporaries (measured).
TRAIN_ACTIVATIONS = 2.0
# The share of the memory the process can use that the default budget takes. Half
# on the CPU: a whole Bi-LSTM SST-2 run's RSS grows past the estimate beyond ~50
# members in one program (60 members were killed at 24.3 GB, estimated 18.9; 30
# peaked at 9.9 GB, estimated 9.8), glibc holding freed memory (launch.py's
# GLIBC_TUNABLES). A GPU's memory holds the arrays alone.
SAFE_SHARE = {'cpu': 0.5}
GPU_SAFE_SHARE = 0.8


def constants(backend: str) -> Constants:
  """The :class:`Constants` of ``backend`` ('cpu', 'gpu', 'tpu', ...): a GPU's for
  any accelerator."""
  return CONSTANTS.get(backend, CONSTANTS['gpu'])


@dataclasses.dataclass(frozen=True)
class MemoryEstimate:
  """A run's peak memory in MiB, by part (module docstring)."""
  mode: str               # 'map' or 'vmap': how the members step
  state_mib: float        # one member's TrainState
  step_mib: float         # one member's gradients, new parameters and optimiser state
  activations_mib: float  # one member's residuals at the largest training batch
  data_mib: float         # the dataset's arrays on device, shared
  runtime_mib: float      # the process before any array of the run
  member_mib: float       # what each member adds: its state and step (and under
                          # ``vmap`` its activations), with their overheads
  shared_mib: float       # what the run needs whatever its members: data, runtime,
                          # and under ``map`` the one member's activations live at a time
  paired: bool = False    # a lone member steps as a pair (vmap on a CPU: engine/steps.py)

  def peak_mib(self, members: int) -> float:
    """The peak of ``members`` members on device in one program (a lanes run's: its
    lane group, padding included)."""
    if self.paired:
      members = max(members, 2)
    return self.shared_mib + members * self.member_mib

  def members_within(self, budget_mib: float) -> int:
    """The most members whose peak stays within ``budget_mib`` (0: not even one)."""
    return max(int((budget_mib - self.shared_mib) // self.member_mib), 0)

  def as_dict(self, members: int) -> Dict[str, float]:
    """The estimate for ``members`` members as JSON numbers in MiB, rounded to 0.1."""
    return {'peak_mib': round(self.peak_mib(members), 1),
            'member_mib': round(self.member_mib, 1),
            'shared_mib': round(self.shared_mib, 1), 'mode': self.mode,
            **{f.name: round(getattr(self, f.name), 1) for f in dataclasses.fields(self)
               if f.name not in ('mode', 'member_mib', 'shared_mib', 'paired')}}


def _mib(tree) -> float:
  return sum(int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize
             for x in jax.tree.leaves(tree)) / MIB


def estimate(learner: steps_lib.Learner, plan: pipeline.TrainPlan,
             eval_plan: pipeline.EvalPlan, arrays: Dict[str, np.ndarray], mode: str,
             backend: Optional[str] = None) -> MemoryEstimate:
  """The estimate of a run whose members train with ``learner`` over ``plan``'s
  batches of ``arrays`` (inputs.pipeline.device_arrays) and are evaluated in
  ``eval_plan``'s chunks, stepping by ``mode``."""
  one = jax.eval_shape(  # a one-member state, as the run creates it
      lambda: state_lib.create_train_state(learner.model, learner.tx, [0]))
  params, opt_state = jax.tree.map(  # one member's, without the members axis
      lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), (one.params, one.opt_state))
  shapes = {k: jax.ShapeDtypeStruct(np.shape(v), np.asarray(v).dtype)
            for k, v in arrays.items()}

  def kept(p, arrays, idx, length):
    """What one member's backward pass keeps of the batch ``idx`` cut to ``length``."""
    batch = pipeline.gather_batch(arrays, 0, idx, length)
    key = rngs.dropout_key(jnp.int32(1), 1, 0)
    loss = steps_lib.Steps._loss_fn(learner, batch, key)  # pylint: disable=protected-access
    return jax.vjp(loss, p, has_aux=True)[1]

  # The residuals of the largest training batch and of the largest eval chunk (an
  # eval chunk keeps none, but a layer's outputs live as long as a later layer reads
  # them, all of them in a densely connected stack: bounded by these).
  chunk = max(((rows.shape[-1], length) for length, (rows, _) in eval_plan.chunks.items()),
              key=lambda c: c[0] * c[1], default=(0, 0))
  train, evaluation = (
      _mib(jax.eval_shape(functools.partial(kept, length=length), params, shapes,
                          jax.ShapeDtypeStruct((rows,), jnp.int32))) if rows else 0.0
      for rows, length in ((plan.batch_size, max(plan.boundaries)), chunk))
  return from_parts(mode, _mib(one), 2 * _mib(params) + _mib(opt_state),
                    max(TRAIN_ACTIVATIONS * train, evaluation), _mib(shapes),
                    backend or jax.default_backend())


def from_parts(mode: str, state_mib: float, step_mib: float, activations_mib: float,
               data_mib: float, backend: str) -> MemoryEstimate:
  """The estimate of a member's counted parts (MiB) stepping by ``mode`` on
  ``backend``, with that backend's :class:`Constants`."""
  c = constants(backend)
  live = c.activations * activations_mib  # one member's at peak
  return MemoryEstimate(
      mode=mode, state_mib=state_mib, step_mib=step_mib,
      activations_mib=activations_mib, data_mib=data_mib, runtime_mib=c.runtime_mib,
      member_mib=(c.member_overhead * (state_mib + step_mib)
                  + (live if mode == 'vmap' else 0.0)),
      shared_mib=(c.runtime_mib + c.overhead * data_mib
                  + (live if mode == 'map' else 0.0)),
      paired=mode == 'vmap' and backend == 'cpu')


def available_mib() -> float:
  """The memory this process can use: a GPU's or TPU's own, else the least of the
  machine's memory and a cgroup's limit (a container's, a scheduler's job)."""
  device = jax.devices()[0]
  if device.platform != 'cpu':
    stats = device.memory_stats() or {}
    if stats.get('bytes_limit'):
      return stats['bytes_limit'] / MIB
  limits = [os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / MIB]
  for path in ('/sys/fs/cgroup/memory.max',
               '/sys/fs/cgroup/memory/memory.limit_in_bytes'):
    try:
      with open(path) as f:
        text = f.read().strip()
    except OSError:
      continue
    if text.isdigit():
      limits.append(int(text) / MIB)
  return min(limits)


def budget_mib(config) -> float:
  """``config.runtime.memory_budget`` (MiB), or 0's default: :data:`SAFE_SHARE` of
  :func:`available_mib`."""
  share = SAFE_SHARE.get(jax.default_backend(), GPU_SAFE_SHARE)
  return float(config.runtime.memory_budget) or share * available_mib()


def check_budget(est: MemoryEstimate, budget: float) -> None:
  """UserError, before anything compiles, when not even one member fits ``budget``."""
  if est.members_within(budget) < 1:
    raise UserError(
        f'config.runtime.memory_budget: one member of this run needs ~'
        f'{est.peak_mib(1):,.0f} MiB ({est.shared_mib:,.0f} shared + '
        f'{est.member_mib:,.0f} a member), over the budget of {budget:,.0f} MiB; '
        'expected a budget above that (--config.runtime.memory_budget=MIB), or a '
        'smaller model, batch or length (config.data.max_length)')

"""Several processes (hosts) running one program under ``jax.distributed``.

With ``launch.py --distributed`` every host runs the same command, the seed axis is
sharded over the global mesh, and a stacked ``[seeds]`` result spans devices of other
hosts: :func:`fetch` gathers it for the host side. Process 0 alone writes the run's
files (orbax checkpoints are written by all processes together, as orbax requires).
In a single process both are no-ops.
"""
import jax
import numpy as np
from jax.experimental import multihost_utils


def fetch(x, dtype=None) -> np.ndarray:
  """``x`` as a NumPy array on this host, gathered from every host if sharded."""
  if isinstance(x, jax.Array) and not x.is_fully_addressable:
    x = multihost_utils.process_allgather(x, tiled=True)
  # An explicit transfer: allowed under jax.transfer_guard('disallow'), which the
  # tests train under to prove the loop makes no implicit one.
  return np.asarray(jax.device_get(x), dtype)


def is_primary() -> bool:
  """Whether this process writes the run's files (process 0)."""
  return jax.process_index() == 0


def barrier(name: str) -> None:
  """Every process waits here for the others (a no-op in a single process)."""
  if jax.process_count() > 1:
    multihost_utils.sync_global_devices(name)

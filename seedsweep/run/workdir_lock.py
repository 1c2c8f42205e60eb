"""One process per workdir: an exclusive lock on ``workdir/.lock``.

The kernel releases the lock when its process ends, however it ends (kill -9
included), so a lock never outlives its run. Under ``jax.distributed`` each process
of the job takes the lock of its own index, so one job's hosts share a workdir while a
second job on it is refused.
"""
import contextlib
import fcntl
import os

import jax

from seedsweep.errors import UserError

NAME = '.lock'


@contextlib.contextmanager
def hold(workdir: str):
  """Holds ``workdir``'s lock for the block; UserError if another process has it."""
  index = jax.process_index()
  path = os.path.join(workdir, NAME if index == 0 else f'{NAME}.{index}')
  with open(path, 'a+') as f:
    try:
      fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
      f.seek(0)
      holder = f.read().strip() or 'another process'
      raise UserError(f'{workdir} is in use by {holder} (it holds {path}); wait for '
                      'it to end, or use another --workdir') from None
    f.seek(0)
    f.truncate()
    f.write(f'process {os.getpid()}')
    f.flush()
    yield

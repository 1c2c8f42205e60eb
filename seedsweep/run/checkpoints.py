"""Orbax checkpoints of the seed-stacked train state plus a JSON metadata record.

Checkpoint steps count completed epochs. Saves are asynchronous; :meth:`close` waits
for them (the loop calls it on every exit path).
"""
import os

import orbax.checkpoint as ocp

from seedsweep.errors import UserError


class Checkpoints:

  def __init__(self, workdir: str, max_to_keep: int = 2, read_only: bool = False):
    self.directory = os.path.join(os.path.abspath(workdir), 'checkpoints')
    self.manager = ocp.CheckpointManager(
        self.directory,
        options=ocp.CheckpointManagerOptions(max_to_keep=max_to_keep,
                                             create=not read_only, read_only=read_only),
        item_names=('state', 'meta'))

  def latest_epoch(self):
    """Completed epochs of the newest finished checkpoint, or None."""
    return self.manager.latest_step()

  def save(self, epoch: int, state, meta: dict):
    self.manager.save(epoch, args=ocp.args.Composite(
        state=ocp.args.StandardSave(state), meta=ocp.args.JsonSave(meta)))

  def restore(self, epoch: int, target_state):
    """``(state, meta)`` of ``epoch``, shaped and sharded like ``target_state``."""
    try:
      restored = self.manager.restore(epoch, args=ocp.args.Composite(
          state=ocp.args.StandardRestore(target_state), meta=ocp.args.JsonRestore()))
    except Exception as e:  # orbax raises many types for unreadable checkpoints
      raise UserError(
          f'cannot restore the checkpoint of epoch {epoch} in {self.directory}: '
          f'{type(e).__name__}: {e}. Expected a checkpoint written by this config; '
          f'delete that folder to start the run afresh.') from e
    return restored.state, restored.meta

  def close(self):
    self.manager.wait_until_finished()
    self.manager.close()

"""Orbax checkpoints of the seed-stacked train state plus a JSON metadata record.

``workdir/checkpoints/<epoch>`` holds the state after that many completed epochs (the
two newest are kept); ``workdir/checkpoints_interrupted/<step>`` at most one state a
stop signal found in the middle of an epoch (:data:`INTERRUPTED`). Saves are
asynchronous: orbax writes a temporary folder and renames it when complete, so a
kill or a full disk never leaves a half checkpoint that a restore would take for a
finished one; :meth:`Checkpoints.close` waits for them (the loop calls it on every
exit path).

Every save records a fingerprint of the bits it saves (``meta['tree_sha256']``), and
a restore checks it: a truncated or garbled checkpoint is refused with
:class:`CorruptCheckpoint`, and :meth:`Checkpoints.discard` moves it aside to
``workdir/corrupt_checkpoints/`` so that the run resumes from the one before.
"""
import logging
import os
import shutil
import time
from typing import Optional

import jax
import orbax.checkpoint as ocp

from seedsweep.engine import hosts
from seedsweep.engine import state as state_lib
from seedsweep.errors import UserError
from seedsweep.run import faults
from seedsweep.run import provenance as provenance_lib

EPOCHS, INTERRUPTED, CORRUPT = ('checkpoints', 'checkpoints_interrupted',
                                'corrupt_checkpoints')
REMOVING = '.removing'  # a folder's name while remove() deletes it
FOLDERS = (EPOCHS, INTERRUPTED, CORRUPT)  # orbax's own files: not ours to sweep
FINGERPRINT = 'tree_sha256'


class CorruptCheckpoint(UserError):
  """A checkpoint that cannot be read back as it was written."""


class OlderFormat(UserError):
  """A checkpoint made before its tree gained fields (no fingerprint recorded), that
  the tree of today does not restore: :func:`restore_train_state` reads it."""


def fingerprint(tree) -> str:
  """A hash of every leaf's bits (gathered from every host), in tree order."""
  return provenance_lib.fingerprint_arrays(hosts.fetch(x) for x in jax.tree.leaves(tree))


class _QuietOrbaxErrors(logging.Filter):
  """Drops orbax's own error logs (a traceback per failed write thread), and asyncio's
  "Task exception was never retrieved" for an orbax write task (a full disk can fail
  one after the first failure is reported): the failure reaches
  :meth:`Checkpoints.wait` as an exception, reported there in one line. Also orbax's
  warnings that a read-only manager is read-only (reading a finished run)."""

  def filter(self, record):
    """False for orbax's errors and its read-only warnings; True for every other record."""
    if record.name == 'asyncio' and record.levelno >= logging.ERROR:
      return not _from_orbax(record)
    if not _in_orbax(record.pathname):
      return True
    if record.levelno >= logging.ERROR:
      return False
    return not (record.levelno == logging.WARNING and
                'read only' in record.getMessage().replace('_', ' '))


def _in_orbax(path: Optional[str]) -> bool:
  """Whether a source file's ``path`` is in orbax's package."""
  return f'{os.sep}orbax{os.sep}' in (path or '')


def _from_orbax(record: logging.LogRecord) -> bool:
  """Whether a record's traceback passes through orbax's code."""
  tb = record.exc_info[2] if record.exc_info else None
  while tb is not None:
    if _in_orbax(tb.tb_frame.f_code.co_filename):
      return True
    tb = tb.tb_next
  return False


_QUIET = _QuietOrbaxErrors()


def restore_train_state(ckpts: 'Checkpoints', step: int, state):
  """``ckpts.restore(step, state)`` for a TrainState, also from a checkpoint made
  before the state's added fields (seedsweep.engine.state.ADDED_FIELDS)."""
  try:
    return ckpts.restore(step, state)
  except OlderFormat:
    fields, meta = ckpts.restore(step, state_lib.before_added_fields(state), older=True)
    return state_lib.with_added_fields(fields), meta


def _first_line(e: BaseException) -> str:
  text = str(e).strip().splitlines()
  return f'{type(e).__name__}: {text[0] if text else ""}'[:300]


def existing(workdir: str, folder: str, **kwargs) -> Optional['Checkpoints']:
  """The checkpoints of ``workdir/folder``, or None if there is no such folder."""
  if not os.path.isdir(os.path.join(workdir, folder)):
    return None
  return Checkpoints(workdir, folder=folder, **kwargs)


class Checkpoints:
  """The checkpoints of one workdir folder (:data:`EPOCHS` or :data:`INTERRUPTED`),
  numbered by step (completed epochs, or a global step number)."""

  def __init__(self, workdir: str, max_to_keep: int = 2, read_only: bool = False,
               folder: str = EPOCHS):
    self.workdir = os.path.abspath(workdir)
    self.directory = os.path.join(self.workdir, folder)
    if not read_only and hosts.is_primary():
      # What a kill during remove() left, of this folder or the other one (whose
      # folder may be gone, and with it the Checkpoints that would sweep it).
      for name in (EPOCHS, INTERRUPTED):
        shutil.rmtree(os.path.join(self.workdir, name + REMOVING), ignore_errors=True)
    self.pending = None  # the step of a save in flight
    for name in ('absl', 'asyncio'):  # once each: filters are a set
      logging.getLogger(name).addFilter(_QUIET)
    self.manager = ocp.CheckpointManager(
        self.directory,
        options=ocp.CheckpointManagerOptions(max_to_keep=max_to_keep,
                                             create=not read_only, read_only=read_only),
        item_names=('state', 'meta'))

  def latest_epoch(self):
    """The newest finished step (completed epochs in :data:`EPOCHS`), or None."""
    return self.manager.latest_step()

  def steps(self):
    """Every finished step, oldest first."""
    return sorted(self.manager.all_steps())

  def save(self, step: int, tree, meta: dict):
    """Starts saving ``tree`` (any pytree of arrays) and ``meta`` (JSON) as ``step``."""
    meta = {**meta, FINGERPRINT: fingerprint(tree)}
    self.wait()  # a failed earlier save is reported as such
    try:
      self.manager.save(step, args=ocp.args.Composite(
          state=ocp.args.StandardSave(tree), meta=ocp.args.JsonSave(meta)))
    except Exception as e:  # pylint: disable=broad-except
      raise self._save_error(step, e) from e
    self.pending = step
    faults.reached('checkpoint_saving')

  def wait(self):
    """Waits for a save in flight; UserError (earlier checkpoints kept) if it failed."""
    try:
      self.manager.wait_until_finished()
    except Exception as e:  # pylint: disable=broad-except
      raise self._save_error(self.pending, e) from e
    finally:
      self.pending = None

  def _save_error(self, step, e) -> UserError:
    if hosts.is_primary():  # the unfinished folder: free the space it holds
      for name in os.listdir(self.directory):
        if name.startswith(f'{step}.orbax-checkpoint-tmp'):
          shutil.rmtree(os.path.join(self.directory, name), ignore_errors=True)
    return UserError(
        f'cannot save checkpoint {step} in {self.directory} ({_first_line(e)}); the '
        'checkpoints saved before it are kept: free disk space (or fix the cause) and '
        'rerun the same command to resume from them')

  def restore(self, step: int, target, older: bool = False):
    """``(tree, meta)`` of ``step``, shaped and sharded like ``target``;
    :class:`CorruptCheckpoint` if it cannot be read or its bits are not those saved,
    :class:`OlderFormat` if it predates fingerprints and does not fit ``target``
    (``older``: ``target`` is the tree such a checkpoint holds)."""
    where = os.path.join(self.directory, str(step))
    meta = self._read_meta(step)
    recorded = meta.get(FINGERPRINT)  # absent in checkpoints made before it existed
    try:
      tree = self.manager.restore(step, args=ocp.args.Composite(
          state=ocp.args.StandardRestore(target))).state
    except Exception as e:  # pylint: disable=broad-except
      if recorded is None and not older:
        raise OlderFormat(f'{where} holds a tree of an older form') from e
      raise CorruptCheckpoint(f'cannot read the checkpoint {where} ({_first_line(e)})'
                              '; expected one this config wrote') from e
    if recorded is not None and recorded != fingerprint(tree):
      raise CorruptCheckpoint(f'{where}: the restored arrays are not the bits that '
                              f'were saved (fingerprint {recorded} expected)')
    return tree, meta

  def meta(self, step: int) -> Optional[dict]:
    """The JSON record of ``step`` alone, without its arrays (cheap: no train state
    is needed to read it); None if it cannot be read (``restore`` reports why)."""
    try:
      return self._read_meta(step)
    except CorruptCheckpoint:
      return None

  def _read_meta(self, step: int) -> dict:
    where = os.path.join(self.directory, str(step))
    try:
      meta = self.manager.restore(step, args=ocp.args.Composite(
          meta=ocp.args.JsonRestore())).meta
    except Exception as e:  # orbax raises many types for unreadable checkpoints
      raise CorruptCheckpoint(f'cannot read the checkpoint {where} ({_first_line(e)})'
                              '; expected one this config wrote') from e
    if not isinstance(meta, dict):
      raise CorruptCheckpoint(f'{where}: its meta record is not a JSON object')
    return meta

  def discard(self, step: int) -> str:
    """Moves checkpoint ``step`` to ``workdir/corrupt_checkpoints/`` (kept for a
    post-mortem, invisible to resume); where it went."""
    self.wait()
    target = os.path.join(self.workdir, CORRUPT,
                          f'{os.path.basename(self.directory)}-{step}-{int(time.time())}')
    if hosts.is_primary():
      os.makedirs(os.path.dirname(target), exist_ok=True)
      os.replace(os.path.join(self.directory, str(step)), target)
    hosts.barrier('seedsweep-discard-checkpoint')
    self.manager.reload()  # its list of steps, without the one moved
    return target

  def remove(self):
    """Deletes every step and the folder (the interrupted epoch, once superseded):
    renamed first, so a kill while deleting leaves no half-deleted step to resume."""
    self.close()
    if hosts.is_primary():
      doomed = self.directory + REMOVING
      shutil.rmtree(doomed, ignore_errors=True)
      os.replace(self.directory, doomed)
      faults.reached('checkpoints_removing')
      shutil.rmtree(doomed, ignore_errors=True)
    hosts.barrier('seedsweep-remove-checkpoints')

  def close(self):
    """Waits for a save in flight (:meth:`wait`), then closes the checkpoint manager."""
    try:
      self.wait()
    finally:
      self.manager.close()

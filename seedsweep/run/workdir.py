"""A run's folder: its lock (one process at a time, :func:`hold`), and read: its
config.json, its finished results, its checkpoints' records (the inputs they were
trained on, the machines and programs that made them) and where a run resumes from
them.

What other modes and tools ask of a workdir lives here (``check_folder``,
``latest_epoch``, ``stored_config``); :mod:`seedsweep.run.prepare` opens a workdir
for a run once, and :mod:`seedsweep.run.loop` trains in it.
"""
import contextlib
import dataclasses
import datetime
import fcntl
import os
from typing import Optional

import jax
import numpy as np

from seedsweep import files
from seedsweep import notices
from seedsweep.config import checks as config_checks
from seedsweep.config import paths
from seedsweep.errors import UserError
from seedsweep.engine import hosts
from seedsweep.run import checkpoints as ckpt_lib
from seedsweep.run import groups as groups_lib
from seedsweep.run import outputs
from seedsweep.run import provenance as provenance_lib


def check_folder(path: str, what: str = '--workdir') -> None:
  """UserError when ``path`` exists and is not a folder (``what``: the flag or
  argument that named it)."""
  files.refuse_file(path, what, 'a folder (a new one, or the workdir of a run)')


# One process per workdir: the kernel releases a flock when its process ends,
# however it ends (kill -9 included), so a lock never outlives its run. Under
# jax.distributed each process of a job takes the lock of its own index, so one
# job's hosts share a workdir while a second job on it is refused.
LOCK = '.lock'


@contextlib.contextmanager
def hold(workdir: str):
  """Holds ``workdir``'s lock (``workdir/.lock``, holding the pid) for the block;
  UserError if another process has it."""
  index = jax.process_index()
  path = os.path.join(workdir, LOCK if index == 0 else f'{LOCK}.{index}')
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


def config_path(workdir: str) -> str:
  """Where a run keeps the config it was trained with."""
  return os.path.join(workdir, outputs.CONFIG)


def stored_config(workdir: str) -> Optional[dict]:
  """``workdir``'s config.json as JSON data, None if it has none (UserError if it is
  not valid JSON). The one reader of that file."""
  path = config_path(workdir)
  if not os.path.isfile(path):
    return None
  try:
    return outputs.read_json(path)
  except ValueError as e:
    raise UserError(f'{path} is not valid JSON ({e}); expected the config.json a '
                    f'run of seedsweep wrote') from e


# workdir/started_in.json: the folder the run was started in, which its config's
# relative paths are relative to (config.paths), written with its config.json. It is
# kept relative to the workdir, so that a project moved or copied whole, its runs
# inside, finds its own files; the absolute folder is there for the reader.
STARTED_IN = 'started_in.json'


def started_in(workdir: str) -> Optional[str]:
  """The folder ``workdir``'s run was started in (its config's relative paths are
  relative to it), found from where the workdir is now; None for a workdir that
  records none (a run made before it was recorded, a published record: its paths
  are taken from the current folder)."""
  path = os.path.join(workdir, STARTED_IN)
  if not os.path.isfile(path):
    return None
  try:
    relative = outputs.read_json(path)['from_workdir']
    if not isinstance(relative, str):
      raise ValueError(f'from_workdir is {relative!r}')
  except (ValueError, KeyError, TypeError) as e:
    raise UserError(f'{path} is damaged ({type(e).__name__}: {e}); expected '
                    '{"from_workdir": "../..", ...}: the folder the run was started '
                    "in, relative to its workdir. Delete it if the run's paths are "
                    'relative to the folder you use it from') from e
  return os.path.normpath(os.path.join(os.path.abspath(workdir), relative))


def write_config(workdir: str, checked) -> None:
  """Writes a new run's config.json (the config as given) and the folder its paths
  are relative to (:data:`STARTED_IN`)."""
  outputs.write_json(os.path.join(workdir, STARTED_IN), {
      'from_workdir': os.path.relpath(checked.base, os.path.abspath(workdir)),
      'folder': checked.base})
  outputs.write_json(config_path(workdir), checked.as_dict)


def config_signature(workdir: str) -> Optional[tuple]:
  """What changes when config.json is written (atomically: a new inode), read
  without reading it; None while there is none."""
  try:
    s = os.stat(config_path(workdir))
  except FileNotFoundError:
    return None
  return s.st_ino, s.st_mtime_ns, s.st_size


def compare_config(stored: Optional[dict], requested: dict, workdir: str,
                   base: Optional[str] = None) -> bool:
  """Refuses a workdir holding another config; True if it holds this one (False:
  no config.json yet). ``stored``: :func:`stored_config`; ``requested``: the
  config as JSON data, its relative paths taken from ``base`` (None: the current
  folder). Paths compare as the files they name: the stored ones from the folder
  the run was started in (:func:`started_in`)."""
  if stored is None:
    return False
  diff = config_checks.differences(paths.resolved_dict(stored, started_in(workdir)),
                                   paths.resolved_dict(requested, base))
  if diff:
    raise UserError(
        f'workdir {workdir} holds a run of another config (stored != requested):\n  '
        + '\n  '.join(diff)
        + '\nUse another --workdir, or delete this one to start afresh.')
  return True


def finished_results(config, workdir: str, holds_config: bool) -> Optional[dict]:
  """The results of ``workdir`` if it holds a finished run of ``config``, else None
  (UserError for checkpoints without a config.json; ``holds_config``: it has one,
  of this config)."""
  latest = latest_epoch(workdir)
  if latest and not holds_config:
    raise UserError(f'{os.path.join(workdir, ckpt_lib.EPOCHS)} holds checkpoints but '
                    f'{workdir} has no {outputs.CONFIG}; cannot tell which config wrote '
                    'them. Use another --workdir, or delete this one.')
  path = os.path.join(workdir, outputs.RESULTS)
  if not (latest and os.path.exists(path)):
    return None
  try:
    results = outputs.read_json(path)
  except ValueError:  # damaged: the run computes it again from its checkpoints
    return None
  num_epochs, completed = config.train.num_epochs, results.get('epochs_completed', 0)
  # Only training marks a run finished (early stops included): a results.json that
  # --mode=eval or a report wrote from an unfinished run's checkpoint is not.
  done = (latest >= completed if results.get('finished')
          else latest >= num_epochs and completed >= num_epochs)
  return results if done else None


def latest_epoch(workdir: str) -> int:
  """The newest epoch whose checkpoint ``workdir`` holds, of every member (of every
  group of a split run); 0 without one. Creates nothing."""
  bounds = groups_lib.recorded(workdir)
  folders = ([workdir] if bounds is None
             else [groups_lib.folder(workdir, k) for k in range(len(bounds))])
  latest = []
  for folder in folders:
    ckpts = ckpt_lib.existing(folder, ckpt_lib.EPOCHS, read_only=True)
    if not ckpts:
      return 0  # a folder without checkpoints: not every member has one
    try:
      latest.append(ckpts.latest_epoch() or 0)
    finally:
      ckpts.close()
  return min(latest)


# ------------------------------------------------------------ the checkpoints' records


# workdir/accepted_changes.json: each change of inputs a resume or an eval went on
# with, by the user's choice (accepting_changed_inputs); results.json lists them.
ACCEPTED = 'accepted_changes.json'
_accepting = [False]  # within accepting_changed_inputs(True)


@contextlib.contextmanager
def accepting_changed_inputs(accept: bool = True):
  """Within the block a resume or an eval goes on from a checkpoint trained on other
  input bytes than the files hold now (``--accept_changed_inputs``), saying so and
  recording each change in ``workdir/accepted_changes.json``, instead of refusing."""
  before, _accepting[0] = _accepting[0], bool(accept)
  try:
    yield
  finally:
    _accepting[0] = before


def accepted_changes(workdir: str) -> list:
  """The changes of inputs recorded as accepted in ``workdir`` (``[{'doing',
  'changes', 'time'}]``; [] for none)."""
  path = os.path.join(workdir, ACCEPTED)
  if not os.path.exists(path):
    return []
  return outputs.read_json(path)


def check_same_inputs(workdir: str, meta: dict, pieces, doing: str = 'resume') -> None:
  """Refuses to resume (or re-evaluate) a run whose checkpoint (its ``meta``) was
  trained on other input bytes (word vectors, dataset splits, the user's model or
  reader file or a module of theirs it imports) than this build reads: that would
  mix two inputs or two models in one seed's numbers, or record inputs the
  parameters were not trained on; within :func:`accepting_changed_inputs`, goes on,
  said and recorded. A checkpoint that recorded none passes."""
  changed = provenance_lib.input_changes(meta, pieces.provenance)
  if not changed:
    return
  if _accepting[0]:
    notices.say(f'warning: {workdir}: {doing} from a checkpoint trained on other input '
                'bytes than the files hold now (' + '; '.join(changed) + '), as asked '
                f'(--accept_changed_inputs); recorded in {ACCEPTED} and results.json')
    if hosts.is_primary():
      outputs.write_json(os.path.join(workdir, ACCEPTED), accepted_changes(workdir) + [{
          'doing': doing, 'changes': changed,
          'time': datetime.datetime.now(datetime.timezone.utc).isoformat(
              timespec='seconds')}])
    return
  raise UserError(
      f'{workdir}: cannot {doing}: its checkpoint was trained on other input bytes '
      f'than {describe_inputs(pieces.provenance)} hold now ('
      + '; '.join(changed) + '); put back the files it started with, use '
      'another --workdir, or go on with the new files by --accept_changed_inputs '
      '(recorded in the run)')


def warn_changed_inputs(workdir: str, meta: Optional[dict], pieces, doing: str,
                        print_fn) -> list:
  """What :func:`check_same_inputs` would refuse, said in one warning line through
  ``print_fn`` for a mode that writes nothing of the run (predict), which goes on
  with the files as they are now; returns the changes."""
  changed = provenance_lib.input_changes(meta, pieces.provenance)
  if changed:
    print_fn(f'warning: {workdir}: {doing} with files other than its checkpoint was '
             f'trained on (' + '; '.join(changed) + '): the parameters were trained '
             'with the old bytes, the answers use the new ones')
  return changed


def check_saved_inputs(workdir: str, pieces, ckpts, interrupted=None,
                       doing: str = 'resume') -> frozenset:
  """check_same_inputs on the meta record alone of the checkpoint a resume starts
  from (the stop signal's mid-epoch one of the epoch after the newest epoch
  checkpoint, else that one), before the train state is built and the step
  compiled: a refusal costs no compilation. A record that cannot be read is left to
  the restore to report. Returns the checkpoint checked, ``{(folder, step)}`` (or
  none): :func:`restore` checks another one it falls back to."""
  latest = ckpts.latest_epoch() or 0
  where, meta = (ckpt_lib.EPOCHS, latest), (ckpts.meta(latest) if latest else None)
  steps = interrupted.steps() if interrupted else []
  if steps:
    record = interrupted.meta(steps[-1])
    if record and record.get('epoch') == latest + 1:  # not superseded by an epoch's
      where, meta = (ckpt_lib.INTERRUPTED, steps[-1]), record
  if not meta:
    return frozenset()
  check_same_inputs(workdir, meta, pieces, doing)
  return frozenset([where])


def describe_inputs(provenance: dict) -> str:
  """The inputs of a run's provenance, in words: 'dataset subj and vectors FILE',
  'dataset demo and file my_code/cnn.py'."""
  data = provenance.get('data') or {}
  vectors = (data.get('vectors') or {}).get('path')
  code = [provenance_lib.user_file(ref) for ref, digest in
          (provenance.get('user_code') or {}).items() if digest != 'module']
  return ' and '.join([f'dataset {data.get("name")}']
                      + ([f'vectors {vectors}'] if vectors else [])
                      + [f'file {path}' for path in dict.fromkeys(code)])


@dataclasses.dataclass(frozen=True)
class Resume:
  """Where a run starts: after ``epoch`` completed epochs, at ``position`` of the
  next (a stop signal's mid-epoch checkpoint), with that epoch's loss so far and
  the seconds of the sessions before."""
  epoch: int = 0
  position: int = 0
  loss_sum: Optional[np.ndarray] = None
  elapsed: float = 0.0


def restore_latest(pieces, ckpts, state, print_fn):
  """``(state, meta, epoch)`` of the newest checkpoint that reads back as it was
  saved (into ``pieces``'s members on device); corrupt ones are reported and moved
  aside (``(state, {}, 0)`` if none is left: the run starts afresh)."""
  for epoch in reversed(ckpts.steps()):
    try:
      restored, meta = pieces.restore(ckpts, epoch, state)
    except ckpt_lib.CorruptCheckpoint as e:
      moved = ckpts.discard(epoch)
      print_fn(f'warning: {e}; moved it to {moved} and resuming from the checkpoint '
               'before it')
      continue
    return restored, meta, epoch
  return state, {}, 0


def restore_interrupted(pieces, interrupted, state, epoch: int, print_fn):
  """The mid-epoch checkpoint of epoch ``epoch + 1`` a stop signal left (in
  ``interrupted``, its checkpoints' folder), as
  ``(state, Resume, meta, step)``; ``None`` if there is none, or an older one
  (superseded by a later epoch checkpoint; the finished run removes it)."""
  steps = interrupted.steps()
  if not steps:
    return None
  target = {'state': pieces.saved(state),
            'loss_sum': np.zeros(len(pieces.members), np.float32)}
  try:
    tree, meta = interrupted.restore(steps[-1], target)
  except ckpt_lib.CorruptCheckpoint as e:
    moved = interrupted.discard(steps[-1])
    print_fn(f'warning: {e}; moved it to {moved}')
    return None
  if meta.get('epoch') != epoch + 1:  # superseded by a later epoch's checkpoint
    return None
  resume = Resume(epoch, int(meta['position']), tree['loss_sum'],
                  float(meta.get('elapsed', 0.0)))
  return pieces.on_device(tree['state']), resume, meta, steps[-1]


def restore(pieces, ckpts, interrupted, state, workdir: str, verified=frozenset(),
            print_fn=print):
  """``(state, Resume, meta)``: the newest epoch checkpoint's, then a stop signal's
  of the epoch after it, else ``state`` (``meta`` None: nothing restored). Checks
  the inputs of the one restored, unless ``verified`` (:func:`check_saved_inputs`)
  holds it."""
  latest = ckpts.latest_epoch() or 0
  resume, meta, where = Resume(), None, None
  if latest:
    state, meta, latest = restore_latest(pieces, ckpts, state, print_fn)
    if latest:
      resume, where = Resume(latest, elapsed=float(meta.get('elapsed', 0.0))), (
          ckpt_lib.EPOCHS, latest)
    else:  # every checkpoint was corrupt: the run starts afresh
      meta = None
  found = (restore_interrupted(pieces, interrupted, state, latest, print_fn)
           if interrupted else None)  # None: no stop signal left one
  if found:
    state, resume, meta, step = found
    where = (ckpt_lib.INTERRUPTED, step)
  if meta is not None and where not in verified:
    check_same_inputs(workdir, meta, pieces)
  return state, resume, meta

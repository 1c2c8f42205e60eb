"""One experiment end to end: build, train every seed at once, resume, evaluate.

``train(config, workdir)`` and ``evaluate(config, workdir)`` are what ``launch.py``
dispatches to; the run's pieces come from :func:`seedsweep.run.experiment.build`. An
epoch is: every seed draws its batch order, the jitted seed-parallel step runs over
the batch slots, dev and test are evaluated (vmapped too), each seed keeps its
best-dev parameters inside jit, rows go to metrics.jsonl and TensorBoard, and the
whole stacked state is checkpointed (:func:`_train_members`, in named steps).
"""
import dataclasses
import os
import time
from typing import Any, Callable, Optional

import jax
import numpy as np

from seedsweep import files
from seedsweep.config import checks as config_checks
from seedsweep.engine import hosts
from seedsweep.errors import Stopped, UserError
from seedsweep.run import checkpoints as ckpt_lib
from seedsweep.run import experiment as experiment_lib
from seedsweep.run import faults
from seedsweep.run import groups as groups_lib
from seedsweep.run import memory
from seedsweep.run import outputs
from seedsweep.run import provenance as provenance_lib
from seedsweep.run import runtime
from seedsweep.run import stop_signals
from seedsweep.run import timing
from seedsweep.run import tracking
from seedsweep.run import workdir_lock


def record_program(exp, state, meta: Optional[dict] = None) -> None:
  """Adds the compiled train step's fingerprint (and on a CPU what in it is not
  portable) to the run's determinism record: what a checkpoint's ``meta`` recorded
  when training made it, else this process's."""
  recorded = (meta or {}).get('determinism') or {}
  keys = ('program', 'unportable_ops')
  found = {k: recorded[k] for k in keys if k in recorded}
  exp.provenance['determinism'].update(found if 'program' in found
                                       else exp.program_record(state))


def check_folder(path: str, what: str = '--workdir') -> None:
  """UserError when ``path`` exists and is not a folder (``what``: the flag or
  argument that named it)."""
  files.refuse_file(path, what, 'a folder (a new one, or the workdir of a run)')


def check_workdir(config, workdir: str) -> bool:
  """Refuses a workdir holding another config (or a file where the folder should
  be); True if it holds this one."""
  check_folder(workdir)
  path = os.path.join(workdir, outputs.CONFIG)
  if not os.path.exists(path):
    return False
  try:
    stored = outputs.read_json(path)
  except ValueError as e:
    raise UserError(f'{path} is not valid JSON ({e}); expected the config.json a '
                    f'run of seedsweep wrote') from e
  diff = config_checks.differences(stored, config_checks.to_dict(config))
  if diff:
    raise UserError(
        f'workdir {workdir} holds a run of another config (stored != requested):\n  '
        + '\n  '.join(diff)
        + '\nUse another --workdir, or delete this one to start afresh.')
  return True


def epoch_rows(exp, epoch, train_loss, evals, wall_time, state):
  """metrics.jsonl's rows of ``epoch``, one per member; ``state``'s parameters give
  each row's ``params_sha256``; ``nonfinite_step`` is the step whose train loss was
  first NaN or infinite (0: none)."""
  params_sha = exp.params_fingerprints(state.params)
  nonfinite = hosts.fetch(state.nonfinite_step)
  rows = []
  members = exp.members
  for i, seed in enumerate(members.seeds):
    row = {'epoch': epoch, 'seed': int(seed)}
    if members.folds:
      row['fold'] = int(members.view_ids[i])
    if members.factorial:
      row['streams'] = [int(s) for s in members.seed_triples[i]]
    if len(members.point_labels) > 1:
      row['point'] = members.point_labels[members.points[i]]
    row['train_loss'] = float(train_loss[i])
    row.update({k: float(v[i]) for k, v in evals.items()})
    row['params_sha256'] = params_sha[i]
    row['nonfinite_step'] = int(nonfinite[i])
    row['wall_time'] = round(wall_time, 3)
    rows.append(row)
  return rows


def check_finite(config, members, rows, epoch: int) -> None:
  """With ``config.train.nan_policy='fatal'``, a UserError naming the members whose
  train loss became NaN or infinite (their rows are already logged)."""
  bad = [(label, row['nonfinite_step']) for label, row in zip(members.labels, rows)
         if row['nonfinite_step']]
  if bad and config.train.nan_policy == 'fatal':
    which = ', '.join(f'{label} at step {step}' for label, step in bad)
    raise UserError(f'the train loss became NaN or infinite ({which}, by the end of '
                    f'epoch {epoch}); config.train.nan_policy=fatal stops the run. The '
                    "checkpoints of earlier epochs are kept; nan_policy='freeze' lets "
                    'the other seeds go on')


def epoch_summary(epoch, num_epochs, rows) -> str:
  """The epoch's line on the terminal: mean ± std over the members, the std the
  sample one (ddof=1), as in the final table; a line per point of a stacked run."""
  points = list(dict.fromkeys(r.get('point', '') for r in rows))
  lines = []
  for point in points:
    mine = [r for r in rows if r.get('point', '') == point]
    parts = [f'epoch {epoch}/{num_epochs}'] + ([point] if point else [])
    for key in ('train_loss', 'dev_accuracy', 'test_accuracy'):
      if key in mine[0]:
        s = outputs.summarize([r[key] for r in mine])
        parts.append(f'{key} {s["mean"]:.4g}±{s["std"]:.2g}')
    lines.append('  '.join(parts))
  return '\n'.join(lines)


def check_same_inputs(workdir: str, meta: dict, exp, doing: str = 'resume') -> None:
  """Refuses to resume (or re-evaluate) a run whose checkpoint (its ``meta``) was
  trained on other input bytes (word vectors, dataset splits) than this build reads:
  that would mix two inputs in one seed's numbers, or record inputs the parameters
  were not trained on. A checkpoint that recorded none passes."""
  changed = provenance_lib.input_changes(meta.get('data'), exp.provenance['data'])
  if changed:
    raise UserError(
        f'{workdir}: cannot {doing}: its checkpoint was trained on other input bytes '
        f'than {describe_inputs(exp.provenance["data"])} hold now ('
        + '; '.join(changed) + '); put back the files it started with, or use '
        'another --workdir')


def check_saved_inputs(workdir: str, exp, ckpts, interrupted=None,
                       doing: str = 'resume') -> None:
  """check_same_inputs on the meta records alone of the checkpoints a resume would
  read (the newest epoch checkpoint, and the stop signal's mid-epoch one of the epoch
  after it), before the train state is built and the step compiled: a refusal costs
  no compilation. A record that cannot be read is left to the restore to report."""
  latest = ckpts.latest_epoch() or 0
  metas = [ckpts.meta(latest)] if latest else []
  steps = interrupted.steps() if interrupted else []
  if steps:
    meta = interrupted.meta(steps[-1])
    if meta and meta.get('epoch') == latest + 1:  # not superseded by a later epoch
      metas.append(meta)
  for meta in metas:
    if meta:
      check_same_inputs(workdir, meta, exp, doing)


def describe_inputs(data: dict) -> str:
  """The inputs of a run's ``data`` provenance, in words: 'dataset subj and
  vectors FILE'."""
  vectors = (data.get('vectors') or {}).get('path')
  return f'dataset {data.get("name")}' + (f' and vectors {vectors}' if vectors else '')


@dataclasses.dataclass
class Resume:
  """Where a run starts: after ``epoch`` completed epochs, at ``position`` of the
  next (a stop signal's mid-epoch checkpoint), with that epoch's loss so far."""
  epoch: int = 0
  position: int = 0
  loss_sum: Optional[np.ndarray] = None
  elapsed: float = 0.0


def restore_latest(exp, ckpts, state, print_fn):
  """``(state, meta, epoch)`` of the newest checkpoint that reads back as it was
  saved (into ``exp``'s members on device); corrupt ones are reported and moved
  aside (``(state, {}, 0)`` if none is left: the run starts afresh)."""
  for epoch in reversed(ckpts.steps()):
    try:
      restored, meta = exp.restore(ckpts, epoch, state)
    except ckpt_lib.CorruptCheckpoint as e:
      moved = ckpts.discard(epoch)
      print_fn(f'warning: {e}; moved it to {moved} and resuming from the checkpoint '
               'before it')
      continue
    return restored, meta, epoch
  return state, {}, 0


def restore_interrupted(exp, interrupted, state, epoch: int, print_fn):
  """The mid-epoch checkpoint of epoch ``epoch + 1`` a stop signal left, as
  ``(state, Resume, meta)``; ``None`` if there is none, or an older one (superseded
  by a later epoch checkpoint; the finished run removes it)."""
  steps = interrupted.steps() if interrupted else []
  if not steps:
    return None
  target = {'state': exp.saved(state),
            'loss_sum': np.zeros(len(exp.members), np.float32)}
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
  return exp.on_device(tree['state']), resume, meta


def train(config, workdir: str, print_fn=print) -> dict:
  """Trains every seed of ``config`` in ``workdir``, resuming from its checkpoints.

  A finished run is left untouched. One process at a time may train in a workdir (a
  lock). :func:`seedsweep.train` is this with the compilation cache on.

  Args:
    config: the experiment's ConfigDict.
    workdir: the run's folder: a new one, or one holding a run of this config.
    print_fn: called with each line of progress and the final table.

  Returns:
    The results dict, also written to ``workdir/results.json``.

  Raises:
    UserError: the config is invalid; ``workdir`` is a file, holds a run of another
      config or checkpoints without a config.json; its checkpoints were trained on
      other input bytes; or a member's loss became NaN under ``nan_policy='fatal'``.
    Stopped: SIGTERM or SIGINT stopped the run at the next step boundary after
      saving where it was; rerunning the command resumes from there.
  """
  config_checks.validate(config)  # a bad config is refused before the workdir exists
  runtime.pin_for(config)  # before orbax's first JAX call starts the CPU client
  check_folder(workdir)
  os.makedirs(workdir, exist_ok=True)
  results = finished_results(config, workdir)  # read only: a finished run is left
  if results is not None:                      # as it is, its lock file included
    print_fn(f'{workdir}: finished run found ({results.get("epochs_completed")} epochs); '
             'nothing to do.')
    print_fn(outputs.format_table(results))
    if hosts.is_primary():
      tracking.record_finished(config, workdir, results, again=False)
    return results
  with workdir_lock.hold(workdir):
    return _train_locked(config, workdir, print_fn)


def finished_results(config, workdir: str) -> Optional[dict]:
  """The results of ``workdir`` if it holds a finished run of ``config``, else None
  (UserError if it holds another config's run, or checkpoints without a config)."""
  holds_config = check_workdir(config, workdir)
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
  def of(folder):
    ckpts = ckpt_lib.existing(folder, ckpt_lib.EPOCHS, read_only=True)
    if not ckpts:
      return 0
    try:
      return ckpts.latest_epoch() or 0
    finally:
      ckpts.close()
  grouped = groups_lib.latest_epoch(workdir, of)
  return of(workdir) if grouped is None else grouped


def _train_locked(config, workdir: str, print_fn) -> dict:
  """Builds the run once and trains its members: all at once, or in the groups of
  a split (run/groups.py) one after another; writes results.json."""
  holds_config = check_workdir(config, workdir)
  # A kill mid-write leaves a temporary file; its writer is gone (we hold the lock).
  files.remove_orphaned_temporaries(workdir, skip=ckpt_lib.FOLDERS)
  timer = timing.Timer()
  with timer('build'):
    exp = experiment_lib.build(config)
  faults.reached('build')
  warning = runtime.gpu_determinism_warning(jax.default_backend(),
                                            os.environ.get('XLA_FLAGS', ''))
  if warning:
    print_fn(warning)
  primary = hosts.is_primary()  # under jax.distributed only process 0 writes files
  bounds = split_members(exp, workdir, print_fn, write=primary)
  if not holds_config and primary:
    outputs.write_json(os.path.join(workdir, outputs.CONFIG),
                       config_checks.to_dict(config))
  if bounds is None:
    selected = _train_members(exp, workdir, workdir, timer, print_fn)
  else:
    selected = _train_groups(exp, workdir, bounds, timer, print_fn)
  exp.provenance.update(machines=selected['machines'],
                        determinism=selected['determinism'])
  results = exp.results_of(selected)
  # Training and evaluation up to the last checkpoint, over every session: what
  # that checkpoint records, so a report rebuilt from it shows the same time.
  results['wall_time'] = selected['elapsed']
  # Seconds of this process only (a resumed run counts from its restart).
  results['timing'] = timer.as_dict()
  results['finished'] = True  # trained to its end (finished_results)
  if primary:
    outputs.write_json(os.path.join(workdir, outputs.RESULTS), results)
    tracking.record_finished(config, workdir, results)
  faults.reached('finished')
  print_fn(outputs.format_table(results))
  return results


def split_members(exp, workdir: str, print_fn, write: bool = True):
  """The groups the run's members train in (run/groups.py), None for one program;
  says so when the members are split."""
  est, n = exp.memory_estimate, len(exp.members)
  budget = memory.budget_mib(exp.config)
  # Checkpoints of all the members (an epoch's or a stop signal's): resumed as one.
  started = any(os.path.isdir(os.path.join(workdir, f))
                for f in (ckpt_lib.EPOCHS, ckpt_lib.INTERRUPTED))
  devices = exp.placement.devices
  fits = est.members_within(budget)
  if jax.default_backend() != 'cpu':  # each accelerator holds its share in its memory
    fits *= devices
  bounds = groups_lib.split(workdir, n, fits, devices,
                            started_unsplit=started, write=write)
  if bounds is not None:
    sizes = sorted({b - a for a, b in bounds})
    print_fn(f'{n} members need ~{est.peak_mib(n):,.0f} MiB by the estimate, over the '
             f'memory budget of {budget:,.0f} MiB: training them in {len(bounds)} groups '
             f'of {" or ".join(map(str, sizes))} one after another '
             f'({os.path.join(workdir, groups_lib.GROUPS)}/)')
  elif est.peak_mib(n) > budget and started:
    print_fn(f'warning: {n} members need ~{est.peak_mib(n):,.0f} MiB by the estimate, '
             f'over the memory budget of {budget:,.0f} MiB; this run started as one '
             'program and resumes as one')
  return bounds


def _train_groups(exp, workdir: str, bounds, timer, print_fn) -> dict:
  """Trains each group of ``bounds`` to the end in ``workdir/groups/<k>``, one
  after another (finished groups are read back); the run's metrics.jsonl and
  TensorBoard aggregates come from theirs. Returns the members' numbers."""
  done = []
  for k, (start, stop) in enumerate(bounds):
    folder = groups_lib.folder(workdir, k)
    selected = groups_lib.read_selected(folder)
    if selected is None:
      print_fn(f'group {k + 1}/{len(bounds)}: members {start}..{stop - 1}')
      os.makedirs(folder, exist_ok=True)
      selected = _train_members(exp.group(start, stop), folder, workdir, timer, print_fn)
      groups_lib.write_selected(folder, selected)
      faults.reached('group')
    done.append(selected)
  rows = groups_lib.merge_rows(workdir)
  if hosts.is_primary():
    outputs.write_aggregates(workdir, exp.members.labels, rows)
  return groups_lib.merged_selected(done)


def _train_members(exp, folder: str, workdir: str, timer, print_fn) -> dict:
  """Trains ``exp``'s members to the end with their checkpoints and metrics rows in
  ``folder`` (the run's ``workdir``, or a group's), resuming from what is there.
  Returns their numbers (:meth:`Experiment.selected`) with ``elapsed`` (training
  and evaluation over every session, to the last checkpoint) and ``machines``."""
  session = _Session.open(exp, folder, workdir, timer, print_fn)
  try:
    check_saved_inputs(workdir, exp, session.ckpts, session.interrupted)
    state, resume = _restore(session, _fresh_state(session))
    _open_logs(session, resume)
    first = _first_epoch(session, state, resume)
    with stop_signals.catch() as stop:
      for epoch in range(first, session.num_epochs + 1):
        state, loss_sum, position = _train_epoch(session, state, epoch, resume, stop)
        if position < session.steps_per_epoch:  # a stop signal ended the epoch
          raise _interrupt(session, state, loss_sum, epoch, position, stop)
        state, early = _end_epoch(session, state, loss_sum, epoch, stop)
        if stop and epoch < session.num_epochs and not early:
          raise _stopped(stop, workdir, f'after epoch {epoch}')
        if early:
          break
    return _finish(session, state)
  finally:
    session.close()


@dataclasses.dataclass
class _Session:
  """What training a set of members holds open and counts between its steps."""
  exp: Any
  folder: str
  workdir: str
  timer: timing.Timer
  print_fn: Callable[[str], None]
  ckpts: ckpt_lib.Checkpoints        # the epochs' checkpoints
  interrupted: Any = None            # a stop signal's mid-epoch checkpoint (or None)
  primary: bool = True               # under jax.distributed only process 0 writes files
  log: Optional[outputs.MetricsLog] = None
  tensorboard: Optional[outputs.TensorBoard] = None
  bar: Any = None                    # the tqdm progress bar
  on_step: Optional[Callable[[int], None]] = None  # n steps done
  ahead: Any = None                  # the evaluation's programs compiling (a thread)
  first: int = 0                     # the first epoch this process trains
  started: float = 0.0               # time.perf_counter() when this process started
  elapsed_before: float = 0.0        # seconds of the sessions before this one
  epoch_started: float = 0.0
  completed: int = 0                 # the last epoch completed
  saved_elapsed: float = 0.0         # ``elapsed`` of the last checkpoint
  evaluated: dict = dataclasses.field(default_factory=dict)  # epoch -> eval metrics

  @classmethod
  def open(cls, exp, folder: str, workdir: str, timer, print_fn) -> '_Session':
    """A session over ``folder``'s checkpoints: the epochs' and a stop signal's."""
    ckpts = ckpt_lib.Checkpoints(folder)
    interrupted = ckpt_lib.existing(folder, ckpt_lib.INTERRUPTED, max_to_keep=1)
    return cls(exp, folder, workdir, timer, print_fn, ckpts, interrupted)

  @property
  def num_epochs(self) -> int:
    """The epochs the config trains."""
    return self.exp.config.train.num_epochs

  @property
  def steps_per_epoch(self) -> int:
    """The train steps of an epoch."""
    return self.exp.schedule.plan.steps_per_epoch

  def wall_time(self) -> float:
    """Seconds of training and evaluation over every session, until now."""
    return self.elapsed_before + time.perf_counter() - self.started

  def close(self) -> None:
    """Waits for a compilation still running, then closes the bar, logs, checkpoints."""
    if self.ahead is not None:  # a run stopped in its first epoch: let it finish
      self.ahead.join()
    if self.bar is not None:
      self.bar.close()
    if self.tensorboard is not None:
      self.tensorboard.close()
    if self.interrupted:
      self.interrupted.close()
    self.ckpts.close()


def _fresh_state(session: _Session):
  """The members' initial state, its program recorded in the provenance."""
  exp = session.exp
  with session.timer('build'):
    state = exp.init_state()
    record_program(exp, state)
  warning = provenance_lib.portability_warning(exp.provenance['determinism'])
  if warning:
    session.print_fn(warning)
  return state


def _restore(session: _Session, state):
  """``(state, Resume)``: the newest checkpoint's, or a stop signal's, else ``state``."""
  exp, workdir = session.exp, session.workdir
  latest = session.ckpts.latest_epoch() or 0
  resume, meta = Resume(), None
  if latest:
    state, meta, latest = restore_latest(exp, session.ckpts, state, session.print_fn)
    check_same_inputs(workdir, meta, exp)
    resume = Resume(latest, elapsed=float(meta.get('elapsed', 0.0)))
  found = restore_interrupted(exp, session.interrupted, state, latest, session.print_fn)
  if found:
    state, resume, meta = found
    check_same_inputs(workdir, meta, exp)
  # Which machines trained which epochs: a run continued on another CPU (under
  # native numerics, or another backend) says so in every later record.
  exp.provenance['machines'] = provenance_lib.machine_history(
      meta if latest or found else None, exp.provenance['determinism'],
      resume.epoch + 1, resume.position)
  if resume.epoch or resume.position:
    where = (f' at step {resume.position} of epoch {resume.epoch + 1}'
             if resume.position else '')
    session.print_fn(f'{session.folder}: resuming after epoch '
                     f'{resume.epoch}/{session.num_epochs}{where}.')
    faults.reached('restored')
  return state, resume


def _open_logs(session: _Session, resume: Resume) -> None:
  """metrics.jsonl (cut back to the resumed epoch), TensorBoard and the progress bar."""
  from tqdm.auto import tqdm  # pylint: disable=g-import-not-at-top
  exp, config = session.exp, session.exp.config
  session.primary = hosts.is_primary()
  session.log = outputs.MetricsLog(session.folder)
  if session.primary:
    session.log.keep_epochs_up_to(resume.epoch)
    session.tensorboard = outputs.TensorBoard(
        session.workdir, exp.members.labels, aggregates=session.folder == session.workdir)
  steps = session.steps_per_epoch
  session.bar = tqdm(total=session.num_epochs * steps,
                     initial=resume.epoch * steps + resume.position, unit='step',
                     disable=not config.train.progress, dynamic_ncols=True)
  session.on_step = progress_without_compilation(session.bar)
  session.started = time.perf_counter()
  session.elapsed_before = resume.elapsed
  session.completed, session.saved_elapsed = resume.epoch, resume.elapsed


def _first_epoch(session: _Session, state, resume: Resume) -> int:
  """The first epoch to train (past the last when every member stopped early)."""
  exp, num_epochs = session.exp, session.num_epochs
  first = num_epochs + 1 if exp.all_stopped(state, resume.epoch) else resume.epoch + 1
  if first <= num_epochs:
    session.ahead = exp.compile_ahead(state.params)
  session.first = first
  return first


def _train_epoch(session: _Session, state, epoch: int, resume: Resume, stop):
  """Epoch ``epoch``'s steps from where it resumes: ``(state, loss_sum, position)``."""
  session.epoch_started = time.perf_counter()
  start, resume.position = resume.position, 0
  with session.timer('train'):
    state, loss_sum, position = session.exp.train_steps(
        state, epoch, start, resume.loss_sum, on_step=session.on_step,
        stop=lambda: bool(stop))
    # Steps are dispatched asynchronously: wait for them here, or their time is
    # counted in the evaluation that first reads their results.
    jax.block_until_ready((state, loss_sum))
  resume.loss_sum = None
  return state, loss_sum, position


def _interrupt(session: _Session, state, loss_sum, epoch: int, position: int,
               stop) -> Stopped:
  """Saves the epoch so far (a stop signal's checkpoint); the Stopped to raise."""
  wall, steps = session.wall_time(), session.steps_per_epoch
  exp = session.exp
  session.interrupted = session.interrupted or ckpt_lib.Checkpoints(
      session.folder, max_to_keep=1, folder=ckpt_lib.INTERRUPTED)
  session.interrupted.save((epoch - 1) * steps + position,
                           {'state': exp.saved(state), 'loss_sum': exp.real(loss_sum)},
                           {'epoch': epoch, 'position': position, 'elapsed': wall,
                            'data': exp.provenance['data'],
                            'machines': exp.provenance['machines']})
  return _stopped(stop, session.workdir, f'at step {position}/{steps} of epoch {epoch}')


def _end_epoch(session: _Session, state, loss_sum, epoch: int, stop):
  """Evaluates, keeps the best, logs rows, checks NaN, checkpoints: ``(state, early)``."""
  exp = session.exp
  evals = _evaluate_epoch(session, state, epoch)
  state = exp.keep_best(state, evals, epoch)
  wall = session.wall_time()
  rows = epoch_rows(exp, epoch, exp.mean_loss(loss_sum), evals, wall, state)
  _log_rows(session, rows)
  check_finite(exp.config, exp.members, rows, epoch)
  _show_epoch(session, epoch, rows)
  session.completed = epoch
  early = _early_stop(session, state, epoch)
  if (epoch % exp.config.train.checkpoint_every == 0 or epoch == session.num_epochs
      or early or stop):
    session.ckpts.save(epoch, exp.saved(state),
                       {'epoch': epoch, 'elapsed': wall, **exp.provenance})
    session.saved_elapsed = wall
  return state, early


def _evaluate_epoch(session: _Session, state, epoch: int) -> dict:
  """Dev and test metrics of every member after ``epoch``, kept for the results."""
  with session.timer('eval'):
    if session.ahead is not None:
      session.ahead.join()  # the evaluation's programs, compiled while epoch 1 trained
      session.ahead = None
    evals = session.exp.evaluate_all(state.params)
  if epoch == session.first:
    session.bar.unpause()  # the first evaluation compiled its programs: not in the ETA
  session.evaluated[epoch] = evals
  return evals


def _log_rows(session: _Session, rows) -> None:
  """The epoch's rows to metrics.jsonl and TensorBoard (the primary process only)."""
  if session.primary:
    session.log.append(rows)
    session.tensorboard.write(rows)
    faults.reached('tensorboard')


def _show_epoch(session: _Session, epoch: int, rows) -> None:
  """The epoch's speed on the progress bar and its summary line under it."""
  examples = session.exp.data.sizes()['train'] * len(session.exp.members)
  rate = examples / (time.perf_counter() - session.epoch_started)
  session.bar.set_postfix_str(f'{rate:,.0f} ex/s (all seeds)')
  session.bar.write(epoch_summary(epoch, session.num_epochs, rows))


def _early_stop(session: _Session, state, epoch: int) -> bool:
  """Whether every member's selection has ended (early stopping), said on the bar."""
  early = session.exp.all_stopped(state, epoch)
  if early:
    session.bar.write(f'early stop after epoch {epoch}: every member has gone '
                      f'{session.exp.config.train.patience} epochs without a better '
                      'dev score')
  return early


def _finish(session: _Session, state) -> dict:
  """Waits for the checkpoints, drops a superseded stop signal's one; the numbers."""
  exp = session.exp
  session.bar.close()
  session.ckpts.wait()
  if session.interrupted:  # superseded by the finished epochs
    session.interrupted.remove()
    session.interrupted = None
  with session.timer('eval'):
    selected = exp.selected(state, session.completed, session.evaluated)
  return {**selected, 'elapsed': session.saved_elapsed,
          'machines': exp.provenance['machines'],
          'determinism': exp.provenance['determinism']}


def progress_without_compilation(bar):
  """``on_step(n)`` advancing ``bar`` by ``n`` steps, keeping out of its rate (and so
  of its ETA) the first chunk of steps in this process: the one that compiled the
  training program (or read it from the compilation cache)."""
  started = []

  def on_step(n: int) -> None:
    if not started:
      started.append(True)
      bar.unpause()  # tqdm: the time since its last update is left out
    bar.update(n)

  return on_step


def _stopped(stop, workdir: str, where: str) -> Stopped:
  """The Stopped error of a stop signal caught ``where`` (a checkpoint saved)."""
  return Stopped(f'{stop.requested} received: stopped {where} and saved a checkpoint '
                 f'in {workdir}; rerun the same command to resume', stop.signum)


def evaluate(config, workdir: str, print_fn=print) -> dict:
  """Re-evaluates the newest checkpoint of ``workdir`` and rewrites results.json.

  Args:
    config: the config ``workdir``'s run was trained with.
    workdir: the run's folder.
    print_fn: called with a line saying which epoch, and the final table.

  Returns:
    The results dict, also written to ``workdir/results.json``.

  Raises:
    UserError: ``workdir`` holds no config.json, a run of another config, or no
      checkpoint; or its checkpoint was trained on other input bytes.
  """
  runtime.pin_for(config)
  if not check_workdir(config, workdir):
    raise UserError(f'{workdir} holds no {outputs.CONFIG}; expected the workdir of '
                    f'a run (python launch.py --mode=train ... first)')
  with workdir_lock.hold(workdir):
    return _evaluate_locked(config, workdir, print_fn)


def _evaluate_locked(config, workdir: str, print_fn) -> dict:
  """Evaluates every group's newest checkpoint and writes the run's results.json."""
  exp = experiment_lib.build(config)
  selected = groups_lib.merged_selected([
      _evaluate_members(part, folder, workdir)
      for part, folder in groups_lib.parts(exp, workdir)])
  exp.provenance.update(machines=selected['machines'],
                        determinism=selected['determinism'])
  results = exp.results_of(selected)
  results['wall_time'] = selected['elapsed']
  outputs.write_json(os.path.join(workdir, outputs.RESULTS), results)
  print_fn(f'{workdir}: re-evaluated the checkpoint of epoch '
           f'{selected["epochs_completed"]}.')
  print_fn(outputs.format_table(results))
  return results


def _evaluate_members(exp, folder: str, workdir: str) -> dict:
  """The numbers of the newest checkpoint in ``folder`` (the run's, or a group's),
  as :func:`_train_members` returns them."""
  ckpts = ckpt_lib.Checkpoints(folder)
  try:
    latest = ckpts.latest_epoch()
    if not latest:
      raise UserError(f'{ckpts.directory} holds no checkpoint to evaluate')
    check_saved_inputs(workdir, exp, ckpts, doing='re-evaluate')  # latest's meta
    state, meta = exp.restore(ckpts, latest)
  finally:
    ckpts.close()
  record_program(exp, state, meta)
  return {**exp.selected(state, latest), 'elapsed': meta.get('elapsed'),
          'machines': provenance_lib.trained_on(meta),
          'determinism': exp.provenance['determinism']}

"""Training a run, read top to bottom: ``train(config, workdir)`` and ``evaluate``::

    run = prepare.prepare_run(config, workdir)    the config checked, the workdir read
    with run.locked() as run:                     one process per workdir
      pieces = pieces.build(run.checked)          the run's values, built once
      state = pieces.init_state()
      determinism = epoch.determinism(pieces, state)   the train programs compiled
      state, resume, meta = workdir.restore(...)  the newest checkpoint, else fresh
      record = {**pieces.provenance, determinism, machines}   the checkpoints' meta
      for epoch in ...:
        done = epoch.run_epoch(pieces, state, epoch, ...)   values in, values out
        the rows to metrics.jsonl, TensorBoard; ckpts.save(..., record)

A finished run is left as it is. The members train all at once, or in groups one
after another when they do not fit the memory budget (run/groups.py). A stop signal
saves where the epoch is and raises Stopped; the same call resumes from there.
What other modes read of a workdir is in :mod:`seedsweep.run.workdir`.
"""
import contextlib
import functools
import os
import sys
import time

import jax

from seedsweep import files
from seedsweep import notices
from seedsweep.engine import hosts
from seedsweep.errors import Stopped, UserError
from seedsweep.run import checkpoints as ckpt_lib
from seedsweep.run import epoch as epoch_lib
from seedsweep.run import faults
from seedsweep.run import groups as groups_lib
from seedsweep.run import memory
from seedsweep.run import outputs
from seedsweep.run import pieces as pieces_lib
from seedsweep.run import prepare
from seedsweep.run import provenance as provenance_lib
from seedsweep.run import runtime
from seedsweep.run import saved_data
from seedsweep.run import stop_signals
from seedsweep.run import timing
from seedsweep.run import tracking
from seedsweep.run import workdir as workdir_lib


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
  with notices.to(print_fn):  # the lower layers' lines (a dataset prepared) too
    run = prepare.prepare_run(config, workdir)
    if run.finished is not None:
      return _finished(run, print_fn)
    with run.locked() as run:
      return _train_locked(run, print_fn)


def _finished(run: prepare.Prepared, print_fn) -> dict:
  """A finished run met again: its table, and only its tracking records that are
  missing, written under the workdir's lock (nothing written when none is)."""
  results = run.finished
  print_fn(f'{run.workdir}: finished run found ({results.get("epochs_completed")} '
           'epochs); nothing to do.')
  changed = provenance_lib.code_changes_now(results.get('provenance'),
                                            workdir_lib.started_in(run.workdir))
  if changed:
    print_fn(f'warning: {run.workdir}: its numbers below come from code that has changed '
             'since (' + '; '.join(changed) + '); to train the code as it is now, use '
             'another --workdir')
  print_fn(outputs.format_table(results))
  if hosts.is_primary() and tracking.missing(run.config, run.workdir):
    with run.locked():
      if tracking.missing(run.config, run.workdir):  # not written meanwhile
        tracking.record_finished(run.config, run.workdir, results, again=False,
                                 as_dict=run.checked.as_dict)
  return results


def _train_locked(run: prepare.Prepared, print_fn) -> dict:
  """Builds the run once and trains its members: all at once, or in the groups of
  a split (run/groups.py) one after another; writes results.json."""
  config, workdir = run.checked.config, run.workdir
  # A kill mid-write leaves a temporary file; its writer is gone (we hold the lock).
  files.remove_orphaned_temporaries(workdir, skip=ckpt_lib.FOLDERS)
  timer = timing.Timer()
  with timer('build'):
    # A run resumed goes on with the dataset it saved when it started, whatever its
    # files hold now (a workdir from before that file: built from its files).
    saved = (saved_data.load(workdir, config.data, tables='file')
             if run.holds_config else None)
    pieces = pieces_lib.build(run.checked, saved)
  print_fn(pieces.data.summary())  # a misread dataset shows before training
  faults.reached('build')
  warning = runtime.gpu_determinism_warning(jax.default_backend(),
                                            os.environ.get('XLA_FLAGS', ''))
  if warning:
    print_fn(warning)
  primary = hosts.is_primary()  # under jax.distributed only process 0 writes files
  bounds = split_members(pieces, workdir, print_fn, write=primary)
  if not run.holds_config and primary:  # the dataset first: config.json marks a run
    saved_data.save(workdir, pieces.data)
    workdir_lib.write_config(workdir, run.checked)
  if bounds is None:
    selected = _train_members(pieces, workdir, workdir, timer, print_fn)
  else:
    selected = _train_groups(pieces, workdir, bounds, timer, print_fn)
  results = _results(pieces, selected, workdir)
  # Training and evaluation up to the last checkpoint, over every session: what
  # that checkpoint records, so a report rebuilt from it shows the same time.
  results['wall_time'] = selected['elapsed']
  # Seconds of this process only (a resumed run counts from its restart).
  results['timing'] = timer.as_dict()
  results['finished'] = True  # trained to its end (workdir.finished_results)
  if primary:
    outputs.write_json(os.path.join(workdir, outputs.RESULTS), results)
    tracking.record_finished(config, workdir, results, as_dict=run.checked.as_dict)
  faults.reached('finished')
  print_fn(outputs.format_table(results))
  return results


def _train_members(pieces, folder: str, workdir: str, timer, print_fn) -> dict:
  """Trains ``pieces``'s members to the end with their checkpoints and metrics rows in
  ``folder`` (the run's ``workdir``, or a group's), resuming from what is there.
  Returns their numbers (:func:`epoch.selected`) with ``elapsed`` (training and
  evaluation over every session, to the last checkpoint), ``machines`` and
  ``determinism``."""
  train = pieces.config.train
  num_epochs, steps = train.num_epochs, pieces.schedule.train_plan.steps_per_epoch
  with contextlib.ExitStack() as cleanup:  # undone last to first, however it ends
    ckpts = ckpt_lib.Checkpoints(folder)  # the epochs' checkpoints
    cleanup.callback(ckpts.close)
    # A stop signal's mid-epoch checkpoint (None: none); closed as it is at the end.
    interrupted = ckpt_lib.existing(folder, ckpt_lib.INTERRUPTED, max_to_keep=1)
    cleanup.callback(lambda: interrupted and interrupted.close())
    # Nothing saved yet (a fresh run): no saved inputs to check, nothing to restore.
    saved = bool(ckpts.latest_epoch() or interrupted)
    verified = (workdir_lib.check_saved_inputs(workdir, pieces, ckpts, interrupted)
                if saved else frozenset())
    with timer('build'):
      state = pieces.init_state()
      # The train programs compiled here, once, for their fingerprint in the record.
      determinism = epoch_lib.determinism(pieces, state)
    warning = provenance_lib.portability_warning(determinism)
    if warning:
      print_fn(warning)
    state, resume, meta = (workdir_lib.restore(pieces, ckpts, interrupted, state, workdir,
                                               verified, print_fn)  # or the fresh state
                           if saved else (state, workdir_lib.Resume(), None))
    # Which machines trained which epochs: a run continued on another CPU (under
    # native numerics, or another backend) says so in every later record.
    machines = provenance_lib.machine_history(meta, determinism, resume.epoch + 1,
                                              resume.position)
    record = {**pieces.provenance, 'determinism': determinism, 'machines': machines}
    if resume.epoch or resume.position:
      where = (f' at step {resume.position} of epoch {resume.epoch + 1}'
               if resume.position else '')
      print_fn(f'{folder}: resuming after epoch {resume.epoch}/{num_epochs}{where}.')
      faults.reached('restored')
    board = _open_logs(pieces, folder, workdir, resume.epoch)  # None: not the primary
    if board is not None:
      cleanup.callback(board.close)
    from tqdm.auto import tqdm  # pylint: disable=g-import-not-at-top
    # The bar goes to stderr, and only when asked for; every line of text goes
    # through print_fn (a caller that silences it gets nothing on stdout).
    initial = resume.epoch * steps + resume.position
    bar = cleanup.enter_context(tqdm(
        total=num_epochs * steps, initial=initial, unit='step',
        disable=not train.progress, dynamic_ncols=True, file=sys.stderr))
    # What time.perf_counter() said when this run's wall time was 0.
    clock_start = time.perf_counter() - resume.elapsed
    first = (num_epochs + 1 if epoch_lib.patience_spent(pieces, state, resume.epoch)
             else resume.epoch + 1)
    ahead = epoch_lib.compile_ahead(pieces, state.params) if first <= num_epochs else None
    if ahead is not None:  # the evaluation's programs compiling while epoch 1 trains
      cleanup.callback(ahead.join)  # (a run stopped in its first epoch: let it end)
    completed, saved_elapsed, evaluated = resume.epoch, resume.elapsed, {}
    start, loss_sum = resume.position, resume.loss_sum
    with stop_signals.catch() as signal:
      hooks = epoch_lib.Hooks(
          on_step=functools.partial(progress_without_compilation, bar, initial),
          stop=lambda: bool(signal), timer=timer, clock_start=clock_start,
          before_eval=ahead.join if ahead is not None else lambda: None,
          sizes=epoch_lib.ChunkSizes.of(pieces))
      for epoch in range(first, num_epochs + 1):
        began = time.perf_counter()
        done = epoch_lib.run_epoch(pieces, state, epoch, start, loss_sum, hooks)
        state, start, loss_sum = done.state, 0, None
        if done.stopped:  # a stop signal ended the epoch: save where it is
          interrupted = _save_interrupted(pieces, folder, interrupted, done, epoch,
                                          time.perf_counter() - clock_start, record)
          raise _stopped(signal, workdir,
                         f'at step {done.position}/{steps} of epoch {epoch}')
        if epoch == first:
          bar.unpause()  # the first evaluation compiled its programs: not in the ETA
        evaluated[epoch] = done.evals
        if board is not None:  # the primary process writes the files
          outputs.MetricsLog(folder).append(done.rows)
          board.write(done.rows)
          faults.reached('tensorboard')
        if train.nan_policy == 'fatal':
          epoch_lib.check_finite(pieces.members, done.rows, epoch)
        completed = epoch
        early = epoch_lib.patience_spent(pieces, state, epoch)
        _show_epoch(bar, print_fn, pieces, epoch, done.rows, began, early)
        if (epoch % train.checkpoint_every == 0 or epoch == num_epochs
            or early or signal):
          ckpts.save(epoch, pieces.saved(state),
                     {'epoch': epoch, 'elapsed': done.wall_time, **record})
          saved_elapsed = done.wall_time
        if signal and epoch < num_epochs and not early:
          raise _stopped(signal, workdir, f'after epoch {epoch}')
        if early:
          break
    bar.close()
    ckpts.wait()
    if interrupted:  # superseded by the finished epochs
      interrupted.remove()
      interrupted = None
    with timer('eval'):
      numbers = epoch_lib.selected(pieces, state, completed, evaluated)
    return {**numbers, 'elapsed': saved_elapsed, 'machines': machines,
            'determinism': determinism}


def _results(pieces, selected: dict, workdir: str) -> dict:
  """results.json of ``selected``'s numbers (:func:`_train_members`'s, of all the
  run's members), its provenance the run's with their programs and machines, and the
  changes of inputs its resumes or evals went on with by the user's choice."""
  metrics = dict(selected['per_member'])
  nonfinite = metrics.pop('nonfinite_step')
  provenance = {**pieces.provenance, 'machines': selected['machines'],
                'determinism': selected['determinism']}
  accepted = workdir_lib.accepted_changes(workdir)
  if accepted:
    provenance['accepted_changes'] = accepted
  return outputs.stacked_results(
      pieces.members, metrics, pieces.checked.points,
      selection=pieces.config.train.selection,
      epochs_completed=selected['epochs_completed'],
      nonfinite_step=[int(s) for s in nonfinite],
      paper=pieces.config.paper.to_dict(), provenance=provenance)


def _open_logs(pieces, folder: str, workdir: str, resumed_epoch: int):
  """The members' TensorBoard writers (outputs.TensorBoard), ``folder``'s
  metrics.jsonl first cut back to the resumed epoch; None off the primary process
  (under jax.distributed the others write nothing)."""
  if not hosts.is_primary():
    return None
  if os.path.exists(os.path.join(folder, outputs.METRICS)):  # rows of a run before
    outputs.MetricsLog(folder).keep_epochs_up_to(resumed_epoch)
  return outputs.TensorBoard(workdir, pieces.members.labels, aggregates=folder == workdir)


def progress_without_compilation(bar, initial: int, n: int) -> None:
  """``on_step(n)``: ``bar`` (made at ``initial`` steps) advanced by a chunk's ``n``
  steps, keeping out of its rate (and so of its ETA) the first chunk of steps in
  this process: the one that compiled the training program (or read it from the
  compilation cache). The chunk's steps reach the fault moment ``step``
  (run/faults.py)."""
  if bar.n == initial:
    bar.unpause()  # tqdm: the time since its last update is left out
  bar.update(n)
  faults.reached('step', n)


def _show_epoch(bar, print_fn, pieces, epoch: int, rows, began: float,
                early: bool) -> None:
  """The epoch's speed on the progress bar and its summary line (and, ``early``,
  that early stopping ended the run) through ``print_fn``, the bar (when shown)
  cleared first and drawn again after, so that a line never lands inside it."""
  examples = pieces.data.sizes()['train'] * len(pieces.members)
  rate = examples / (time.perf_counter() - began)
  bar.set_postfix_str(f'{rate:,.0f} ex/s (all seeds)')
  lines = [epoch_lib.summary(epoch, pieces.config.train.num_epochs, rows)]
  if early:
    lines.append(f'early stop after epoch {epoch}: every member has gone '
                 f'{pieces.config.train.patience} epochs without a better dev score')
  with contextlib.nullcontext() if bar.disable else bar.external_write_mode():
    for line in lines:
      print_fn(line)


def _save_interrupted(pieces, folder: str, interrupted, done, epoch: int, wall: float,
                      record: dict):
  """Saves the epoch so far (a stop signal's checkpoint) in ``interrupted``, made
  when there is none yet, with what it needs of the run's ``record``; returns it."""
  steps = pieces.schedule.train_plan.steps_per_epoch
  interrupted = interrupted or ckpt_lib.Checkpoints(
      folder, max_to_keep=1, folder=ckpt_lib.INTERRUPTED)
  interrupted.save((epoch - 1) * steps + done.position,
                   {'state': pieces.saved(done.state), 'loss_sum': pieces.real(done.loss_sum)},
                   {'epoch': epoch, 'position': done.position, 'elapsed': wall,
                    'data': record['data'], 'user_code': record['user_code'],
                    'machines': record['machines']})
  return interrupted


def _stopped(signal, workdir: str, where: str) -> Stopped:
  """The Stopped error of a stop signal caught ``where`` (a checkpoint saved)."""
  return Stopped(f'{signal.requested} received: stopped {where} and saved a checkpoint '
                 f'in {workdir}; rerun the same command to resume', signal.signum)


def split_members(pieces, workdir: str, print_fn, write: bool = True):
  """The groups the run's members train in (run/groups.py), None for one program;
  says so when the members are split."""
  est, n = pieces.memory_estimate, len(pieces.members)
  budget = memory.budget_mib(pieces.config)
  # Checkpoints of all the members (an epoch's or a stop signal's): resumed as one.
  started = any(os.path.isdir(os.path.join(workdir, f))
                for f in (ckpt_lib.EPOCHS, ckpt_lib.INTERRUPTED))
  devices = pieces.placement.devices
  fits = est.members_within(budget)
  if jax.default_backend() != 'cpu':  # each accelerator holds its share in its memory
    fits *= devices
  placement = pieces.placement
  bounds = groups_lib.split(workdir, n, fits, devices, started_unsplit=started,
                            write=write, group=placement.group, lanes=placement.lanes)
  if bounds is not None and placement.lanes:
    print_fn(f'{n} members in {len(bounds)} lane groups of {placement.group} (train.lanes'
             f'={placement.lanes}), one after another '
             f'({os.path.join(workdir, groups_lib.GROUPS)}/)')
  elif bounds is not None:
    sizes = sorted({b - a for a, b in bounds})
    print_fn(f'{n} members need ~{est.peak_mib(n):,.0f} MiB by the estimate, over the '
             f'memory budget of {budget:,.0f} MiB: training them in {len(bounds)} groups '
             f'of {" or ".join(map(str, sizes))} one after another '
             f'({os.path.join(workdir, groups_lib.GROUPS)}/)')
  elif started and est.peak_mib(n) > budget:
    print_fn(f'warning: {n} members need ~{est.peak_mib(n):,.0f} MiB by the estimate, '
             f'over the memory budget of {budget:,.0f} MiB; this run started as one '
             'program and resumes as one')
  return bounds


def _train_groups(pieces, workdir: str, bounds, timer, print_fn) -> dict:
  """Trains each group of ``bounds`` to the end in ``workdir/groups/<k>``, one
  after another (finished groups are read back); the run's metrics.jsonl and
  TensorBoard aggregates come from theirs. Returns the members' numbers."""
  done = []
  for k, (start, end) in enumerate(bounds):
    folder = groups_lib.folder(workdir, k)
    selected = groups_lib.read_selected(folder)
    if selected is None:
      print_fn(f'group {k + 1}/{len(bounds)}: members {start}..{end - 1}')
      os.makedirs(folder, exist_ok=True)
      selected = _train_members(pieces.group(start, end), folder, workdir, timer,
                                print_fn)
      groups_lib.write_selected(folder, selected)
      faults.reached('group')
    done.append(selected)
  rows = groups_lib.merge_rows(workdir)
  if hosts.is_primary():
    outputs.write_aggregates(workdir, pieces.members.labels, rows)
  return groups_lib.merged_selected(done)


def evaluate(config, workdir: str, print_fn=print) -> dict:
  """Re-evaluates the newest checkpoint of ``workdir`` and rewrites results.json.

  Args:
    config: the config ``workdir``'s run was trained with (None: the one it stored).
    workdir: the run's folder.
    print_fn: called with a line saying which epoch, and the final table.

  Returns:
    The results dict, also written to ``workdir/results.json``.

  Raises:
    UserError: ``workdir`` holds no config.json, a run of another config, or no
      checkpoint; or its checkpoint was trained on other input bytes.
  """
  with notices.to(print_fn):  # the lower layers' lines (a dataset prepared) too
    return _evaluate(config, workdir, print_fn)


def _evaluate(config, workdir: str, print_fn) -> dict:
  """:func:`evaluate`'s work."""
  run = prepare.prepare_existing(config, workdir,
                                 'a run (python launch.py --mode=train ... first)')
  with run.locked():
    pieces = pieces_lib.build(run.checked, saved_data.load(
        workdir, run.config.data, tables='shape'))
    selected = groups_lib.merged_selected([
        _evaluate_members(part, folder, workdir)
        for part, folder in groups_lib.parts(pieces, workdir)])
    results = _results(pieces, selected, workdir)
    results['wall_time'] = selected['elapsed']
    outputs.write_json(os.path.join(workdir, outputs.RESULTS), results)
  print_fn(f'{workdir}: re-evaluated the checkpoint of epoch '
           f'{selected["epochs_completed"]}.')
  print_fn(outputs.format_table(results))
  return results


def _evaluate_members(pieces, folder: str, workdir: str) -> dict:
  """The numbers of the newest checkpoint in ``folder`` (the run's, or a group's),
  as :func:`_train_members` returns them."""
  ckpts = ckpt_lib.Checkpoints(folder)
  try:
    latest = ckpts.latest_epoch()
    if not latest:
      raise UserError(f'{ckpts.directory} holds no checkpoint to evaluate')
    workdir_lib.check_saved_inputs(workdir, pieces, ckpts, doing='re-evaluate')
    state, meta = pieces.restore(ckpts, latest)
  finally:
    ckpts.close()
  return {**epoch_lib.selected(pieces, state, latest), 'elapsed': meta.get('elapsed'),
          'machines': provenance_lib.trained_on(meta),
          'determinism': epoch_lib.determinism(pieces, state, meta.get('determinism'))}

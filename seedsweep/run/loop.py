"""One experiment end to end: build, train every seed at once, resume, evaluate.

``train(config, workdir)`` and ``evaluate(config, workdir)`` are what ``launch.py``
dispatches to; the run's pieces come from :func:`seedsweep.run.experiment.build`. An epoch is: every seed draws its batch order, the jitted seed-parallel
step runs over the batch slots, dev and test are evaluated (vmapped too), each seed
keeps its best-dev parameters inside jit, rows go to metrics.jsonl and TensorBoard, and
the whole stacked state is checkpointed.
"""
import dataclasses
import os
import time
from typing import Optional

import jax
import numpy as np

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
  if os.path.exists(path) and not os.path.isdir(path):
    raise UserError(f'{what}={path} is a file; expected a folder (a new one, or the '
                    'workdir of a run)')


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
      row['fold'] = int(members.views[i])
    if members.factorial:
      row['streams'] = [int(s) for s in members.streams[i]]
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


def restore_latest(ckpts, state, echo):
  """``(state, meta, epoch)`` of the newest checkpoint that reads back as it was
  saved; corrupt ones are reported and moved aside (``(state, {}, 0)`` if none is
  left: the run starts afresh)."""
  for epoch in reversed(ckpts.steps()):
    try:
      restored, meta = ckpt_lib.restore_train_state(ckpts, epoch, state)
    except ckpt_lib.CorruptCheckpoint as e:
      moved = ckpts.discard(epoch)
      echo(f'warning: {e}; moved it to {moved} and resuming from the checkpoint '
           'before it')
      continue
    return restored, meta, epoch
  return state, {}, 0


def restore_interrupted(interrupted, state, members: int, epoch: int, echo):
  """The mid-epoch checkpoint of epoch ``epoch + 1`` a stop signal left, as
  ``(state, Resume, meta)``; ``None`` if there is none, or an older one (superseded
  by a later epoch checkpoint; the finished run removes it)."""
  steps = interrupted.steps() if interrupted else []
  if not steps:
    return None
  target = {'state': state, 'loss_sum': np.zeros(members, np.float32)}
  try:
    tree, meta = interrupted.restore(steps[-1], target)
  except ckpt_lib.CorruptCheckpoint as e:
    moved = interrupted.discard(steps[-1])
    echo(f'warning: {e}; moved it to {moved}')
    return None
  if meta.get('epoch') != epoch + 1:  # superseded by a later epoch's checkpoint
    return None
  return tree['state'], Resume(epoch, int(meta['position']), tree['loss_sum'],
                               float(meta.get('elapsed', 0.0))), meta


def train(config, workdir: str, echo=print) -> dict:
  """Trains every seed of ``config`` in ``workdir``, resuming from its checkpoints.

  Returns the results dict (also written to ``workdir/results.json``). A finished run
  is left untouched. One process at a time may train in a workdir (a lock); SIGTERM
  or SIGINT stops the run at the next step boundary, saves where it was and raises
  :class:`~seedsweep.errors.Stopped`: rerunning the command resumes from there.
  """
  config_checks.validate(config)  # a bad config is refused before the workdir exists
  runtime.pin_for(config)  # before orbax's first JAX call starts the CPU client
  check_folder(workdir)
  os.makedirs(workdir, exist_ok=True)
  results = finished_results(config, workdir)  # read only: a finished run is left
  if results is not None:                      # as it is, its lock file included
    echo(f'{workdir}: finished run found ({results.get("epochs_completed")} epochs); '
         'nothing to do.')
    echo(outputs.format_table(results))
    if hosts.is_primary():
      tracking.record_finished(config, workdir, results, again=False)
    return results
  with workdir_lock.hold(workdir):
    return _train_locked(config, workdir, echo)


def finished_results(config, workdir: str) -> Optional[dict]:
  """The results of ``workdir`` if it holds a finished run of ``config``, else None
  (UserError if it holds another config's run, or checkpoints without a config)."""
  known = check_workdir(config, workdir)
  latest = latest_epoch(workdir)
  if latest and not known:
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


def _train_locked(config, workdir: str, echo) -> dict:
  """Builds the run once and trains its members: all at once, or in the groups of
  a split (run/groups.py) one after another; writes results.json."""
  known = check_workdir(config, workdir)
  timer = timing.Timer()
  with timer('build'):
    exp = experiment_lib.build(config)
  faults.reached('build')
  warning = runtime.gpu_determinism_warning(jax.default_backend(),
                                            os.environ.get('XLA_FLAGS', ''))
  if warning:
    echo(warning)
  primary = hosts.is_primary()  # under jax.distributed only process 0 writes files
  bounds = split_members(exp, workdir, echo, write=primary)
  if not known and primary:
    outputs.write_json(os.path.join(workdir, outputs.CONFIG),
                       config_checks.to_dict(config))
  if bounds is None:
    selected = _train_members(exp, workdir, workdir, timer, echo)
  else:
    selected = _train_groups(exp, workdir, bounds, timer, echo)
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
  echo(outputs.format_table(results))
  return results


def split_members(exp, workdir: str, echo, write: bool = True):
  """The groups the run's members train in (run/groups.py), None for one program;
  says so when the members are split."""
  est, n = exp.memory_estimate, len(exp.members)
  budget = memory.budget_mib(exp.config)
  # Checkpoints of all the members (an epoch's or a stop signal's): resumed as one.
  started = any(os.path.isdir(os.path.join(workdir, f))
                for f in (ckpt_lib.EPOCHS, ckpt_lib.INTERRUPTED))
  devices = exp.placement.mesh.size if exp.placement.mesh else 1
  bounds = groups_lib.split(workdir, n, est.members_within(budget), devices,
                            started_unsplit=started, write=write)
  if bounds is not None:
    sizes = sorted({b - a for a, b in bounds})
    echo(f'{n} members need ~{est.peak_mib(n):,.0f} MiB by the estimate, over the '
         f'memory budget of {budget:,.0f} MiB: training them in {len(bounds)} groups '
         f'of {" or ".join(map(str, sizes))} one after another '
         f'({os.path.join(workdir, groups_lib.GROUPS)}/)')
  elif est.peak_mib(n) > budget and started:
    echo(f'warning: {n} members need ~{est.peak_mib(n):,.0f} MiB by the estimate, '
         f'over the memory budget of {budget:,.0f} MiB; this run started as one '
         'program and resumes as one')
  return bounds


def _train_groups(exp, workdir: str, bounds, timer, echo) -> dict:
  """Trains each group of ``bounds`` to the end in ``workdir/groups/<k>``, one
  after another (finished groups are read back); the run's metrics.jsonl and
  TensorBoard aggregates come from theirs. Returns the members' numbers."""
  done = []
  for k, (start, stop) in enumerate(bounds):
    folder = groups_lib.folder(workdir, k)
    selected = groups_lib.read_selected(folder)
    if selected is None:
      echo(f'group {k + 1}/{len(bounds)}: members {start}..{stop - 1}')
      os.makedirs(folder, exist_ok=True)
      selected = _train_members(exp.group(start, stop), folder, workdir, timer, echo)
      groups_lib.write_selected(folder, selected)
      faults.reached('group')
    done.append(selected)
  rows = groups_lib.merge_rows(workdir)
  if hosts.is_primary():
    outputs.write_aggregates(workdir, exp.members.labels, rows)
  return groups_lib.merged_selected(done)


def _train_members(exp, folder: str, workdir: str, timer, echo) -> dict:
  """Trains ``exp``'s members to the end with their checkpoints and metrics rows in
  ``folder`` (the run's ``workdir``, or a group's), resuming from what is there.
  Returns their numbers (:meth:`Experiment.selected`) with ``elapsed`` (training
  and evaluation over every session, to the last checkpoint) and ``machines``."""
  from tqdm.auto import tqdm  # pylint: disable=g-import-not-at-top
  config = exp.config
  num_epochs = config.train.num_epochs
  ckpts = ckpt_lib.Checkpoints(folder)
  interrupted = ckpt_lib.existing(folder, ckpt_lib.INTERRUPTED, max_to_keep=1)
  tensorboard = bar = ahead = None
  try:
    latest = ckpts.latest_epoch() or 0
    check_saved_inputs(workdir, exp, ckpts, interrupted)
    primary = hosts.is_primary()
    with timer('build'):
      state = exp.init_state()
      record_program(exp, state)
    warning = provenance_lib.portability_warning(exp.provenance['determinism'])
    if warning:
      echo(warning)
    resume = Resume()
    if latest:
      state, meta, latest = restore_latest(ckpts, state, echo)
      check_same_inputs(workdir, meta, exp)
      resume = Resume(latest, elapsed=float(meta.get('elapsed', 0.0)))
    found = restore_interrupted(interrupted, state, len(exp.members), latest, echo)
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
      echo(f'{folder}: resuming after epoch {resume.epoch}/{num_epochs}{where}.')
      faults.reached('restored')
    latest = resume.epoch
    log = outputs.MetricsLog(folder)
    if primary:
      log.keep_epochs_up_to(latest)
      tensorboard = outputs.TensorBoard(workdir, exp.members.labels,
                                        aggregates=folder == workdir)

    steps = exp.schedule.plan.steps_per_epoch
    bar = tqdm(total=num_epochs * steps, initial=latest * steps + resume.position,
               unit='step', disable=not config.train.progress, dynamic_ncols=True)
    on_step = progress_without_compilation(bar)
    started = time.perf_counter()
    examples_per_epoch = exp.data.sizes()['train'] * len(exp.members)
    completed, saved_elapsed = latest, resume.elapsed
    evaluated = {}  # epoch -> its eval metrics, to build results without re-evaluating
    # A resumed run whose members had all stopped early trains no further epoch.
    first = num_epochs + 1 if exp.all_stopped(state, latest) else latest + 1
    ahead = exp.compile_ahead(state.params) if first <= num_epochs else None
    with stop_signals.catch() as stop:
      for epoch in range(first, num_epochs + 1):
        epoch_start = time.perf_counter()
        start, resume.position = resume.position, 0
        with timer('train'):
          state, loss_sum, position = exp.train_steps(
              state, epoch, start, resume.loss_sum, on_step=on_step,
              stop=lambda: bool(stop))
          # Steps are dispatched asynchronously: wait for them here, or their time
          # is counted in the evaluation that first reads their results.
          jax.block_until_ready((state, loss_sum))
        resume.loss_sum = None
        wall = resume.elapsed + time.perf_counter() - started
        if position < steps:  # a stop signal: save the epoch so far
          interrupted = interrupted or ckpt_lib.Checkpoints(
              folder, max_to_keep=1, folder=ckpt_lib.INTERRUPTED)
          interrupted.save((epoch - 1) * steps + position,
                           {'state': state, 'loss_sum': loss_sum},
                           {'epoch': epoch, 'position': position, 'elapsed': wall,
                            'data': exp.provenance['data'],
                            'machines': exp.provenance['machines']})
          raise _stopped(stop, workdir, f'at step {position}/{steps} of epoch {epoch}')
        with timer('eval'):
          if ahead is not None:
            ahead.join()  # the evaluation's programs, compiled while epoch 1 trained
            ahead = None
          evals = exp.evaluate_all(state.params)
        if epoch == first:
          bar.unpause()  # the first evaluation compiled its programs: not in the ETA
        evaluated[epoch] = evals
        state = exp.keep_best(state, evals, epoch)
        wall = resume.elapsed + time.perf_counter() - started
        rows = epoch_rows(exp, epoch, exp.mean_loss(loss_sum), evals, wall, state)
        if primary:
          log.append(rows)
          tensorboard.write(rows)
          faults.reached('tensorboard')
        check_finite(config, exp.members, rows, epoch)
        rate = examples_per_epoch / (time.perf_counter() - epoch_start)
        bar.set_postfix_str(f'{rate:,.0f} ex/s (all seeds)')
        bar.write(epoch_summary(epoch, num_epochs, rows))
        completed = epoch
        early = exp.all_stopped(state, epoch)
        if early:
          bar.write(f'early stop after epoch {epoch}: every member has gone '
                    f'{config.train.patience} epochs without a better dev score')
        if (epoch % config.train.checkpoint_every == 0 or epoch == num_epochs or early
            or stop):
          ckpts.save(epoch, state, {'epoch': epoch, 'elapsed': wall, **exp.provenance})
          saved_elapsed = wall
        if stop and epoch < num_epochs and not early:
          raise _stopped(stop, workdir, f'after epoch {epoch}')
        if early:
          break
    bar.close()
    ckpts.wait()
    if interrupted:  # superseded by the finished epochs
      interrupted.remove()
      interrupted = None
    with timer('eval'):
      selected = exp.selected(state, completed, evaluated)
    return {**selected, 'elapsed': saved_elapsed,
            'machines': exp.provenance['machines'],
            'determinism': exp.provenance['determinism']}
  finally:
    if ahead is not None:  # a run stopped in its first epoch: let the compiler finish
      ahead.join()
    if bar is not None:
      bar.close()
    if tensorboard is not None:
      tensorboard.close()
    if interrupted:
      interrupted.close()
    ckpts.close()


def progress_without_compilation(bar):
  """``on_step(length)`` advancing ``bar`` by a step, keeping out of its rate (and
  so of its ETA) the first step of each padded length in this process: the one
  that compiled its program (or read it from the compilation cache)."""
  seen = set()

  def on_step(length: int) -> None:
    if length not in seen:
      seen.add(length)
      bar.unpause()  # tqdm: the time since its last update is left out
    bar.update(1)

  return on_step


def _stopped(stop, workdir: str, where: str) -> Stopped:
  return Stopped(f'{stop.requested} received: stopped {where} and saved a checkpoint '
                 f'in {workdir}; rerun the same command to resume', stop.signum)


def evaluate(config, workdir: str, echo=print) -> dict:
  """Re-evaluates the newest checkpoint of ``workdir`` and rewrites results.json."""
  runtime.pin_for(config)
  if not check_workdir(config, workdir):
    raise UserError(f'{workdir} holds no {outputs.CONFIG}; expected the workdir of '
                    f'a run (python launch.py --mode=train ... first)')
  with workdir_lock.hold(workdir):
    return _evaluate_locked(config, workdir, echo)


def _evaluate_locked(config, workdir: str, echo) -> dict:
  exp = experiment_lib.build(config)
  selected = groups_lib.merged_selected([
      _evaluate_members(part, folder, workdir)
      for part, folder in groups_lib.parts(exp, workdir)])
  exp.provenance.update(machines=selected['machines'],
                        determinism=selected['determinism'])
  results = exp.results_of(selected)
  results['wall_time'] = selected['elapsed']
  outputs.write_json(os.path.join(workdir, outputs.RESULTS), results)
  echo(f'{workdir}: re-evaluated the checkpoint of epoch '
       f'{selected["epochs_completed"]}.')
  echo(outputs.format_table(results))
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
    state, meta = ckpt_lib.restore_train_state(ckpts, latest, exp.init_state())
  finally:
    ckpts.close()
  record_program(exp, state, meta)
  return {**exp.selected(state, latest), 'elapsed': meta.get('elapsed'),
          'machines': provenance_lib.trained_on(meta),
          'determinism': exp.provenance['determinism']}

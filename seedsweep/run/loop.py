"""One experiment end to end: build, train every seed at once, resume, evaluate.

``train(config, workdir)`` and ``evaluate(config, workdir)`` are what ``launch.py``
dispatches to; the run's pieces come from :func:`seedsweep.run.experiment.build`. An epoch is: every seed draws its batch order, the jitted seed-parallel
step runs over the batch slots, dev and test are evaluated (vmapped too), each seed
keeps its best-dev parameters inside jit, rows go to metrics.jsonl and TensorBoard, and
the whole stacked state is checkpointed.
"""
import os
import time
from typing import Optional

import numpy as np

from seedsweep.config import checks as config_checks
from seedsweep.engine import hosts
from seedsweep.errors import UserError
from seedsweep.run import checkpoints as ckpt_lib
from seedsweep.run import experiment as experiment_lib
from seedsweep.run import outputs
from seedsweep.run import runtime
from seedsweep.run import timing


def record_program(exp, state, meta: Optional[dict] = None) -> None:
  """Adds the compiled train step's fingerprint to the run's determinism record: the
  one a checkpoint's ``meta`` recorded when training made it, else this process's."""
  recorded = ((meta or {}).get('determinism') or {}).get('program')
  exp.provenance['determinism']['program'] = recorded or exp.program_fingerprint(state)


def check_workdir(config, workdir: str) -> bool:
  """Refuses a workdir holding another config; True if it holds this one."""
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


def epoch_rows(exp, epoch, train_loss, evals, wall_time, params):
  """metrics.jsonl's rows of ``epoch``, one per member; ``params`` (stacked) give
  each row's ``params_sha256``."""
  params_sha = exp.params_fingerprints(params)
  rows = []
  for i, seed in enumerate(exp.members.seeds):
    row = {'epoch': epoch, 'seed': int(seed)}
    if exp.members.folds:
      row['fold'] = int(exp.members.views[i])
    row['train_loss'] = float(train_loss[i])
    row.update({k: float(v[i]) for k, v in evals.items()})
    row['params_sha256'] = params_sha[i]
    row['wall_time'] = round(wall_time, 3)
    rows.append(row)
  return rows


def _epoch_summary(epoch, num_epochs, rows) -> str:
  parts = [f'epoch {epoch}/{num_epochs}']
  for key in ('train_loss', 'dev_accuracy', 'test_accuracy'):
    if key in rows[0]:
      v = np.array([r[key] for r in rows])
      parts.append(f'{key} {v.mean():.4g}±{v.std():.2g}')
  return '  '.join(parts)


def train(config, workdir: str, echo=print) -> dict:
  """Trains every seed of ``config`` in ``workdir``, resuming from its checkpoints.

  Returns the results dict (also written to ``workdir/results.json``). A finished run
  is left untouched.
  """
  from tqdm import tqdm  # pylint: disable=g-import-not-at-top
  config_checks.validate(config)  # a bad config is refused before the workdir exists
  runtime.pin_for(config)  # before orbax's first JAX call starts the CPU client
  os.makedirs(workdir, exist_ok=True)
  known = check_workdir(config, workdir)
  results_path = os.path.join(workdir, outputs.RESULTS)
  num_epochs = config.train.num_epochs
  ckpts = ckpt_lib.Checkpoints(workdir)
  tensorboard = bar = None
  try:
    latest = ckpts.latest_epoch() or 0
    if latest and not known:
      raise UserError(f'{ckpts.directory} holds checkpoints but {workdir} has no '
                      f'{outputs.CONFIG}; cannot tell which config wrote them. Use '
                      f'another --workdir, or delete this one.')
    if os.path.exists(results_path) and latest:
      results = outputs.read_json(results_path)
      if latest >= min(num_epochs, results.get('epochs_completed', num_epochs)):
        echo(f'{workdir}: finished run found ({latest} epochs); nothing to do.')
        echo(outputs.format_table(results))
        return results

    timer = timing.Timer()
    with timer('build'):
      exp = experiment_lib.build(config)
    primary = hosts.is_primary()  # under jax.distributed only process 0 writes files
    if not known and primary:
      outputs.write_json(os.path.join(workdir, outputs.CONFIG),
                         config_checks.to_dict(config))
    with timer('build'):
      state = exp.init_state()
      record_program(exp, state)
    elapsed = 0.0
    if latest:
      state, meta = ckpts.restore(latest, state)
      elapsed = float(meta.get('elapsed', 0.0))
      echo(f'{workdir}: resuming after epoch {latest}/{num_epochs}.')
    log = outputs.MetricsLog(workdir)
    if primary:
      log.keep_epochs_up_to(latest)
      tensorboard = outputs.TensorBoard(workdir, exp.members.labels)

    steps = exp.schedule.plan.steps_per_epoch
    bar = tqdm(total=num_epochs * steps, initial=latest * steps, unit='step',
               disable=not config.train.progress, dynamic_ncols=True)
    started = time.perf_counter()
    examples_per_epoch = exp.data.sizes()['train'] * len(exp.members)
    completed = latest
    evaluated = {}  # epoch -> its eval metrics, to build results without re-evaluating
    # A resumed run whose members had all stopped early trains no further epoch.
    first = num_epochs + 1 if exp.all_stopped(state, latest) else latest + 1
    for epoch in range(first, num_epochs + 1):
      epoch_start = time.perf_counter()
      with timer('train'):
        state, train_loss = exp.train_epoch(state, epoch, on_step=lambda: bar.update(1))
      with timer('eval'):
        evals = exp.evaluate_all(state.params)
      evaluated[epoch] = evals
      state = exp.keep_best(state, evals, epoch)
      wall = elapsed + time.perf_counter() - started
      rows = epoch_rows(exp, epoch, train_loss, evals, wall, state.params)
      if primary:
        log.append(rows)
        tensorboard.write(rows)
      rate = examples_per_epoch / (time.perf_counter() - epoch_start)
      bar.set_postfix_str(f'{rate:,.0f} ex/s (all seeds)')
      bar.write(_epoch_summary(epoch, num_epochs, rows))
      completed = epoch
      stop = exp.all_stopped(state, epoch)
      if stop:
        bar.write(f'early stop after epoch {epoch}: every member has gone '
                  f'{config.train.patience} epochs without a better dev score')
      if epoch % config.train.checkpoint_every == 0 or epoch == num_epochs or stop:
        ckpts.save(epoch, state, {'epoch': epoch, 'elapsed': wall,
                                  **exp.provenance})
      if stop:
        break
    bar.close()
    with timer('eval'):
      results = exp.results(state, completed, evaluated)
    results['wall_time'] = elapsed + time.perf_counter() - started
    # Seconds of this process only (a resumed run counts from its restart).
    results['timing'] = timer.as_dict()
    if primary:
      outputs.write_json(results_path, results)
    echo(outputs.format_table(results))
    return results
  finally:
    if bar is not None:
      bar.close()
    if tensorboard is not None:
      tensorboard.close()
    ckpts.close()


def evaluate(config, workdir: str, echo=print) -> dict:
  """Re-evaluates the newest checkpoint of ``workdir`` and rewrites results.json."""
  runtime.pin_for(config)
  if not check_workdir(config, workdir):
    raise UserError(f'{workdir} holds no {outputs.CONFIG}; expected the workdir of '
                    f'a run (python launch.py --mode=train ... first)')
  exp = experiment_lib.build(config)
  ckpts = ckpt_lib.Checkpoints(workdir)
  try:
    latest = ckpts.latest_epoch()
    if not latest:
      raise UserError(f'{ckpts.directory} holds no checkpoint to evaluate')
    state, meta = ckpts.restore(latest, exp.init_state())
    record_program(exp, state, meta)
    results = exp.results(state, latest)
    results['wall_time'] = meta.get('elapsed')
    outputs.write_json(os.path.join(workdir, outputs.RESULTS), results)
    echo(f'{workdir}: re-evaluated the checkpoint of epoch {latest}.')
    echo(outputs.format_table(results))
    return results
  finally:
    ckpts.close()

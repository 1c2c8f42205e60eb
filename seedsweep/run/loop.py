"""One experiment end to end: build, train every seed at once, resume, evaluate.

``train(config, workdir)`` and ``evaluate(config, workdir)`` are what ``launch.py``
dispatches to. An epoch is: every seed draws its batch order, the jitted seed-parallel
step runs over the batch slots, dev and test are evaluated (vmapped too), each seed
keeps its best-dev parameters inside jit, rows go to metrics.jsonl and TensorBoard, and
the whole stacked state is checkpointed.
"""
import functools
import os
import time
from typing import Dict, Optional

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from seedsweep import data as data_lib
from seedsweep.data import embeddings as embeddings_lib
from seedsweep import models
from seedsweep.data import pipeline
from seedsweep.run import checkpoints as ckpt_lib
from seedsweep.config import checks as config_checks
from seedsweep.engine import conlleval
from seedsweep.engine import embedding_rows
from seedsweep.engine import hosts
from seedsweep.engine import objectives
from seedsweep.engine import optimizers
from seedsweep.run import outputs
from seedsweep.run import provenance as provenance_lib
from seedsweep.run import runtime
from seedsweep.engine import state as state_lib
from seedsweep.engine import steps as steps_lib
from seedsweep.run import timing
from seedsweep.errors import UserError

EVAL_SPLITS = ('dev', 'test')


def resolve_seed_parallel(mode: str, n_devices: int) -> str:
  """``auto``: ``map`` on a single CPU (measured faster there), else ``vmap``."""
  if mode != 'auto':
    return mode
  return 'map' if jax.default_backend() == 'cpu' and n_devices == 1 else 'vmap'


def seed_mesh(n_seeds: int) -> Optional[Mesh]:
  """A 1-D mesh over the largest number of local devices that divides the seeds."""
  n = max(d for d in range(1, jax.device_count() + 1) if n_seeds % d == 0)
  return Mesh(np.array(jax.devices()[:n]), ('seeds',)) if n > 1 else None


class Experiment:
  """Everything static about a run: data on device, model, optimiser, compiled steps.

  The stacked axis holds *members*: one per seed, or, for a cross-validated dataset,
  one per (fold, seed) pair, fold-major (``member_views`` holds each member's fold,
  ``member_seeds`` its seed).
  """

  def __init__(self, config):
    config_checks.validate(config)
    runtime.pin_for(config)
    self.config = config
    self.seeds = np.asarray(config.seeds, np.int32)
    self.data = data_lib.load_dataset(config.data)
    self.folds = self._selected_folds()
    self.member_seeds = np.tile(self.seeds, max(len(self.folds), 1))
    self.member_views = np.repeat(np.asarray(self.folds or [0], np.int32),
                                  len(self.seeds))
    self.eval_splits = tuple(s for s in EVAL_SPLITS if s in self.data.split_names())
    if config.train.selection == 'best_dev' and 'dev' not in self.eval_splits:
      raise UserError(f'config.train.selection=best_dev but dataset '
                      f'{self.data.name!r} has no dev split; set '
                      f'config.data.dev_holdout (e.g. 0.1) or selection="last"')
    self.model = models.build_model(config.model, vocab_size=self.data.vocab_size,
                                    num_classes=self.data.num_classes,
                                    num_tags=len(self.data.tag_names))
    abstract = jax.eval_shape(lambda: state_lib.init_params(self.model, 0))
    self.tx = optimizers.make_optimizer(config.optimizer)
    vectors = config.data.get('vectors')
    if self.data.embedding_tables is not None:
      embeddings_lib.check_dim(config.model, self.data.embedding_tables[0])
      if vectors.get('static', False):
        self.tx = optimizers.freeze(self.tx, optimizers.embedding_mask(abstract))

    views = self.data.views
    train_lengths = self.data.raw_lengths[views[0].rows['train']]
    self.boundaries = pipeline.bucket_boundaries(
        train_lengths, config.data.num_buckets, config.data.bucket_multiple,
        int(self.data.raw_lengths.max(initial=1)))

    n_members = len(self.member_seeds)
    self.mesh = seed_mesh(n_members)
    n_devices = 1 if self.mesh is None else self.mesh.size
    self.mode = resolve_seed_parallel(config.train.seed_parallel, n_devices)
    if self.mesh is not None:
      self.mode = 'vmap'  # lax.map would serialise the sharded seed axis
      self.seed_sharding = NamedSharding(self.mesh, PartitionSpec('seeds'))
      replicated = NamedSharding(self.mesh, PartitionSpec())
    else:
      self.seed_sharding = replicated = None
    self.arrays = jax.device_put(pipeline.device_arrays(views, self.data.labels,
                                                        self.data.tags),
                                 replicated)
    self.seeds_device = jax.device_put(self.member_seeds, self.seed_sharding)
    self.views_device = jax.device_put(self.member_views, self.seed_sharding)
    self.plan = pipeline.TrainPlan.build(
        [v.rows['train'] for v in views], [v.split_lengths('train') for v in views],
        self.boundaries, config.train.batch_size)
    self.eval_plan = pipeline.EvalPlan.build(
        self.eval_splits, [[v.rows[s] for v in views] for s in self.eval_splits],
        [[v.split_lengths(s) for v in views] for s in self.eval_splits],
        self.boundaries, config.train.eval_batch_size)

    self.patience = config.train.get('patience', 0)
    l2_mask = optimizers.l2_mask(abstract, config.l2.params)
    static = self.data.embedding_tables is not None and vectors.get('static', False)
    self.steps = steps_lib.Steps(
        self.model, self.tx, l2_mask, config.l2.coef, self.mode, self.plan,
        self.patience,
        conlleval.tag_tables(self.data.tag_names) if self.data.tag_names else None,
        embedding_rows.check(config.optimizer, l2_mask, static))

  def _selected_folds(self):
    """Folds this run trains (all of them by default); [] without CV."""
    if not self.data.cross_validated:
      return []
    k = len(self.data.views)
    folds = tuple(self.config.data.get('folds') or range(k))
    bad = [f for f in folds if isinstance(f, bool) or not isinstance(f, int)
           or not 0 <= f < k]
    if bad or len(set(folds)) != len(folds):
      raise UserError(f'config.data.folds={folds!r}; expected distinct fold numbers in '
                      f'0..{k - 1} ({k}-fold cross-validation), or () for all')
    return list(folds)

  @property
  def member_labels(self):
    """A name per member: ``seed_<k>``, or ``fold<f>_seed_<k>``."""
    if not self.folds:
      return [f'seed_{int(s)}' for s in self.member_seeds]
    return [f'fold{int(f)}_seed_{int(s)}'
            for f, s in zip(self.member_views, self.member_seeds)]

  def init_state(self) -> state_lib.TrainState:
    tables = self.data.embedding_tables
    state = state_lib.create_train_state(self.model, self.tx, self.member_seeds,
                                         self.member_views, tables)
    return jax.device_put(state, self.seed_sharding) if self.mesh else state

  def train_epoch(self, state, epoch: int, on_step=None):
    """One epoch for every member: ``(state, mean train loss [members])``."""
    orders = self.steps.epoch_orders(self.seeds_device, self.views_device, epoch)
    total = jnp.zeros((len(self.member_seeds),), jnp.float32)
    for position, (slot, length) in enumerate(self.plan.schedule(epoch)):
      state, loss = self.steps.train_step(state, self.seeds_device, self.views_device,
                                          self.arrays, orders, slot, epoch, position,
                                          length=length)
      total = total + loss
      if on_step is not None:
        on_step()
    return state, hosts.fetch(total, np.float64) / self.plan.steps_per_epoch

  def evaluate_all(self, params) -> Dict[str, np.ndarray]:
    """``{'dev_accuracy', 'dev_loss', 'test_accuracy', ...}`` each ``[members]``:
    dev and test in the same chunks (data.pipeline.EvalPlan)."""
    total = None
    for length, (rows, split) in self.eval_plan.chunks.items():
      for c in range(rows.shape[1]):
        sums = self.steps.eval_batch(params, self.arrays, rows[:, c], split[:, c],
                                     self.views_device, length=length,
                                     n_splits=len(self.eval_splits))
        total = sums if total is None else jax.tree.map(jnp.add, total, sums)
    total = {k: hosts.fetch(v, np.float64) for k, v in total.items()}
    out = {}
    for i, split_name in enumerate(self.eval_splits):
      for name, value in objectives.finalize({k: v[..., i]
                                              for k, v in total.items()}).items():
        out[f'{split_name}_{name}'] = value
    return out

  def evaluate_split(self, params, split: str) -> Dict[str, np.ndarray]:
    """``{'accuracy', 'loss', ...}``, each ``[members]``, of one split (every split is
    evaluated: they share chunks)."""
    prefix = split + '_'
    return {k[len(prefix):]: v for k, v in self.evaluate_all(params).items()
            if k.startswith(prefix)}

  def keep_best(self, state, evals, epoch: int):
    """Each member keeps its parameters if ``evals``' dev accuracy is its best yet
    (``state`` unchanged without a dev split)."""
    if 'dev_accuracy' not in evals:
      return state
    return self.steps.select_best(
        state, jnp.asarray(evals['dev_accuracy'], jnp.float32), epoch)

  def all_stopped(self, state, epoch: int) -> bool:
    """True when early stopping has ended every member's selection after ``epoch``."""
    return bool(self.patience) and bool(np.all(hosts.fetch(
        steps_lib.stopped(state.best_epoch, epoch, self.patience))))

  def selected_params(self, state):
    if self.config.train.selection == 'best_dev':
      return state.best_params
    return state.params

  def selected_epochs(self, state, epochs_completed: int) -> np.ndarray:
    """``[members]``: the epoch whose parameters each member's results use."""
    if self.config.train.selection == 'best_dev':
      return hosts.fetch(state.best_epoch)
    return np.full(len(self.member_seeds), epochs_completed)

  def selected_metrics(self, state, epochs_completed: int, known=None):
    """Eval metrics ``{name: [members]}`` of the selected parameters.

    ``known`` maps epochs evaluated in this process to their metrics; when it holds
    every member's selected epoch they are read from it (the same program on the
    same parameters: the same numbers), else the selected parameters are evaluated.
    """
    epochs = self.selected_epochs(state, epochs_completed)
    if known and all(int(e) in known for e in epochs):
      names = known[int(epochs[0])].keys()
      return {k: np.array([known[int(e)][k][i] for i, e in enumerate(epochs)])
              for k in names}
    return self.evaluate_all(self.selected_params(state))

  def results(self, state, epochs_completed: int, known=None) -> dict:
    metrics = self.selected_metrics(state, epochs_completed, known)
    if self.config.train.selection == 'best_dev':
      metrics['best_epoch'] = hosts.fetch(state.best_epoch)
    return outputs.build_results(
        self.member_seeds, metrics, folds=self.member_views if self.folds else None,
        selection=self.config.train.selection, epochs_completed=epochs_completed,
        paper=self.config.paper.to_dict(), provenance=self.provenance)

  @functools.cached_property
  def provenance(self) -> dict:
    """What produced this run's numbers (computed once: it asks git)."""
    return {'config': config_checks.to_dict(self.config),
            'seeds': [int(s) for s in self.seeds],
            'folds': [int(f) for f in self.folds],
            'data': {'name': self.data.name, 'checksums': self.data.checksums,
                     'raw_files': self.data.raw_checksums,
                     'protocol': self.data.protocol,
                     'vocab_size': self.data.vocab_size,
                     'sizes': self.data.sizes()},
            'versions': provenance_lib.library_versions(),
            'git_commit': provenance_lib.git_commit(),
            'devices': provenance_lib.devices(),
            'determinism': provenance_lib.determinism_record(),
            'seed_parallel': self.mode}

  def params_fingerprints(self, params) -> list:
    """A hash of each member's parameters ``[members]`` (its bits, in tree order):
    what ``--mode=verify`` compares."""
    leaves = [hosts.fetch(leaf) for leaf in jax.tree.leaves(params)]
    return [provenance_lib.fingerprint_arrays([leaf[m] for leaf in leaves])
            for m in range(len(self.member_seeds))]

  def program_fingerprint(self, state) -> str:
    """A hash of the compiled train step of the first bucket an epoch visits (XLA's
    own choices included); from the compilation cache when it was compiled before."""
    orders = self.steps.epoch_orders(self.seeds_device, self.views_device, 1)
    slot, length = self.plan.schedule(1)[0]
    compiled = self.steps.train_step.lower(
        state, self.seeds_device, self.views_device, self.arrays, orders, slot, 1, 0,
        length=length).compile()
    return provenance_lib.program_fingerprint(compiled.as_text())


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
  for i, seed in enumerate(exp.member_seeds):
    row = {'epoch': epoch, 'seed': int(seed)}
    if exp.folds:
      row['fold'] = int(exp.member_views[i])
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
      exp = Experiment(config)
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
      tensorboard = outputs.TensorBoard(workdir, exp.member_labels)

    steps = exp.plan.steps_per_epoch
    bar = tqdm(total=num_epochs * steps, initial=latest * steps, unit='step',
               disable=not config.train.progress, dynamic_ncols=True)
    started = time.perf_counter()
    examples_per_epoch = exp.data.sizes()['train'] * len(exp.member_seeds)
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
                  f'{exp.patience} epochs without a better dev score')
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
  exp = Experiment(config)
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

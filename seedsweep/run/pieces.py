"""A run's pieces, each built by a function of the config, as frozen values
(:class:`Pieces`); what a run does with them is in run/epoch.py.

:func:`build` puts them together in the order the data flows::

    checked   = run.prepare.check_config(config)   validated, runtime pinned (or given)
    data      = seedsweep.data.load_dataset(config.data)     files -> encoded arrays
    members   = select_members(config, data)    the stacked axis: seeds (x folds)
    placement = place(config, len(members))     devices, seed mapping, shardings
    schedule  = make_schedule(config, data)     length buckets, train and eval plans
    model     = make_model(config, data)        built once
    in_python = own_model.check(checked, data, model)   a user's model: its contract
    learner   = make_learner(config, data)      model, optimiser, L2 (engine.steps)
    arrays    = inputs.pipeline.device_arrays(data)   what every step gathers from
    estimate  = memory.estimate(learner, schedule, arrays, placement.mode)
    steps     = engine.steps.Steps(learner, schedule.train_plan, placement.mode, ...)
    device    = put_on_device(arrays, members, placement)    engine.steps.DeviceData
    chunks    = eval_chunks(schedule.eval_plan, placement)   on the device, once
    record    = provenance_of(checked, data, members, placement)
"""
import dataclasses
import functools
from typing import Dict, Optional, Tuple

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from seedsweep.config import stacking
from seedsweep import data as data_lib
from seedsweep.engine import conlleval
from seedsweep.engine import embedding_rows
from seedsweep.engine import hosts
from seedsweep.engine import optimizers
from seedsweep.engine import rngs
from seedsweep.engine import state as state_lib
from seedsweep.engine import steps as steps_lib
from seedsweep.errors import UserError
from seedsweep import models
from seedsweep.inputs import encoded
from seedsweep.inputs import pipeline
from seedsweep.run import checkpoints as ckpt_lib
from seedsweep.run import memory
from seedsweep.run import own_model
from seedsweep.run import outputs
from seedsweep.run import prepare as prepare_lib
from seedsweep.run import provenance as provenance_lib

EVAL_SPLITS = ('dev', 'test')


# ----------------------------------------------------------------------- the pieces


@dataclasses.dataclass(frozen=True)
class Members:
  """The stacked axis, point-major: ``[points x folds x seeds]``, one member per
  seed (or (init, data, dropout) seed combination of a factorial design), per fold
  of a cross-validated dataset, per hyperparameter point of ``config.stack``."""
  seed_triples: np.ndarray   # [members, 3] int32: init, data-order, dropout seed
  seeds: np.ndarray          # [members] int32: its seed (a factorial design's init seed)
  view_ids: np.ndarray       # [members] int32: each member's data.views index (its fold)
  folds: Tuple[int, ...]     # the folds run; () without cross-validation
  point_ids: np.ndarray      # [members] int32: each member's point of config.stack
  point_labels: Tuple[str, ...]  # one per point ('' for a run without a stack)
  # A name per member (outputs.member_label): ``seed_<k>``, ``fold<f>_seed_<k>``,
  # ``init<i>_data<d>_dropout<r>``, under ``<point>/`` for a stacked run.
  labels: Tuple[str, ...]
  factorial: bool = False    # config.seed_design: members differ by stream

  def __len__(self) -> int:
    return len(self.seed_triples)


def select_members(config, data: encoded.EncodedDataset, points=None) -> Members:
  """Every point of ``config.stack`` times the folds ``config.data.folds`` selects
  (all by default; none without cross-validation) times the seeds (``config.seeds``,
  or ``config.seed_design``); ``points``: ``stacking.points(config)`` when computed
  already."""
  combos = stacking.seed_triples(config)
  points = stacking.points(config) if points is None else points
  point_labels = tuple(stacking.point_label(p) for p in points)
  factorial = stacking.factorial(config)
  folds = ()
  if data.cross_validated:
    k = len(data.views)
    folds = tuple(config.data.folds or range(k))
    bad = [f for f in folds if isinstance(f, bool) or not isinstance(f, int)
           or not 0 <= f < k]
    if bad or len(set(folds)) != len(folds):
      raise UserError(f'config.data.folds={folds!r}; expected distinct fold numbers in '
                      f'0..{k - 1} ({k}-fold cross-validation), or () for all')
    if factorial:
      raise UserError(f'config.seed_design with cross-validated dataset {data.name!r}: '
                      'a factorial seed design needs a dataset with its own test split '
                      '(a CV score averages folds per seed, which the design has not)')
  grid = [(p, f, c) for p in range(len(points)) for f in (folds or (0,))
          for c in range(len(combos))]
  triples = combos[[c for _, _, c in grid]]
  labels = tuple(outputs.member_label(t[0], f if folds else None,
                                      seed_triple=t if factorial else None,
                                      point=point_labels[p])
                 for t, (p, f, _) in zip(triples, grid))
  return Members(seed_triples=triples, seeds=triples[:, 0],
                 view_ids=np.asarray([f for _, f, _ in grid], np.int32), folds=folds,
                 point_ids=np.asarray([p for p, _, _ in grid], np.int32),
                 point_labels=point_labels, labels=labels, factorial=factorial)


def member_hparams(checked, model, members: Members,
                   in_python: Tuple[str, ...] = ()) -> Dict[str, np.ndarray]:
  """``{config key: [members] float32}``: the hyperparameters each member's step
  reads as traced scalars (steps.Learner.for_member); ``checked``: the run's config
  as seedsweep.run.prepare.check_config checked it (each point's config);
  ``in_python``: model fields the model tests in Python (own_model.check), never
  traced.

  The learning rate always, and the joint model's loss weights whenever the model
  has them, so a run alone and its point among others compile the same per-member
  step (bitwise the same numbers under ``map``). Clip thresholds, the L2
  coefficient and dropout rates only when some point sets them above 0, so a run
  without them pays nothing; a point at 0 among points above 0 then computes them
  with a neutral value (an infinite clip, a zero L2 term, a mask that keeps every
  element): the same value as leaving them out, up to float rounding, since the
  program around it is compiled differently (tests/test_sweep.py).
  """
  fields = {f.name: f for f in dataclasses.fields(model)}
  for i, point in enumerate(checked.points):
    for key, v in point.items():
      if key.startswith('model.'):
        try:  # the checks build_model makes of config.model (rates in [0, 1), ...)
          models.check_field(fields[key.split('.', 1)[1]], v)
        except UserError as e:
          raise UserError(f'config.stack.points[{i}]: {e}') from e
  out = {}
  for key in stacking.STACKABLE:
    section, field = key.split('.', 1)
    if section != 'model':
      per_point = [c[section][field] for c in checked.point_configs]
    elif field in fields and field not in in_python:  # a model field: its default
      per_point = [c.model[field] if field in c.model else getattr(model, field)
                   for c in checked.point_configs]
    else:
      continue
    if key in stacking.ALWAYS_TRACED or any(per_point):
      per_point = [float(v) for v in per_point]
      if key in stacking.OFF_AT_ZERO:
        per_point = [v or np.inf for v in per_point]
      out[key] = np.asarray(per_point, np.float32)[members.point_ids]
  return out


@dataclasses.dataclass(frozen=True)
class Placement:
  """Where the members run: a mesh over devices (None: one device), how the seed axis
  is mapped (``vmap`` or ``map``), the shardings of stacked and shared arrays, and
  ``size``, the members on device: the run's, padded to a multiple of the mesh's
  devices, or of a lane group, with copies of its last member that train and are
  dropped. ``lanes``: under ``seed_parallel='lanes'`` the members each device's
  program steps side by side (0: not lanes)."""
  mesh: Optional[Mesh]
  mode: str
  stacked: Optional[NamedSharding]   # [members, ...] arrays, split over the mesh
  shared: Optional[NamedSharding]    # the data arrays, on every device
  size: int = 0
  devices: int = 1                   # the devices the members run on
  lanes: int = 0

  @property
  def group(self) -> int:
    """The members one program steps: a lane group's (lanes on each device), else
    every member on device."""
    return self.lanes * self.devices if self.lanes else self.size

  @property
  def form(self) -> str:
    """How the members step, as a run records it: 'lanes', 'vmap' or 'map'."""
    return 'lanes' if self.lanes else self.mode


def seed_parallel_form(config, backend: str, devices: int) -> str:
  """``config.train.seed_parallel`` on ``backend`` with ``devices`` devices: 'auto'
  is lanes on a GPU or TPU, map on one CPU device and vmap over several."""
  mode = config.train.seed_parallel
  if mode != 'auto':
    return mode
  if backend != 'cpu':
    return 'lanes'
  return 'map' if devices <= 1 else 'vmap'


def place(config, n_members: int) -> Placement:
  """Where ``n_members`` members run.

  * lanes: ``config.train.lanes`` members a device, vmapped, on as many devices as
    ``n_members`` fills (at most every device), padded to a whole lane group; more
    members than one group train as groups one after another (run/groups.py), each
    padded to the same shapes, so every program of the run is the same program;
  * else sharded over a 1-D mesh of every device (of every host under
    jax.distributed), or one per member when there are fewer, padded to a multiple
    of its size (always ``vmap``: lax.map would serialise the sharded axis);
  * or on one device, by ``map`` or ``vmap``.

  Why lanes: XLA:GPU picks a batched kernel, and with it a sum's order, by the batch
  size; on an H200 a lone seed and the same seed among 10 differed under plain
  ``vmap`` and were equal under ``map``, which made ten seeds cost ten (docs/gpu.md,
  "Measured"). A fixed width gives every member count the same kernels.
  """
  count = jax.device_count()
  form = seed_parallel_form(config, jax.default_backend(), min(count, n_members))
  if form == 'lanes':
    lanes = config.train.lanes
    n = max(min(count, -(-n_members // lanes)), 1)
    group = n * lanes
    size = -(-max(n_members, 1) // group) * group
    if n == 1:
      return Placement(None, 'vmap', None, None, size, 1, lanes)
    mesh = Mesh(np.array(jax.devices()[:n]), ('seeds',))
    return Placement(mesh, 'vmap', NamedSharding(mesh, PartitionSpec('seeds')),
                     NamedSharding(mesh, PartitionSpec()), size, n, lanes)
  n = min(count, n_members)
  if n <= 1:
    return Placement(None, form, None, None, n_members)
  mesh = Mesh(np.array(jax.devices()[:n]), ('seeds',))
  return Placement(mesh, 'vmap', NamedSharding(mesh, PartitionSpec('seeds')),
                   NamedSharding(mesh, PartitionSpec()), -(-n_members // n) * n, n)


def pad_members(x, size: int):
  """``x`` (a tree of ``[members, ...]`` host arrays) with its last member repeated
  up to ``size`` members (Placement.size); under vmap a member's numbers do not
  depend on the members beside it, so the copies change no real member's bits."""
  leaves, tree = jax.tree.flatten(x)
  leaves = [np.asarray(a) for a in leaves]
  return jax.tree.unflatten(tree, [
      np.concatenate([a, np.repeat(a[-1:], size - len(a), 0)]) if size > len(a) else a
      for a in leaves])


def put_on_device(arrays: Dict[str, np.ndarray], members: Members,
                  placement: Placement, hparams: Dict[str, np.ndarray]
                  ) -> steps_lib.DeviceData:
  """The run's device data: ``arrays`` (inputs.pipeline.device_arrays) on every device; each member's
  seed triple ``[members, 3]``, view id ``[members]`` and ``hparams`` (``{key:
  [members]}``) split over the mesh."""
  streams, views, hparams = pad_members(
      (members.seed_triples, members.view_ids, hparams), placement.size)
  return steps_lib.DeviceData(
      arrays=jax.device_put(arrays, placement.shared),
      streams=jax.device_put(streams, placement.stacked),
      views=jax.device_put(views, placement.stacked),
      hparams=jax.device_put(hparams, placement.stacked))


@dataclasses.dataclass(frozen=True)
class Schedule:
  """How the data is cut: length buckets, the training batches, the eval chunks."""
  eval_splits: Tuple[str, ...]       # of EVAL_SPLITS, those the dataset has
  train_plan: pipeline.TrainPlan     # its boundaries: each bucket's padded length
  eval_plan: pipeline.EvalPlan


def make_schedule(config, data: encoded.EncodedDataset) -> Schedule:
  """The run's :class:`Schedule`: length buckets from the first view's training
  lengths, the training batches and the eval chunks of the dev and test splits the
  dataset has, padded to ``config.data.eval_padding``'s lengths
  (pipeline.eval_boundaries), or to the training buckets' at 0. UserError when it
  has nothing to evaluate on, or no dev split under ``best_dev``."""
  eval_splits = tuple(s for s in EVAL_SPLITS if s in data.split_names())
  if not eval_splits:
    raise UserError(f'dataset {data.name!r} has a train split only: nothing to evaluate '
                    'a run on; give it a test (or dev) split (config.data.files.test / '
                    '.dev for your own files) or hold out part of train '
                    '(config.data.dev_holdout=0.1)')
  if config.train.selection == 'best_dev' and 'dev' not in eval_splits:
    raise UserError(f'config.train.selection=best_dev but dataset {data.name!r} has no '
                    f'dev split; set config.data.dev_holdout (e.g. 0.1) or '
                    f'selection="last"')
  views = data.views
  boundaries = pipeline.bucket_boundaries(
      data.raw_lengths[views[0].rows['train']], config.data.num_buckets,
      config.data.bucket_multiple, int(data.raw_lengths.max(initial=1)))
  train_plan = pipeline.TrainPlan.build(
      [v.rows['train'] for v in views], [v.split_lengths('train') for v in views],
      boundaries, config.train.batch_size)
  lengths = [[v.split_lengths(s) for v in views] for s in eval_splits]  # [split][view]
  eval_boundaries = boundaries
  if config.data.eval_padding:
    pooled = np.concatenate([np.asarray(x) for split in lengths for x in split])
    eval_boundaries = pipeline.eval_boundaries(pooled, 1, config.data.eval_padding,
                                               config.train.eval_batch_size)
  eval_plan = pipeline.EvalPlan.build(
      eval_splits, [[v.rows[s] for v in views] for s in eval_splits], lengths,
      eval_boundaries, config.train.eval_batch_size)
  return Schedule(eval_splits, train_plan, eval_plan)


def check_embed_dim(model_config, table: np.ndarray) -> None:
  """Pretrained vectors fix the embedding width: ``config.model.embed_dim`` must match."""
  dim = model_config.get('embed_dim')  # a model field: not every model has one
  if dim is not None and dim != table.shape[-1]:
    raise UserError(f'config.model.embed_dim={dim} but the vectors of '
                    f'config.data.vectors.path have {table.shape[-1]} dimensions; set '
                    f'--config.model.embed_dim={table.shape[-1]}')


def make_model(config, data: encoded.EncodedDataset):
  """``config.model`` for ``data``'s vocabulary, classes and tags."""
  return models.build_model(config.model, vocab_size=data.vocab_size,
                            num_classes=data.num_classes, num_tags=len(data.tag_names))


def member_tx(optimizer_config, clocked: bool, frozen_mask, member_hparams=None):
  """A member's optimiser (``member_hparams``: its traced values) where an option
  wraps the plain one: ``clocked`` ('rows' updates with a decaying optimiser: rows
  that sat out updates catch up when used), frozen where ``frozen_mask`` (static
  pretrained vectors)."""
  tx = optimizers.make_optimizer(optimizer_config, member_hparams)
  if clocked:
    tx = embedding_rows.clocked(tx)
  return tx if frozen_mask is None else optimizers.freeze(tx, frozen_mask)


def make_learner(config, data: encoded.EncodedDataset,
                 hparams: Optional[Dict[str, np.ndarray]] = None,
                 model=None) -> steps_lib.Learner:
  """The model for ``data`` (:func:`make_model`, unless given), its optimiser and L2
  terms; ``hparams`` ({key: [members]}, :func:`member_hparams`) are the values the
  steps will trace, the first member's fixing the optimiser state's structure."""
  model = make_model(config, data) if model is None else model
  abstract = jax.eval_shape(lambda: state_lib.init_params(model, 0))
  static = data.embedding_tables is not None and config.data.vectors.static
  if data.embedding_tables is not None:
    check_embed_dim(config.model, data.embedding_tables[0])
  l2_mask = optimizers.l2_mask(abstract, config.l2.params)
  update = embedding_rows.check(config.optimizer, l2_mask, static)
  # 'rows' with a decaying optimiser: the factor rows that sat out updates catch up by.
  decay = embedding_rows.decay_factor(config.optimizer) if update == 'rows' else None
  # Each member's optimiser from its hyperparameters (steps.Learner.for_member).
  make_tx = functools.partial(optimizers.make_optimizer, config.optimizer)
  if decay is not None or static:
    make_tx = functools.partial(member_tx, config.optimizer, decay is not None,
                                optimizers.embedding_mask(abstract) if static else None)
  first = {k: float(v[0]) for k, v in (hparams or {}).items()}
  return steps_lib.Learner(model, make_tx(first), l2_mask, config.l2.coef, update,
                           decay, make_tx=make_tx)


def build(config, data: Optional[encoded.EncodedDataset] = None) -> 'Pieces':
  """Every piece of the run ``config`` describes, data loaded and on device.

  ``config``: a ConfigDict, checked here (seedsweep.run.prepare.check_config:
  validated, the runtime pinned), or the ``Checked`` of a prepared run, trusted.
  ``data``: the dataset a run saved (run/saved_data.py); None: loaded from its
  files."""
  checked = (config if isinstance(config, prepare_lib.Checked)
             else prepare_lib.check_config(config))
  config = checked.config
  data = data_lib.load_dataset(config.data) if data is None else data
  members = select_members(config, data, checked.points)
  placement = place(config, len(members))
  schedule = make_schedule(config, data)
  model = make_model(config, data)
  # A user's own model ('file.py:Class') is held to the model contract here, a
  # registered one by its tests.
  in_python = own_model.check(checked, data, model)
  hparams = member_hparams(checked, model, members, in_python)
  learner = make_learner(config, data, hparams, model)
  arrays = pipeline.device_arrays(data.views, data.labels, data.tags)
  estimate = memory.estimate(learner, schedule.train_plan, schedule.eval_plan, arrays,
                             placement.mode)
  memory.check_budget(estimate, memory.budget_mib(config))
  tag_tables = conlleval.tag_tables(data.tag_names) if data.tag_names else None
  # Portable numerics on a CPU: the programs in engine.portable's form (a GPU's own
  # kernels decide its bits).
  portable = config.runtime.numerics == 'portable' and jax.default_backend() == 'cpu'
  steps = steps_lib.Steps(learner, schedule.train_plan, placement.mode,
                          config.train.patience, tag_tables,
                          single_member=placement.size == 1, portable=portable)
  return Pieces(config, checked, data, members, placement,
                put_on_device(arrays, members, placement, hparams), schedule,
                learner, steps, estimate, eval_chunks(schedule.eval_plan, placement),
                provenance_of(checked, data, members, placement), portable)


def eval_chunks(eval_plan: pipeline.EvalPlan, placement: Placement) -> tuple:
  """``((length, rows [views, c], split [views, c]), ...)``: the eval plan's chunks
  in the order they are evaluated, put on the device once."""
  host = [(length, rows[:, c], split[:, c])
          for length, (rows, split) in eval_plan.chunks.items()
          for c in range(rows.shape[1])]
  arrays = jax.device_put([(r, s) for _, r, s in host], placement.shared)
  return tuple((length, r, s) for (length, _, _), (r, s) in zip(host, arrays))


def provenance_of(checked, data: encoded.EncodedDataset, members: Members,
                  placement: Placement) -> dict:
  """What produced the run's numbers, computed once (it asks git): the config, the
  data, the versions, the machine's determinism record; the loop adds the compiled
  program's record and the machines that trained each epoch to a copy."""
  record = {'name': data.name, 'checksums': data.checksums,
            'raw_files': data.raw_checksums, 'protocol': data.protocol,
            'vocab_size': data.vocab_size, 'classes': list(data.label_names),
            'sizes': data.sizes(), 'vectors': data.vectors}
  # The examples the run is tested on, named by content: a report compares rows
  # only when this is the same (reports/collect.py).
  record['test'] = provenance_lib.test_identity(record, members.folds)
  return {'config': checked.as_dict,
          # The seeds the members run (a factorial design's init seeds, not
          # config.seeds, which it does not read).
          'seeds': [int(s) for s in dict.fromkeys(members.seeds.tolist())],
          'folds': [int(f) for f in members.folds],
          'data': record,
          'versions': provenance_lib.library_versions(),
          'user_code': provenance_lib.user_code(checked.config, checked.as_dict),
          'git_commit': provenance_lib.git_commit(),
          'devices': provenance_lib.devices(),
          'determinism': provenance_lib.determinism_record(),
          'seed_parallel': placement.form,
          # The width every program of a lanes run has (0: not lanes).
          'lanes': placement.lanes}


# ------------------------------------------------------------------- the run's values


@dataclasses.dataclass(frozen=True)
class Pieces:
  """The values one run is made of (see :func:`build`), built once and never changed;
  an epoch's phases are functions over them (run/epoch.py). Besides the fields,
  what converts the members' state: fresh, fetched, as checkpoints hold it."""
  config: object
  checked: 'prepare_lib.Checked'  # the config as checked once: its points, its JSON
  data: encoded.EncodedDataset
  members: Members
  placement: Placement
  device: steps_lib.DeviceData
  schedule: Schedule
  learner: steps_lib.Learner
  steps: steps_lib.Steps
  memory_estimate: memory.MemoryEstimate
  eval_chunks: tuple   # :func:`eval_chunks`, on the device
  provenance: dict     # :func:`provenance_of`; read, never written
  portable: bool       # the programs in engine.portable's form (see :func:`build`)

  def init_state(self) -> state_lib.TrainState:
    """Every member's fresh TrainState, stacked ``[members, ...]`` (from its init seed
    and its view's embeddings), sharded over the mesh when there is one."""
    seeds, views = pad_members((self.members.seed_triples[:, rngs.INIT],
                                self.members.view_ids), self.placement.size)
    return state_lib.create_train_state(
        self.learner.model, self.learner.tx, seeds, views, self.data.embedding_tables,
        portable=self.portable, sharding=self.placement.stacked)

  def real(self, x) -> np.ndarray:
    """A ``[members on device]`` array fetched to the host, the run's members only."""
    return hosts.fetch(x)[:len(self.members)]

  def saved(self, state):
    """``state`` as checkpoints hold it: the run's members only (a run may resume on
    another number of devices, hence other padding; Placement.size)."""
    if self.placement.size == len(self.members):
      return state
    return jax.tree.map(lambda a: a[:len(self.members)], state)

  def on_device(self, state):
    """A state read from a checkpoint (:meth:`saved`'s form), padded and placed."""
    if self.placement.size == len(self.members):
      return state
    return jax.device_put(pad_members(jax.device_get(state), self.placement.size),
                          self.placement.stacked)

  def restore(self, ckpts, step: int, target=None):
    """``(state, meta)`` of checkpoint ``step`` of ``ckpts``, padded and placed;
    ``target``: a fresh state to read into (made when not given)."""
    target = self.init_state() if target is None else target
    state, meta = ckpt_lib.restore_train_state(ckpts, step, self.saved(target))
    return self.on_device(state), meta

  def group(self, start: int, end: int) -> 'Pieces':
    """Members ``start..end-1`` as a run of their own (a group of a split run,
    run/groups.py): the same data on device, programs and provenance."""
    m, part = self.members, slice(start, end)
    members = dataclasses.replace(m, seed_triples=m.seed_triples[part],
                                  seeds=m.seeds[part], view_ids=m.view_ids[part],
                                  point_ids=m.point_ids[part], labels=m.labels[part])
    placement = place(self.config, len(members))
    hparams = {k: self.real(v)[part] for k, v in self.device.hparams.items()}
    return dataclasses.replace(
        self, members=members, placement=placement,
        device=put_on_device(self.device.arrays, members, placement, hparams),
        steps=self.steps.for_members(placement.size, placement.mode),
        eval_chunks=eval_chunks(self.schedule.eval_plan, placement))

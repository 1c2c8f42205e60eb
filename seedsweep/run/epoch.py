"""An epoch's phases as functions of values: ``done = run_epoch(pieces, state, epoch)``
returns the state after it and its metrics rows, as flax's ``train_step`` and
``evaluate`` do; ``pieces`` is the run's :class:`seedsweep.run.pieces.Pieces`.

Training (:mod:`seedsweep.run.loop`) and ``--mode=verify`` (:mod:`seedsweep.run.verify`)
both run their epochs here, so what verify re-runs is what training ran: the
epoch's train steps (:func:`train_steps`, from a resumed position, stoppable
between chunks), then evaluation of dev and test (:func:`evaluate`), each member
keeping its best-dev parameters (:func:`keep_best`), and the rows of
metrics.jsonl. After the last epoch :func:`selected` gives the numbers results.json
is made of. What the loop adds around it (timing, the progress bar, the
compile-ahead thread, the wall clock, the chunk sizes kept from epoch to epoch)
comes in as :class:`Hooks`; nothing here writes a file, and nothing is changed but
the state the steps return (and the chunk sizes, which follow the clock and change
no bit).
"""
import contextlib
import dataclasses
import threading
import time
from typing import Any, Callable, ContextManager, Dict, List, Optional

import jax
import jax.numpy as jnp
import numpy as np

from seedsweep.engine import hosts
from seedsweep.engine import objectives
from seedsweep.engine import portable as portable_lib
from seedsweep.engine import steps as steps_lib
from seedsweep.errors import UserError
from seedsweep.run import faults
from seedsweep.run import outputs
from seedsweep.run import pieces as pieces_lib
from seedsweep.run import provenance as provenance_lib


def _untimed(_phase: str) -> ContextManager:
  return contextlib.nullcontext()


def _nothing() -> None:
  return None


@dataclasses.dataclass(frozen=True)
class Hooks:
  """What an epoch calls besides computing, all optional: ``on_step(n)`` after each
  dispatch of ``n`` steps; ``stop()`` true ends the epoch before the next chunk;
  ``timer(phase)`` a context around the ``'train'`` and ``'eval'`` phases
  (timing.Timer); ``before_eval()`` just before evaluating (the programs compiling
  ahead joined); ``clock_start``: the ``time.perf_counter()`` the rows'
  ``wall_time`` counts from (None: they record 0); ``sizes``: the chunk sizes kept
  from epoch to epoch (:class:`ChunkSizes`; None: a fresh one)."""
  on_step: Optional[Callable[[int], None]] = None
  stop: Optional[Callable[[], bool]] = None
  timer: Callable[[str], ContextManager] = _untimed
  before_eval: Callable[[], None] = _nothing
  clock_start: Optional[float] = None
  sizes: Optional['ChunkSizes'] = None


@dataclasses.dataclass(frozen=True)
class Epoch:
  """What an epoch leaves: the members' ``state``, the summed train loss of its
  steps ``[members on device]`` and the ``position`` it reached; when it ran to its
  end (not ``stopped``), dev and test metrics ``evals`` (``{name: [members]}``),
  the ``rows`` of metrics.jsonl and the ``wall_time`` they record."""
  state: Any
  loss_sum: Any
  position: int
  stopped: bool = False  # a stop signal ended it before its last step: no evals
  evals: Optional[Dict[str, np.ndarray]] = None
  rows: Optional[List[dict]] = None
  wall_time: float = 0.0


def run_epoch(pieces, state, epoch: int, start: int = 0, loss_sum=None,
              hooks: Hooks = Hooks()) -> Epoch:
  """Epoch ``epoch`` of every member of ``pieces`` from ``state``: its steps from
  position ``start`` (``loss_sum``: the summed loss of the steps before it), then,
  unless ``hooks.stop()`` ended it early, the evaluation, the best-dev selection
  and the rows."""
  with hooks.timer('train'):
    state, loss_sum, position = train_steps(pieces, state, epoch, start, loss_sum,
                                            on_step=hooks.on_step, stop=hooks.stop,
                                            sizes=hooks.sizes)
    # Steps are dispatched asynchronously: wait for them here, or their time is
    # counted in the evaluation that first reads their results.
    jax.block_until_ready((state, loss_sum))
  steps = pieces.schedule.train_plan.steps_per_epoch
  if position < steps:
    return Epoch(state, loss_sum, position, stopped=True)
  with hooks.timer('eval'):
    hooks.before_eval()
    evals = evaluate(pieces, state.params)
  state = keep_best(pieces, state, evals, epoch)
  wall = 0.0 if hooks.clock_start is None else time.perf_counter() - hooks.clock_start
  train_loss = pieces.real(loss_sum).astype(np.float64) / steps
  rows = epoch_rows(pieces, epoch, train_loss, evals, wall, state)
  return Epoch(state, loss_sum, position, evals=evals, rows=rows, wall_time=wall)


# ------------------------------------------------------------------ the train steps


def train_steps(pieces, state, epoch: int, start: int = 0, loss_sum=None,
                on_step=None, stop=None, max_steps: Optional[int] = None,
                sizes: Optional['ChunkSizes'] = None):
  """Epoch ``epoch``'s steps from position ``start`` on: ``(state, loss_sum
  [members], position reached)``. ``loss_sum`` carries the sum over the steps
  before ``start``; ``max_steps``: only the epoch's first steps (benchmarks, tests).

  The steps run in chunks, one dispatch each (engine.steps.Steps.train_chunk), of
  ``steps_per_dispatch`` steps, fewer where steps are slow; host-free (off the
  CPU) only steps of one padded length share a chunk, else it is one step
  (:class:`ChunkSizes`, ``sizes`` or a fresh one). The host reads nothing back; it
  waits for a chunk only once the next one is queued, so the device never idles and
  a true ``stop()`` ends the loop within two chunks (the position reached is then
  short of ``steps_per_epoch``). ``on_step(n)`` follows each chunk's dispatch (its
  ``n`` steps).
  """
  visits = pieces.schedule.train_plan.schedule(epoch)
  # The plan always holds the whole epoch (its length is a shape: the same
  # programs for every ``max_steps``); ``end`` is where these steps stop.
  end = len(visits) if max_steps is None else min(max_steps, len(visits))
  lengths = [length for _, length in visits[:end]]
  batches = pieces.steps.epoch_plan(pieces.device, epoch, visits)
  total, cursor = chunk_carry(pieces, loss_sum, start)
  sizes = sizes or ChunkSizes.of(pieces)
  position, running = start, None
  while position < end:
    if stop is not None and stop():
      return state, total, position
    steps = min(sizes.size, end - position)
    if sizes.one_length and _run_length(lengths, position) < sizes.size:
      steps = 1  # a program per size and length: the steps of one length, or one
    state, total, cursor = pieces.steps.train_chunk(state, pieces.device, batches,
                                                    cursor, total,
                                                    length=lengths[position], count=steps)
    position += steps
    if running is not None:  # the chunk before this one: wait for it to end
      sizes.ended(*running)
    running = (cursor, steps)
    if on_step is not None:
      on_step(steps)
  return state, total, position


def chunk_carry(pieces, loss_sum, start: int):
  """What a chunk carries on: ``(loss_sum [members on device], position ())`` on
  the device, from the summed loss so far (None: none) and the position."""
  placement = pieces.placement
  total = pieces_lib.pad_members(
      np.zeros(len(pieces.members), np.float32) if loss_sum is None
      else pieces.real(loss_sum).astype(np.float32), placement.size)
  return jax.device_put((total, np.int32(start)), (placement.stacked, None))


class ChunkSizes:
  """The steps of each dispatch: ``most`` (config.train.steps_per_dispatch), fewer
  while a step takes longer than ``most`` fit in :data:`CHUNK_SECONDS`, so that a
  stop signal is seen within seconds however many members a step carries. Any size
  gives the same bits (tests/test_dispatch.py). Several processes (jax.distributed)
  keep ``most``.

  ``one_length`` (host-free chunks, engine.steps.host_free_programs): a chunk's
  steps share a padded length and its size is a static trip count, a program per
  size and length, so two sizes only: ``most`` where that many steps of one length
  come in a row and they fit in the time, else one. Otherwise the size is a value
  the one program reads, any from one to ``most``, whatever the steps' lengths.
  :func:`train_steps` cuts the chunks by ``size``.
  """

  def __init__(self, most: int, one_length: bool):
    self.most, self.size, self.one_length = most, most, one_length
    self._last_end = None  # when the chunk before the last one ended

  @classmethod
  def of(cls, pieces) -> 'ChunkSizes':
    """Fresh sizes for ``pieces``' steps and their chunks' form."""
    return cls(pieces.config.train.steps_per_dispatch, pieces.steps.host_free)

  def ended(self, cursor, steps: int) -> None:
    """Waits for the chunk of ``steps`` steps whose output is ``cursor``; from the
    time between two chunks' ends, sizes the next chunks."""
    jax.block_until_ready(cursor)
    now = time.perf_counter()
    # Under jax.distributed every process must dispatch the same chunks, so the
    # sizes, which follow each process's clock, stay fixed there.
    if self._last_end is not None and jax.process_count() == 1:
      per_step = (now - self._last_end) / steps
      self.size = int(min(self.most, max(1, CHUNK_SECONDS // max(per_step, 1e-9))))
      if self.one_length and self.size < self.most:
        self.size = 1
    self._last_end = now


def _run_length(lengths: List[int], position: int) -> int:
  """How many steps from ``position`` on have the padded length of the first."""
  run = 1
  while position + run < len(lengths) and lengths[position + run] == lengths[position]:
    run += 1
  return run


# About how long a chunk of steps may run: a stop signal waits for at most two (the
# running one and the one queued behind it), well inside a scheduler's grace period.
CHUNK_SECONDS = 2.0


def train_programs_hlo(pieces, state) -> str:
  """The optimised HLO of the compiled training programs (engine.steps.Steps.
  lower_chunks: a one-step chunk of each padded length in order, or the one
  switched program; XLA's own choices included); from the compilation cache when
  they were compiled before."""
  batches = pieces.steps.epoch_plan(pieces.device, 1,
                                    pieces.schedule.train_plan.schedule(1))
  total, cursor = chunk_carry(pieces, None, 0)
  return '\n'.join(lowered.compile().as_text() for lowered in
                    pieces.steps.lower_chunks(state, pieces.device, batches, cursor,
                                              total))


def determinism(pieces, state, recorded: Optional[dict] = None) -> dict:
  """The run's determinism record (its provenance's) with its train programs':
  ``program``, a hash of :func:`train_programs_hlo`, and on a CPU
  ``unportable_ops``, what in them computes with kernels that follow the CPU
  (engine.portable). ``recorded``: a checkpoint's record, whose program is taken
  when it has one; else the programs are compiled here, for their fingerprint (the
  first chunk then finds them in jit's cache)."""
  found = {k: v for k, v in (recorded or {}).items()
           if k in ('program', 'unportable_ops')}
  if 'program' not in found:
    text = train_programs_hlo(pieces, state)
    found = {'program': provenance_lib.program_fingerprint(text)}
    if jax.default_backend() == 'cpu':
      found['unportable_ops'] = portable_lib.unportable_ops(text)
  return {**pieces.provenance['determinism'], **found}


# --------------------------------------------------------------------- evaluation


def evaluate(pieces, params) -> Dict[str, np.ndarray]:
  """``{'dev_accuracy', 'dev_loss', 'test_accuracy', ...}`` each ``[members]``:
  dev and test in the same chunks (inputs.pipeline.EvalPlan)."""
  splits = pieces.schedule.eval_splits
  total = None
  for length, rows, split in pieces.eval_chunks:  # the host picks each length's program
    sums = pieces.steps.eval_batch(params, pieces.device, rows, split, length=length,
                                   n_splits=len(splits))
    total = sums if total is None else jax.tree.map(jnp.add, total, sums)
    faults.reached('eval')  # tests/test_faults.py: killed while evaluating
  total = {k: pieces.real(v).astype(np.float64) for k, v in total.items()}
  out = {}
  for i, split_name in enumerate(splits):
    for name, value in objectives.finalize({k: v[..., i]
                                            for k, v in total.items()}).items():
      out[f'{split_name}_{name}'] = value
  return out


def compile_ahead(pieces, params) -> Optional[threading.Thread]:
  """Lowers the evaluation's programs and starts compiling them in a background
  thread while the first epoch trains (XLA compiles without holding the GIL; the
  evaluation then finds them in jit's cache); ``join()`` it before evaluating.
  None where there is nothing to gain: a lone member under vmap runs paired
  outside the program."""
  if pieces.steps.paired:
    return None
  # Lowered here, on the arrays themselves (lowered from their shapes alone, jit
  # compiles the call again): the training steps then donate them. One program
  # per padded length: the first chunk of each.
  firsts = {}
  for length, rows, split in pieces.eval_chunks:
    firsts.setdefault(length, (rows, split))
  lowered = [pieces.steps.eval_batch.lower(params, pieces.device, rows, split,
                                           length=length,
                                           n_splits=len(pieces.schedule.eval_splits))
             for length, (rows, split) in firsts.items()]

  def compile_all():
    try:
      for program in lowered:
        program.compile()
    except Exception:  # pylint: disable=broad-except
      pass  # the evaluation compiles what is missing, and reports any failure itself

  thread = threading.Thread(target=compile_all, name='compile-ahead', daemon=True)
  thread.start()
  return thread


def keep_best(pieces, state, evals, epoch: int):
  """Each member keeps its parameters if ``evals``' dev accuracy is its best yet
  (``state`` unchanged without a dev split)."""
  if 'dev_accuracy' not in evals:
    return state
  placement = pieces.placement
  score = pieces_lib.pad_members(np.asarray(evals['dev_accuracy'], np.float32),
                                 placement.size)
  score, epoch = jax.device_put((score, np.int32(epoch)), (placement.stacked, None))
  return pieces.steps.select_best(state, score, epoch)


def patience_spent(pieces, state, epoch: int) -> bool:
  """True when every member has gone ``config.train.patience`` epochs without a
  better dev score after ``epoch`` (early stopping; False when it is off)."""
  return bool(np.all(steps_lib.stopped(pieces.real(state.best_epoch), epoch,
                                       pieces.config.train.patience)))


def selection(pieces, state, epochs_completed: int):
  """``(params, epochs [members])``: the parameters the results use, the best dev
  epoch's under ``best_dev``, else the last, and the epoch each member's are from."""
  if pieces.config.train.selection == 'best_dev':
    return state.best_params, pieces.real(state.best_epoch)
  return state.params, np.full(len(pieces.members), epochs_completed)


def selected(pieces, state, epochs_completed: int, evaluated=None) -> dict:
  """What results.json is made of, JSON-ready (a group of a split run keeps it in a
  file): ``per_member`` {metric, ``best_epoch`` under best-dev selection,
  ``nonfinite_step``: [members]} and ``epochs_completed``.

  The metrics are those of :func:`selection`'s parameters. ``evaluated`` maps
  epochs evaluated in this process to their metrics; when it holds every member's
  selected epoch they are read from it (the same program on the same parameters:
  the same numbers), else the selected parameters are evaluated.
  """
  params, epochs = selection(pieces, state, epochs_completed)
  if evaluated and all(int(e) in evaluated for e in epochs):
    metrics = {k: np.array([evaluated[int(e)][k][i] for i, e in enumerate(epochs)])
               for k in evaluated[int(epochs[0])]}
  else:
    metrics = evaluate(pieces, params)
  if pieces.config.train.selection == 'best_dev':
    metrics['best_epoch'] = epochs
  metrics['nonfinite_step'] = pieces.real(state.nonfinite_step)
  return {'per_member': {k: np.asarray(v).tolist() for k, v in metrics.items()},
          'epochs_completed': int(epochs_completed)}


# --------------------------------------------------------------------- the rows


def params_fingerprints(pieces, params) -> list:
  """A hash of each member's parameters ``[members]`` (its bits, in tree order):
  what ``--mode=verify`` compares."""
  leaves = [hosts.fetch(leaf) for leaf in jax.tree.leaves(params)]
  return [provenance_lib.fingerprint_arrays([leaf[m] for leaf in leaves])
          for m in range(len(pieces.members))]


def epoch_rows(pieces, epoch, train_loss, evals, wall_time, state):
  """metrics.jsonl's rows of ``epoch``, one per member; ``state``'s parameters give
  each row's ``params_sha256``; ``nonfinite_step`` is the step whose train loss was
  first NaN or infinite (0: none)."""
  params_sha = params_fingerprints(pieces, state.params)
  nonfinite = hosts.fetch(state.nonfinite_step)
  rows = []
  members = pieces.members
  for i, seed in enumerate(members.seeds):
    row = {'epoch': epoch, 'seed': int(seed)}
    if members.folds:
      row['fold'] = int(members.view_ids[i])
    if members.factorial:
      row['streams'] = [int(s) for s in members.seed_triples[i]]
    if len(members.point_labels) > 1:
      row['point'] = members.point_labels[members.point_ids[i]]
    row['train_loss'] = float(train_loss[i])
    row.update({k: float(v[i]) for k, v in evals.items()})
    row['params_sha256'] = params_sha[i]
    row['nonfinite_step'] = int(nonfinite[i])
    row['wall_time'] = round(wall_time, 3)
    rows.append(row)
  return rows


def check_finite(members, rows, epoch: int) -> None:
  """Under ``config.train.nan_policy='fatal'`` (the caller checks), a UserError
  naming the members whose train loss became NaN or infinite (their rows are
  already logged)."""
  bad = [(label, row['nonfinite_step']) for label, row in zip(members.labels, rows)
         if row['nonfinite_step']]
  if bad:
    which = ', '.join(f'{label} at step {step}' for label, step in bad)
    raise UserError(f'the train loss became NaN or infinite ({which}, by the end of '
                    f'epoch {epoch}); config.train.nan_policy=fatal stops the run. The '
                    "checkpoints of earlier epochs are kept; nan_policy='freeze' lets "
                    'the other seeds go on')


def summary(epoch, num_epochs, rows) -> str:
  """The epoch's line on the terminal: mean ± std over the members, the std the
  sample one (ddof=1), as in the final table; a line per point of a stacked run."""
  lines = []
  for point in dict.fromkeys(r.get('point', '') for r in rows):  # each point's label
    mine = [r for r in rows if r.get('point', '') == point]
    parts = [f'epoch {epoch}/{num_epochs}'] + ([point] if point else [])
    for key in ('train_loss', 'dev_accuracy', 'test_accuracy'):
      if key in mine[0]:
        s = outputs.summarize([r[key] for r in mine])
        parts.append(f'{key} {s["mean"]:.4g}±{s["std"]:.2g}')
    lines.append('  '.join(parts))
  return '\n'.join(lines)

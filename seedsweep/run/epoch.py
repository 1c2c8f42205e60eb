"""One epoch of every member, as a function of values: ``done = run_epoch(exp, state,
epoch)`` returns the state after it and its metrics rows.

Training (:mod:`seedsweep.run.loop`) and ``--mode=verify`` (:mod:`seedsweep.run.verify`)
both run their epochs here, so what verify re-runs is what training ran: the
epoch's train steps (from a resumed position, stoppable between chunks), then
evaluation of dev and test, each member keeping its best-dev parameters, and the
rows of metrics.jsonl. What the loop adds around it (timing, the progress bar, the
compile-ahead thread, the wall clock) comes in as :class:`Hooks`; nothing here
writes a file.
"""
import contextlib
import dataclasses
from typing import Any, Callable, ContextManager, Dict, List, Optional

import jax
import numpy as np

from seedsweep.engine import hosts
from seedsweep.errors import UserError
from seedsweep.run import outputs


def _untimed(_phase: str) -> ContextManager:
  return contextlib.nullcontext()


def _nothing() -> None:
  return None


def _no_clock() -> float:
  return 0.0


@dataclasses.dataclass(frozen=True)
class Hooks:
  """What an epoch calls besides computing, all optional: ``on_step(n)`` after each
  dispatch of ``n`` steps; ``stop()`` true ends the epoch before the next chunk;
  ``timer(phase)`` a context around the ``'train'`` and ``'eval'`` phases
  (timing.Timer); ``before_eval()`` just before evaluating (the programs compiling
  ahead joined); ``wall_time()`` the rows' ``wall_time``."""
  on_step: Optional[Callable[[int], None]] = None
  stop: Optional[Callable[[], bool]] = None
  timer: Callable[[str], ContextManager] = _untimed
  before_eval: Callable[[], None] = _nothing
  wall_time: Callable[[], float] = _no_clock


@dataclasses.dataclass(frozen=True)
class Epoch:
  """What an epoch leaves: the members' ``state``, the summed train loss of its
  steps ``[members on device]`` and the ``position`` it reached; when it ran to its
  end (not :attr:`stopped`), dev and test metrics ``evals`` (``{name: [members]}``),
  the ``rows`` of metrics.jsonl and the ``wall_time`` they record."""
  state: Any
  loss_sum: Any
  position: int
  evals: Optional[Dict[str, np.ndarray]] = None
  rows: Optional[List[dict]] = None
  wall_time: float = 0.0

  @property
  def stopped(self) -> bool:
    """Whether a stop ended the epoch before its last step (nothing evaluated)."""
    return self.rows is None


def run_epoch(exp, state, epoch: int, start: int = 0, loss_sum=None,
              hooks: Hooks = Hooks()) -> Epoch:
  """Epoch ``epoch`` of every member of ``exp`` from ``state``: its steps from
  position ``start`` (``loss_sum``: the summed loss of the steps before it), then,
  unless ``hooks.stop()`` ended it early, the evaluation, the best-dev selection
  and the rows."""
  with hooks.timer('train'):
    state, loss_sum, position = exp.train_steps(state, epoch, start, loss_sum,
                                                on_step=hooks.on_step, stop=hooks.stop)
    # Steps are dispatched asynchronously: wait for them here, or their time is
    # counted in the evaluation that first reads their results.
    jax.block_until_ready((state, loss_sum))
  if position < exp.schedule.plan.steps_per_epoch:
    return Epoch(state, loss_sum, position)
  with hooks.timer('eval'):
    hooks.before_eval()
    evals = exp.evaluate_all(state.params)
  state = exp.keep_best(state, evals, epoch)
  wall = hooks.wall_time()
  rows = epoch_rows(exp, epoch, exp.mean_loss(loss_sum), evals, wall, state)
  return Epoch(state, loss_sum, position, evals, rows, wall)


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


def summary(epoch, num_epochs, rows) -> str:
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

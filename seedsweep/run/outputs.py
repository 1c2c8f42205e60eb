"""Files a run writes in its workdir, each written so that a crash never leaves
half a file: ``config.json``, ``metrics.jsonl``, ``results.json``, TensorBoard events.

``results.json``::

  {"seeds": [1, ...],
   "metrics": {"test_accuracy": [per seed, in the order of seeds], ...},
   "summary": {"test_accuracy": {"mean", "std", "min", "max"}, ...},
   "selection": "best_dev", "paper": {...}, "provenance": {...}}

``std`` is the sample standard deviation over seeds (ddof=1; 0 for one seed).
``members`` names each member (:func:`member_label`); a factorial seed design adds
``streams`` (each member's [init, data, dropout] seeds). A run of several
hyperparameter points (``config.stack``) keeps every member's numbers at the top and
each point's own results object, as a run of that point alone would write it, in
``by_point`` (with its ``label`` and ``overrides``): :func:`point_results`.
"""
import dataclasses
import json
import os
import sys
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from seedsweep import files
from seedsweep.config import stacking
from seedsweep.errors import UserError
from seedsweep.run import faults

CONFIG, METRICS, RESULTS = 'config.json', 'metrics.jsonl', 'results.json'


def atomic_file(path: str, mode: str = 'w', **open_args):
  """A file to write that replaces ``path`` only once the block ends without error
  (:func:`seedsweep.files.atomic_write`); the moment ``write:<name>`` comes between
  the last byte and the rename."""
  moment = f'write:{os.path.basename(path)}'
  return files.atomic_write(path, mode, before_rename=lambda: faults.reached(moment),
                            **open_args)


def write_json(path: str, obj) -> None:
  """Writes ``obj`` to ``path`` as indented JSON, whole or not at all (NaN allowed)."""
  with atomic_file(path) as f:
    json.dump(obj, f, indent=1, sort_keys=False, allow_nan=True)
    f.write('\n')


def read_json(path: str):
  """The JSON data in ``path``."""
  with open(path) as f:
    return json.load(f)


@dataclasses.dataclass(frozen=True)
class MetricsLog:
  """``metrics.jsonl`` in ``folder``: one row per (epoch, member)."""
  folder: str

  def rows(self) -> List[dict]:
    """Every row ([] without the file); UserError naming the file and line when one
    is not JSON. A last line without its newline is a row a killed process was
    writing: it is left out (the resumed run writes that epoch's rows again)."""
    path = os.path.join(self.folder, METRICS)
    if not os.path.exists(path):
      return []
    rows = []
    with open(path) as f:
      for number, line in enumerate(f, 1):
        if not line.endswith('\n'):
          break
        if line.strip():
          try:
            rows.append(json.loads(line))
          except ValueError as e:
            raise UserError(f'{path}, line {number}: not valid JSON ({e}); '
                            'expected one JSON object per line') from e
    return rows

  def keep_epochs_up_to(self, epoch: int) -> None:
    """Drops rows of epochs after ``epoch`` (written after the last checkpoint)."""
    self.replace([r for r in self.rows() if r['epoch'] <= epoch])

  def replace(self, rows: Sequence[dict]) -> None:
    """Makes ``rows`` the file's content, in one atomic write."""
    with atomic_file(os.path.join(self.folder, METRICS)) as f:
      f.writelines(json.dumps(r) + '\n' for r in rows)

  def append(self, rows: Sequence[dict]) -> None:
    """Appends ``rows``, one JSON line each, and syncs the file to disk."""
    with open(os.path.join(self.folder, METRICS), 'a') as f:
      for row in rows:
        f.write(json.dumps(row) + '\n')
        f.flush()
        faults.reached('metrics_row')
      os.fsync(f.fileno())


def summarize(values: Sequence[float]) -> Dict[str, float]:
  """``{'mean', 'std', 'min', 'max'}`` of ``values``; ``std`` is the sample standard
  deviation (ddof=1), 0 for one value."""
  v = np.asarray(values, np.float64)
  return {'mean': float(v.mean()), 'std': float(v.std(ddof=1)) if len(v) > 1 else 0.0,
          'min': float(v.min()), 'max': float(v.max())}


# The one 95 % interval of a mean over seeds, wherever a number is shown (the report's
# table, CSV and plots, the final table on the terminal, a search's 'lcb' score):
# Student's t, right for the few seeds a run has (a bootstrap percentile or BCa
# interval of 3 seeds spans little more than their min to max).
CI_LEVEL = 0.95
CI_METHOD = ("Student's t interval over the seeds, with n - 1 degrees of freedom and "
             'the sample std')


def mean_interval(values: Sequence[float], level: float = CI_LEVEL
                  ) -> Optional[Tuple[float, float]]:
  """The two-sided ``level`` confidence interval of the mean of ``values`` [n]
  (:data:`CI_METHOD`); None for fewer than 2 values, ``(v, v)`` when they are all
  ``v``. The bits of ``scipy.stats.t.interval``, from its quantile function in
  scipy.special: scipy.stats takes half a second to import, at every run's end."""
  from scipy import special  # pylint: disable=g-import-not-at-top
  v = np.asarray(values, np.float64)
  if len(v) < 2:
    return None
  mean, std = float(v.mean()), float(v.std(ddof=1))
  if std == 0:
    return mean, mean
  scale = std / np.sqrt(len(v))
  low, high = (special.stdtrit(len(v) - 1, q) * scale + mean
               for q in ((1 - level) / 2, (1 + level) / 2))
  return float(low), float(high)


def build_results(seeds, metrics: Dict[str, Sequence[float]], folds=None,
                  **extra) -> dict:
  """Per-member metrics and their summary over seeds.

  With ``folds`` (cross-validation: member ``i`` is fold ``folds[i]`` of seed
  ``seeds[i]``), each seed's value of a metric is its mean over the folds (the CV
  score), and ``summary`` is over those per-seed CV means; ``by_fold`` summarises each
  fold over the seeds.
  """
  metrics = {k: [float(x) for x in v] for k, v in metrics.items()}
  out = {'seeds': [int(s) for s in seeds]}
  if folds is None:
    out.update(metrics=metrics,
               summary={k: summarize(v) for k, v in metrics.items()})
    return {**out, **extra}
  folds = [int(f) for f in folds]
  order = list(dict.fromkeys(out['seeds']))
  cv = {k: [float(np.mean([x for x, s in zip(v, out['seeds']) if s == seed]))
            for seed in order] for k, v in metrics.items()}
  out.update(folds=folds, metrics=metrics, cv_seeds=order, cv_metrics=cv,
             summary={k: summarize(v) for k, v in cv.items()},
             by_fold={k: {str(f): summarize([x for x, g in zip(v, folds) if g == f])
                          for f in dict.fromkeys(folds)} for k, v in metrics.items()})
  return {**out, **extra}


def member_label(seed: int, fold=None, seed_triple=None, point: str = '') -> str:
  """A member's name in files and trackers: ``seed_<k>``, ``fold<f>_seed_<k>``, or
  ``init<i>_data<d>_dropout<r>`` (``seed_triple``: a factorial design's seeds), under
  ``<point>/`` for a member of a stacked run."""
  if seed_triple is not None:
    name = stacking.stream_label(seed_triple)
  else:
    name = f'seed_{int(seed)}'
  if fold is not None:
    name = f'fold{int(fold)}_{name}'
  return f'{point}/{name}' if point else name


def row_member(row: dict) -> str:
  """The member a metrics.jsonl row is about (:func:`member_label`)."""
  return member_label(row['seed'], row.get('fold'), seed_triple=row.get('streams'),
                      point=row.get('point', ''))


def stacked_results(members, metrics: Dict[str, Sequence[float]], points,
                    nonfinite_step: Sequence[int], **extra) -> dict:
  """results.json of a run whose members are ``members`` (run.pieces.Members)
  and whose hyperparameter points are ``points`` ([{key: value}],
  stacking.points): :func:`build_results` of each point's members, the point's own
  object for a run of one point, under ``by_point`` for several."""
  labels = members.labels
  per_point = []
  for p, overrides in enumerate(points):
    idx = np.flatnonzero(members.point_ids == p)
    own = {'members': [labels[i] for i in idx]}
    if members.factorial:
      own['streams'] = members.seed_triples[idx].tolist()
    per_point.append(build_results(
        members.seeds[idx], {k: np.asarray(v)[idx] for k, v in metrics.items()},
        folds=members.view_ids[idx] if members.folds else None,
        nonfinite_step=[int(nonfinite_step[i]) for i in idx], **own))
  if len(points) == 1:
    return {**per_point[0], **extra}
  for sub, label, overrides in zip(per_point, members.point_labels, points):
    sub.update(label=label, overrides=overrides)
  return {'seeds': [int(s) for s in members.seeds], 'members': list(labels),
          'metrics': {k: [float(x) for x in v] for k, v in metrics.items()},
          'nonfinite_step': [int(s) for s in nonfinite_step],
          'by_point': per_point, **extra}


def lower_is_better(metric: str) -> bool:
  """Whether a smaller ``metric`` is better: names ending in ``_error`` or ``_loss``."""
  return metric.endswith(('_error', '_loss'))


def dev_metric(metric: str) -> str:
  """The dev side of a paper metric: test_X -> dev_X, else dev_accuracy."""
  return metric.replace('test_', 'dev_', 1) if 'test_' in metric else 'dev_accuracy'


def point_results(results: dict) -> List[dict]:
  """Each point's results object (``[results]`` for a run of one point), with the
  run's ``paper``, ``selection``, ``epochs_completed`` and ``provenance``."""
  if 'by_point' not in results:
    return [results]
  shared = {k: v for k, v in results.items()
            if k not in ('seeds', 'members', 'metrics', 'nonfinite_step', 'by_point')}
  return [{**shared, **sub} for sub in results['by_point']]


def seeds_text(n: int) -> str:
  """``'1 seed'``, ``'10 seeds'``."""
  return f'{n} seed' if n == 1 else f'{n} seeds'


def format_table(results: dict) -> str:
  """Mean ± std table of a results dict, one line per metric (a table per point of
  a stacked run)."""
  per_point = point_results(results)
  if len(per_point) > 1:
    return '\n\n'.join(f'point {p["label"]}:\n' + format_table(p) for p in per_point)
  if 'folds' in results:
    what = (f'{seeds_text(len(results["cv_seeds"]))}, each the mean over '
            f'{len(set(results["folds"]))} cross-validation folds')
  elif 'streams' in results:
    sizes = [len({s[i] for s in results['streams']}) for i in range(3)]
    what = (f'{len(results["streams"])} members: ' + ' x '.join(
        f'{n} {name}' for n, name in zip(sizes, stacking.STREAMS)) + ' seeds')
  else:
    what = seeds_text(len(results['seeds']))
  width = max([16] + [len(n) for n in results['summary']])
  per_seed = results.get('cv_metrics') or results.get('metrics') or {}
  lines = [f'{"metric":<{width}} {"mean ± std":>18} {"95 % CI":>17} {"min":>8} '
           f'{"max":>8}   ({what})']
  for name, s in results['summary'].items():
    ci = mean_interval(per_seed.get(name) or [])
    ci_text = f'[{ci[0]:.2f}, {ci[1]:.2f}]' if ci else ''
    lines.append(f'{name:<{width}} {s["mean"]:>9.2f} ± {s["std"]:<6.2f} '
                 f'{ci_text:>17} {s["min"]:>8.2f} {s["max"]:>8.2f}')
  lines += nonfinite_lines(results)
  paper = results.get('paper') or {}
  value = paper.get('value')
  if value is not None:
    note = f' ({paper["note"]})' if paper.get('note') else ''
    others = ''.join(f', {k} = {v}' for k, v in (paper.get('other') or {}).items())
    lines.append(f'paper ({paper.get("source", "")}): {paper.get("metric")} = {value}'
                 f'{others}{note}')
  return '\n'.join(lines)


def nonfinite_lines(results: dict) -> List[str]:
  """A warning per member whose train loss became NaN or infinite."""
  steps = results.get('nonfinite_step') or []
  if not any(steps):  # no member's did: no labels to make
    return []
  folds = results.get('folds') or [None] * len(results['seeds'])
  labels = results.get('members') or [member_label(s, f) for s, f in zip(
      results['seeds'], folds)]
  return [f'warning: the train loss of {label} became NaN or infinite at step '
          f'{step}; it kept the parameters it had before that step'
          for label, step in zip(labels, steps) if step]


def tensorboardx():
  """The tensorboardX package, imported without PyTorch: where torch is installed,
  tensorboardX imports it (about 2 s, a fifth of a short run's start) only to accept
  torch tensors, which a run never passes."""
  blocked = 'tensorboardX' not in sys.modules and 'torch' not in sys.modules
  if blocked:  # (a process that imported torch itself pays nothing more)
    sys.modules['torch'] = None  # `import torch` fails: tensorboardX's own fallback
  try:
    import tensorboardX  # pylint: disable=g-import-not-at-top
  finally:
    if blocked:
      del sys.modules['torch']
  return tensorboardX


class TensorBoard:
  """One event-file folder per member: ``workdir/tensorboard/<label>`` (``seed_<k>``,
  or ``fold<f>_seed_<k>``, under ``<point>/`` in a stacked run); rows are matched to
  writers in order. ``aggregate`` (``<point>/aggregate`` per point of a stacked run)
  holds each metric's mean and std over the members (``<metric>/mean``,
  ``<metric>/std``): TensorBoard cannot group runs itself."""

  AGGREGATE = 'aggregate'

  def __init__(self, workdir: str, labels: Sequence[str], members: bool = True,
               aggregates: bool = True):
    """Writers of ``labels``' members and (``aggregates``) of their points' means;
    a group of a split run writes its members' only, the run the aggregates at its
    end (:func:`write_aggregates`)."""
    writer = tensorboardx().SummaryWriter
    folder = lambda label: os.path.join(workdir, 'tensorboard', label)
    self.writers = [writer(folder(label)) for label in labels] if members else []
    point_labels = dict.fromkeys(label.rpartition('/')[0] for label in labels)
    self.aggregates = {p: writer(folder(f'{p}/{self.AGGREGATE}' if p
                                               else self.AGGREGATE))
                       for p in point_labels} if aggregates else {}

  def write(self, rows: Sequence[dict]) -> None:
    """One epoch's ``rows`` (one per member, in writer order): each numeric metric to its
    member's writer, and each point's mean and std to its aggregate writer."""
    keys = [k for k, v in rows[0].items() if k not in ('epoch', 'seed', 'fold')
            and isinstance(v, (int, float)) and not isinstance(v, bool)]
    for w, row in zip(self.writers, rows):
      for k in keys:
        w.add_scalar(k, row[k], row['epoch'])
    for point, writer in self.aggregates.items():
      mine = [row for row in rows if row.get('point', '') == point]
      if not mine:  # a split run's group that stopped early: no row this epoch
        continue
      for k in keys:
        s = summarize([row[k] for row in mine])
        writer.add_scalar(f'{k}/mean', s['mean'], rows[0]['epoch'])
        writer.add_scalar(f'{k}/std', s['std'], rows[0]['epoch'])
    for w in self.writers + list(self.aggregates.values()):
      w.flush()

  def close(self):
    """Closes every member's and aggregate writer."""
    for w in self.writers + list(self.aggregates.values()):
      w.close()


def write_aggregates(workdir: str, labels: Sequence[str], rows: Sequence[dict]) -> None:
  """The TensorBoard aggregates of ``rows`` (metrics.jsonl's, every epoch's), for a
  run whose members' own event files were written by its groups."""
  board = TensorBoard(workdir, labels, members=False)
  try:
    for epoch in sorted({r['epoch'] for r in rows}):
      board.write([r for r in rows if r['epoch'] == epoch])
  finally:
    board.close()

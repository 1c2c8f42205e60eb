"""Files a run writes in its workdir, each written so that a crash never leaves
half a file: ``config.json``, ``metrics.jsonl``, ``results.json``, TensorBoard events.

``results.json``::

  {"seeds": [1, ...],
   "metrics": {"test_accuracy": [per seed, in the order of seeds], ...},
   "summary": {"test_accuracy": {"mean", "std", "min", "max"}, ...},
   "selection": "best_dev", "paper": {...}, "provenance": {...}}

``std`` is the sample standard deviation over seeds (ddof=1; 0 for one seed).
"""
import contextlib
import json
import os
from typing import Dict, List, Sequence

import numpy as np

from seedsweep.errors import UserError
from seedsweep.run import faults

CONFIG, METRICS, RESULTS = 'config.json', 'metrics.jsonl', 'results.json'


@contextlib.contextmanager
def atomic_file(path: str, mode: str = 'w', **open_args):
  """A file to write that replaces ``path`` only once the block ends without error
  (temp file + rename): a reader never sees half a file, and a failed write leaves
  the old one."""
  tmp = path + '.tmp'
  try:
    with open(tmp, mode, **open_args) as f:
      yield f
      f.flush()
      os.fsync(f.fileno())  # the bytes reach the disk before the name points at them
    faults.reached(f'write:{os.path.basename(path)}')
    os.replace(tmp, path)
  finally:
    if os.path.exists(tmp):
      os.remove(tmp)


def write_json(path: str, obj) -> None:
  with atomic_file(path) as f:
    json.dump(obj, f, indent=1, sort_keys=False, allow_nan=True)
    f.write('\n')


def read_json(path: str):
  with open(path) as f:
    return json.load(f)


class MetricsLog:
  """``metrics.jsonl``: one row per (epoch, seed)."""

  def __init__(self, workdir: str):
    self.path = os.path.join(workdir, METRICS)

  def rows(self) -> List[dict]:
    """Every row ([] without the file); UserError naming the file and line when one
    is not JSON. A last line without its newline is a row a killed process was
    writing: it is left out (the resumed run writes that epoch's rows again)."""
    if not os.path.exists(self.path):
      return []
    rows = []
    with open(self.path) as f:
      for number, line in enumerate(f, 1):
        if not line.endswith('\n'):
          break
        if line.strip():
          try:
            rows.append(json.loads(line))
          except ValueError as e:
            raise UserError(f'{self.path}, line {number}: not valid JSON ({e}); '
                            'expected one JSON object per line') from e
    return rows

  def keep_epochs_up_to(self, epoch: int) -> None:
    """Drops rows of epochs after ``epoch`` (written after the last checkpoint)."""
    rows = [r for r in self.rows() if r['epoch'] <= epoch]
    with atomic_file(self.path) as f:
      f.writelines(json.dumps(r) + '\n' for r in rows)

  def append(self, rows: Sequence[dict]) -> None:
    with open(self.path, 'a') as f:
      for row in rows:
        f.write(json.dumps(row) + '\n')
        f.flush()
        faults.reached('metrics_row')
      os.fsync(f.fileno())


def summarize(values: Sequence[float]) -> Dict[str, float]:
  v = np.asarray(values, np.float64)
  return {'mean': float(v.mean()), 'std': float(v.std(ddof=1)) if len(v) > 1 else 0.0,
          'min': float(v.min()), 'max': float(v.max())}


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


def member_label(seed: int, fold=None) -> str:
  """A member's name in files and trackers: ``seed_<k>``, or ``fold<f>_seed_<k>``."""
  return f'seed_{int(seed)}' if fold is None else f'fold{int(fold)}_seed_{int(seed)}'


def seeds_text(n: int) -> str:
  """``'1 seed'``, ``'10 seeds'``."""
  return f'{n} seed' if n == 1 else f'{n} seeds'


def format_table(results: dict) -> str:
  """Mean ± std table of a results dict, one line per metric."""
  if 'folds' in results:
    what = (f'{seeds_text(len(results["cv_seeds"]))}, each the mean over '
            f'{len(set(results["folds"]))} cross-validation folds')
  else:
    what = seeds_text(len(results['seeds']))
  width = max([16] + [len(n) for n in results['summary']])
  lines = [f'{"metric":<{width}} {"mean ± std":>18} {"min":>8} {"max":>8}   ({what})']
  for name, s in results['summary'].items():
    lines.append(f'{name:<{width}} {s["mean"]:>9.2f} ± {s["std"]:<6.2f} '
                 f'{s["min"]:>8.2f} {s["max"]:>8.2f}')
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
  folds = results.get('folds') or [None] * len(results['seeds'])
  out = []
  for seed, fold, step in zip(results['seeds'], folds,
                              results.get('nonfinite_step') or []):
    if step:
      who = f'seed {seed}' + (f' (fold {fold})' if fold is not None else '')
      out.append(f'warning: the train loss of {who} became NaN or infinite at step '
                 f'{step}; it kept the parameters it had before that step')
  return out


class TensorBoard:
  """One event-file folder per member: ``workdir/tensorboard/<label>`` (``seed_<k>``,
  or ``fold<f>_seed_<k>``); rows are matched to writers in order. ``aggregate`` holds
  each metric's mean and std over the members (``<metric>/mean``, ``<metric>/std``):
  TensorBoard cannot group runs itself."""

  AGGREGATE = 'aggregate'

  def __init__(self, workdir: str, labels: Sequence[str]):
    from tensorboardX import SummaryWriter  # pylint: disable=g-import-not-at-top
    self.writers = [SummaryWriter(os.path.join(workdir, 'tensorboard', label))
                    for label in labels]
    self.aggregate = SummaryWriter(os.path.join(workdir, 'tensorboard', self.AGGREGATE))

  def write(self, rows: Sequence[dict]) -> None:
    keys = [k for k, v in rows[0].items()
            if k not in ('epoch', 'seed', 'fold') and not isinstance(v, str)]
    for w, row in zip(self.writers, rows):
      for k in keys:
        w.add_scalar(k, row[k], row['epoch'])
    for k in keys:
      s = summarize([row[k] for row in rows])
      self.aggregate.add_scalar(f'{k}/mean', s['mean'], rows[0]['epoch'])
      self.aggregate.add_scalar(f'{k}/std', s['std'], rows[0]['epoch'])
    for w in self.writers + [self.aggregate]:
      w.flush()

  def close(self):
    for w in self.writers + [self.aggregate]:
      w.close()

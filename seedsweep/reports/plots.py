"""Figures for the report (PNG under ``ROOT/plots/``, matplotlib's Agg renderer).

* :func:`learning_curves`: a run's dev and test values of its paper metric per
  epoch (mean line, ±std band over seeds) and, in a second panel, the training loss;
  read from ``metrics.jsonl`` (runs without one get none).
* :func:`dev_test_scatter`: one point per seed, dev against test value of the
  selected model (results.json), for one run or every point of a sweep.
* :func:`sweep_plot`: the runs of one sweep, mean ± std error bars of the paper metric
  against the numeric override that varies; one line per combination of the other
  varying overrides.

Each returns the paths it wrote ([] when it had nothing to draw); :func:`write_plots`
draws every figure of a report's rows (:mod:`seedsweep.reports.collect`) and returns
:class:`Plot` records that the report links relative to ROOT. Figures are made with
``matplotlib.figure.Figure`` (no pyplot, no global backend state) and written
atomically.
"""
import collections
import os
import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from seedsweep.errors import UserError
from seedsweep.reports import collect
from seedsweep.reports import statistics
from seedsweep.run import outputs

PLOTS_DIR = 'plots'  # under the report's root

# owner: the run name (or collect.sweep_label) whose links show the plot; label: the
# link text; path: the PNG written.
Plot = collections.namedtuple('Plot', ['owner', 'label', 'path'])
# One point of a sweep: its overrides and its paper metric's summary over seeds.
SweepPoint = collections.namedtuple('SweepPoint', ['overrides', 'mean', 'std', 'paper'])


def slug(text: str) -> str:
  """A file-name part for a run name or sweep: '/' -> '__', odd characters -> '_'."""
  text = re.sub(r'[^A-Za-z0-9._=,+-]+', '_', text.replace('/', '__')).strip('_.')
  return text or 'root'


def curve_stats(log_rows: Sequence[dict], key: str
                ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
  """``(epochs [e], mean [e], std [e])`` of ``key`` over seeds per epoch.

  A cross-validated run's rows (with ``fold``) are first averaged over folds per
  (epoch, seed). std is the sample std (ddof=1; 0 for one seed).
  """
  per_seed = collections.defaultdict(list)
  for r in log_rows:
    if key in r and r[key] is not None:
      per_seed[(r['epoch'], r.get('seed'))].append(float(r[key]))
  by_epoch = collections.defaultdict(list)
  for (epoch, _), values in sorted(per_seed.items(), key=lambda kv: kv[0][0]):
    by_epoch[epoch].append(float(np.mean(values)))
  epochs = sorted(by_epoch)
  stats = [outputs.summarize(by_epoch[e]) for e in epochs]
  return (np.asarray(epochs), np.asarray([s['mean'] for s in stats]),
          np.asarray([s['std'] for s in stats]))


def metric_base(metric: str) -> str:
  """``test_accuracy`` -> ``accuracy`` (the split prefix dropped)."""
  for prefix in ('test_', 'dev_'):
    if metric.startswith(prefix):
      return metric[len(prefix):]
  return metric


def _figure(width: float, height: float, ncols: int = 1):
  from matplotlib.figure import Figure  # pylint: disable=g-import-not-at-top
  fig = Figure(figsize=(width, height), dpi=100)
  axes = fig.subplots(1, ncols, squeeze=False)[0]
  return fig, list(axes)


def _save(fig, path: str) -> List[str]:
  os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
  fig.tight_layout()
  with outputs.atomic_file(path, 'wb') as f:
    fig.savefig(f, format='png', metadata={'Software': None})
  return [path]


def learning_curves(run_dir: str, metric: str, path: str, title: str = '') -> List[str]:
  """Dev and test ``metric`` per epoch, and the train loss, mean ± std over seeds."""
  from matplotlib.ticker import MaxNLocator  # pylint: disable=g-import-not-at-top
  rows = outputs.MetricsLog(run_dir).rows()
  if not rows:
    return []
  base = metric_base(metric)
  keys = [k for k in (f'dev_{base}', f'test_{base}') if any(k in r for r in rows)]
  fig, (left, right) = _figure(10, 4, ncols=2)
  for ax, names, ylabel in ((left, keys, base), (right, ['train_loss'], 'train loss')):
    for name in names:
      epochs, mean, std = curve_stats(rows, name)
      if not len(epochs):
        continue
      (line,) = ax.plot(epochs, mean, marker='o', markersize=3, label=name)
      ax.fill_between(epochs, mean - std, mean + std, alpha=0.2,
                      color=line.get_color(), linewidth=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel('epoch')
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if ax.lines:
      ax.legend()
  n = len({r.get('seed') for r in rows})
  fig.suptitle(f'{title} (mean ± std over {n} seeds)' if title else
               f'mean ± std over {n} seeds')
  return _save(fig, path)


def dev_test_scatter(series: Sequence[Tuple[str, Sequence[int], Dict[str, Sequence[float]]]],
                     metric: str, path: str, title: str = '') -> List[str]:
  """One point per seed, its dev value against its ``metric`` value, for each
  ``(label, seeds [n], values {metric: [n]})`` of ``series`` (one run, or every point
  of a sweep in its own colour, as in the DLSTM paper's Figure 3)."""
  dev = statistics.dev_metric(metric)
  drawn = [(label, seeds, values[dev], values[metric]) for label, seeds, values in series
           if dev != metric and values.get(metric) and values.get(dev)
           and len(values[metric]) == len(values[dev])]
  if not drawn:
    return []
  fig, (ax,) = _figure(5, 5)
  for label, seeds, dev_values, test in drawn:
    ax.scatter(dev_values, test, zorder=3, label=label or None)
    if len(drawn) == 1:
      for seed, x, y in zip(seeds, dev_values, test):
        ax.annotate(str(seed), (x, y), textcoords='offset points', xytext=(4, 4),
                    fontsize=8)
  every = [v for _, _, d, t in drawn for v in list(d) + list(t)]
  ax.plot([min(every), max(every)], [min(every), max(every)], linestyle='--',
          color='gray', linewidth=1, label='dev = test')
  ax.set_xlabel(dev)
  ax.set_ylabel(metric)
  ax.grid(alpha=0.3)
  ax.legend(fontsize=8)
  ax.set_title(f'{title}: seeds' if title else 'seeds')
  return _save(fig, path)


def _is_number(value) -> bool:
  return isinstance(value, (int, float)) and not isinstance(value, bool)


def sweep_series(points: Sequence[SweepPoint]
                 ) -> Optional[Tuple[str, List[Tuple[str, List[SweepPoint]]]]]:
  """``(x key, [(line label, points sorted by x)])``, or None without a numeric
  override that varies.

  x is the numeric varying override with the most distinct values (the first on
  ties); each line holds the points sharing the other varying overrides, labelled
  by them ('' when there are none), lines in order of first appearance.
  """
  overrides = [p.overrides for p in points]
  varying = collect.varying_keys(overrides)
  numeric = [k for k in varying if all(_is_number(o.get(k)) for o in overrides)]
  if not numeric:
    return None
  x = max(numeric, key=lambda k: (len({o[k] for o in overrides}), -numeric.index(k)))
  rest = [k for k in varying if k != x]
  lines = {}
  for p in points:
    label = collect.point_label({k: p.overrides[k] for k in rest
                                if k in p.overrides}, rest) if rest else ''
    lines.setdefault(label, []).append(p)
  return x, [(label, sorted(members, key=lambda p: p.overrides[x]))
             for label, members in lines.items()]


def sweep_plot(points: Sequence[SweepPoint], metric: str, path: str,
               title: str = '') -> List[str]:
  """``metric`` (mean ± std error bars) against the swept value; the paper's
  numbers, where points carry them, as dashed lines."""
  series = sweep_series(points)
  if series is None:
    return []
  x_key, lines = series
  fig, (ax,) = _figure(6, 4.5)
  for label, members in lines:
    xs = [p.overrides[x_key] for p in members]
    bars = ax.errorbar(xs, [p.mean for p in members], yerr=[p.std for p in members],
                       marker='o', capsize=3, label=label or metric)
    paper = [(x, p.paper) for x, p in zip(xs, members) if p.paper is not None]
    if paper:
      ax.plot(*zip(*paper), linestyle='--', marker='x', color=bars[0].get_color(),
              label=f'{label}, paper' if label else 'paper')
  xs = sorted({p.overrides[x_key] for _, members in lines for p in members})
  if len(xs) <= 12:
    ax.set_xticks(xs)
  ax.set_xlabel(x_key)
  ax.set_ylabel(f'{metric} (mean ± std over seeds)')
  ax.grid(alpha=0.3)
  ax.legend()
  if title:
    ax.set_title(title)
  return _save(fig, path)


def write_plots(rows: Sequence[dict], root: str,
                echo: Callable[[str], None] = print) -> List[Plot]:
  """Every figure of ``rows`` (report order) under ``root/plots``.

  A run whose figure cannot be drawn (e.g. an unreadable metrics.jsonl) is skipped
  with a warning through ``echo``.
  """
  out_dir = os.path.join(root, PLOTS_DIR)
  plots = []
  for row in rows:
    name, metric = slug(row['run']), row['metric']
    try:
      for label, paths in (
          ('learning curves', learning_curves(
              row['path'], metric, os.path.join(out_dir, f'{name}.curves.png'),
              row['run'])),
          ('dev vs test', dev_test_scatter(
              [('', row['seeds'], row['values'])], metric,
              os.path.join(out_dir, f'{name}.dev_test.png'), row['run']))):
        plots += [Plot(row['run'], label, p) for p in paths]
    except UserError as e:
      echo(f'warning: no plots of run {row["run"]}: {e}')
  sweeps = {}
  for row in rows:
    if row['sweep_key'] is not None:
      sweeps.setdefault(row['sweep_key'], []).append(row)
  for key, members in sweeps.items():
    metric = members[0]['metric']
    points = [SweepPoint(r['overrides'], e['mean'], e['std'], e['paper'])
              for r in members for e in [r['metrics'].get(metric)]
              if r['metric'] == metric and e and e['n']]
    label = collect.sweep_label(key)
    path = os.path.join(out_dir, 'sweep.' + slug('/'.join(k for k in key if k))
                        + '.png')
    for p in sweep_plot(points, metric, path, label):
      x_key = sweep_series(points)[0]
      plots.append(Plot(label, f'{metric} vs {x_key}', p))
    scatter = path[:-len('.png')] + '.dev_test.png'
    for p in dev_test_scatter([(r['point'], r['seeds'], r['values']) for r in members
                               if r['metric'] == metric], metric, scatter, label):
      plots.append(Plot(label, 'dev vs test, every point', p))
  return plots

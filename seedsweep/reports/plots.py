"""Figures for the report under ``ROOT/plots/``: PNG at 200 dpi, with PDF and SVG
copies beside each (matplotlib's Agg, PDF and SVG renderers).

* :func:`learning_curves`: a run's dev and test values of its paper metric per
  epoch (mean line, ±std band over seeds) and, in a second panel, the training loss;
  read from ``metrics.jsonl`` (runs without one get none).
* :func:`dev_test_scatter`: one point per seed, dev against test value of the
  selected model (results.json), for one run or every point of a sweep.
* :func:`expected_max_plot`: the expected best dev score over n of a sweep's points
  and the test score of the point it picks (Tang et al., 2020, unbiased with a
  bootstrap band; Dodge et al., 2019, dashed).
* :func:`sweep_plot`: the runs of one sweep, the paper metric against the numeric
  override that varies: each seed's value as a dot, the mean with its 95 %
  confidence interval (t over seeds) as a line with error bars; one line per
  combination of the other varying overrides; a log axis for sizes and rates that
  span a factor of 4 or more (:func:`log_axis`).

Axes are labelled in words with the config key beside them (:func:`axis_label`).

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

PNG_DPI = 200
ALSO_FORMATS = ('pdf', 'svg')  # written beside every PNG, for papers

# owner: the run name (or collect.sweep_label) whose links show the plot; label: the
# link text; path: the PNG written; also: its PDF and SVG copies.
Plot = collections.namedtuple('Plot', ['owner', 'label', 'path', 'also'])
# One point of a sweep: its overrides, its paper metric's summary over seeds and the
# seeds' values.
SweepPoint = collections.namedtuple('SweepPoint',
                                    ['overrides', 'mean', 'std', 'paper', 'values'],
                                    defaults=((),))

# Config keys (their last part) and metrics in words, for axis labels.
WORDS = {'learning_rate': 'learning rate', 'hidden': 'hidden size',
         'embed_dim': 'embedding size', 'batch_size': 'batch size',
         'dropout': 'dropout rate', 'coef': 'L2 coefficient', 'num_epochs': 'epochs',
         'filters': 'filters', 'groups': 'groups', 'layers': 'layers',
         'patience': 'patience', 'min_count': 'minimum word count',
         'accuracy': 'accuracy (%)', 'loss': 'loss', 'slot_f1': 'slot F1 (%)',
         'intent_error': 'intent error (%)', 'error': 'error (%)'}
# Keys whose values are scales: a log axis once they span a factor of 4.
LOG_KEYS = ('learning_rate', 'hidden', 'embed_dim', 'batch_size', 'coef', 'filters',
            'eps', 'dh', 'th', 'dl', 'min_count')


def axis_label(key: str) -> str:
  """``'optimizer.learning_rate'`` -> ``'learning rate (optimizer.learning_rate)'``;
  a metric: ``'test_accuracy'`` -> ``'test accuracy (%)'``."""
  last = key.rsplit('.', 1)[-1]
  for split in ('dev_', 'test_', 'train_'):
    if last.startswith(split) and '.' not in key:
      base = last[len(split):]
      return f'{split[:-1]} {WORDS.get(base, base.replace("_", " "))}'
  words = WORDS.get(last, last.replace('_', ' '))
  return f'{words} ({key})' if words != key else key


def log_axis(key: str, values: Sequence[float]) -> bool:
  """A log axis for ``key``'s ``values``: a size or rate (:data:`LOG_KEYS`) whose
  positive values span a factor of 4 or more, or any positive values spanning 100."""
  values = [float(v) for v in values]
  if not values or min(values) <= 0:
    return False
  span = max(values) / min(values)
  return span >= 100 or (span >= 4 and key.rsplit('.', 1)[-1] in LOG_KEYS)


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
  fig = Figure(figsize=(width, height), dpi=PNG_DPI)
  axes = fig.subplots(1, ncols, squeeze=False)[0]
  return fig, list(axes)


# No dates or software versions in the files: the same runs, the same bytes.
_METADATA = {'png': {'Software': None}, 'pdf': {'CreationDate': None, 'Producer': None},
             'svg': {'Date': None, 'Creator': None}}


def _save(fig, path: str) -> List[str]:
  """Writes ``fig`` to ``path`` (a .png) and its PDF and SVG copies; their paths,
  the PNG first."""
  os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
  fig.tight_layout()
  base = path[:-len('.png')]
  paths = [path] + [f'{base}.{fmt}' for fmt in ALSO_FORMATS]
  import matplotlib  # pylint: disable=g-import-not-at-top
  # SVG element ids are random unless salted: a fixed salt, the same ids every time.
  with matplotlib.rc_context({'svg.hashsalt': 'seedsweep'}):
    for out in paths:
      fmt = out.rsplit('.', 1)[-1]
      with outputs.atomic_file(out, 'wb') as f:
        fig.savefig(f, format=fmt, dpi=PNG_DPI, metadata=_METADATA[fmt])
  return paths


def learning_curves(run_dirs: Sequence[str], metric: str, path: str, title: str = '',
                    point: str = '') -> List[str]:
  """Dev and test ``metric`` per epoch, and the train loss, mean ± std over the seeds
  of ``run_dirs`` (one run, or a run's seed parts; of the members of ``point``, a
  stacked run's point label)."""
  from matplotlib.ticker import MaxNLocator  # pylint: disable=g-import-not-at-top
  rows = [r for run_dir in run_dirs for r in outputs.MetricsLog(run_dir).rows()
          if r.get('point', '') == point]
  if not rows:
    return []
  base = metric_base(metric)
  keys = [k for k in (f'dev_{base}', f'test_{base}') if any(k in r for r in rows)]
  fig, (left, right) = _figure(10, 4, ncols=2)
  for ax, names, ylabel in ((left, keys, WORDS.get(base, base)),
                            (right, ['train_loss'], 'train loss')):
    for name in names:
      epochs, mean, std = curve_stats(rows, name)
      if not len(epochs):
        continue
      (line,) = ax.plot(epochs, mean, marker='o', markersize=3, label=axis_label(name))
      ax.fill_between(epochs, mean - std, mean + std, alpha=0.2,
                      color=line.get_color(), linewidth=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel('epoch')
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if ax.lines:
      ax.legend()
  n = len({(r.get('seed'), tuple(r.get('streams') or ())) for r in rows})
  over = f'mean ± std over {outputs.seeds_text(n)}'
  fig.suptitle(f'{title} ({over})' if title else over)
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
  ax.set_xlabel(axis_label(dev))
  ax.set_ylabel(axis_label(metric))
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
  """``metric`` against the swept value: every seed's value (dots), the mean and
  its 95 % confidence interval (line, error bars); the paper's numbers, where
  points carry them, as dashed lines."""
  from matplotlib.ticker import NullFormatter  # pylint: disable=g-import-not-at-top
  from matplotlib.transforms import ScaledTranslation  # pylint: disable=g-import-not-at-top
  series = sweep_series(points)
  if series is None:
    return []
  x_key, lines = series
  fig, (ax,) = _figure(6, 4.5)
  for i, (label, members) in enumerate(lines):
    # Each line a few points to the side of the others, its seeds' dots beside it
    # (shifted after drawing, so that the axes' limits still fit the data).
    shift = 7 * (i - (len(lines) - 1) / 2)
    xs = [p.overrides[x_key] for p in members]
    cis = [statistics.mean_ci(p.values) or (p.mean, p.mean) for p in members]
    means = [p.mean for p in members]
    bars = ax.errorbar(xs, means, yerr=[[m - lo for m, (lo, _) in zip(means, cis)],
                                        [hi - m for m, (_, hi) in zip(means, cis)]],
                       marker='o', capsize=3, label=label or 'mean, 95 % CI')
    for artist in bars.get_children():
      artist.set_transform(artist.get_transform()
                           + ScaledTranslation(shift / 72, 0, fig.dpi_scale_trans))
    colour = bars[0].get_color()
    dots = [(x, v) for x, p in zip(xs, members) for v in p.values]
    if dots:
      seeds = ax.scatter(*zip(*dots), s=12, alpha=0.5, color=colour, linewidths=0,
                         zorder=3)
      seeds.set_offset_transform(ax.transData + ScaledTranslation(
          (shift + 4) / 72, 0, fig.dpi_scale_trans))
    paper = [(x, p.paper) for x, p in zip(xs, members) if p.paper is not None]
    if paper:
      ax.plot(*zip(*paper), linestyle='--', marker='x', color=colour,
              label=f'{label}, paper' if label else 'paper')
  xs = sorted({p.overrides[x_key] for _, members in lines for p in members})
  if log_axis(x_key, xs):
    ax.set_xscale('log')
    ax.xaxis.set_minor_formatter(NullFormatter())
  if len(xs) <= 12:
    ax.set_xticks(xs, labels=[f'{x:g}' for x in xs])
  ax.set_xlabel(axis_label(x_key))
  ax.set_ylabel(f'{axis_label(metric)}: seeds, mean and 95 % CI')
  ax.grid(alpha=0.3)
  ax.legend()
  if title:
    ax.set_title(title)
  return _save(fig, path)


def expected_max_plot(points: Sequence[Tuple[float, float]], metric: str, path: str,
                      title: str = '') -> List[str]:
  """The expected best dev score of ``n`` sweep points tried at random, and the
  expected ``metric`` of the point that dev picks, for ``n`` = 1 .. the number of
  points: Tang et al.'s (2020) unbiased estimate with its 95 % bootstrap band, and
  Dodge et al.'s (2019), biased low, dashed. ``points``: each point's (dev,
  ``metric``) means over seeds."""
  dev = statistics.dev_metric(metric)
  points = [(d, t) for d, t in points if d is not None and t is not None]
  if len(points) < 2:
    return []
  sign = -1.0 if statistics.lower_is_better(dev) else 1.0  # best = lowest error
  devs = [sign * d for d, _ in points]
  tests = [t for _, t in points]
  ns = np.arange(1, len(points) + 1)
  fig, (ax,) = _figure(6, 4.5)
  for follow, marker, label in ((None, 'o', f'best {axis_label(dev)} of n points'),
                                (tests, 's', f'{axis_label(metric)} of that point')):
    scale = sign if follow is None else 1.0
    unbiased = [scale * statistics.expected_max_unbiased(devs, n, follow) for n in ns]
    band = np.array([statistics.expected_max_band(devs, n, follow) for n in ns]) * scale
    line, = ax.plot(ns, unbiased, marker=marker, label=label)
    ax.fill_between(ns, band[:, 0], band[:, 1], color=line.get_color(), alpha=0.15)
    ax.plot(ns, [scale * statistics.expected_max(devs, n, follow) for n in ns],
            linestyle='--', color=line.get_color(), alpha=0.7)
  ax.plot([], [], linestyle='--', color='gray', label='Dodge et al. (with replacement)')
  ax.set_xticks(ns if len(ns) <= 12 else ns[::max(1, len(ns) // 12)])
  ax.set_xlabel('points of the sweep tried (drawn at random)')
  ax.set_ylabel('expected value (mean over seeds per point)')
  ax.grid(alpha=0.3)
  ax.legend()
  ax.set_title((f'{title}: ' if title else '') + 'expected maximum (unbiased, '
               '95 % bootstrap band)')
  return _save(fig, path)


def _mean(values) -> Optional[float]:
  return float(np.mean(values)) if values else None


def write_plots(rows: Sequence[dict], root: str,
                print_fn: Callable[[str], None] = print) -> List[Plot]:
  """Every figure of ``rows`` (report order) under ``root/plots`` (``root``: where
  the report goes).

  A run whose figure cannot be drawn (e.g. an unreadable metrics.jsonl) is skipped
  with a warning through ``print_fn``.
  """
  out_dir = os.path.join(root, PLOTS_DIR)
  plots = []
  for row in rows:
    name, metric = slug(row['run']), row['metric']
    try:
      for label, paths in (
          ('learning curves', learning_curves(
              [r['path'] for r in collect.runs_of([row])], metric,
              os.path.join(out_dir, f'{name}.curves.png'),
              row['run'], row.get('stack_point', ''))),
          ('dev vs test', dev_test_scatter(
              [('', row['seeds'], row['values'])], metric,
              os.path.join(out_dir, f'{name}.dev_test.png'), row['run']))):
        if paths:
          plots.append(Plot(row['run'], label, paths[0], tuple(paths[1:])))
    except UserError as e:
      print_fn(f'warning: no plots of run {row["run"]}: {e}')
  sweeps = {}
  for row in rows:
    if row['sweep_key'] is not None:
      sweeps.setdefault(row['sweep_key'], []).append(row)
  for key, members in sweeps.items():
    metric = members[0]['metric']
    points = [SweepPoint(r['overrides'], e['mean'], e['std'], e['paper'], e['values'])
              for r in members for e in [r['metrics'].get(metric)]
              if r['metric'] == metric and e and e['n']]
    label = collect.sweep_label(key)
    path = os.path.join(out_dir, 'sweep.' + slug('/'.join(k for k in key if k))
                        + '.png')
    paths = sweep_plot(points, metric, path, label)
    if paths:
      x_key = sweep_series(points)[0]
      plots.append(Plot(label, f'{metric} vs {x_key}', paths[0], tuple(paths[1:])))
    dev = statistics.dev_metric(metric)
    paths = expected_max_plot(
        [(_mean(r['values'].get(dev)), _mean(r['values'].get(metric)))
         for r in members if r['metric'] == metric], metric,
        path[:-len('.png')] + '.expected_max.png', label)
    if paths:
      plots.append(Plot(label, 'expected maximum over points', paths[0],
                        tuple(paths[1:])))
    scatter = path[:-len('.png')] + '.dev_test.png'
    paths = dev_test_scatter([(r['point'], r['seeds'], r['values']) for r in members
                              if r['metric'] == metric], metric, scatter, label)
    if paths:
      plots.append(Plot(label, 'dev vs test, every point', paths[0], tuple(paths[1:])))
  return plots

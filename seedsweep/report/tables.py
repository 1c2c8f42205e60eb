"""Tables of every run under a folder (``launch.py --mode=report --workdir=ROOT``).

A *run* is any folder under ROOT (at any depth) that holds ``config.json``; it also
holds ``results.json``, ``metrics.jsonl`` and ``checkpoints/`` once trained, and
``point.json`` (``{"sweep", "index", "overrides"}``) when it is a sweep point.

:func:`write_report` writes, next to the runs:

* ``ROOT/report.md``: one table per (paper source, dataset) group, a line per run and
  reported metric, links to the plots, and the runs that were skipped;
* ``ROOT/report.csv``: the same numbers, one line per run and metric, unrounded;
* ``ROOT/report.tex`` (``latex=True``): a booktabs tabular of the same table;
* ``ROOT/plots/*.png`` (``plots=True``): see :mod:`seedsweep.report.plots`.

The same runs always give byte-identical ``report.md`` and ``report.csv``: no
timestamps, no absolute paths, rows in a fixed order. A run whose ``results.json``
is missing or behind its newest checkpoint is re-evaluated from that checkpoint
first (:func:`ensure_results`); a run whose files cannot be read is skipped with a
warning and listed at the end of ``report.md``.

A *row* (what :func:`build_rows` returns, one per run) is a dict::

  run          run folder relative to ROOT ('.' for ROOT itself), '/'-separated
  path         run folder as given (ROOT joined with ``run``)
  source       paper source (results' ``paper.source``; '' when none)
  dataset      config ``data.name``
  model        config ``model.name``
  group        (source, dataset): the table the row belongs to
  sweep        point.json's ``sweep`` ('' for a plain run)
  sweep_key    (sweep folder relative to ROOT, sweep) for a point, else None
  index        point.json's ``index`` (None for a plain run)
  overrides    point.json's ``overrides`` ({} for a plain run)
  point        readable overrides (the keys that vary within the sweep), or ''
  metric       the paper metric (results' ``paper.metric``, default test_accuracy)
  seeds        [n] seeds (``cv_seeds`` for cross-validated runs)
  values       {metric name: [n] per-seed values} (``cv_metrics`` for CV runs)
  metrics      {name: entry} for the paper metric first, then each ``paper.other``
               metric; an entry holds ``values`` [n], ``n``, ``mean``, ``std``
               (ddof=1, 0 for one seed), ``min``, ``max``, ``paper`` (or None),
               ``diff`` (mean - paper, or None), ``best_dev_test`` (the metric's value
               for the seed with the best dev score, or None) and ``p_value``
  epochs_completed, wall_time, selection   as in results.json (None when absent)

``p_value`` is Welch's t-test (unequal variances) of the row's per-seed values
against those of the best row of its group on the same metric (highest mean; lowest
for metrics ending in ``_error`` or ``_loss``): a float, ``'ref'`` for the best row
itself, None when either side has fewer than two seeds or the group has one row.
"""
import csv
import io
import json
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from seedsweep.run import outputs
from seedsweep.run import provenance as provenance_lib
from seedsweep.sweep import runner as sweep
from seedsweep.errors import UserError

POINT = sweep.POINT  # each sweep point's {"sweep", "index", "overrides"}

REPORT_MD, REPORT_CSV, REPORT_TEX = 'report.md', 'report.csv', 'report.tex'
PLOTS_DIR = 'plots'
DEFAULT_METRIC = 'test_accuracy'
# Sub-folders of a run that never hold runs (not walked: checkpoints can be large).
RUN_SUBFOLDERS = ('checkpoints', 'tensorboard')
CSV_COLUMNS = ('source', 'dataset', 'run', 'model', 'point', 'sweep', 'index',
               'metric', 'n', 'mean', 'std', 'min', 'max', 'best_dev_test', 'paper',
               'diff', 'p_value', 'epochs_completed')
MD_COLUMNS = ('run', 'model', 'point', 'metric', 'mean ± std', 'min', 'max', 'n',
              'best-dev test', 'paper', 'diff', 'p (Welch)')
MD_NUMBER_COLUMNS = MD_COLUMNS[4:]  # right-aligned in report.md

Echo = Callable[[str], None]


# ---------------------------------------------------------------------------- runs


def find_runs(root: str) -> List[str]:
  """Every folder under ``root`` (``root`` included) holding a config.json.

  Sorted by path components, so the order is the same on every machine.
  """
  found = []
  for folder, subfolders, files in os.walk(root):
    if outputs.CONFIG in files:
      found.append(folder)
      subfolders[:] = [d for d in subfolders if d not in RUN_SUBFOLDERS]
    subfolders.sort()
  return sorted(found, key=lambda f: _parts(os.path.relpath(f, root)))


def _parts(relative: str) -> Tuple[str, ...]:
  return () if relative == os.curdir else tuple(relative.split(os.sep))


def run_name(run_dir: str, root: str) -> str:
  """``run_dir`` relative to ``root``, '/'-separated ('.' for ``root`` itself)."""
  return '/'.join(_parts(os.path.relpath(run_dir, root))) or '.'


def read_json_file(path: str):
  """The JSON content of ``path``; UserError naming the file when it is invalid."""
  try:
    return outputs.read_json(path)
  except ValueError as e:
    raise UserError(f'{path} is not valid JSON ({e})') from e
  except OSError as e:
    raise UserError(f'cannot read {path}: {e}') from e


def config_from_json(stored: dict):
  """The ConfigDict of a run's config.json (every JSON list back into a tuple).

  The base config's sequences (``seeds``, ``l2.params``, ``data.folds``,
  ``model.widths``, ...) are tuples; ``config_checks.to_dict`` of the result equals
  ``stored``, so ``loop.check_workdir`` accepts it.
  """
  import ml_collections  # pylint: disable=g-import-not-at-top
  return ml_collections.ConfigDict(_lists_to_tuples(stored))


def _lists_to_tuples(value):
  if isinstance(value, dict):
    return {k: _lists_to_tuples(v) for k, v in value.items()}
  if isinstance(value, list):
    return tuple(_lists_to_tuples(v) for v in value)
  return value


# ----------------------------------------------------------------- results, staleness


def latest_checkpoint(run_dir: str) -> Optional[int]:
  """The newest checkpoint's epoch, None without checkpoints (creates nothing)."""
  if not os.path.isdir(os.path.join(run_dir, 'checkpoints')):
    return None
  from seedsweep.run import checkpoints  # pylint: disable=g-import-not-at-top
  ckpts = checkpoints.Checkpoints(run_dir)
  try:
    return ckpts.latest_epoch()
  finally:
    ckpts.close()


def stale_reason(results: dict, latest: Optional[int]) -> Optional[str]:
  """Why ``results`` do not describe the newest checkpoint, of epoch ``latest`` (None:
  they do): ``epochs_completed`` is absent or below ``latest`` (the run went on after
  they were written). Without checkpoints, results are never stale.

  File times are not compared: orbax finishes a checkpoint asynchronously, possibly
  after results.json is written, which would re-evaluate finished runs for nothing.
  """
  if latest is None:
    return None
  done = results.get('epochs_completed')
  if not isinstance(done, int) or done < latest:
    return (f'{outputs.RESULTS} covers {done} epochs, the newest checkpoint '
            f'{latest}')
  return None


def ensure_results(run_dir: str, echo: Echo = print) -> Optional[dict]:
  """results.json of ``run_dir``, re-evaluated from the newest checkpoint first when
  it is missing or stale (:func:`stale_reason`).

  Re-evaluation (``seedsweep.run.loop.evaluate``) restores the newest checkpoint and
  reports each seed's selected parameters, so it gives the numbers training wrote,
  and rewrites results.json. Returns None (saying so through ``echo``) for a run with
  neither results nor checkpoints. Raises UserError for an unreadable file.
  """
  results_path = os.path.join(run_dir, outputs.RESULTS)
  latest = latest_checkpoint(run_dir)
  if os.path.exists(results_path):
    results = read_json_file(results_path)
    if not isinstance(results, dict):
      raise UserError(f'{results_path} holds {type(results).__name__}; expected the '
                      f'results object a run writes')
    reason = stale_reason(results, latest)
    if reason is None:
      return results
    echo(f'{run_dir}: {reason}; re-evaluating that checkpoint.')
  elif latest is None:
    echo(f'{run_dir}: no {outputs.RESULTS} and no checkpoint; skipped.')
    return None
  else:
    echo(f'{run_dir}: no {outputs.RESULTS}; evaluating the checkpoint of epoch '
         f'{latest}.')
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  config = config_from_json(read_json_file(os.path.join(run_dir, outputs.CONFIG)))
  return loop.evaluate(config, run_dir, echo)


def _runs(n: int) -> str:
  return f'{n} run' if n == 1 else f'{n} runs'


# ------------------------------------------------------------------------- statistics


def lower_is_better(metric: str) -> bool:
  return metric.endswith(('_error', '_loss'))


def dev_metric(metric: str) -> str:
  """The dev metric whose best seed is reported: test_X -> dev_X, else dev_accuracy."""
  return metric.replace('test_', 'dev_', 1) if 'test_' in metric else 'dev_accuracy'


def best_index(scores: Sequence[float], lower: bool) -> int:
  """Index of the best score (the first on ties)."""
  scores = np.asarray(scores, np.float64)
  return int(np.argmin(scores) if lower else np.argmax(scores))


def best_dev_value(values: Dict[str, Sequence[float]], metric: str) -> Optional[float]:
  """``metric`` of the seed with the best dev score (None without dev values)."""
  dev = dev_metric(metric)
  test = values.get(metric) or []
  scores = values.get(dev) or []
  if not test or len(scores) != len(test):
    return None
  return float(test[best_index(scores, lower_is_better(dev))])


def welch_p(a: Sequence[float], b: Sequence[float]) -> Optional[float]:
  """Two-sided p-value of Welch's t-test; None when a side has < 2 values."""
  if len(a) < 2 or len(b) < 2:
    return None
  from scipy import stats  # pylint: disable=g-import-not-at-top
  with np.errstate(all='ignore'):  # two constant samples give nan, said as 'nan'
    return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def metric_entry(values: Sequence[float], paper, best_dev_test) -> dict:
  """Summary of one metric's per-seed ``values`` [n] beside the paper's number."""
  values = [float(v) for v in values]
  entry = {'values': values, 'n': len(values), 'mean': None, 'std': None,
           'min': None, 'max': None}
  if values:
    entry.update(outputs.summarize(values))
  number = paper if isinstance(paper, (int, float)) and not isinstance(
      paper, bool) else None
  entry.update(paper=number,
               diff=None if number is None or not values else entry['mean'] - number,
               best_dev_test=best_dev_test, p_value=None)
  return entry


def seed_values(results: dict) -> Tuple[List[int], Dict[str, List[float]]]:
  """``(seeds [n], {metric: [n]})``; each seed's CV mean for cross-validated runs."""
  if 'cv_metrics' in results:
    return list(results['cv_seeds']), dict(results['cv_metrics'])
  return list(results.get('seeds', [])), dict(results.get('metrics', {}))


# ------------------------------------------------------------------------------- rows


def point_label(overrides: dict, varying: Sequence[str]) -> str:
  """``'hidden=32, dropout=0.2'``: the overrides in ``varying`` (all of them, when
  none vary), ``paper.*`` left out, named as the sweep runner names them
  (:func:`seedsweep.sweep.runner.short_names`)."""
  keys = [k for k in overrides if not k.startswith('paper.')]
  shown = [k for k in keys if k in varying] or keys
  return ', '.join(f'{name}={_value_text(overrides[key])}'
                   for name, key in zip(sweep.short_names(shown), shown))


def _value_text(value) -> str:
  if isinstance(value, (list, tuple)):
    return '(' + ', '.join(_value_text(v) for v in value) + ')'
  return repr(value) if isinstance(value, float) else str(value)


def varying_keys(override_sets: Sequence[dict]) -> List[str]:
  """Keys (``paper.*`` left out) whose values are not the same in every set, in
  order of first appearance."""
  keys = list(dict.fromkeys(k for o in override_sets for k in o
                            if not k.startswith('paper.')))
  missing = object()
  return [k for k in keys
          if len({json.dumps(o.get(k, missing), sort_keys=True, default=repr)
                  for o in override_sets}) > 1]


def _read_run(run_dir: str, root: str, echo: Echo) -> Optional[dict]:
  """The row of one run without its group-relative fields (point, p-values)."""
  config = read_json_file(os.path.join(run_dir, outputs.CONFIG))
  if not isinstance(config, dict):
    raise UserError(f'{os.path.join(run_dir, outputs.CONFIG)} holds '
                    f'{type(config).__name__}; expected the config object a run writes')
  point_path = os.path.join(run_dir, POINT)
  point = read_json_file(point_path) if os.path.exists(point_path) else {}
  if not isinstance(point, dict) or not isinstance(point.get('overrides', {}), dict):
    raise UserError(f'{point_path}: expected {{"sweep", "index", "overrides"}}')
  results = ensure_results(run_dir, echo)
  if results is None:
    return None
  paper = results.get('paper') or config.get('paper') or {}
  metric = paper.get('metric') or DEFAULT_METRIC
  seeds, values = seed_values(results)
  others = paper.get('other') or {}
  metrics = {}
  for name, number in [(metric, paper.get('value'))] + list(others.items()):
    if name not in metrics:
      metrics[name] = metric_entry(values.get(name) or [], number,
                                   best_dev_value(values, name))
  name = run_name(run_dir, root)
  sweep = point.get('sweep') or ''
  return {
      'run': name, 'path': run_dir, 'source': paper.get('source') or '',
      'dataset': (config.get('data') or {}).get('name', ''),
      'model': (config.get('model') or {}).get('name', ''),
      'sweep': sweep,
      'sweep_key': (name.rpartition('/')[0], sweep) if sweep else None,
      'index': point.get('index') if sweep else None,
      'overrides': dict(point.get('overrides') or {}), 'point': '',
      'metric': metric, 'seeds': seeds, 'values': values, 'metrics': metrics,
      'epochs_completed': results.get('epochs_completed'),
      'wall_time': results.get('wall_time'), 'selection': results.get('selection'),
      'determinism': (results.get('provenance') or {}).get('determinism'),
  }


def record_warnings(members: Sequence[dict]) -> List[str]:
  """One line per run of a table whose determinism record differs from the first
  run's in a field that changes a result's bits (provenance.REPRODUCING)."""
  first = members[0]
  warnings = []
  for r in members[1:]:
    if (r['determinism'] is None) != (first['determinism'] is None):
      missing = r if r['determinism'] is None else first
      warnings.append(f'{missing["run"]} has no determinism record (made before '
                      f'records were kept)')
    elif r['determinism'] is not None:
      diff = provenance_lib.record_differences(first['determinism'], r['determinism'])
      if diff:
        warnings.append(f'{r["run"]} differs from {first["run"]}: ' + '; '.join(diff))
  return warnings


def order_key(row: dict):
  """Plain runs by name, then sweep points by sweep and index."""
  if row['sweep_key'] is None:
    return (0, row['run'], (), -1, '')
  index = row['index'] if isinstance(row['index'], int) else -1
  return (1, '', row['sweep_key'], index, row['run'])


def group_key(group: Tuple[str, str]):
  """Groups with a paper source first, then by source and dataset."""
  source, dataset = group
  return (source == '', source, dataset)


def collect(root: str, echo: Echo = print) -> Tuple[List[dict], List[Tuple[str, str]]]:
  """``(rows, skipped)``: the rows of every readable run under ``root``, grouped and
  ordered, with points and p-values; ``skipped`` = [(run name, reason)]."""
  rows, skipped = [], []
  for run_dir in find_runs(root):
    name = run_name(run_dir, root)
    try:
      row = _read_run(run_dir, root, echo)
    except UserError as e:
      reason = _relative_message(str(e), root)
      echo(f'warning: skipping run {name}: {reason}')
      skipped.append((name, reason))
      continue
    if row is None:
      skipped.append((name, f'no {outputs.RESULTS} and no checkpoint'))
    else:
      rows.append(row)
  _set_points(rows)
  rows = sorted(rows, key=lambda r: (group_key((r['source'], r['dataset'])),
                                     order_key(r)))
  for r in rows:
    r['group'] = (r['source'], r['dataset'])
  _set_p_values(rows)
  return rows, skipped


def _relative_message(message: str, root: str) -> str:
  """``message`` with the paths under ``root`` made relative (deterministic text)."""
  for prefix in (os.path.abspath(root), os.path.normpath(root)):
    if prefix not in (os.curdir, ''):
      message = message.replace(prefix + os.sep, '')
  return message


def _set_points(rows: List[dict]) -> None:
  by_sweep = {}
  for r in rows:
    if r['sweep_key'] is not None:
      by_sweep.setdefault(r['sweep_key'], []).append(r)
  for members in by_sweep.values():
    varying = varying_keys([r['overrides'] for r in members])
    for r in members:
      r['point'] = point_label(r['overrides'], varying)


def _set_p_values(rows: List[dict]) -> None:
  groups = {}
  for r in rows:
    groups.setdefault(r['group'], []).append(r)
  for members in groups.values():
    names = dict.fromkeys(m for r in members for m in r['metrics'])
    for metric in names:
      entries = [r['metrics'][metric] for r in members
                 if metric in r['metrics'] and r['metrics'][metric]['n']]
      if len(entries) < 2:
        continue
      best = entries[best_index([e['mean'] for e in entries],
                                lower_is_better(metric))]
      for e in entries:
        e['p_value'] = 'ref' if e is best else welch_p(e['values'], best['values'])


def build_rows(root: str, echo: Echo = print) -> List[dict]:
  """One row per readable run under ``root`` (module docstring), in report order."""
  return collect(root, echo)[0]


# -------------------------------------------------------------------------- rendering


def fmt(value, spec: str = '.2f') -> str:
  """A number with 2 decimals ('' for None)."""
  if value is None:
    return ''
  if isinstance(value, str):
    return value
  return format(value, spec)


def fmt_p(value) -> str:
  if isinstance(value, float) and 0 <= value < 0.005:
    return '<0.01'
  return fmt(value)


def _csv_number(value) -> str:
  if value is None:
    return ''
  if isinstance(value, float):
    return repr(value)
  return str(value)


def group_title(group: Tuple[str, str]) -> str:
  source, dataset = group
  return f'{source}: {dataset}' if source else f'{dataset} (no paper source)'


def grouped(rows: Sequence[dict]) -> List[Tuple[Tuple[str, str], List[dict]]]:
  """``[(group, rows)]`` in the rows' order."""
  out = {}
  for r in rows:
    out.setdefault(r['group'], []).append(r)
  return list(out.items())


def _table_cells(row: dict, metric: str, entry: dict) -> List[str]:
  spread = (f'{fmt(entry["mean"])} ± {fmt(entry["std"])}'
            if entry['n'] else '')
  return [row['run'], row['model'], row['point'], metric, spread, fmt(entry['min']),
          fmt(entry['max']), str(entry['n']), fmt(entry['best_dev_test']),
          fmt(entry['paper']), fmt(entry['diff'], '+.2f'), fmt_p(entry['p_value'])]


def _points_add_to_names(members: Sequence[dict]) -> bool:
  """Whether the ``point`` column says more than ``run`` for some row. The runner
  names a point's folder by all its overrides (:func:`seedsweep.sweep.runner.point_name`);
  the label shows only the varying ones. Where the label shows every override and
  the folder has the runner's name, the column repeats ``run`` and is left out."""
  def repeats_run(r):
    return (r['point'] == point_label(r['overrides'], ())
            and r['run'].rsplit('/', 1)[-1] == sweep.point_name(r['overrides']))
  return any(r['point'] and not repeats_run(r) for r in members)


def _md_cell(text: str) -> str:
  return text.replace('|', '\\|')


def render_markdown(rows: Sequence[dict], skipped: Sequence[Tuple[str, str]],
                    links: Optional[Dict[str, List[Tuple[str, str]]]] = None) -> str:
  """report.md: a table per group, its plot links (``links``: {run or sweep label:
  [(text, path relative to ROOT)]}, keyed by the run a plot belongs to), then the
  skipped runs."""
  links = links or {}
  lines = ['# Report', '',
           f'{_runs(len(rows))}. Over seeds: mean ± sample std (ddof=1), min, max, n. '
           '*best-dev test*: the value of the seed with the best dev score; '
           '*diff*: mean - paper; *p (Welch)*: Welch\'s t-test against the best '
           'row of the table on the same metric (*ref*).', '']
  for group, members in grouped(rows):
    keep = [c != 'point' or _points_add_to_names(members) for c in MD_COLUMNS]
    columns = [c for c, k in zip(MD_COLUMNS, keep) if k]
    lines += [f'## {_md_cell(group_title(group))}', '',
              '| ' + ' | '.join(columns) + ' |',
              '|' + '|'.join(' ---: ' if c in MD_NUMBER_COLUMNS else ' --- '
                             for c in columns) + '|']
    for r in members:
      for metric, entry in r['metrics'].items():
        cells = [_md_cell(c) for c, k in zip(_table_cells(r, metric, entry), keep)
                 if k]
        lines.append('| ' + ' | '.join(cells) + ' |')
    warnings = record_warnings(members)
    if warnings:
      lines += ['', '**Warning:** the rows of this table were produced under different '
                'determinism records, so their numbers are not comparable bit for bit:',
                ''] + [f'- {_md_cell(w)}' for w in warnings]
    plot_lines = [f'- {_md_cell(owner)}: '
                  + ', '.join(f'[{text}]({path})' for text, path in links[owner])
                  for owner in _link_owners(members) if owner in links]
    if plot_lines:
      lines += ['', 'Plots:', ''] + plot_lines
    lines.append('')
  if skipped:
    lines += ['## Skipped runs', '']
    lines += [f'- {_md_cell(name)}: {_md_cell(reason)}' for name, reason in skipped]
    lines.append('')
  return '\n'.join(lines)


def sweep_label(sweep_key: Tuple[str, str]) -> str:
  """``'sweep sweeps/demo.py (in runs/demo)'``: how a sweep's plots are named."""
  folder, sweep = sweep_key
  return f'sweep {sweep}' + (f' (in {folder})' if folder else '')


def _link_owners(members: Sequence[dict]) -> List[str]:
  """The group's runs in order, then its sweeps."""
  sweeps = [sweep_label(r['sweep_key']) for r in members if r['sweep_key']]
  return [r['run'] for r in members] + list(dict.fromkeys(sweeps))


def render_csv(rows: Sequence[dict]) -> str:
  """report.csv: one line per row and metric, unrounded numbers."""
  buffer = io.StringIO()
  writer = csv.writer(buffer, lineterminator='\n')
  writer.writerow(CSV_COLUMNS)
  for r in rows:
    for metric, e in r['metrics'].items():
      writer.writerow([r['source'], r['dataset'], r['run'], r['model'], r['point'],
                       r['sweep'], _csv_number(r['index']), metric, e['n']]
                      + [_csv_number(e[k]) for k in ('mean', 'std', 'min', 'max',
                                                     'best_dev_test', 'paper',
                                                     'diff', 'p_value')]
                      + [_csv_number(r['epochs_completed'])])
  return buffer.getvalue()


_LATEX_ESCAPES = {'\\': r'\textbackslash{}', '&': r'\&', '%': r'\%', '$': r'\$',
                  '#': r'\#', '_': r'\_', '{': r'\{', '}': r'\}',
                  '~': r'\textasciitilde{}', '^': r'\textasciicircum{}'}


def latex_escape(text: str) -> str:
  return ''.join(_LATEX_ESCAPES.get(c, c) for c in text)


def render_latex(rows: Sequence[dict]) -> str:
  """report.tex: one booktabs tabular (needs ``\\usepackage{booktabs}``), a
  sub-heading per group."""
  keep_point = _points_add_to_names(rows)  # one tabular: one choice for all groups
  header = ['Run'] + ['Point'] * keep_point + [
      'Metric', r'Mean $\pm$ std', 'Best-dev test', 'Paper', 'Diff', '$p$']
  lines = ['% Written by seedsweep/report/tables.py; needs \\usepackage{booktabs}.',
           r'\begin{tabular}{' + 'l' * (len(header) - 5) + 'r' * 5 + '}', r'\toprule',
           ' & '.join(header) + r' \\', r'\midrule']
  for position, (group, members) in enumerate(grouped(rows)):
    if position:
      lines.append(r'\midrule')
    lines.append(rf'\multicolumn{{{len(header)}}}{{l}}{{\textit{{'
                 rf'{latex_escape(group_title(group))}}}}} \\')
    for r in members:
      for metric, e in r['metrics'].items():
        spread = rf'{fmt(e["mean"])} $\pm$ {fmt(e["std"])}' if e['n'] else ''
        cells = [latex_escape(r['run'])] + [latex_escape(r['point'])] * keep_point + [
                 latex_escape(metric), spread, fmt(e['best_dev_test']),
                 fmt(e['paper']), fmt(e['diff'], '+.2f'),
                 latex_escape(fmt_p(e['p_value'])).replace('<', '$<$')]
        lines.append(' & '.join(cells) + r' \\')
  lines += [r'\bottomrule', r'\end{tabular}', '']
  return '\n'.join(lines)


def write_text(path: str, text: str) -> None:
  with outputs.atomic_file(path, encoding='utf-8', newline='') as f:
    f.write(text)


def write_report(root: str, latex: bool = False, plots: bool = True,
                 echo: Echo = print) -> dict:
  """Writes report.md and report.csv (and report.tex, plots) under ``root``.

  Returns ``{'rows': rows (module docstring), 'skipped': [(run, reason)],
  'files': [every path written]}``.
  """
  if not os.path.isdir(root):
    raise UserError(f'--workdir={root} is not a folder; expected a folder of runs')
  rows, skipped = collect(root, echo)
  for group, members in grouped(rows):
    for w in record_warnings(members):
      echo(f'warning: {group_title(group)}: {w}')
  files, links = [], {}
  if plots:
    from seedsweep.report import plots as plots_lib  # pylint: disable=g-import-not-at-top
    for plot in plots_lib.write_plots(rows, root, echo):
      files.append(plot.path)
      links.setdefault(plot.owner, []).append(
          (plot.label, '/'.join(_parts(os.path.relpath(plot.path, root)))))
  outputs_text = [(REPORT_MD, render_markdown(rows, skipped, links)),
                  (REPORT_CSV, render_csv(rows))]
  if latex:
    outputs_text.append((REPORT_TEX, render_latex(rows)))
  for name, text in outputs_text:
    path = os.path.join(root, name)
    write_text(path, text)
    files.append(path)
  echo(f'report of {_runs(len(rows))} ({len(skipped)} skipped): '
       f'{os.path.join(root, REPORT_MD)}')
  return {'rows': rows, 'skipped': skipped, 'files': files}

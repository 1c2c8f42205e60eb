"""Rows (:mod:`seedsweep.reports.collect`) as text: report.md, report.csv, report.tex.

The same rows always give the same bytes: no timestamps, no absolute paths.
"""
import csv
import io
from typing import Dict, List, Optional, Sequence, Tuple

from seedsweep.reports import collect
from seedsweep.reports import statistics
from seedsweep.reports import verdict
from seedsweep.sweep import runner as sweep

CSV_COLUMNS = ('source', 'dataset', 'run', 'model', 'point', 'sweep', 'index',
               'metric', 'n', 'mean', 'std', 'ci95_low', 'ci95_high', 'min', 'max',
               'best_dev_test', 'paper', 'diff', 'p_value', 'p_holm', 'p_rank',
               'aso_eps_min', 'aso_power', 'mdd', 'epochs_completed', 'wall_time',
               'embeddings', 'hardware', 'finished', 'test_data')
MD_COLUMNS = ('run', 'model', 'point', 'metric', 'mean ± std', '95 % CI', 'min', 'max',
              'n', 'best-dev test', 'paper', 'diff', 'p (Welch)', 'p (Holm)',
              'p (rank)', 'ASO ε', 'MDD')
MD_NUMBER_COLUMNS = MD_COLUMNS[4:]  # right-aligned in report.md


def fmt(value, spec: str = '.2f') -> str:
  """A number with 2 decimals ('' for None)."""
  if value is None:
    return ''
  if isinstance(value, str):
    return value
  return format(value, spec)


def fmt_p(value) -> str:
  """A p-value as :func:`fmt` writes it, ``'<0.01'`` below 0.005 (not ``'0.00'``)."""
  if isinstance(value, float) and 0 <= value < 0.005:
    return '<0.01'
  return fmt(value)


def _csv_number(value) -> str:
  if value is None:
    return ''
  if isinstance(value, float):
    return repr(value)
  return str(value)


def mean_spread(entry: dict, plus_minus: str) -> str:
  """'mean ± std' over the seeds; the mean alone for one seed, which has no spread."""
  if entry['n'] <= 1:
    return fmt(entry['mean'])
  return f'{fmt(entry["mean"])} {plus_minus} {fmt(entry["std"])}'


def run_cell(row: dict) -> str:
  """A row's run as every table names it: an unfinished run says so."""
  return f'{row["run"]} ({row["unfinished"]})' if row['unfinished'] else row['run']


def _table_cells(row: dict, metric: str, entry: dict) -> List[str]:
  spread = mean_spread(entry, '±')
  if not entry['n'] and collect.test_key(row) == collect.NO_TEST:
    spread = collect.NO_TEST
  ci = entry.get('ci95')
  return [run_cell(row), row['model'], row['point'], metric, spread,
          f'[{fmt(ci[0])}, {fmt(ci[1])}]' if ci else '', fmt(entry['min']),
          fmt(entry['max']), str(entry['n']), fmt(entry['best_dev_test']),
          fmt(entry['paper']), fmt(entry['diff'], '+.2f'), fmt_p(entry['p_value']),
          fmt_p(entry.get('p_holm')), fmt_p(entry.get('p_rank')),
          fmt(entry.get('aso')), fmt(entry.get('mdd'))]


def _points_add_to_names(members: Sequence[dict]) -> bool:
  """Whether the ``point`` column says more than ``run`` for some row. The runner
  names a point's folder by all its overrides (:func:`seedsweep.sweep.runner.point_name`);
  the label shows only the varying ones. Where the label shows every override and
  the folder has the runner's name, the column repeats ``run`` and is left out."""
  def repeats_run(r):
    return (r['point'] == collect.point_label(r['overrides'], ())
            and r['run'].rsplit('/', 1)[-1] == sweep.point_name(r['overrides']))
  return any(r['point'] and not repeats_run(r) for r in members)


def _md_cell(text: str) -> str:
  return text.replace('|', '\\|')


def aso_lines(members: Sequence[dict]) -> List[str]:
  """A table's note of ASO verdicts: per metric, the rows the best row is almost
  stochastically better than (epsilon under the threshold) and those it is not
  shown better than, each with the bootstrap's power."""
  notes = []
  for metric in dict.fromkeys(m for r in members for m in r['metrics']):
    better, unshown = [], []
    for r in members:
      e = r['metrics'].get(metric, {})
      if not isinstance(e.get('aso'), float):
        continue
      power = e.get('aso_power')
      text = f'{r["run"]} (ε {e["aso"]:.2f}' + (
          f', power {power:.2f})' if power is not None else ')')
      (better if e['aso'] < statistics.ASO_THRESHOLD else unshown).append(text)
    if better or unshown:
      parts = ([f'better than {", ".join(better)}'] if better else []) + (
          [f'not shown better than {", ".join(unshown)}'] if unshown else [])
      notes.append(f'{metric}: the best row is ' + '; '.join(parts))
  if not notes:
    return []
  compared = max(sum(isinstance(r['metrics'].get(m, {}).get('aso'), float)
                     for r in members) for m in {m for r in members for m in r['metrics']})
  confidence = (f'confidence 1 - {statistics.ASO_ALPHA}/{compared}, Bonferroni for '
                f'the {compared} rows compared' if compared > 1
                else f'confidence 1 - {statistics.ASO_ALPHA}')
  return ['', f'**ASO** (ε < {statistics.ASO_THRESHOLD}, {confidence}; power: the '
          'chance that as many seeds again reach it, were the ordering seen here true): '
          + '. '.join(_md_cell(n) for n in notes) + '.']


def render_markdown(rows: Sequence[dict], skipped: Sequence[Tuple[str, str]],
                    links: Optional[Dict[str, List[Tuple[str, str]]]] = None,
                    search_lines: Sequence[str] = ()) -> str:
  """report.md: a table per group, its plot links (``links``: {run or sweep label:
  [(text, path relative to ROOT)]}, keyed by the run a plot belongs to), the
  searches' sections (``search_lines``, Markdown), then the skipped runs."""
  links = links or {}
  lines = ['# Report', '',
           f'{collect.runs_text(len(rows))}. A table holds the rows of one paper '
           'source and dataset tested on the same examples (the sha256 of their '
           'test data): only those are tested against each other. Over seeds: mean ± '
           f'sample std (ddof=1), *95 % CI* of the mean ({statistics.CI_METHOD}; '
           'the same interval in report.csv, the plots and the terminal), min, max, '
           'n. '
           '*best-dev test*: the value of the seed with the best dev score; '
           '*diff*: mean - paper; *p (Welch)*: Welch\'s t-test against the best '
           'row of the table on the same metric (*ref*), *p (Holm)* the same adjusted '
           'for the number of rows compared (Holm), *p (rank)* the Mann-Whitney U '
           'test; *ASO ε*: Almost Stochastic Order of the best row over this one '
           f'(Dror et al., 2019; under {statistics.ASO_THRESHOLD}, as deep-significance '
           'recommends: the best row is almost stochastically better; the note under '
           'a table gives each verdict and its power); *MDD*: the smallest difference '
           'of means a t-test on this many seeds '
           'with this spread detects with power 0.8 (alpha 0.05). A run stopped '
           'before its last epoch, and not by early stopping, is marked '
           '*unfinished* and is never the reference.', '']
  sections = [section for section, _ in collect.grouped(rows)]
  for group, members in collect.grouped(rows):
    keep = [c != 'point' or _points_add_to_names(members) for c in MD_COLUMNS]
    columns = [c for c, k in zip(MD_COLUMNS, keep) if k]
    lines += [f'## {_md_cell(collect.group_title(group, sections))}', '',
              f'Tested on: {_md_cell(collect.test_text(members[0]))}.', '',
              '| ' + ' | '.join(columns) + ' |',
              '|' + '|'.join(' ---: ' if c in MD_NUMBER_COLUMNS else ' --- '
                             for c in columns) + '|']
    for r in members:
      for metric, entry in r['metrics'].items():
        cells = [_md_cell(c) for c, k in zip(_table_cells(r, metric, entry), keep)
                 if k]
        lines.append('| ' + ' | '.join(cells) + ' |')
    few = sorted({e['n'] for r in members for e in r['metrics'].values()
                  if 0 < e['n'] < statistics.FEW_SEEDS})
    if few and len(members) > 1:
      lines += ['', f'**Note:** rows with {" or ".join(map(str, few))} seeds: with '
                f'fewer than {statistics.FEW_SEEDS} seeds a p-value says little (and '
                'the rank test cannot go below ~0.1); run more seeds before reading '
                'one.']
    lines += aso_lines(members)
    lines += verdict.markdown_lines(members) or no_verdict_lines(members)
    lines += run_lines(members)
    for r in members:
      lines += variance_lines(r)
    lines += warning_lines(
        'the rows of this table were produced under different determinism records, '
        'so their numbers are not comparable bit for bit',
        collect.record_warnings(members))
    lines += warning_lines(
        'a row of this table merges seed parts that read different input files, so '
        'its seeds are not one experiment bit for bit', collect.input_warnings(members))
    plot_lines = [f'- {_md_cell(owner)}: '
                  + ', '.join(f'[{text}]({path})' for text, path in links[owner])
                  for owner in _link_owners(members) if owner in links]
    if plot_lines:
      lines += ['', 'Plots:', ''] + plot_lines
    lines.append('')
  lines += list(search_lines)
  if skipped:
    lines += ['## Skipped runs', '']
    lines += [f'- {_md_cell(name)}: {_md_cell(reason)}' for name, reason in skipped]
    lines.append('')
  return '\n'.join(lines)


def no_verdict_lines(members: Sequence[dict]) -> List[str]:
  """Why a table of several rows has no verdict: no test split, or every run
  unfinished (none is the reference); [] otherwise."""
  if len(members) < 2:
    return []
  if collect.test_key(members[0]) == collect.NO_TEST:
    return ['', '**No verdict:** these runs have no test split, so no test compares '
            'them (their dev scores chose their epochs).']
  if all(r['unfinished'] for r in members):
    return ['', '**No verdict:** every run of this table is unfinished; none is the '
            'reference.']
  return []


def wall_text(seconds) -> str:
  """``1 h 05 min``, ``12 min 30 s`` or ``45 s`` ('' for None)."""
  if seconds is None:
    return ''
  seconds = int(round(float(seconds)))
  hours, rest = divmod(seconds, 3600)
  minutes, secs = divmod(rest, 60)
  if hours:
    return f'{hours} h {minutes:02d} min'
  return f'{minutes} min {secs:02d} s' if minutes else f'{secs} s'


def warning_lines(heading: str, warnings: Sequence[str]) -> List[str]:
  """A '**Warning:** heading:' paragraph with one bullet a warning ([] for none)."""
  if not warnings:
    return []
  return ['', f'**Warning:** {heading}:', ''] + [f'- {_md_cell(w)}' for w in warnings]


def run_lines(members: Sequence[dict]) -> List[str]:
  """What produced each run of a table: its word vectors, epochs trained, machine,
  where its bits verify (collect.bits_text) and wall time (training and evaluation
  over all its sessions), once per run folder (a stacked run's points share one; a
  run trained in seed parts has a line a part)."""
  seen, lines = set(), []
  for r in collect.runs_of(members):
    if r['path'] in seen:
      continue
    seen.add(r['path'])
    epochs = _csv_number(r['epochs_completed'])
    if r['unfinished'] and not r['parts']:
      epochs = f'{epochs} of {r["num_epochs"]}, unfinished'
    lines.append('| ' + ' | '.join(_md_cell(c) for c in (
        collect.run_folder(r['run'], r['stack_point']), r['embeddings'],
        epochs, r['hardware'], r.get('bits', ''),
        wall_text(r['wall_time']))) + ' |')
  return (['', '| run | embeddings | epochs | hardware | bits verify on | wall |',
           '| --- | --- | ---: | --- | --- | ---: |'] + lines)


def variance_lines(row: dict) -> List[str]:
  """The seed-variance table of a run with a factorial seed design ([] without)."""
  v = row.get('variance')
  if not v:
    return []
  title = f'Seed variance of {row["metric"]} in {_md_cell(row["run"])}, by source'
  if 'error' in v:
    return ['', f'{title}: not decomposed ({_md_cell(v["error"])}).']
  lines = ['', f'{title} (random-effects ANOVA over the {v["n"]} members of the '
           'factorial seed design; 95 % CI by Satterthwaite, exact for the residual; '
           'a negative estimate is shown as 0*):', '',
           '| source | df | variance | std | share | 95 % CI |',
           '| --- | ---: | ---: | ---: | ---: | ---: |']
  for r in v['rows']:
    lo, hi = r['ci']
    lines.append(f'| {r["source"]}{"*" if r["truncated"] else ""} | {r["df"]} | '
                 f'{fmt(r["variance"], ".3f")} | {fmt(r["variance"] ** 0.5)} | '
                 f'{100 * r["share"]:.0f} % | [{fmt(lo, ".3g")}, {fmt(hi, ".3g")}] |')
  if v['dominant'] is not None:
    share = next(r['share'] for r in v['rows'] if r['source'] == v['dominant'])
    lines += ['', f'**{v["dominant"]}** dominates: {100 * share:.0f} % of the seed '
              f'variance (total {fmt(v["total_variance"], ".3f")}, std '
              f'{fmt(v["total_variance"] ** 0.5)}).']
  return lines


def _link_owners(members: Sequence[dict]) -> List[str]:
  """The group's runs in order, then its sweeps."""
  sweeps = [collect.sweep_label(r['sweep_key']) for r in members if r['sweep_key']]
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
                      + [_csv_number(e['mean']), _csv_number(e['std'])]
                      + [_csv_number(x) for x in (e.get('ci95') or (None, None))]
                      + [_csv_number(e.get(k)) for k in (
                          'min', 'max', 'best_dev_test', 'paper', 'diff', 'p_value',
                          'p_holm', 'p_rank', 'aso', 'aso_power', 'mdd')]
                      + [_csv_number(r['epochs_completed']),
                         _csv_number(r['wall_time']), r['embeddings'], r['hardware'],
                         'no' if r['unfinished'] else 'yes', collect.test_key(r)])
  return buffer.getvalue()


_LATEX_ESCAPES = {'\\': r'\textbackslash{}', '&': r'\&', '%': r'\%', '$': r'\$',
                  '#': r'\#', '_': r'\_', '{': r'\{', '}': r'\}',
                  '~': r'\textasciitilde{}', '^': r'\textasciicircum{}'}


def latex_escape(text: str) -> str:
  """``text`` with LaTeX's special characters escaped, for a cell of ``report.tex``."""
  return ''.join(_LATEX_ESCAPES.get(c, c) for c in text)


def render_latex(rows: Sequence[dict]) -> str:
  """report.tex: one booktabs tabular (needs ``\\usepackage{booktabs}``), a
  sub-heading per group."""
  keep_point = _points_add_to_names(rows)  # one tabular: one choice for all groups
  header = ['Run'] + ['Point'] * keep_point + [
      'Metric', r'Mean $\pm$ std', 'Best-dev test', 'Paper', 'Diff', '$p$']
  lines = ['% Written by seedsweep/reports/render.py; needs \\usepackage{booktabs}.',
           r'\begin{tabular}{' + 'l' * (len(header) - 5) + 'r' * 5 + '}', r'\toprule',
           ' & '.join(header) + r' \\', r'\midrule']
  sections = [section for section, _ in collect.grouped(rows)]
  for position, (group, members) in enumerate(collect.grouped(rows)):
    if position:
      lines.append(r'\midrule')
    lines.append(rf'\multicolumn{{{len(header)}}}{{l}}{{\textit{{'
                 rf'{latex_escape(collect.group_title(group, sections))}}}}} \\')
    for r in members:
      for metric, e in r['metrics'].items():
        spread = mean_spread(e, r'$\pm$')
        if not e['n'] and collect.test_key(r) == collect.NO_TEST:
          spread = collect.NO_TEST
        cells = [latex_escape(run_cell(r))] + [latex_escape(r['point'])] * keep_point + [
                 latex_escape(metric), spread, fmt(e['best_dev_test']),
                 fmt(e['paper']), fmt(e['diff'], '+.2f'),
                 latex_escape(fmt_p(e['p_value'])).replace('<', '$<$')]
        lines.append(' & '.join(cells) + r' \\')
  lines += [r'\bottomrule', r'\end{tabular}', '']
  return '\n'.join(lines)


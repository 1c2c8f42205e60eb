"""The report's verdict in words, for the terminal and report.md: per table and
metric, the best row (the ``ref`` of its tests, seedsweep/reports/collect.py) and
what each test says of the rows against it, with the effect size (the difference of
means and Cohen's d) and whether the seeds resolve it (the MDD); docs/compare.md."""
from typing import List, Optional, Sequence

from seedsweep.reports import statistics

SHOWN = 3       # rows against the best named each (the closest first); the rest counted
ALPHA = 0.05    # the level p (Holm) and p (rank) are read at


def row_label(row: dict) -> str:
  """A row as the verdict names it: its run, with its sweep point where the run's
  name does not already say it, and whether it is unfinished."""
  point = row['point']
  return (row['run'] + (f' [{point}]' if point and point not in row['run'] else '')
          + (' (unfinished)' if row.get('unfinished') else ''))


def _number(value, spec: str = '.2f') -> str:
  return format(value, spec) if isinstance(value, float) else 'n/a'


def _p(value) -> str:
  if isinstance(value, float) and value < 0.0005:
    return '<0.001'
  return _number(value, '.3f')


def reading(best: dict, entry: dict) -> str:
  """What the tests of ``entry`` against ``best`` say, in the words of
  docs/statistics.md: better by every test, probably better, or not shown better."""
  says = [name for name, yes in (
      ('p (Holm)', isinstance(entry.get('p_holm'), float) and entry['p_holm'] < ALPHA),
      ('p (rank)', isinstance(entry.get('p_rank'), float) and entry['p_rank'] < ALPHA),
      ('ASO', isinstance(entry.get('aso'), float)
       and entry['aso'] < statistics.ASO_THRESHOLD)) if yes]
  if len(says) == 3:
    text = 'better: every test agrees'
  elif says:
    text = f'probably better, not settled: {" and ".join(says)} say so, not all tests'
  else:
    text = 'not shown better'
  mdd = entry.get('mdd')
  if isinstance(mdd, float) and abs(best['mean'] - entry['mean']) < mdd:
    text += f'; the difference is under the MDD {mdd:.2f} (more seeds would decide)'
  if min(best['n'], entry['n']) < statistics.FEW_SEEDS:
    text += f'; fewer than {statistics.FEW_SEEDS} seeds: read no p-value yet'
  return text


def comparison(best: dict, row: dict, entry: dict) -> str:
  """One row against the best: the difference in the best row's favour and Cohen's
  d (both as seedsweep/reports/collect.py computes them, lower-is-better metrics
  turned), the tests, the reading."""
  return (f'against {row_label(row)} {_number(entry["mean"])} ± '
          f'{_number(entry["std"])} ({entry["n"]} seeds): difference '
          f'{_number(entry.get("effect"), "+.2f")}, Cohen\'s d '
          f'{_number(entry.get("cohens_d"))}, p (Welch) {_p(entry.get("p_value"))}, p (Holm) '
          f'{_p(entry.get("p_holm"))}, p (rank) {_p(entry.get("p_rank"))}, ASO ε '
          f'{_number(entry.get("aso"))}: {reading(best, entry)}')


def verdict_lines(title: str, members: Sequence[dict]) -> List[str]:
  """The verdict of one table (``members``, its rows, tested against its best row;
  ``title`` names it, '' under the table itself): per metric a line naming the best
  row, then a line per row against it (the :data:`SHOWN` closest; a count of the
  rest). [] for a table of one row."""
  lines = []
  for metric in dict.fromkeys(m for r in members for m in r['metrics']):
    tested = [(r, r['metrics'][metric]) for r in members if metric in r['metrics']
              and r['metrics'][metric]['n']]
    best = next(((r, e) for r, e in tested if e.get('p_value') == 'ref'), None)
    if best is None:
      continue
    others = sorted([(r, e) for r, e in tested if r is not best[0]],
                    key=lambda re: abs(best[1]['mean'] - re[1]['mean']))
    b = best[1]
    lines.append(f'{f"verdict, {title}, " if title else ""}{metric}: best '
                 f'{row_label(best[0])} '
                 f'{_number(b["mean"])} ± {_number(b["std"])} over {b["n"]} seeds')
    lines += [f'  {comparison(b, r, e)}' for r, e in others[:SHOWN]]
    rest = others[SHOWN:]
    if rest:
      beaten = sum(isinstance(e.get('p_holm'), float) and e['p_holm'] < ALPHA
                   for _, e in rest)
      lines.append(f'  and {len(rest)} more rows, {beaten} of them below it at p (Holm) '
                   f'< {ALPHA} (report.md has each)')
  return lines


def markdown_lines(members: Sequence[dict]) -> List[str]:
  """:func:`verdict_lines` as report.md's paragraph under a table ([] for none)."""
  lines = verdict_lines('', members)
  if not lines:
    return []
  return ['', '**Verdict:**', ''] + [
      ('  - ' + line.strip() if line.startswith(' ') else '- ' + line).replace(
          '|', '\\|') for line in lines]

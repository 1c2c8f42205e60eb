"""Reports from a folder of runs (``launch.py --mode=report --workdir=ROOT``):
collected (:mod:`~seedsweep.reports.collect`), summarised
(:mod:`~seedsweep.reports.statistics`), rendered (:mod:`~seedsweep.reports.render`),
with figures beside them (:mod:`~seedsweep.reports.plots`).

:func:`write_report` writes, next to the runs (or into ``out``, e.g. a ``results/``
folder kept under version control while the runs and their checkpoints stay elsewhere):

* ``ROOT/report.md``: one table per section (the runs of a paper source and dataset
  tested on the same examples), a line per run and reported metric, the verdict (the
  best finished row, each row's tests and effect size against it, also printed:
  :mod:`~seedsweep.reports.verdict`), links to the plots, a section per search (the
  point chosen on dev, its test scores over its seeds, the parameter importances:
  ``searches``), and the runs that were skipped;
* ``ROOT/report.csv``: the same numbers, one line per run and metric, unrounded;
* ``ROOT/report.tex`` (``latex=True``): a booktabs tabular of the same table;
* ``ROOT/plots/*.png`` at 200 dpi, each with ``.pdf`` and ``.svg`` copies
  (``plots=True``).

The same runs always give byte-identical ``report.md`` and ``report.csv``.
"""
import os

from seedsweep import files
from seedsweep.errors import UserError
from seedsweep.reports import collect
from seedsweep.reports import plots as plots_lib
from seedsweep.reports import render
from seedsweep.reports import searches
from seedsweep.reports import verdict
from seedsweep.run import outputs

REPORT_MD, REPORT_CSV, REPORT_TEX = 'report.md', 'report.csv', 'report.tex'


def write_text(path: str, text: str) -> None:
  """Writes ``text`` to ``path`` as UTF-8, whole or not at all, newlines unchanged."""
  with outputs.atomic_file(path, encoding='utf-8', newline='') as f:
    f.write(text)


def write_report(root: str, latex: bool = False, plots: bool = True,
                 print_fn: collect.PrintFn = print, out: str = '') -> dict:
  """Writes report.md and report.csv (and report.tex, plots) under ``out`` (default
  ``root``) for the runs under ``root``.

  Returns ``{'rows': rows (reports.collect._row), 'skipped': [(run, reason)],
  'files': [every path written], 'verdict': [the lines printed after the path: per
  table the best row and each row against it, reports.verdict]}``.
  """
  if not os.path.isdir(root):
    raise UserError(f'--workdir={root} is not a folder; expected a folder of runs')
  rows, skipped = collect.collect(root, print_fn)
  if not rows and not skipped:
    raise UserError(f'--workdir={root} holds no run (no folder with a '
                    f'{outputs.CONFIG}); expected the workdir of a run or a folder of '
                    'them (a sweep root); nothing was written')
  if not rows:
    reasons = '; '.join(f'{run}: {why}' for run, why in skipped[:3])
    more = f' (and {len(skipped) - 3} more)' if len(skipped) > 3 else ''
    raise UserError(f'--workdir={root} holds no readable run ({reasons}{more}); '
                    'nothing was written')
  out = out or root
  files.refuse_file(out, '--output', 'a folder for the report')
  os.makedirs(out, exist_ok=True)
  sections = [section for section, _ in collect.grouped(rows)]
  for group, members in collect.grouped(rows):
    for w in collect.record_warnings(members) + collect.input_warnings(members):
      print_fn(f'warning: {collect.group_title(group, sections)}: {w}')
  written, links = [], {}
  if plots:
    for plot in plots_lib.write_plots(rows, out, print_fn):
      written += [plot.path, *plot.also]
      links.setdefault(plot.owner, []).append(
          (plot.label, '/'.join(collect.relative_parts(os.path.relpath(plot.path, out)))))
  markdown = render.render_markdown(rows, skipped, links, searches.markdown(root, rows))
  outputs_text = [(REPORT_MD, markdown),
                  (REPORT_CSV, render.render_csv(rows))]
  if latex:
    outputs_text.append((REPORT_TEX, render.render_latex(rows)))
  for name, text in outputs_text:
    path = os.path.join(out, name)
    write_text(path, text)
    written.append(path)
  print_fn(f'report of {collect.runs_text(len(rows))} ({len(skipped)} skipped): '
           f'{os.path.join(out, REPORT_MD)}')
  said = [line for group, members in collect.grouped(rows)
          for line in verdict.verdict_lines(collect.group_title(group), members)]
  for line in said:
    print_fn(line)
  return {'rows': rows, 'skipped': skipped, 'files': written, 'verdict': said}


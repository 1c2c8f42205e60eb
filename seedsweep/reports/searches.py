"""The search section of a report: for each ``search.json`` under the root
(seedsweep/sweep/search.py), the point chosen on dev with its seeds' test scores
(their mean and spread, never the best single seed) and the parameter importances.
The trials' own rows are the sweep table the search's runs form."""
import os
from typing import List, Optional, Sequence, Tuple

from seedsweep.reports import collect
from seedsweep.run import outputs
from seedsweep.sweep import search as search_lib


def find(root: str) -> List[Tuple[str, dict]]:
  """``[(folder relative to root, search.json's contents)]``, in folder order; an
  unreadable file is skipped (its runs still report as a sweep)."""
  found = []
  for where, folders, files in os.walk(root):
    folders[:] = sorted(f for f in folders if f not in collect.RUN_SUBFOLDERS)
    if search_lib.SEARCH in files:
      try:
        info = outputs.read_json(os.path.join(where, search_lib.SEARCH))
      except (OSError, ValueError):
        continue
      if isinstance(info, dict) and isinstance(info.get('trials'), list):
        found.append((os.path.relpath(where, root), info))
  return found


def chosen_row(folder: str, info: dict, rows: Sequence[dict]) -> Optional[dict]:
  """The report row of the best trial (None when it has none yet)."""
  for r in rows:
    run = collect.run_folder(r['run'], r['stack_point'])
    if (r['sweep'] == info.get('search') and r['index'] == info.get('best')
        and os.path.normpath(os.path.dirname(run) or '.') == os.path.normpath(folder)):
      return r
  return None


def _value(v) -> str:
  return f'{v:.4g}' if isinstance(v, float) else str(v)


def lines(folder: str, info: dict, rows: Sequence[dict]) -> List[str]:
  """The Markdown of one search."""
  trials = info['trials']
  done = [t for t in trials if t['state'] == 'complete']
  failed = [t for t in trials if t['state'] == 'fail']
  where = '' if folder == '.' else f' ({folder})'
  out = [f'## Search {info.get("search")}{where}', '',
         f'{len(done)} of {info.get("budget")} trials finished'
         + (f', {len(failed)} failed (a seed\'s dev score not finite)' if failed else '')
         + f'; each scored by the {info.get("score")} of {info.get("metric")} over its '
         f'seeds ({info.get("direction")}); test scores were never shown to the '
         'search.', '']
  best = next((t for t in trials if t['number'] == info.get('best')), None)
  if best is None:
    return out + ['No trial has finished yet.', '']
  params = ', '.join(f'{k} = {_value(v)}' for k, v in best['params'].items())
  out.append(f'**Chosen on dev:** trial {best["number"]} ({params}): score '
             f'{best["value"]:.4f}.')
  row = chosen_row(folder, info, rows)
  if row is not None:
    entry = row['metrics'][row['metric']]
    ci = entry.get('ci95')
    ci_text = f'95 % CI [{ci[0]:.2f}, {ci[1]:.2f}], ' if ci else ''
    out.append(f'Its test scores: {row["metric"]} {entry["mean"]:.2f} ± '
               f'{entry["std"]:.2f} (mean ± std over {entry["n"]} seeds; {ci_text}min '
               f'{entry["min"]:.2f}, max {entry["max"]:.2f}).')
  importance = info.get('importance') or {}
  if importance:
    out += ['', '| parameter | importance (fANOVA) |', '| --- | ---: |']
    out += [f'| {k} | {v:.3f} |' for k, v in
            sorted(importance.items(), key=lambda kv: (-kv[1], kv[0]))]
  return out + ['']


def markdown(root: str, rows: Sequence[dict]) -> List[str]:
  """Every search's section ([] when the root holds none)."""
  return [line for folder, info in find(root) for line in lines(folder, info, rows)]

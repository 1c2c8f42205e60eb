"""Members beyond one program's memory: groups trained one after another in one run.

When the estimated peak of a run's members (run/memory.py) is over
``config.runtime.memory_budget``, :func:`split` cuts the members into the fewest
groups that fit, of balanced sizes (at most two sizes: at most two compiles), and the
run trains them one after another, to the end, each with only its own state in
memory: group ``k`` is an ordinary run of its slice of the members in
``workdir/groups/<k>/`` (checkpoints, metrics rows, and ``selected.json`` when it is
done), sharing the run's data on device and its compiled programs. Once every group
is done, :func:`merge_rows` writes the run's ``metrics.jsonl`` from theirs, in the
order one program of all the members writes it, and the run's ``results.json`` is made
from the groups' numbers.

Under ``seed_parallel='lanes'`` the groups are lane groups: a run of more members
than one program's lanes trains them in groups of at most that many, each padded to
the lanes, so every group runs the same compiled programs.

A member's bits do not depend on the members beside it (the determinism policy in
docs/design.md): under ``map``, under ``vmap`` on one CPU, and under lanes at one
width, its numbers equal an unsplit run's. The split is kept in ``groups.json``; a resumed run follows it
whatever the budget says then, and a run that started unsplit stays unsplit.
"""
import os
from typing import List, Optional, Sequence, Tuple

from seedsweep.errors import UserError
from seedsweep.run import outputs

GROUPS = 'groups'          # workdir/groups/<k>/: group k's own run folder
SPLIT = 'groups.json'      # workdir/groups.json: the split, [[start, stop], ...]
SELECTED = 'selected.json'  # a finished group's numbers (run.epoch.selected)

Bounds = List[Tuple[int, int]]


def plan(members: int, fits: int, multiple: int = 1) -> Bounds:
  """The fewest ``[start, stop)`` slices of ``members`` holding at most ``fits``
  each, their sizes balanced and multiples of ``multiple`` (devices of a mesh)."""
  units = members // multiple
  per = max(fits // multiple, 1)
  count = -(-units // per)
  base, extra = divmod(units, count)
  bounds, start = [], 0
  for k in range(count):
    stop = start + (base + (k < extra)) * multiple
    bounds.append((start, stop))
    start = stop
  return bounds


def needed(members: int, fits: int, multiple: int = 1) -> Optional[Bounds]:
  """:func:`plan`'s groups when ``fits`` (at least one) is short of ``members``,
  else None: one program holds them all."""
  return plan(members, fits, multiple) if 0 < fits < members else None


def for_placement(members: int, fits: int, group: int, lanes: int,
                  multiple: int = 1) -> Optional[Bounds]:
  """The groups of ``members`` of which ``fits`` fit the memory budget, None for one
  program. Under lanes (``lanes`` > 0) a group is at most ``group`` members (a lane
  group: ``lanes`` on each device), padded to it when it trains, whatever the budget
  would allow: every program of the run then has the same shapes. UserError when not
  even one lane group fits."""
  if not lanes:
    return needed(members, fits, multiple)
  if 0 < fits < group:
    raise UserError(
        f'config.train.lanes={lanes}: one lane group ({group} members on device) needs '
        f'more memory than the budget holds ({fits} members); expected fewer lanes '
        f'(--config.train.lanes={max(fits // multiple, 1)}) or a larger '
        'config.runtime.memory_budget')
  return plan(members, group) if members > group else None


def folder(workdir: str, k: int) -> str:
  """Group ``k``'s run folder."""
  return os.path.join(workdir, GROUPS, str(k))


def recorded(workdir: str) -> Optional[Bounds]:
  """The split ``groups.json`` records (None: the run is not split); UserError when
  the file is not one."""
  file = os.path.join(workdir, SPLIT)
  if not os.path.exists(file):
    return None
  try:
    bounds = [tuple(b) for b in outputs.read_json(file)['bounds']]
    ok = all(len(b) == 2 and all(isinstance(x, int) for x in b) for b in bounds)
  except (ValueError, KeyError, TypeError) as e:
    bounds, ok = None, False
  if not ok or not bounds:
    raise UserError(f'{file} is not a split of members written by seedsweep '
                    '(expected {"bounds": [[start, stop], ...]}); delete it with the '
                    f'{GROUPS}/ folder beside it to train afresh')
  return bounds


def split(workdir: str, members: int, fits: int, multiple: int = 1,
          started_unsplit: bool = False, write: bool = True, group: int = 0,
          lanes: int = 0) -> Optional[Bounds]:
  """The groups of a run of ``members`` of which ``fits`` fit the budget: the
  recorded split if there is one, None when all fit (or the run already has
  checkpoints of all its members: ``started_unsplit``), else a new plan
  (:func:`for_placement`: lane groups of ``group`` under ``lanes``), recorded
  (``write``) before any group trains."""
  file, bounds = os.path.join(workdir, SPLIT), recorded(workdir)
  if bounds is not None:
    if bounds[0][0] != 0 or bounds[-1][1] != members or any(
        a[1] != b[0] for a, b in zip(bounds, bounds[1:])):
      raise UserError(f'{file} splits members 0..{bounds[-1][1] - 1}, but '
                      f'the run has {members}; expected the workdir of this config')
    return bounds
  bounds = None if started_unsplit else for_placement(members, fits, group, lanes,
                                                      multiple)
  if bounds is not None and write:
    outputs.write_json(file, {'bounds': [list(b) for b in bounds]})
  return bounds


def parts(pieces, workdir: str) -> list:
  """``[(pieces, folder)]``: the run in ``workdir``, or each group of its split
  (``Pieces.group``) in the group's folder."""
  bounds = recorded(workdir)
  if bounds is None:
    return [(pieces, workdir)]
  return [(pieces.group(a, b), folder(workdir, k)) for k, (a, b) in enumerate(bounds)]


def read_selected(group_folder: str) -> Optional[dict]:
  """A finished group's numbers (None: not finished, or its file was damaged)."""
  file = os.path.join(group_folder, SELECTED)
  try:
    return outputs.read_json(file)
  except (OSError, ValueError):
    return None


def write_selected(group_folder: str, selected: dict) -> None:
  """Writes a finished group's numbers (run.epoch.selected) to its ``selected.json``."""
  outputs.write_json(os.path.join(group_folder, SELECTED), selected)


def merged_selected(selections: Sequence[dict]) -> dict:
  """The groups' numbers as one of all the members: each per-member list
  concatenated in member order, ``epochs_completed`` the most any group trained,
  ``elapsed`` their sum, ``machines`` each machine once, ``determinism`` the first
  group's record."""
  per_member = {k: [x for s in selections for x in s['per_member'][k]]
                for k in selections[0]['per_member']}
  machines = []
  for s in selections:
    for entry in s.get('machines', []):
      if entry not in machines:
        machines.append(entry)
  return {'per_member': per_member,
          'epochs_completed': max(s['epochs_completed'] for s in selections),
          'elapsed': sum(s['elapsed'] or 0.0 for s in selections), 'machines': machines,
          'determinism': selections[0]['determinism']}


def rows(workdir: str) -> List[dict]:
  """The run's metrics rows: its metrics.jsonl, or a split run's groups' rows as one
  program writes them (each epoch's rows in member order)."""
  bounds = recorded(workdir)
  if bounds is None:
    return outputs.MetricsLog(workdir).rows()
  logs = [outputs.MetricsLog(folder(workdir, k)).rows() for k in range(len(bounds))]
  epochs = sorted({r['epoch'] for rows in logs for r in rows})
  return [r for e in epochs for rows in logs for r in rows if r['epoch'] == e]


def merge_rows(workdir: str) -> List[dict]:
  """Writes a split run's metrics.jsonl from its groups' (:func:`rows`) and returns
  the rows."""
  merged = rows(workdir)
  outputs.MetricsLog(workdir).replace(merged)
  return merged

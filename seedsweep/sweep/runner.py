"""Runs a sweep: every point of a ``sweeps/*.py`` file is one seed-parallel run in its
own sub-folder of the sweep root.

``python launch.py --config=E --sweep=sweeps/X.py[:arg] --workdir=ROOT`` trains each
point in ``ROOT/<point name>``, a name built from the point's overrides
(``dl=5,dh=40``: readable, and the same every time the sweep is listed). A finished
point is skipped, an interrupted one resumes from its checkpoints (``loop.train``
does both). ``--sweep_shard=i/n`` runs the points ``k`` with ``k % n == i`` only, so
``n`` processes or hosts share a sweep; ``--mode=commands`` prints one command line
per point for a batch system, and ``--launcher=local|slurm`` submits the shards as
jobs itself (seedsweep/sweep/launchers.py).

Each point folder gets ``point.json`` (the sweep, the point's index and overrides),
and the root ``sweep.json`` (every point's name and overrides): the report reads
them.
"""
import importlib.util
import os
import re
import shlex
from typing import Any, Dict, List, Sequence, Tuple

from seedsweep.config import keys
from seedsweep.config import python_files
from seedsweep.engine import hosts
from seedsweep.errors import UserError
from seedsweep.run import outputs
from seedsweep.run import runtime

POINT, SWEEP = 'point.json', 'sweep.json'


def load_points(spec: str) -> List[Dict[str, Any]]:
  """The points of ``spec`` = ``path/to/sweep.py[:arg]``: ``sweep(arg)``'s list."""
  arg = spec.partition(':')[2]
  points = python_files.call(spec, 'sweep', '--sweep', always_arg=True)
  if not isinstance(points, (list, tuple)) or not all(
      isinstance(p, dict) for p in points) or not points:
    raise UserError(f'--sweep={spec}: sweep({arg!r}) returned {type(points).__name__}; '
                    f'expected a non-empty list of dicts of config overrides')
  for i, point in enumerate(points):
    if 'seeds' in point:
      raise UserError(f'--sweep={spec}: point {i} sets seeds; seeds are the vmap axis '
                      f'of every point, never a sweep axis (set --config.seeds)')
  return list(points)


def point_name(point: Dict[str, Any]) -> str:
  """``'dl=5,dh=40'``: the point's overrides (``paper.*`` left out) in their order,
  named by :func:`seedsweep.config.keys.short_names`."""
  own = [k for k in point if not k.startswith('paper.')]
  return ','.join(f'{n}={keys.folder_safe(keys.value_text(point[k]))}'
                  for n, k in zip(keys.short_names(own), own))


def point_names(points: Sequence[Dict[str, Any]], spec: str) -> List[str]:
  """One distinct folder name per point (``point_<i>`` for a point of ``paper.*``
  keys only)."""
  names = [point_name(p) or f'point_{i}' for i, p in enumerate(points)]
  seen = {}
  for i, name in enumerate(names):
    if name in seen:
      raise UserError(f'--sweep={spec}: points {seen[name]} and {i} give the same '
                      f'overrides ({name}); each point needs its own')
    seen[name] = i
  return names


def spec_label(spec: str) -> str:
  """How point.json, sweep.json and the report name a sweep: a packaged sweep file
  (seedsweep/sweeps/X.py, however it was reached) as ``sweeps/X.py[:arg]``, the
  same on every machine; any other spec as given."""
  path, colon, arg = spec.partition(':')
  found = importlib.util.find_spec('seedsweep.sweeps')  # found, not imported: the
  folders = found.submodule_search_locations or []      # sweeps sit above this layer
  if os.path.dirname(os.path.abspath(path)) in {os.path.abspath(f) for f in folders}:
    return f'sweeps/{os.path.basename(path)}{colon}{arg}'
  return spec


def parse_shard(text: str) -> Tuple[int, int]:
  """``'i/n'`` -> ``(i, n)`` with ``0 <= i < n``."""
  match = re.fullmatch(r'(\d+)/(\d+)', text or '')
  if not match or not int(match[1]) < int(match[2]):
    raise UserError(f'--sweep_shard={text!r}; expected i/n with 0 <= i < n, e.g. 0/4')
  return int(match[1]), int(match[2])


def point_configs(config, spec: str):
  """``(points, names, configs)`` of the sweep ``spec`` on ``config``: every point's
  overrides checked (UserError naming the point) before any point trains."""
  points = load_points(spec)
  names = point_names(points, spec)
  configs = [keys.with_values(config, p, f'--sweep={spec} point {i} ({names[i]})')
             for i, p in enumerate(points)]
  return points, names, configs


def run(config, spec: str, root: str, shard: str = '0/1',
        echo=print) -> Dict[str, dict]:
  """Trains the points of this shard; returns ``{point name: results}``."""
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  runtime.pin_for(config)  # hosts.is_primary below starts JAX's CPU client
  index, count = parse_shard(shard)
  points, names, configs = point_configs(config, spec)
  os.makedirs(root, exist_ok=True)
  primary = hosts.is_primary()  # under jax.distributed only process 0 writes
  if index == 0 and primary:  # one writer when shards share the root
    outputs.write_json(os.path.join(root, SWEEP), {
        'sweep': spec_label(spec), 'points': [{'name': n, 'overrides': p}
                                  for n, p in zip(names, points)]})
  results = {}
  mine = [i for i in range(len(points)) if i % count == index]
  for position, i in enumerate(mine):
    workdir = os.path.join(root, names[i])
    echo(f'sweep point {i + 1}/{len(points)} ({position + 1}/{len(mine)} of shard '
         f'{index}/{count}): {workdir}')
    os.makedirs(workdir, exist_ok=True)
    if primary:
      outputs.write_json(os.path.join(workdir, POINT),
                         {'sweep': spec_label(spec), 'index': i,
                          'overrides': points[i]})
    results[names[i]] = loop.train(configs[i], workdir, echo=echo)
  return results


# Flags a shard's own command line leaves out: it trains one shard, here.
NOT_PER_SHARD = ('--mode', '--launcher', '--sweep_shard')


def shard_flags(argv: Sequence[str], count: int) -> List[List[str]]:
  """The flags of each of ``count`` shards: ``argv``'s (after the program) without
  :data:`NOT_PER_SHARD`, in either spelling absl takes (``--flag=v``, ``--flag v``),
  and with ``--sweep_shard=k/count``."""
  keep, skip = [], False
  for a in argv[1:]:
    if skip:  # the value of `--launcher local`
      skip = False
    elif a in NOT_PER_SHARD:
      skip = True
    elif not a.startswith(tuple(f + '=' for f in NOT_PER_SHARD)):
      keep.append(a)
  return [keep + [f'--sweep_shard={k}/{count}'] for k in range(count)]


def commands(spec: str, root: str, argv: Sequence[str]) -> List[str]:
  """One ``seedsweep`` command line per point (:func:`shard_flags`), with
  ``--workdir`` added if ``argv`` lacks it: for a batch system."""
  if not any(a.startswith('--workdir') for a in argv[1:]):
    argv = list(argv) + [f'--workdir={root}']
  return [' '.join(['seedsweep'] + [shlex.quote(a) for a in flags])
          for flags in shard_flags(argv, len(load_points(spec)))]

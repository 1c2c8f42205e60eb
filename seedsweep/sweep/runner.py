"""Runs a sweep: the points of a ``sweeps/*.py`` file as seed-parallel runs, each in
its own sub-folder of the sweep root.

Points that differ only in values that change no shape (learning rate, clip norms,
L2, dropout rates, loss weights: seedsweep/config/stacking.py) run as ONE program,
``[points x seeds]`` members stacked (``config.stack``), in a folder named by the
values stacked (``learning_rate=0.002+0.005+0.01``); the others each get their own
run, and so does each value of a rate that an own model tests in Python (flax's
dropout: :func:`tested_in_python`). :func:`plan_runs` groups them; a point's numbers
are the same either way.

``python launch.py --config=E --sweep=sweeps/X.py[:arg] --workdir=ROOT`` trains each
point in ``ROOT/<point name>``, a name built from the point's overrides
(``dl=5,dh=40``: readable, and the same every time the sweep is listed). A finished
point is skipped, an interrupted one resumes from its checkpoints (``loop.train``
does both). ``--sweep_shard=i/n`` runs the points ``k`` with ``k % n == i`` only, so
``n`` processes or hosts share a sweep; ``--mode=commands`` prints one command line
per point for a batch system, and ``--launcher=local|slurm`` submits the shards as
jobs itself (seedsweep/sweep/launchers.py).

Each run folder gets ``point.json`` (the sweep, the point's index and overrides;
lists of them for a stacked run), and the root ``sweep.json`` (every point's name
and overrides): the report reads them.
"""
import dataclasses
import hashlib
import json
import importlib.util
import os
import re
import shlex
from typing import Any, Dict, List, Sequence, Tuple

from seedsweep.config import keys
from seedsweep.config import python_files
from seedsweep.config import stacking
from seedsweep.engine import hosts
from seedsweep.errors import UserError
from seedsweep.run import outputs
from seedsweep.run import runtime

POINT, SWEEP = 'point.json', 'sweep.json'
NAME_LIMIT = 120  # characters of a run folder's name
# Keys naming where runs write beside their workdir: a sweep's point may not set them.
WRITE_PATHS = ('data.tfds_dir', 'log.mlflow_uri')


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
    where = sorted(k for k in point if k in WRITE_PATHS)
    if where:
      raise UserError(f'--sweep={spec}: point {i} sets {where[0]}, a path runs write '
                      "to; a sweep writes under its --workdir only (set it with "
                      f'--config.{where[0]} for the whole sweep)')
  return list(points)


def point_name(point: Dict[str, Any]) -> str:
  """``'dl=5,dh=40'``: the point's overrides (``paper.*`` left out) in their order,
  named by :func:`seedsweep.config.keys.short_names`; a name over
  :data:`NAME_LIMIT` characters is cut and ends in a digest of the whole."""
  return folder_name(_name_parts(point))


def _name_parts(point: Dict[str, Any]) -> List[str]:
  """``['dl=5', 'dh=40']``: one part per override, ``paper.*`` left out."""
  own = [k for k in point if not k.startswith('paper.')]
  return [f'{n}={keys.folder_safe(keys.value_text(point[k]))}'
          for n, k in zip(keys.short_names(own), own)]


def folder_name(parts: Sequence[str]) -> str:
  """``parts`` joined by commas; a name over :data:`NAME_LIMIT` characters is cut
  and ends in a digest of the whole (file systems refuse names over 255 bytes)."""
  name = ','.join(parts)
  if len(name) <= NAME_LIMIT:
    return name
  return f'{name[:NAME_LIMIT - 17]}-{hashlib.sha256(name.encode()).hexdigest()[:16]}'


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


def spec_label(spec: str, folder: str = 'sweeps') -> str:
  """How point.json, sweep.json and the report name a sweep (or a search: ``folder``
  ``searches``): a packaged file (seedsweep/sweeps/X.py, however it was reached) as
  ``sweeps/X.py[:arg]``, the same on every machine; any other spec as given."""
  path, colon, arg = spec.partition(':')
  found = importlib.util.find_spec(f'seedsweep.{folder}')  # found, not imported: the
  folders = found.submodule_search_locations or []         # files sit above this layer
  if os.path.dirname(os.path.abspath(path)) in {os.path.abspath(f) for f in folders}:
    return f'{folder}/{os.path.basename(path)}{colon}{arg}'
  return spec


def parse_shard(text: str) -> Tuple[int, int]:
  """``'i/n'`` -> ``(i, n)`` with ``0 <= i < n``."""
  match = re.fullmatch(r'(\d+)/(\d+)', text or '')
  if not match or not int(match[1]) < int(match[2]):
    raise UserError(f'--sweep_shard={text!r}; expected i/n with 0 <= i < n, e.g. 0/4')
  return int(match[1]), int(match[2])


@dataclasses.dataclass(frozen=True)
class Run:
  """One program of a sweep: a point, or points stacked in one program."""
  name: str                 # its folder under the sweep root
  indices: Tuple[int, ...]  # the sweep's points it trains
  config: Any               # the resolved config (with config.stack for several)

  @property
  def stacked(self) -> bool:
    """Whether the run trains several points in one program (``config.stack``)."""
    return len(self.indices) > 1


def plan_runs(config, spec: str) -> Tuple[List[Dict[str, Any]], List[Run]]:
  """``(points, runs)``: the sweep's points, grouped into programs
  (:func:`plan_points`)."""
  if tuple(config.stack.fields):
    raise UserError(f'--sweep={spec} with config.stack set: put the stacked values '
                    'in the sweep as points (it stacks them by itself)')
  points = load_points(spec)
  return points, plan_points(config, points, point_names(points, spec), f'--sweep={spec}')


def plan_points(config, points: Sequence[Dict[str, Any]], names: Sequence[str],
                where: str) -> List[Run]:
  """The runs that train ``points`` (named ``names``): points whose overrides agree
  outside :data:`stacking.STACKABLE` share one run (in the order of their first
  point); a group of one is a plain run named by its point. A stackable model field
  that the points' own model tests in Python (flax's dropout:
  :func:`tested_in_python`) counts with the rest, so each of its values gets a
  program of its own. Every point's overrides are checked first (UserError naming
  ``where`` and the point)."""
  configs = [point_config(config, p, f'{where} point {i} ({names[i]})')
             for i, p in enumerate(points)]
  apart = {}
  for indices in _grouped(points, {}).values():
    if len(indices) > 1:
      fields = tested_in_python(configs[indices[0]], [points[i] for i in indices],
                                f'{where} points {indices}')
      apart.update({i: fields for i in indices})
  runs = []
  for indices in _grouped(points, apart).values():
    if len(indices) == 1:
      runs.append(Run(names[indices[0]], tuple(indices), configs[indices[0]]))
    else:
      runs.append(_stacked_run(config, where, [points[i] for i in indices], indices,
                               apart[indices[0]]))
  taken = {}
  for r in runs:
    if r.name in taken:
      raise UserError(f'{where}: points {taken[r.name]} and {r.indices} would '
                      f'share the folder {r.name}; give them distinct overrides')
    taken[r.name] = r.indices
  return runs


def _grouped(points, apart: Dict[int, Tuple[str, ...]]) -> Dict[str, List[int]]:
  """``{the rest of a point's overrides: the points that have it}``, in the order of
  their first point (``apart[i]``: point i's stackable keys that count with the
  rest)."""
  groups = {}
  for i, point in enumerate(points):
    rest = stacking.split_overrides(point, apart.get(i, ()))[1]
    groups.setdefault(json.dumps(rest, sort_keys=True, default=repr), []).append(i)
  return groups


# The sizes a model is built at to find what it tests in Python, before any data is
# read: what it traces does not depend on them (the run checks it again at its own).
PROBE_VOCAB, PROBE_CLASSES = 16, 3


def tested_in_python(config, points: Sequence[Dict[str, Any]], where: str
                     ) -> Tuple[str, ...]:
  """The stackable model fields ``points`` set (dropout rates, loss weights) that
  their model tests in Python, so that they cannot differ inside one program
  (flax's ``nn.Dropout`` and ``nnx.Dropout``: ``rate == 0``): found as the run's
  model contract finds them (``contract.check`` on abstract shapes), for an own
  model file (``FILE:Class``) of ``config`` (the first point's); () for a packaged
  model (each traces its own) or one the check refuses (the run then names why, on
  its data's sizes)."""
  if not python_files.is_reference(config.model.name):
    return ()
  fields = [f for f in stacking.MODEL_FIELDS
            if f in config.model and any(f'model.{f}' in p for p in points)]
  if not fields:
    return ()
  from seedsweep import models  # pylint: disable=g-import-not-at-top
  from seedsweep.models import contract  # pylint: disable=g-import-not-at-top
  try:
    model = models.build_model(config.model, vocab_size=PROBE_VOCAB,
                               num_classes=PROBE_CLASSES)
    traced, _ = contract.check(model, where, num_classes=PROBE_CLASSES,
                               vocab_size=PROBE_VOCAB, stackable=fields)
  except UserError:
    return ()
  return tuple(f'model.{f}' for f in fields if f not in traced)


def point_config(config, point: Dict[str, Any], where: str):
  """A resolved copy of ``config`` with ``point``'s overrides (keys.with_values).

  A point whose ``model.name`` names another model than ``config``'s gets that
  class's fields as a single run's ``--config.model.name`` does
  (models.take_named_model): of ``config``'s model fields it keeps those the class
  takes, the class's defaults fill the rest, and a model field the point sets that
  the class lacks is refused in one line. Always for an own model file
  (``FILE:Class``); for a packaged name only where the class lacks one of
  ``config``'s model fields (the point could not train otherwise), so that sweep
  roots trained before, whose points all fit, keep their configs and resume. A point
  setting a field of the model's class that ``config.model`` lacks (a packaged
  class's own ``unroll``, say) gets it added the same way.
  """
  name = point.get('model.name')
  if not _absent_model_fields(config, point) and (
      name is None or not _needs_its_fields(config, name)):
    return keys.with_values(config, point, where)
  from seedsweep import models  # pylint: disable=g-import-not-at-top
  named = config.copy_and_resolve_references()
  models.set_with_named_model(named, point, lambda _: where,
                              lambda key: f'{where} sets {key}={point[key]!r}')
  return named


def _absent_model_fields(config, point: Dict[str, Any]) -> List[str]:
  """The ``model.X`` keys of ``point`` (but ``model.name``) that ``config.model``
  lacks: a field of the class the config leaves at its default."""
  return [k for k in point if k.startswith('model.') and k != 'model.name'
          and k.partition('.')[2] not in config.model]


def _needs_its_fields(config, name) -> bool:
  """Whether model ``name`` takes its own fields over ``config.model``'s (see
  :func:`point_config`); an unknown packaged name is left to the run's own error."""
  if python_files.is_reference(name):
    return True
  from seedsweep import models  # pylint: disable=g-import-not-at-top
  if name not in models.REGISTRY:
    return False
  takes = models.config_fields(*models.model_class(name))
  return any(k not in takes for k in config.model if k != 'name')


def _stacked_run(config, where: str, points: List[Dict[str, Any]], indices,
                 apart: Tuple[str, ...] = ()) -> Run:
  """The run of ``points`` (same non-stackable overrides, ``apart`` counted with
  them) as one program."""
  rest = stacking.split_overrides(points[0], apart)[1]
  # A stacked field the config lacks (a class's own, e.g. embed_dropout) is added to
  # the base, at the first point's value, for config.stack to name.
  absent = {k: points[0][k] for k in _absent_model_fields(config, points[0])
            if k not in rest}
  base = point_config(config, {**rest, **absent}, f'{where} point {indices[0]}')
  fields = list(dict.fromkeys(k for p in points
                              for k in stacking.split_overrides(p, apart)[0]))
  rows = tuple(tuple(p.get(k, _value(base, k)) for k in fields) for p in points)
  stacked = keys.with_values(base, {'stack.fields': tuple(fields), 'stack.points': rows},
                             f'{where} points {list(indices)}')
  parts = _name_parts(rest)
  for name, k in zip(keys.short_names(fields), fields):
    values = '+'.join(keys.value_text(v) for v in dict.fromkeys(r[fields.index(k)]
                                                                 for r in rows))
    parts.append(f'{name}={keys.folder_safe(values)}')
  return Run(folder_name(parts), tuple(indices), stacked)


def _value(config, key: str):
  section, field = key.split('.', 1)
  return config[section][field]


def run(config, spec: str, root: str, shard: str = '0/1',
        print_fn=print) -> Dict[str, dict]:
  """Trains the runs of this shard; returns ``{run folder name: results}``."""
  from seedsweep.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  runtime.pin_for(config)  # hosts.is_primary below starts JAX's CPU client
  index, count = parse_shard(shard)
  points, runs = plan_runs(config, spec)
  names = point_names(points, spec)
  workdir_lib.check_folder(root)
  os.makedirs(root, exist_ok=True)
  primary = hosts.is_primary()  # under jax.distributed only process 0 writes
  if index == 0 and primary:  # one writer when shards share the root
    folder = {i: r.name for r in runs for i in r.indices}
    write_sweep(root, spec_label(spec), [(n, p, folder[i])
                                         for i, (n, p) in enumerate(zip(names, points))])
  results = {}
  mine = [k for k in range(len(runs)) if k % count == index]
  for position, k in enumerate(mine):
    r = runs[k]
    what = (f'points {"+".join(str(i + 1) for i in r.indices)}/{len(points)} in one '
            'program' if r.stacked else f'point {r.indices[0] + 1}/{len(points)}')
    print_fn(f'sweep {what} ({position + 1}/{len(mine)} of shard {index}/{count}): '
             f'{os.path.join(root, r.name)}')
    results[r.name] = train_run(r, root, spec_label(spec), points, primary, print_fn)
  return results


def write_sweep(root: str, label: str, points) -> None:
  """``root/sweep.json``: the sweep (or search) ``label`` and its points, each
  ``(name, overrides, run folder)``."""
  outputs.write_json(os.path.join(root, SWEEP), {'sweep': label, 'points': [
      {'name': n, 'overrides': o, 'run': r} for n, o, r in points]})


def train_run(r: Run, root: str, label: str, points, primary: bool,
              print_fn=print) -> dict:
  """Trains (or resumes, or reads back) the run ``r`` in ``root/<its name>``, its
  point.json written first (``label``: the sweep or search that owns it;
  ``points[i]``: the overrides of point ``i``, a list's or a dict's)."""
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  workdir = os.path.join(root, r.name)
  os.makedirs(workdir, exist_ok=True)
  if primary:
    pick = lambda values: values if r.stacked else values[0]
    outputs.write_json(os.path.join(workdir, POINT), {
        'sweep': label, 'index': pick(list(r.indices)),
        'overrides': pick([points[i] for i in r.indices])})
  return loop.train(r.config, workdir, print_fn=print_fn)


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


def commands(config, spec: str, root: str, argv: Sequence[str]) -> List[str]:
  """One ``seedsweep`` command line per run (:func:`plan_runs`, :func:`shard_flags`), with
  ``--workdir`` added if ``argv`` lacks it: for a batch system."""
  if not any(a.startswith('--workdir') for a in argv[1:]):
    argv = list(argv) + [f'--workdir={root}']
  return [' '.join(['seedsweep'] + [shlex.quote(a) for a in flags])
          for flags in shard_flags(argv, len(plan_runs(config, spec)[1]))]

"""Collects the runs under a folder into rows, one per run (a sweep point is a run).

A *run* is any folder under ROOT (at any depth) that holds ``config.json``
(:func:`find_runs`). :func:`collect` (and :func:`build_rows`) reads each into its
row (:func:`_row`: the run's names, config, per-seed values and their statistics,
where it ran), in a fixed order, with paths relative to ROOT; a run whose files
cannot be read is skipped with its reason. The rule: a row's numbers come from a
``results.json`` as new as the run's newest checkpoint; one missing or behind it is
re-evaluated from that checkpoint first (:func:`ensure_results`).

Seeds trained apart (folders named ``seeds_*``, :func:`merge_parts`) form one row
with their parent; a stacked run gives one row per point. ``p_value``: Welch's
t-test of each row against the best finished row of its section, the rows tested on
the same examples (:func:`_set_p_values`; seedsweep/reports/verdict.py sums it up).
"""
import json
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from seedsweep.config import checks as config_checks
from seedsweep.config import keys
from seedsweep.config import stacking
from seedsweep.errors import UserError
from seedsweep.reports import statistics
from seedsweep.run import outputs
from seedsweep.run import provenance as provenance_lib
from seedsweep.sweep import runner as sweep

POINT = sweep.POINT  # each sweep point's {"sweep", "index", "overrides"}
STACK_SWEEP = 'config.stack'  # the sweep a stacked run without point.json stands for
DEFAULT_METRIC = 'test_accuracy'
PART_PREFIX = 'seeds_'  # a run folder named seeds_* is a seed part of its parent's run
# Sub-folders of a run that never hold runs (not walked: checkpoints can be large).
RUN_SUBFOLDERS = ('checkpoints', 'tensorboard')

PrintFn = Callable[[str], None]


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
  return sorted(found, key=lambda f: relative_parts(os.path.relpath(f, root)))


def run_folder(name: str, stack_point: str) -> str:
  """A row's run folder relative to ROOT: ``name`` less a stacked point's label."""
  return name[:-len(stack_point) - 1] if stack_point else name


def sweep_folder(name: str, stack_point: str, sweep: str) -> str:
  """The folder (relative to ROOT) that holds a sweep's runs: a point's parent; the
  run itself for the points of a stacked run that is no sweep's (its own stack)."""
  run = run_folder(name, stack_point)
  return run if sweep == STACK_SWEEP else run.rpartition('/')[0]


def relative_parts(relative: str) -> Tuple[str, ...]:
  """``('sweep', 'point')``: a relative path's folder names (``()`` for ``'.'``)."""
  return () if relative == os.curdir else tuple(relative.split(os.sep))


def run_name(run_dir: str, root: str) -> str:
  """``run_dir`` relative to ``root``, '/'-separated ('.' for ``root`` itself)."""
  return '/'.join(relative_parts(os.path.relpath(run_dir, root))) or '.'


def read_json_file(path: str):
  """The JSON content of ``path``; UserError naming the file when it is invalid."""
  try:
    return outputs.read_json(path)
  except ValueError as e:
    raise UserError(f'{path} is not valid JSON ({e})') from e
  except OSError as e:
    raise UserError(f'cannot read {path}: {e}') from e


def latest_checkpoint(run_dir: str) -> Optional[int]:
  """The newest checkpoint's epoch (of every group of a split run), None without
  checkpoints (creates nothing)."""
  if not any(os.path.exists(os.path.join(run_dir, f))
             for f in ('checkpoints', 'groups.json')):
    return None
  from seedsweep.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  return workdir_lib.latest_epoch(run_dir) or None


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


def ensure_results(run_dir: str, print_fn: PrintFn = print) -> Optional[dict]:
  """results.json of ``run_dir``, re-evaluated from the newest checkpoint first when
  it is missing or stale (:func:`stale_reason`).

  Re-evaluation (``seedsweep.run.loop.evaluate``) restores the newest checkpoint and
  reports each seed's selected parameters, so it gives the numbers training wrote,
  and rewrites results.json. Returns None (saying so through ``print_fn``) for a run with
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
    print_fn(f'{run_dir}: {reason}; re-evaluating that checkpoint.')
  elif latest is None:
    print_fn(f'{run_dir}: no {outputs.RESULTS} and no checkpoint; skipped.')
    return None
  else:
    print_fn(f'{run_dir}: no {outputs.RESULTS}; evaluating the checkpoint of epoch '
             f'{latest}.')
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  config = config_checks.from_dict(read_json_file(os.path.join(run_dir, outputs.CONFIG)))
  return loop.evaluate(config, run_dir, print_fn)


def runs_text(n: int) -> str:
  """``'1 run'``, ``'3 runs'``."""
  return f'{n} run' if n == 1 else f'{n} runs'


def seed_values(results: dict) -> Tuple[List[int], Dict[str, List[float]]]:
  """``(seeds [n], {metric: [n]})``; each seed's CV mean for cross-validated runs."""
  if 'cv_metrics' in results:
    return list(results['cv_seeds']), dict(results['cv_metrics'])
  return list(results.get('seeds', [])), dict(results.get('metrics', {}))


def seed_variance(results: dict, metric: str) -> Optional[dict]:
  """The variance of ``metric`` over a factorial seed design's members split by
  source (statistics.variance_components over init, data, dropout); None for a run
  without one, ``{'error': reason}`` when the design cannot be decomposed."""
  seed_triples = results.get('streams')
  values = (results.get('metrics') or {}).get(metric)
  if not seed_triples or not values:
    return None
  try:
    return statistics.variance_components(values, [tuple(s) for s in seed_triples],
                                          stacking.STREAMS)
  except ValueError as e:
    return {'error': str(e)}


def point_label(overrides: dict, varying: Sequence[str]) -> str:
  """``'hidden=32, dropout=0.2'``: the overrides in ``varying`` (all of them, when
  none vary), ``paper.*`` left out, named as the sweep runner names them
  (:func:`seedsweep.config.keys.short_names`)."""
  own = [k for k in overrides if not k.startswith('paper.')]
  shown = [k for k in own if k in varying] or own
  return ', '.join(f'{name}={keys.value_text(overrides[key])}'
                   for name, key in zip(keys.short_names(shown), shown))


def varying_keys(override_sets: Sequence[dict]) -> List[str]:
  """Keys (``paper.*`` left out) whose values are not the same in every set, in
  order of first appearance."""
  names = list(dict.fromkeys(k for o in override_sets for k in o
                             if not k.startswith('paper.')))
  missing = object()
  return [k for k in names
          if len({json.dumps(o.get(k, missing), sort_keys=True, default=repr)
                  for o in override_sets}) > 1]


def _read_run(run_dir: str, root: str, print_fn: PrintFn) -> Optional[List[dict]]:
  """The rows of one run (one per point of a stacked run) without their
  group-relative fields (point, p-values)."""
  config = read_json_file(os.path.join(run_dir, outputs.CONFIG))
  if not isinstance(config, dict):
    raise UserError(f'{os.path.join(run_dir, outputs.CONFIG)} holds '
                    f'{type(config).__name__}; expected the config object a run writes')
  point_path = os.path.join(run_dir, POINT)
  point = read_json_file(point_path) if os.path.exists(point_path) else {}
  if not isinstance(point, dict) or not isinstance(point.get('overrides', {}),
                                                    (dict, list)):
    raise UserError(f'{point_path}: expected {{"sweep", "index", "overrides"}}')
  results = ensure_results(run_dir, print_fn)
  if results is None:
    return None
  name = run_name(run_dir, root)
  points = outputs.point_results(results)
  if len(points) == 1:
    return [_row(run_dir, name, config, results, point)]
  indices, overrides = point.get('index'), point.get('overrides')
  if not point:  # a run with config.stack of its own: its points form a sweep
    indices, overrides = list(range(len(points))), [p['overrides'] for p in points]
    point = {'sweep': STACK_SWEEP}
  if not (isinstance(indices, list) and isinstance(overrides, list)
          and len(indices) == len(overrides) == len(points)):
    raise UserError(f'{point_path}: a stacked run of {len(points)} points needs lists '
                    f'of {len(points)} indices and overrides')
  return [_row(run_dir, f'{name}/{p["label"]}', config, p,
               {**point, 'index': i, 'overrides': o}, stack_point=p['label'])
          for p, i, o in zip(points, indices, overrides)]


def embeddings_text(config: dict) -> str:
  """'random', or ``NAME, static`` / ``NAME, fine-tuned`` for a vectors file."""
  vectors = (config.get('data') or {}).get('vectors') or {}
  path = vectors.get('path') or ''
  if not path:
    return 'random'
  return f'{os.path.basename(path)}, {"static" if vectors.get("static") else "fine-tuned"}'


def hardware_text(determinism: Optional[dict]) -> str:
  """The machine of a determinism record, in words ('' without one)."""
  if not determinism:
    return ''
  if determinism.get('backend') == 'cpu':
    cores, arch = determinism.get('usable_cores'), determinism.get('cpu_arch')
    return (f'cpu: {determinism.get("cpu_model")}' + (f' ({arch})' if arch else '')
            + (f', {cores} cores' if cores else ''))
  return f'{determinism.get("backend")}: {determinism.get("device_kind")}'


def bits_text(determinism: Optional[dict], machines: Sequence[dict] = ()) -> str:
  """On which machines a run's bits can be checked (--mode=verify): 'any x86-64
  AVX2 FMA CPU' under portable numerics, else the CPU family and core count (or
  device) that made them, one per machine of a run continued elsewhere ('' without a
  record)."""
  records = [m['determinism'] for m in machines if m.get('determinism')] or (
      [determinism] if determinism else [])
  def one(record):
    if record.get('backend', 'cpu') != 'cpu':
      return f'{record.get("device_kind")} only'
    if record.get('numerics') == 'portable':
      return f'any {record.get("cpu_isa")} CPU'
    arch = record.get('cpu_arch') or f'{record.get("cpu_model")} (family not recorded)'
    cores = record.get('usable_cores')  # native orthogonal inits follow the cores
    return f'{arch}{f", {cores} cores" if cores else ""} only'
  return ' + '.join(dict.fromkeys(one(r) for r in records))


def tested_on(results: dict) -> Optional[dict]:
  """The examples a run was tested on (provenance.test_identity: ``{'sha256',
  'examples', 'what'}``, sha256 None without a test split), as recorded or, for a
  run made before the record, from its data checksums; None without a data record."""
  provenance = results.get('provenance') or {}
  data = provenance.get('data') or {}
  if data.get('test'):
    return dict(data['test'])
  folds = results.get('folds') or provenance.get('folds') or ()
  return provenance_lib.test_identity(data, folds)


def unfinished_reason(results: dict, config: dict) -> str:
  """'' for a run trained to its end (``finished``, ``num_epochs`` reached, or every
  member early-stopped), else ``'unfinished: 30 of 40 epochs'``."""
  train = config.get('train') or {}
  done, total = results.get('epochs_completed'), train.get('num_epochs')
  if results.get('finished') or not isinstance(done, int) or not isinstance(total, int):
    return ''
  if done >= total:
    return ''
  patience = train.get('patience') or 0
  best = (results.get('metrics') or {}).get('best_epoch') or []
  if patience and best and all(done - b >= patience for b in best):
    return ''  # every member stopped early: finished
  return f'unfinished: {done} of {total} epochs'


def _row(run_dir: str, name: str, config: dict, results: dict, point: dict,
         stack_point: str = '') -> dict:
  """The row of one run, or of one point of a stacked run (``stack_point``)."""
  paper = results.get('paper') or config.get('paper') or {}
  metric = paper.get('metric') or DEFAULT_METRIC
  seeds, values = seed_values(results)
  others = paper.get('other') or {}
  test = tested_on(results)
  metrics = {}
  for key, number in [(metric, paper.get('value'))] + list(others.items()):
    if key not in metrics:
      metrics[key] = statistics.metric_entry(values.get(key) or [], number,
                                             statistics.best_dev_value(values, key))
  if test is not None and test['sha256'] is None:  # its dev numbers instead
    for key in list(metrics):
      dev = statistics.dev_metric(key)
      if not metrics[key]['n'] and values.get(dev) and dev not in metrics:
        metrics[dev] = statistics.metric_entry(values[dev], None, None)
  sweep = point.get('sweep') or ''
  determinism = (results.get('provenance') or {}).get('determinism')
  return {
      'run': name, 'path': run_dir, 'stack_point': stack_point,
      'variance': seed_variance(results, metric),
      'source': paper.get('source') or '',
      'dataset': (config.get('data') or {}).get('name', ''),
      'model': (config.get('model') or {}).get('name', ''),
      'sweep': sweep,
      'sweep_key': ((sweep_folder(name, stack_point, sweep), sweep) if sweep
                    else None),
      'index': point.get('index') if sweep else None,
      'overrides': dict(point.get('overrides') or {}), 'point': '',
      'metric': metric, 'seeds': seeds, 'values': values, 'metrics': metrics,
      'epochs_completed': results.get('epochs_completed'),
      'num_epochs': ((config.get('train') or {}).get('num_epochs')),
      'unfinished': unfinished_reason(results, config),
      'test': test,
      'wall_time': results.get('wall_time'), 'selection': results.get('selection'),
      # Data, vectors and the user's code files: seed parts that read other bytes
      # of any of them are warned about (input_warnings).
      'determinism': determinism, 'inputs': provenance_lib.input_digests(
          (results.get('provenance') or {}).get('data'),
          (results.get('provenance') or {}).get('user_code')),
      'embeddings': embeddings_text(config),
      'hardware': hardware_text(determinism),
      'bits': bits_text(determinism, (results.get('provenance') or {}).get('machines')
                        or ()),
      'parts': [],
  }


def runs_of(rows: Sequence[dict]) -> List[dict]:
  """The runs behind ``rows``: a row merged from seed parts stands for its parts."""
  return [p for r in rows for p in (r['parts'] or [r])]


def part_of(row: dict) -> Optional[str]:
  """The run a seed part belongs to (its parent folder's name), None for any other
  row (a sweep point or a stacked run's point is never a part)."""
  parent, _, leaf = row['run'].rpartition('/')
  if leaf.startswith(PART_PREFIX) and not row['sweep'] and not row['stack_point']:
    return parent or '.'
  return None


def part_mismatch(parts: Sequence[dict]) -> Optional[str]:
  """Why ``parts`` cannot form one run (None: they can): configs that differ apart
  from ``seeds`` (in a key that can change a number: config.checks.differences), a
  seed in two parts, a factorial seed design (its variance by source needs every
  member in one record)."""
  configs = [read_json_file(os.path.join(p['path'], outputs.CONFIG)) for p in parts]
  for part, config in zip(parts[1:], configs[1:]):
    differ = [d for d in config_checks.differences(configs[0], config)
              if not d.startswith('seeds:')]
    if differ:
      return (f'its seed parts {parts[0]["run"]} and {part["run"]} differ in config '
              f'{"; ".join(differ[:2])}{" ..." if len(differ) > 2 else ""}; expected '
              'the same config apart from seeds')
  seen = {}
  for part in parts:
    for seed in part['seeds']:
      if seed in seen:
        return (f'seed {seed} is in two of its seed parts ({seen[seed]}, '
                f'{part["run"]}); expected each seed in one part')
      seen[seed] = part['run']
  tests = {p['run']: test_key(p) for p in parts}
  if len(set(tests.values())) > 1:
    return ('its seed parts were tested on different examples ('
            + ', '.join(f'{run}: {key}' for run, key in tests.items())
            + '); expected the same test data in every part')
  if any(p['variance'] is not None for p in parts):
    return ('its seed parts have a factorial seed design, whose variance by source '
            'needs every member in one run; expected plain seeds')
  return None


def merge_parts(name: str, parts: Sequence[dict], root: str) -> dict:
  """One row for the seed ``parts`` of run ``name`` (checked by part_mismatch)."""
  first = parts[0]
  seeds = [s for p in parts for s in p['seeds']]
  order = sorted(range(len(seeds)), key=seeds.__getitem__)
  names = [k for k in first['values'] if all(k in p['values'] for p in parts)]
  values = {}
  for key in names:
    joined = [v for p in parts for v in p['values'][key]]
    values[key] = [joined[i] for i in order] if len(joined) == len(seeds) else joined
  metrics = {key: statistics.metric_entry(values.get(key) or [], entry['paper'],
                                          statistics.best_dev_value(values, key))
             for key, entry in first['metrics'].items()}
  walls = [p['wall_time'] for p in parts if p['wall_time'] is not None]
  epochs = [p['epochs_completed'] for p in parts if p['epochs_completed'] is not None]
  path = root if name == '.' else os.path.join(root, *name.split('/'))
  return {**first, 'run': name, 'path': path,
          'seeds': sorted(seeds), 'values': values, 'metrics': metrics,
          'epochs_completed': max(epochs) if epochs else None,
          'unfinished': '; '.join(f'{p["run"]} {p["unfinished"]}' for p in parts
                                  if p['unfinished']),
          'wall_time': sum(walls) if walls else None,
          'hardware': ' + '.join(dict.fromkeys(p['hardware'] for p in parts if
                                               p['hardware'])),
          'bits': ' + '.join(dict.fromkeys(p['bits'] for p in parts if p['bits'])),
          'parts': list(parts)}


def _merge_seed_parts(rows: List[dict], root: str, print_fn: PrintFn
                      ) -> Tuple[List[dict], List[Tuple[str, str]]]:
  """``rows`` with each run's seed parts merged into one row; ``skipped`` names a run
  whose parts do not fit together (part_mismatch)."""
  merged, by_run, skipped = [], {}, []
  for r in rows:
    name = part_of(r)
    if name is None:
      merged.append(r)
    else:
      by_run.setdefault(name, []).append(r)
  for name, parts in by_run.items():
    reason = part_mismatch(parts)
    if reason is None:
      merged.append(merge_parts(name, parts, root))
    else:
      print_fn(f'warning: skipping run {name}: {reason}')
      skipped.append((name, reason))
  return merged, skipped


def record_warnings(members: Sequence[dict]) -> List[str]:
  """One line per run (a seed part counted as a run) of a table whose determinism
  record differs from the first run's in a field that changes a result's bits
  (provenance.REPRODUCING)."""
  members = runs_of(members)
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


def input_warnings(members: Sequence[dict]) -> List[str]:
  """One line per merged row whose seed parts read different bytes for one input
  (the same vectors path, say, written again on another machine): its seeds are
  not one experiment bit for bit."""
  warnings = []
  for row in members:
    parts = row['parts']
    for key in sorted({k for p in parts for k in p['inputs']}):
      digests = {p['run']: p['inputs'].get(key) for p in parts}
      if len(set(digests.values())) > 1:
        warnings.append(
            f'{row["run"]}: its seed parts read different {key} files: '
            + ', '.join(f'{run} sha256 {(d or "not recorded")[:12]}'
                        for run, d in digests.items()))
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


def collect(root: str,
            print_fn: PrintFn = print) -> Tuple[List[dict], List[Tuple[str, str]]]:
  """``(rows, skipped)``: the rows of every readable run under ``root``, grouped and
  ordered, with points and p-values; ``skipped`` = [(run name, reason)]."""
  rows, skipped = [], []
  for run_dir in find_runs(root):
    name = run_name(run_dir, root)
    try:
      found = _read_run(run_dir, root, print_fn)
    except UserError as e:
      reason = _relative_message(str(e), root)
      print_fn(f'warning: skipping run {name}: {reason}')
      skipped.append((name, reason))
      continue
    if found is None:
      skipped.append((name, f'no {outputs.RESULTS} and no checkpoint'))
    else:
      rows.extend(found)
  rows, mismatched = _merge_seed_parts(rows, root, print_fn)
  skipped += mismatched
  _set_points(rows)
  rows = sorted(rows, key=lambda r: (group_key((r['source'], r['dataset'])),
                                     order_key(r)))
  for r in rows:
    r['group'] = (r['source'], r['dataset'])
    r['section'] = (r['source'], r['dataset'], test_key(r))
  # A section's rows together, sections in the order of their first row.
  first = {}
  for i, r in enumerate(rows):
    first.setdefault(r['section'], i)
  rows = sorted(rows, key=lambda r: first[r['section']])
  _set_p_values(rows)
  return rows, skipped


UNRECORDED = 'not recorded'  # the test key of a run without a data record
NO_TEST = 'no test split'


def test_key(row: dict) -> str:
  """What a row was tested on, as one string: its test examples' sha256,
  :data:`NO_TEST`, or :data:`UNRECORDED` (a run made before data records)."""
  test = row.get('test')
  if test is None:
    return UNRECORDED
  return test['sha256'] or NO_TEST


def test_text(row: dict) -> str:
  """'the test split, 2,000 examples (sha256 1a2b3c4d5e6f)': what a row was tested on."""
  test = row.get('test')
  if test is None:
    return ('not recorded (a run made before data records): rows share this table '
            'by dataset name only')
  if test['sha256'] is None:
    return NO_TEST
  count = f', {test["examples"]:,} examples' if test.get('examples') else ''
  return f'{test["what"]}{count} (sha256 {test["sha256"][:12]})'


def comparable(rows: Sequence[dict]) -> List[dict]:
  """Those of ``rows`` that may be a section's reference: the finished ones."""
  return [r for r in rows if not r['unfinished']]


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
  """Sets each metric entry's tests (Welch's ``p_value``, ``p_holm``, ``p_rank``,
  ``aso``) against the best finished row of its section ('ref' on that row itself).
  A section is the rows tested on the same examples (:func:`test_key`); rows without
  a test split are not tested against each other, nor is a section without a
  finished row."""
  for section, members in grouped(rows):
    if section[2] == NO_TEST:
      continue
    names = dict.fromkeys(m for r in members for m in r['metrics'])
    for metric in names:
      with_values = [r for r in members
                     if metric in r['metrics'] and r['metrics'][metric]['n']]
      candidates = comparable(with_values)
      if len(with_values) < 2 or not candidates:
        continue
      best = candidates[statistics.best_index(
          [r['metrics'][metric]['mean'] for r in candidates],
          statistics.lower_is_better(metric))]['metrics'][metric]
      others = [r['metrics'][metric] for r in with_values
                if r['metrics'][metric] is not best]
      sign = -1.0 if statistics.lower_is_better(metric) else 1.0  # larger = better
      # Several rows against the best: ASO's confidence Bonferroni-corrected for
      # their number (Dror et al., 2019; deep-significance's multi_aso does the same).
      alpha = statistics.ASO_ALPHA / len(others)
      for e in others:
        e['p_value'] = statistics.welch_p(e['values'], best['values'])
        e['p_rank'] = statistics.rank_p(e['values'], best['values'])
        e['aso'], e['aso_power'] = statistics.aso(
            [sign * v for v in best['values']], [sign * v for v in e['values']], alpha
        ) or (None, None)
        e['effect'] = sign * (best['mean'] - e['mean'])
        e['cohens_d'] = statistics.cohens_d(best['values'], e['values'], sign)
      # One family per table and metric: every row against the best one.
      for e, adjusted in zip(others, statistics.holm([e['p_value'] for e in others])):
        e['p_holm'] = adjusted
      best['p_value'] = best['p_holm'] = best['p_rank'] = best['aso'] = 'ref'


def build_rows(root: str, print_fn: PrintFn = print) -> List[dict]:
  """One row per readable run under ``root`` (:func:`_row`), in report order."""
  return collect(root, print_fn)[0]


def sweep_label(sweep_key: Tuple[str, str]) -> str:
  """``'sweep sweeps/demo.py (in runs/demo)'``: how a sweep's plots are named."""
  folder, sweep = sweep_key
  return f'sweep {sweep}' + (f' (in {folder})' if folder else '')


def group_title(group: Tuple[str, ...], others: Sequence[Tuple[str, ...]] = ()) -> str:
  """A section's heading: ``'source: dataset'``, and what its rows were tested on
  when another section of ``others`` has the same source and dataset, or it has no
  test split."""
  source, dataset = group[:2]
  title = f'{source}: {dataset}' if source else f'{dataset} (no paper source)'
  if len(group) < 3:
    return title
  key = group[2]
  shared = sum(o[:2] == group[:2] for o in others) > 1
  if key == NO_TEST:
    return f'{title}, no test split'
  if shared:
    return f'{title}, {"test data " + key if key == UNRECORDED else "test " + key[:12]}'
  return title


def grouped(rows: Sequence[dict]
            ) -> List[Tuple[Tuple[str, str, str], List[dict]]]:
  """``[(section, rows)]`` in the rows' order: a section is the rows of one paper
  source and dataset tested on the same examples (source, dataset, test_key)."""
  out = {}
  for r in rows:
    out.setdefault(r.get('section') or (r['source'], r['dataset'], test_key(r)),
                   []).append(r)
  return list(out.items())


r"""A sweep of values that change no shape: its points stacked in one program against
the same points run one by one, side by side in one run.

  python benchmarks/stacked_sweep.py                      # demo, sweeps/demo_lr.py
  python benchmarks/stacked_sweep.py --config=demo:quick --rounds=1 --out=/tmp/b

Each contestant is a whole ``seedsweep`` process tree with its own empty compilation
cache: the stacked sweep (``--sweep``: ``[points x seeds]`` members in one program)
and each point in a process of its own, one after another (what a sweep tool that
launches one job per point costs). Rounds alternate the contestants. Writes
``stacked_sweep_<date>.json`` and ``.md`` under ``--out`` with the wall times, the
ratio, and whether every point's per-seed test accuracies agree.
"""
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)  # a script: run from the checkout

from seedsweep.config import keys  # pylint: disable=g-import-not-at-top,wrong-import-position
from seedsweep.sweep import runner  # pylint: disable=g-import-not-at-top,wrong-import-position
from seedsweep.run import outputs  # pylint: disable=g-import-not-at-top,wrong-import-position

_CONFIG = flags.DEFINE_string('config', 'demo', 'Experiment config (name or path[:arg]).')
_SWEEP = flags.DEFINE_string('sweep', 'demo_lr', 'Sweep (name or path[:arg]).')
_ROUNDS = flags.DEFINE_integer('rounds', 1, 'Rounds of both contestants.')
_OUT = flags.DEFINE_string('out', os.path.join(REPO, 'benchmarks', 'results'),
                           'Folder for the JSON and Markdown results.')
_EXTRA = flags.DEFINE_multi_string('flag', [], 'Extra flag for every seedsweep '
                                   'command, e.g. --flag=--config.seeds=(1,2)')


def seedsweep(args, cache: str) -> float:
  """Wall seconds of one ``seedsweep`` command (its own compilation cache)."""
  env = {**os.environ, 'SEEDSWEEP_CACHE': cache}
  start = time.perf_counter()
  proc = subprocess.run([sys.executable, '-m', 'seedsweep', *args,
                         '--config.train.progress=False', *_EXTRA.value],
                        env=env, capture_output=True, text=True, check=False)
  if proc.returncode:
    sys.exit(f'seedsweep {" ".join(args)} failed:\n{proc.stderr[-3000:]}')
  return time.perf_counter() - start


def point_flags(point: dict):
  return [f'--config.{k}={keys.value_text(v)}' for k, v in point.items()]


def accuracies_by_point(stacked_dir: str, alone_dirs) -> bool:
  """Whether each point's per-seed test accuracies are the same both ways."""
  stacked = [r for name in os.listdir(stacked_dir)
             if os.path.isdir(os.path.join(stacked_dir, name))
             for r in outputs.point_results(outputs.read_json(
                 os.path.join(stacked_dir, name, outputs.RESULTS)))]
  alone = [outputs.read_json(os.path.join(d, outputs.RESULTS)) for d in alone_dirs]
  return [p['metrics']['test_accuracy'] for p in stacked] == [
      a['metrics']['test_accuracy'] for a in alone]


def main(argv):
  del argv
  from seedsweep import api  # pylint: disable=g-import-not-at-top
  config_path = api.packaged_path(_CONFIG.value, 'experiments')
  sweep_path = api.packaged_path(_SWEEP.value, 'sweeps')
  config = api.load_config(config_path)
  points, runs = runner.plan_runs(config, sweep_path)
  base = [f'--config={config_path}']
  rounds = []
  for r in range(_ROUNDS.value):
    with tempfile.TemporaryDirectory() as tmp:
      stacked_dir = os.path.join(tmp, 'stacked')
      stacked = seedsweep(base + [f'--sweep={sweep_path}', f'--workdir={stacked_dir}'],
                          os.path.join(tmp, 'cache_stacked'))
      alone_dirs = [os.path.join(tmp, f'alone_{i}') for i in range(len(points))]
      one_by_one = sum(seedsweep(base + point_flags(p) + [f'--workdir={d}'],
                                 os.path.join(tmp, 'cache_alone'))
                       for p, d in zip(points, alone_dirs))
      rounds.append({'round': r + 1, 'stacked_s': round(stacked, 1),
                     'one_by_one_s': round(one_by_one, 1),
                     'ratio': round(one_by_one / stacked, 2),
                     'same_accuracies': accuracies_by_point(stacked_dir, alone_dirs)})
      print(json.dumps(rounds[-1]), flush=True)
  report = {'date': datetime.date.today().isoformat(), 'machine': platform.node(),
            'cpu_count': os.cpu_count(), 'config': config_path, 'sweep': sweep_path,
            'points': points, 'programs': len(runs), 'seeds': list(config.seeds),
            'flags': _EXTRA.value, 'rounds': rounds}
  os.makedirs(_OUT.value, exist_ok=True)
  stem = os.path.join(_OUT.value, f'stacked_sweep_{report["date"]}')
  outputs.write_json(stem + '.json', report)
  lines = [f'# Stacked sweep, {report["date"]} ({os.cpu_count()} cores)', '',
           f'`python benchmarks/stacked_sweep.py --config={_CONFIG.value} '
           f'--sweep={_SWEEP.value}`: {len(points)} points x '
           f'{len(config.seeds)} seeds; each contestant a whole process tree with an '
           'empty compilation cache.', '',
           '| round | stacked (one program) | one by one | ratio | same accuracies |',
           '| ---: | ---: | ---: | ---: | --- |']
  lines += [f'| {r["round"]} | {r["stacked_s"]} s | {r["one_by_one_s"]} s | '
            f'{r["ratio"]}x | {r["same_accuracies"]} |' for r in rounds]
  with open(stem + '.md', 'w') as f:
    f.write('\n'.join(lines) + '\n')
  print('\n'.join(lines))


if __name__ == '__main__':
  app.run(main)

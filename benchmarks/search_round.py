r"""One round of a search: its points stacked in one program against the same points
trained one after another, side by side in one run.

  python benchmarks/search_round.py                          # demo, demo_search
  python benchmarks/search_round.py --config=demo:quick --out=/tmp/b

Both contestants are whole processes with their own empty compilation cache:

* ``stacked``: ``seedsweep --search`` limited to its first round (``points_per_round``
  points, each with the search's seeds, ``[points x seeds]`` members in one program,
  Optuna asking and telling included);
* ``one by one``: the same points (read from the first contestant's search.json) in
  one Python process, each trained by ``seedsweep.train`` with its seeds stacked, as
  a user would write an Optuna objective that trains one point per trial.

Rounds alternate the contestants. Writes ``search_round_<date>.json`` and ``.md``
under ``--out``: wall times, their ratio (the target: stacked at most 0.6x), and
whether every point's per-seed dev and test numbers agree.
"""
import ast
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

from seedsweep.run import outputs  # pylint: disable=g-import-not-at-top,wrong-import-position

_CONFIG = flags.DEFINE_string('config', 'demo', 'Experiment config (name or path[:arg]).')
_SEARCH = flags.DEFINE_string('search', 'demo_search', 'Search (name or path[:arg]).')
_ROUNDS = flags.DEFINE_integer('rounds', 1, 'Rounds of both contestants.')
_OUT = flags.DEFINE_string('out', os.path.join(REPO, 'benchmarks', 'results'),
                           'Folder for the JSON and Markdown results.')
_ALONE = flags.DEFINE_string('alone', None, 'internal: train the points of this '
                             'search.json one by one under --workdir')
_WORKDIR = flags.DEFINE_string('workdir', None, 'internal: with --alone')
_SET = flags.DEFINE_multi_string('set', [], 'A config value for both contestants, '
                                 'e.g. --set=train.seed_parallel=vmap')

FIRST_ROUND = '''import dataclasses
from seedsweep.sweep import search as search_lib

def search(arg):
  found = search_lib.load_search({spec!r})
  return dataclasses.replace(found, trials=found.points_per_round)
'''


def timed(argv, cache: str) -> float:
  """Wall seconds of one process (its own compilation cache)."""
  env = {**os.environ, 'SEEDSWEEP_CACHE': cache}
  start = time.perf_counter()
  proc = subprocess.run([sys.executable, *argv], env=env, capture_output=True,
                        text=True, check=False)
  if proc.returncode:
    sys.exit(f'{" ".join(argv)} failed:\n{proc.stderr[-3000:]}')
  return time.perf_counter() - start


def train_alone(search_json: str, root: str) -> None:
  """The one-by-one contestant: each trial's point trained with its seeds."""
  import seedsweep  # pylint: disable=g-import-not-at-top
  from seedsweep.config import keys  # pylint: disable=g-import-not-at-top
  info = outputs.read_json(search_json)
  config = seedsweep.load_config(info['config_spec'], train__progress=False)
  for key, text in (s.split('=', 1) for s in info['settings']):
    try:
      value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
      value = text  # a string: vmap, adam
    keys.set_value(config, key, value, f'--set={key}')
  config = keys.with_values(config, {'seeds': tuple(info['seeds'])}, 'alone')
  for t in info['trials']:
    point = keys.with_values(config, t['params'], f'trial {t["number"]}')
    seedsweep.train(point, os.path.join(root, f'trial_{t["number"]}'),
                    print_fn=lambda *a: None)


def per_point(stacked_root: str, alone_root: str) -> bool:
  """Whether each point's per-seed dev and test accuracies agree both ways."""
  info = outputs.read_json(os.path.join(stacked_root, 'search.json'))
  for t in info['trials']:
    stacked = outputs.read_json(os.path.join(stacked_root, t['run'], outputs.RESULTS))
    point = outputs.point_results(stacked)[t['run'].split('_', 1)[1].split('+').index(
        str(t['number']))]
    alone = outputs.read_json(os.path.join(alone_root, f'trial_{t["number"]}',
                                           outputs.RESULTS))
    for metric in ('dev_accuracy', 'test_accuracy'):
      if point['metrics'][metric] != alone['metrics'][metric]:
        return False
  return True


def main(argv):
  del argv
  if _ALONE.value:
    train_alone(_ALONE.value, _WORKDIR.value)
    return
  from seedsweep import api  # pylint: disable=g-import-not-at-top
  from seedsweep.sweep import search as search_lib  # pylint: disable=g-import-not-at-top
  config_path = api.packaged_path(_CONFIG.value, 'experiments')
  search_path = api.packaged_path(_SEARCH.value, 'searches')
  found = search_lib.load_search(search_path)
  seeds = list(found.seeds) or list(api.load_config(config_path).seeds)
  rounds = []
  for r in range(_ROUNDS.value):
    with tempfile.TemporaryDirectory() as tmp:
      first = os.path.join(tmp, 'first_round.py')
      with open(first, 'w') as f:
        f.write(FIRST_ROUND.format(spec=search_path))
      stacked_root = os.path.join(tmp, 'stacked')
      stacked = timed(['-m', 'seedsweep', f'--config={config_path}', f'--search={first}',
                       f'--workdir={stacked_root}', '--config.train.progress=False',
                       *[f'--config.{s}' for s in _SET.value]],
                      os.path.join(tmp, 'cache_stacked'))
      info = outputs.read_json(os.path.join(stacked_root, 'search.json'))
      points = os.path.join(tmp, 'points.json')
      outputs.write_json(points, {**info, 'config_spec': config_path, 'seeds': seeds,
                                  'settings': _SET.value})
      alone_root = os.path.join(tmp, 'alone')
      alone = timed([os.path.abspath(__file__), f'--alone={points}',
                     f'--workdir={alone_root}'], os.path.join(tmp, 'cache_alone'))
      rounds.append({'round': r + 1, 'points': len(info['trials']),
                     'stacked_s': round(stacked, 1), 'one_by_one_s': round(alone, 1),
                     'ratio': round(stacked / alone, 2),
                     'same_numbers': per_point(stacked_root, alone_root)})
      print(json.dumps(rounds[-1]), flush=True)
  report = {'date': datetime.date.today().isoformat(), 'machine': platform.node(),
            'cpu_count': os.cpu_count(), 'config': _CONFIG.value,
            'search': _SEARCH.value, 'seeds': seeds, 'settings': _SET.value,
            'rounds': rounds}
  os.makedirs(_OUT.value, exist_ok=True)
  stem = os.path.join(_OUT.value, f'search_round_{report["date"]}')
  outputs.write_json(stem + '.json', report)
  lines = [f'# A search round, {report["date"]} ({os.cpu_count()} cores)', '',
           f'`python benchmarks/search_round.py --config={_CONFIG.value} '
           f'--search={_SEARCH.value}'
           + ''.join(f' --set={s}' for s in _SET.value)
           + f'`: the first round\'s points x {len(seeds)} seeds, '
           'stacked in one program against one by one in one process; each '
           'contestant with an empty compilation cache.', '',
           '| round | points | stacked (one program) | one by one | stacked / one by one '
           '| same per-seed numbers |', '| ---: | ---: | ---: | ---: | ---: | --- |']
  lines += [f'| {r["round"]} | {r["points"]} | {r["stacked_s"]} s | '
            f'{r["one_by_one_s"]} s | {r["ratio"]}x | {r["same_numbers"]} |'
            for r in rounds]
  with open(stem + '.md', 'w') as f:
    f.write('\n'.join(lines) + '\n')
  print('\n'.join(lines))


if __name__ == '__main__':
  app.run(main)

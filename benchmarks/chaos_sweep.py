r"""A whole sweep on a preemptible cluster, played on one machine: its shards killed
again and again, then compared with the same sweep undisturbed.

  python benchmarks/chaos_sweep.py --kills=100            # the long form (README, docs/experiments.md)
  python benchmarks/chaos_sweep.py --kills=3 --seed=7     # replays one schedule

A stacked demo sweep of three points in two programs (two learning rates stacked at
one hidden size, a third point at another size) runs through ``--launcher=local``:
two jobs, each a process of its own, with a third process writing ``--mode=report``
now and then. A seeded schedule kills the launch's whole process group, or has each
job kill itself at a metrics row (SIGKILL or SIGTERM; :func:`run_with_kills`),
``--kills`` times, each time relaunching the same
command; the last launch runs to the end. Then (:func:`differences`): every point's
results and every metrics.jsonl row equal the undisturbed sweep's (wall times
aside), no row twice or missing, no temporary file, no interrupted checkpoint, the
same files in every run folder, ``sweep.json`` complete, and report.md and
report.csv the same bytes once their wall-time cells are set aside. A sweep that
ends before all the kills were dealt is compared, and the next cycle starts afresh.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEP = '''def sweep(arg):
  return [{"model.hidden": 8, "optimizer.learning_rate": 0.005},
          {"model.hidden": 8, "optimizer.learning_rate": 0.01},
          {"model.hidden": 16, "optimizer.learning_rate": 0.005}]
'''
FLAGS = ('--config=experiments/demo.py:quick', '--config.seeds=(1,2)',
         '--config.train.num_epochs=6', '--config.train.progress=False',
         '--config.data.num_buckets=1', '--config.model.embed_dim=8')
# Where a run leaves what a kill interrupted: atomic writes' temporaries, orbax's.
LEFTOVERS = re.compile(r'(^\..*\.tmp$)|(orbax-checkpoint-tmp)|(\.tmp-\d+)|(\.removing$)')


def launch_command(sweep: str, root: str) -> List[str]:
  return [sys.executable, os.path.join(REPO, 'launch.py'), *FLAGS, f'--sweep={sweep}',
          f'--workdir={root}', '--launcher=local']


def report(root: str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, os.path.join(REPO, 'launch.py'),
                         '--mode=report', f'--workdir={root}'], cwd=REPO,
                        capture_output=True, text=True, check=False)


def rows_written(root: str) -> int:
  """metrics.jsonl rows under ``root`` so far: how far the sweep has come."""
  total = 0
  for name in os.listdir(root) if os.path.isdir(root) else ():
    path = os.path.join(root, name, 'metrics.jsonl')
    if os.path.exists(path):
      with open(path, 'rb') as f:
        total += f.read().count(b'\n')
  return total


def run_with_kills(sweep: str, root: str, kills: int, seed: int, total_rows: int = 0,
                   kinds=('group', 'jobs'), print_fn=print) -> dict:
  """The sweep under ``root``, killed ``kills`` times; returns what happened. Each
  kill is drawn by ``random.Random(seed)``: its signal (SIGKILL or SIGTERM) and its
  kind, one of ``kinds``:

  * ``group``: the launch's whole process group, after a number of new metrics rows
    (0 .. half of what is left of ``total_rows``: in training, whatever the
    machine's speed) and 0-0.5 s more, or with no row 0.5-4 s after the launch
    (start-up, loading, compiling);
  * ``jobs``: each job signals itself at its k-th metrics row (k = 1..3,
    ``$SEEDSWEEP_FAULT``): a moment no timing can miss; the launch then fails.
  """
  rng = random.Random(seed)
  done = {'kills': 0, 'relaunches': 0, 'by_signal': {'SIGKILL': 0, 'SIGTERM': 0},
          'by_kind': {k: 0 for k in kinds}, 'reports': 0}
  while True:
    kind = rng.choice(kinds) if done['kills'] < kills else None
    signum = rng.choice((signal.SIGKILL, signal.SIGTERM))
    env = dict(os.environ)
    if kind == 'jobs':
      env['SEEDSWEEP_FAULT'] = f'metrics_row:{rng.randint(1, 3)}@{signum.name[3:]}'
    proc = subprocess.Popen(launch_command(sweep, root), cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    if kind == 'group':
      start = rows_written(root)
      rows = rng.randint(0, max(0, (total_rows - start) // 2))
      delay = rng.uniform(0.5, 4.0) if rows == 0 else rng.uniform(0.0, 0.5)
      while proc.poll() is None and rows_written(root) < start + rows:
        time.sleep(0.05)
      deadline = time.monotonic() + delay
      while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    if kind is not None and rng.random() < 0.3:  # a reader now and then
      report(root)
      done['reports'] += 1
    if kind == 'group' and proc.poll() is None:
      os.killpg(proc.pid, signum)
    _, err = proc.communicate()
    _reap(proc.pid)
    if kind is None or proc.returncode == 0:  # the sweep ended (before its kill)
      if proc.returncode:
        raise RuntimeError(f'the last launch failed ({proc.returncode}):\n{err[-3000:]}')
      if kind is not None:
        done['finished_before_the_last_kills'] = kills - done['kills']
      return done
    done['kills'] += 1
    done['by_signal'][signum.name] += 1
    done['by_kind'][kind] += 1
    done['relaunches'] += 1
    print_fn(f'kill {done["kills"]}/{kills}: {kind} {signum.name}')


def _reap(pgid: int) -> None:
  """Waits until no process of the killed group is left (its jobs die with it)."""
  for _ in range(200):
    try:
      os.killpg(pgid, 0)
    except ProcessLookupError:
      return
    time.sleep(0.05)
  os.killpg(pgid, signal.SIGKILL)


def _rows(path: str) -> List[dict]:
  with open(path) as f:
    rows = [json.loads(line) for line in f]
  for r in rows:
    r.pop('wall_time', None)
  return rows


def snapshot(root: str) -> Dict[str, object]:
  """What must be equal: per run folder its file names (tensorboard and job logs
  aside), metrics rows and results' metrics; sweep.json; the reports less wall."""
  out = {}
  for name in sorted(os.listdir(root)):
    folder = os.path.join(root, name)
    if not os.path.isdir(folder) or name in ('jobs', 'plots'):
      continue
    # orbax names its data chunks at random (.../d/<hash>): their folders count.
    files = sorted({os.path.relpath(w if os.path.basename(w) == 'd' else
                                    os.path.join(w, f), folder)
                    for w, _, fs in os.walk(folder) for f in fs
                    if 'tensorboard' not in w})
    with open(os.path.join(folder, 'results.json')) as f:
      results = json.load(f)
    out[name] = {'files': files, 'rows': _rows(os.path.join(folder, 'metrics.jsonl')),
                 'metrics': [p.get('metrics') for p in results.get('by_point', [results])]}
  with open(os.path.join(root, 'sweep.json')) as f:
    out['sweep.json'] = json.load(f)
  for name in ('report.md', 'report.csv'):
    with open(os.path.join(root, name)) as f:
      out[name] = _without_wall(f.read())
  return out


def _without_wall(text: str) -> str:
  """A report with its wall-time cells blanked (they measure the machine)."""
  text = re.sub(r'\| (\d+ h \d+ min|\d+ min \d+ s|\d+(\.\d+)? s) \|', '| WALL |', text)
  return re.sub(r',(\d+\.\d+),(random|[^,]*\.(txt|bin|vec)),', r',WALL,\2,', text)


def leftovers(root: str) -> List[str]:
  """Temporary files and interrupted checkpoints anywhere under ``root``."""
  return sorted(os.path.relpath(os.path.join(w, n), root)
                for w, dirs, fs in os.walk(root) for n in dirs + fs
                if LEFTOVERS.search(n))


def duplicated_rows(root: str) -> List[str]:
  """Runs whose metrics.jsonl repeats or skips an (epoch, member) row."""
  bad = []
  for name in sorted(os.listdir(root)):
    path = os.path.join(root, name, 'metrics.jsonl')
    if not os.path.exists(path):
      continue
    keys = [(r['epoch'], r['seed'], r.get('point')) for r in _rows(path)]
    if len(keys) != len(set(keys)):
      bad.append(name)
  return bad


def differences(calm: str, hit: str) -> List[str]:
  """Every way the killed sweep ``hit`` ended unlike the undisturbed ``calm``."""
  out = [f'left behind: {p}' for p in leftovers(hit)]
  out += [f'{name}: a metrics row twice' for name in duplicated_rows(hit)]
  a, b = snapshot(calm), snapshot(hit)
  for key in sorted(set(a) | set(b)):
    if a.get(key) != b.get(key):
      out.append(f'{key} differs{_how(a.get(key), b.get(key))}')
  return out


def _how(calm, hit) -> str:
  """Which part of a run folder's snapshot differs, and a first instance of it."""
  if not (isinstance(calm, dict) and isinstance(hit, dict)):
    return ''
  parts = []
  for part in ('files', 'rows', 'metrics'):
    x, y = calm.get(part), hit.get(part)
    if x == y:
      continue
    if part == 'files':
      detail = (f'only undisturbed {sorted(set(x) - set(y))[:3]}, only killed '
                f'{sorted(set(y) - set(x))[:3]}')
    elif part == 'rows':
      first = next((i for i, (r, t) in enumerate(zip(x, y)) if r != t), min(len(x), len(y)))
      detail = f'{len(x)} against {len(y)} rows, first differing row {first}'
    else:
      detail = 'results metrics'
    parts.append(f'{part} ({detail})')
  return ': ' + '; '.join(parts) if parts else ''


def undisturbed(tmp: str) -> Tuple[str, str, float]:
  """The sweep file written under ``tmp``, the sweep run undisturbed into
  ``tmp/calm`` and its report: ``(sweep file, calm root, seconds the sweep took)``.
  A killed sweep is compared with it when it ran the same sweep file (sweep.json
  names it)."""
  sweep = os.path.join(tmp, 'chaos_sweep.py')
  with open(sweep, 'w') as f:
    f.write(SWEEP)
  calm = os.path.join(tmp, 'calm')
  start = time.perf_counter()
  run_with_kills(sweep, calm, 0, 0)
  calm_s = time.perf_counter() - start
  if report(calm).returncode:
    raise RuntimeError(f'report of {calm} failed')
  return sweep, calm, calm_s


def chaos(kills: int, seed: int, tmp: str, kinds=('group', 'jobs'),
          print_fn=print, calm: Optional[Tuple[str, str, float]] = None) -> dict:
  """The undisturbed sweep and killed ones under ``tmp``, until ``kills`` kills were
  dealt: a sweep that ends before them is compared and another one starts (a cycle),
  each on the same undisturbed sweep. ``calm``: :func:`undisturbed`'s result, made
  before (tests share one; it is only read), else made under ``tmp``. Returns the
  figures."""
  sweep, calm, calm_s = calm or undisturbed(tmp)
  figures = {'kills': 0, 'relaunches': 0, 'cycles': 0, 'reports': 0,
             'by_signal': {'SIGKILL': 0, 'SIGTERM': 0}, 'by_kind': {k: 0 for k in kinds},
             'seed': seed, 'undisturbed_s': round(calm_s, 1), 'differences': []}
  while figures['kills'] < kills or not figures['cycles']:
    hit = os.path.join(tmp, f'hit{figures["cycles"]}')
    done = run_with_kills(sweep, hit, kills - figures['kills'],
                          seed + 1000 * figures['cycles'], rows_written(calm), kinds,
                          print_fn=print_fn)
    proc = report(hit)
    if proc.returncode:
      raise RuntimeError(f'report of {hit} failed:\n{proc.stderr[-2000:]}')
    figures['cycles'] += 1
    for key in ('kills', 'relaunches', 'reports'):
      figures[key] += done[key]
    for key in ('by_signal', 'by_kind'):
      for k, v in done[key].items():
        figures[key][k] += v
    found = differences(calm, hit)
    figures['differences'] += [f'cycle {figures["cycles"]}: {d}' for d in found]
    if found:  # evidence: kept beside the undisturbed sweep, outside the temp folder
      kept = os.path.join(tempfile.gettempdir(), f'seedsweep_chaos_kept_{os.getpid()}')
      shutil.copytree(hit, os.path.join(kept, os.path.basename(hit)))
      if not os.path.exists(os.path.join(kept, 'calm')):
        shutil.copytree(calm, os.path.join(kept, 'calm'))
      figures['kept'] = kept
    shutil.rmtree(hit)  # a cycle's checkpoints: disk, not evidence, once compared
  return figures


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--kills', type=int, default=100)
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--out', default=os.path.join(REPO, 'benchmarks', 'results'))
  args = parser.parse_args()
  start = time.perf_counter()
  with tempfile.TemporaryDirectory(prefix='seedsweep_chaos_') as tmp:
    figures = chaos(args.kills, args.seed, tmp)
  figures['wall_s'] = round(time.perf_counter() - start, 1)
  figures['date'] = time.strftime('%Y-%m-%d')
  os.makedirs(args.out, exist_ok=True)
  path = os.path.join(args.out, f'chaos_sweep_{figures["date"]}_{args.kills}kills.json')
  with open(path, 'w') as f:
    json.dump(figures, f, indent=1)
  print(json.dumps(figures, indent=1))
  sys.exit(1 if figures['differences'] else 0)


if __name__ == '__main__':
  main()

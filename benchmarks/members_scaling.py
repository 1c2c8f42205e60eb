r"""How one run's cost grows with its members: whole runs of one epoch, 1 to 300 members.

Each count is a real run (``seedsweep --mode=train``, a fresh workdir, its own
process pinned to ``--cores``): members beyond the memory budget train in groups one
after another (seedsweep/run/groups.py). Per count: wall time of the process, the
run's own timing (build, compile, train, eval), its peak RSS, the groups it used,
seconds per member-epoch and their ratio to the first count's; and whether each
member's metrics rows (parameter hashes included) equal those of the smallest run
that has it, to the bit.

  python benchmarks/members_scaling.py --cores=2 --counts=10,1,30,100,300 \
      --out=benchmarks/results/members_scaling_2026-11-28

Runs one after another, never two at once (speed is only compared within one
invocation); a count whose workdir already finished is read back, so the command
resumes after a kill. Writes ``<out>.json`` and ``<out>.md``.
"""
import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = 'experiments/bilstm.py:sst/binary'


def run_count(count: int, workdir: str, cores, env: dict, overrides=()) -> dict:
  """One epoch of ``count`` members in ``workdir``: its figures; ``overrides``:
  ``key=value`` config settings."""
  argv = [sys.executable, os.path.join(REPO, 'launch.py'), f'--config={CONFIG}',
          f'--workdir={workdir}', '--config.train.num_epochs=1',
          '--config.train.progress=False',
          f'--config.seeds=({",".join(str(s) for s in range(1, count + 1))},)'
          ] + [f'--config.{o}' for o in overrides]
  results = os.path.join(workdir, 'results.json')
  wall = None
  if not os.path.exists(results):
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, env=env,
                          preexec_fn=lambda: os.sched_setaffinity(0, cores),
                          check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
      return {'members': count, 'error': proc.stderr.strip().splitlines()[-1:]}
  with open(results) as f:
    timing = json.load(f)['timing']
  split = os.path.join(workdir, 'groups.json')
  bounds = json.load(open(split))['bounds'] if os.path.exists(split) else [[0, count]]
  return {'members': count, 'wall_s': wall, 'groups': len(bounds),
          'group_sizes': sorted({b - a for a, b in bounds}), **timing}


def rows_of(workdir: str) -> dict:
  """``{seed: row}`` of a one-epoch run's metrics.jsonl, wall time left out."""
  with open(os.path.join(workdir, 'metrics.jsonl')) as f:
    rows = [json.loads(line) for line in f]
  return {r['seed']: {k: v for k, v in r.items() if k != 'wall_time'} for r in rows}


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--cores', type=int, default=2)
  parser.add_argument('--counts', default='10,1,30,100,300')
  parser.add_argument('--workdirs', default='/tmp/members_scaling')
  parser.add_argument('--out', required=True)
  parser.add_argument('--set', action='append', default=[],
                      help='a config setting for every run, key=value (repeatable)')
  args = parser.parse_args()
  cores = set(range(args.cores))
  env = dict(os.environ, SEEDSWEEP_DATA=os.environ.get(
      'SEEDSWEEP_DATA', os.path.join(os.path.dirname(REPO), 'shared', 'data')))
  counts = [int(c) for c in args.counts.split(',')]
  figures = []
  for count in counts:
    workdir = os.path.join(args.workdirs, f'members_{count}')
    figures.append(run_count(count, workdir, cores, env, args.set))
    print(json.dumps(figures[-1]), flush=True)
  # Every member's bits against the smallest run that has it.
  done = sorted(f['members'] for f in figures if 'error' not in f)
  for f in figures:
    if 'error' in f:
      continue
    mine = rows_of(os.path.join(args.workdirs, f'members_{f["members"]}'))
    smaller = [c for c in done if c < f['members']]
    if smaller:
      other = rows_of(os.path.join(args.workdirs, f'members_{smaller[-1]}'))
      f['bitwise_vs'] = smaller[-1]
      f['bitwise_equal'] = all(mine[s] == other[s] for s in other)
  base = next(f for f in figures if 'error' not in f)
  for f in figures:
    if 'train' in f:
      f['s_per_member_epoch'] = (f['train'] + f.get('eval', 0)) / f['members']
      f['vs_first'] = f['s_per_member_epoch'] / base['s_per_member_epoch']
  with open(args.out + '.json', 'w') as out:
    json.dump({'config': CONFIG, 'cores': args.cores, 'settings': args.set,
               'figures': figures}, out, indent=1)
  lines = ['| members | groups | wall s | compile s | train s | eval s | '
           's a member-epoch | vs ' + f'{base["members"]} | peak RSS MiB | '
           'bits vs smaller run |',
           '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |']
  for f in sorted(figures, key=lambda f: f['members']):
    if 'error' in f:
      lines.append(f'| {f["members"]} | failed: {f["error"]} |')
      continue
    bits = (f'equal to {f["bitwise_vs"]}' if f.get('bitwise_equal') else
            f'DIFFER from {f["bitwise_vs"]}' if 'bitwise_vs' in f else '')
    wall = f'{f["wall_s"]:.0f}' if f['wall_s'] else '(earlier)'
    lines.append(
        f'| {f["members"]} | {f["groups"]} x {"/".join(map(str, f["group_sizes"]))} | '
        f'{wall} | {f.get("compile", 0):.0f} | {f["train"]:.0f} | {f.get("eval", 0):.0f} '
        f'| {f["s_per_member_epoch"]:.2f} | {f["vs_first"]:.2f}x | '
        f'{f.get("peak_rss_mib", 0):,.0f} | {bits} |')
  with open(args.out + '.md', 'w') as out:
    out.write('\n'.join(lines) + '\n')
  print('\n'.join(lines))


if __name__ == '__main__':
  main()

r"""Where a first run's compile time goes: every program one config compiles, cold.

  python benchmarks/compile_profile.py                         # every paper model, SST-2
  python benchmarks/compile_profile.py --models=dclstm --seeds=1,2

For each config, ``benchmarks/compare.py``'s in-process probe (build, one train step
per length bucket, one full dev + test evaluation) runs in a child with an empty
compilation cache and ``JAX_LOG_COMPILES=1``; jax's log lines give, per program
(``jit(name)``), the seconds spent tracing, lowering to MLIR and compiling in XLA.
Writes ``compile_profile_<date>.json`` and ``.md`` under ``--out``.
"""
import argparse
import collections
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)

from benchmarks import compare  # pylint: disable=wrong-import-position

# jax's messages under jax_log_compiles (jax/_src/dispatch.py, pxla.py).
PHASES = {
    'trace': re.compile(r'Finished tracing (\S+) for jit in ([\d.]+) sec'),
    'lower': re.compile(r'Finished jaxpr to MLIR module conversion jit\((\S+)\) in '
                        r'([\d.]+) sec'),
    'compile': re.compile(r'Finished XLA compilation of jit\((\S+)\) in ([\d.]+) sec'),
}


def parse(log: str) -> dict:
  """``{program: {phase: seconds, 'count': compilations}}`` from jax's log lines."""
  out = collections.defaultdict(lambda: collections.Counter())
  for line in log.splitlines():
    for phase, pattern in PHASES.items():
      match = pattern.search(line)
      if match:
        out[match[1]][phase] += float(match[2])
        if phase == 'compile':
          out[match[1]]['count'] += 1
  return {k: dict(v) for k, v in out.items()}


def profile(config: str, seeds: str, cores, tmp: str) -> dict:
  env = dict(os.environ, **compare.framework_env(os.path.join(tmp, 'cache')),
             JAX_LOG_COMPILES='1')
  start = time.perf_counter()
  proc = subprocess.run([sys.executable, 'benchmarks/compare.py', f'--probe={config}',
                         f'--seeds={seeds}', '--steps=1'], cwd=REPO, env=env,
                        capture_output=True, text=True, check=False,
                        preexec_fn=lambda: os.sched_setaffinity(0, cores))
  if proc.returncode:
    raise RuntimeError(f'{config}: probe failed:\n{proc.stderr[-3000:]}')
  probe = compare.last_json(proc.stdout)
  programs = parse(proc.stderr)
  return {'config': config, 'seeds': seeds, 'wall_s': time.perf_counter() - start,
          'build_s': probe['build_s'], 'compile_s': probe['compile_s'],
          'programs': programs}


def markdown(rows, date: str) -> str:
  lines = [f'# Cold compile, {date} ({compare.machine()})', '',
           '| config | program | compiles | trace s | lower s | XLA compile s |',
           '| --- | --- | ---: | ---: | ---: | ---: |']
  for r in rows:
    for name, p in sorted(r['programs'].items(), key=lambda kv: -kv[1].get('compile', 0)):
      if p.get('compile', 0) < 0.05 and not p.get('count'):
        continue
      lines.append(f'| {r["config"]} | {name} | {p.get("count", 0)} | '
                   f'{p.get("trace", 0):.1f} | {p.get("lower", 0):.1f} | '
                   f'{p.get("compile", 0):.1f} |')
    lines.append(f'| {r["config"]} | **all** (probe: build {r["build_s"]:.1f} s, '
                 f'compile {r["compile_s"]:.1f} s) | '
                 f'{sum(p.get("count", 0) for p in r["programs"].values())} | '
                 f'{sum(p.get("trace", 0) for p in r["programs"].values()):.1f} | '
                 f'{sum(p.get("lower", 0) for p in r["programs"].values()):.1f} | '
                 f'{sum(p.get("compile", 0) for p in r["programs"].values()):.1f} |')
  return '\n'.join(lines) + '\n'


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--models', default=','.join(compare.MODELS))
  parser.add_argument('--seeds', default='1,2,3,4,5,6,7,8,9,10')
  parser.add_argument('--cores', type=int, default=2)
  parser.add_argument('--out', default=os.path.join(REPO, 'benchmarks', 'results'))
  args = parser.parse_args()
  cores = set(range(args.cores))
  rows = []
  for name in args.models.split(','):
    with tempfile.TemporaryDirectory(prefix='seedsweep_compile_') as tmp:
      rows.append(profile(compare.MODELS[name][0], args.seeds, cores, tmp))
    print(json.dumps({k: v for k, v in rows[-1].items() if k != 'programs'}), flush=True)
  date = datetime.date.today().isoformat()
  os.makedirs(args.out, exist_ok=True)
  stem = os.path.join(args.out, f'compile_profile_{date}')
  with open(stem + '.json', 'w') as f:
    json.dump(rows, f, indent=1)
  text = markdown(rows, date)
  with open(stem + '.md', 'w') as f:
    f.write(text)
  print(text)


if __name__ == '__main__':
  main()

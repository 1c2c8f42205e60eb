r"""A user's first run, checkout against checkout: wall time, and the counts load
does not move (dispatches, compiled programs, XLA compile seconds).

  python benchmarks/first_run.py --against=/path/to/other/checkout --rounds=2
  python benchmarks/first_run.py --seeds=2 --chunk_seconds=1e9 --sync  # counts only

Each run trains ``--config`` (default Bi-LSTM SST-2, compare.py's ``whole``
workload) for ``--seeds`` seeds x ``--epochs`` in a process of its own, from the
checkout's root, pinned to ``--cores``, with an empty compilation cache and
``JAX_LOG_COMPILES=1`` (compile_profile.parse reads the log); the checkouts
alternate, ``--rounds`` times. A run counts every call of its ``Steps`` programs
(engine/steps.py; ``train_chunk``: the train dispatches) and reports its own
``timing`` (results.json). For a commit, make the other checkout with
``git worktree add /tmp/before COMMIT``. Prints one JSON line a run, then a table.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)

from benchmarks import compare  # pylint: disable=wrong-import-position
from benchmarks import compile_profile  # pylint: disable=wrong-import-position

# Run in the checkout under test, so only its package's names that every version
# has: Steps' jitted attributes are wrapped to count their calls.
CHILD = r'''
import collections, json, sys, time
import jax
from jax._src import compiler
import seedsweep
from seedsweep.engine import steps as steps_lib
from seedsweep.run import epoch
try:  # before issue 80's pieces (3b96763): the chunk sizes and compile_ahead here
  from seedsweep.run import experiment as chunks
except ImportError:
  chunks = epoch
config_name, seeds, epochs, workdir, chunk_seconds, sync = sys.argv[1:]
calls, compile_cpu = collections.Counter(), collections.Counter()

class Counted:
  def __init__(self, name, fn):
    self.name, self.fn = name, fn
  def __call__(self, *args, **kwargs):
    calls[self.name] += 1
    out = self.fn(*args, **kwargs)
    return jax.block_until_ready(out) if sync else out
  def __getattr__(self, attr):
    return getattr(self.fn, attr)

init = steps_lib.Steps.__init__
def counting_init(self, *args, **kwargs):
  init(self, *args, **kwargs)
  for name in ('epoch_orders', 'train_step', 'train_chunk', 'eval_batch', 'eval_chunk',
               'predict_batch', 'select_best'):
    if hasattr(self, name):
      setattr(self, name, Counted(name, getattr(self, name)))
steps_lib.Steps.__init__ = counting_init
if chunk_seconds:  # chunks sized alike under any load: counts that load leaves alone
  chunks.CHUNK_SECONDS = float(chunk_seconds)
if sync:  # nothing else runs while XLA compiles: its threads' CPU time is its own
  if chunks is epoch:
    epoch.compile_ahead = lambda pieces, params: None
  else:
    chunks.Experiment.compile_ahead = lambda self, params: None
  backend_compile = compiler.backend_compile_and_load
  def timed(backend, module, *args, **kwargs):
    start = time.process_time()
    try:
      return backend_compile(backend, module, *args, **kwargs)
    finally:
      name = str(module.operation.attributes['sym_name']).strip('"')
      compile_cpu[name] += time.process_time() - start
  compiler.backend_compile_and_load = timed
config = seedsweep.load_config(config_name, train__progress=False,
                               train__num_epochs=int(epochs),
                               seeds=tuple(range(1, int(seeds) + 1)))
results = seedsweep.train(config, workdir, print_fn=lambda *_: None)
print(json.dumps({'calls': dict(calls), 'timing': results.get('timing', {}),
                  'xla_compile_cpu_s': round(sum(compile_cpu.values()), 2) if sync else None,
                  'xla_compile_cpu_per_program': dict(compile_cpu),
                  'test_accuracy': results['metrics']['test_accuracy']}))
'''


def run(checkout: str, config: str, seeds: int, epochs: int, cores, tmp: str,
        chunk_seconds: str = '', sync: bool = False) -> dict:
  """One first run of ``config`` in ``checkout``: its wall, timing, calls, programs;
  ``chunk_seconds``: run/epoch.py's CHUNK_SECONDS (run/experiment.py's before 2026-12-04) for it ('': its own);
  ``sync``: see ``--sync``."""
  env = dict(os.environ, **compare.framework_env(os.path.join(tmp, 'cache')),
             JAX_LOG_COMPILES='1', PYTHONPATH=checkout)
  start = time.perf_counter()
  proc = subprocess.run([sys.executable, '-c', CHILD, config, str(seeds), str(epochs),
                         os.path.join(tmp, 'run'), chunk_seconds, 'sync' if sync else ''],
                        cwd=checkout, env=env,
                        capture_output=True, text=True, check=False,
                        preexec_fn=lambda: os.sched_setaffinity(0, cores))
  wall = time.perf_counter() - start
  if proc.returncode:
    raise RuntimeError(f'{checkout}: the run failed:\n{proc.stderr[-3000:]}')
  out = compare.last_json(proc.stdout)
  programs = compile_profile.parse(proc.stderr)
  return {'checkout': checkout, 'wall_s': round(wall, 2), **out,
          'programs': sum(p.get('count', 0) for p in programs.values()),
          'xla_compile_s': round(sum(p.get('compile', 0) for p in programs.values()), 2),
          'per_program': programs}


def table(rows, epochs: int) -> str:
  """The runs side by side, one line each."""
  lines = ['| checkout | wall s | compile s (timing) | train s | XLA compile s | '
           'XLA compile CPU s | programs | train dispatches / epoch | eval dispatches |',
           '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |']
  for r in rows:
    calls, t = r['calls'], r['timing']
    lines.append(
        f'| {r["checkout"]} | {r["wall_s"]:.1f} | {t.get("compile", 0):.1f} | '
        f'{t.get("train", 0):.1f} | {r["xla_compile_s"]:.1f} | '
        f'{r["xla_compile_cpu_s"] if r["xla_compile_cpu_s"] is not None else "-"} | '
        f'{r["programs"]} | '
        f'{calls.get("train_chunk", 0) / epochs:.0f} | '
        f'{calls.get("eval_batch", 0) + calls.get("eval_chunk", 0)} |')
  return '\n'.join(lines)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--against', action='append', default=[],
                      help='another checkout to run beside this one (repeatable)')
  parser.add_argument('--config', default=compare.WHOLE_CONFIG)
  parser.add_argument('--seeds', type=int, default=10)
  parser.add_argument('--epochs', type=int, default=1)
  parser.add_argument('--rounds', type=int, default=1)
  parser.add_argument('--cores', type=int, default=2)
  parser.add_argument('--chunk_seconds', default='',
                      help='CHUNK_SECONDS for the runs (e.g. 1e9: every chunk at '
                      'steps_per_dispatch, so the dispatch counts do not follow the '
                      'load); default the code\'s own')
  parser.add_argument('--sync', action='store_true',
                      help='wait for every call and compile nothing ahead, so that '
                      'XLA\'s compile CPU seconds (process time) are measured alone: '
                      'a count load moves little; the wall is then no user\'s')
  args = parser.parse_args(argv)
  os.environ.setdefault('SEEDSWEEP_DATA', compare.device_check.default_data_root())
  cores = set(sorted(os.sched_getaffinity(0))[:args.cores])
  rows = []
  for _ in range(args.rounds):
    for checkout in [*args.against, REPO]:
      with tempfile.TemporaryDirectory(prefix='seedsweep_first_run_') as tmp:
        rows.append(run(os.path.abspath(checkout), args.config, args.seeds,
                        args.epochs, cores, tmp, args.chunk_seconds, args.sync))
      print(json.dumps(rows[-1]), flush=True)
  print(f'{args.config}, {args.seeds} seeds x {args.epochs} epoch(s), '
        f'{len(cores)} core(s), {compare.machine()}')
  print(table(rows, args.epochs))


if __name__ == '__main__':
  main()

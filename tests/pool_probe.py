"""Prints, as JSON, a hash of every member's parameters after a few training steps of
each model family's paper config at its real sizes, under one XLA:CPU thread pool.

Run by tests/test_pool.py once per pool size, since the pool is fixed when JAX starts
its CPU client: ``python -m tests.pool_probe THREADS STEPS [SEEDS] [CONFIG...]``; forced
CPU devices come from the environment's XLA_FLAGS
(``--xla_force_host_platform_device_count``), as a user gives them. The programs are
compiled in the process, under its pool, unless ``$SEEDSWEEP_POOL_PROBE_PROGRAMS``
names a compilation cache: ``write:DIR``, every program compiled is kept there;
``read:DIR``, the programs are read from there (only those missing are compiled, and
not kept), as a cache shared by machines of other core counts gives them.
``python -m tests.pool_probe sums THREADS [plain]`` hashes the C-LSTM's input-bias
gradient sums alone, in the portable form (seconds, not minutes), or as the plain
reduce that split by the pool (``plain``).
"""
import json
import os
import sys
import time

# 'write:DIR' or 'read:DIR', a compilation cache folder the probe keeps its programs
# in or takes them from (unset: compiled in the process, nothing read or written).
PROGRAMS = 'SEEDSWEEP_POOL_PROBE_PROGRAMS'

# The paper configs of every model family, on TREC (5.5k questions: little data to
# prepare), at their own sizes: embeddings, hidden units, layers, filters, batch,
# length buckets. Only the seeds and the steps are fewer.
CONFIGS = ('experiments/bilstm.py:trec/coarse', 'experiments/dclstm_trec.py',
           'experiments/clstm_trec.py', 'experiments/mtlstm_trec.py',
           'experiments/dlstm_trec.py', 'experiments/joint_trec.py')


def probe(spec: str, threads: int, steps: int, seeds: int) -> dict:
  """``{'params': [hash per member], 'devices': the devices the members ran on}``;
  the caller adds what it cost (``cpu_s``) and the programs it read from the cache."""
  from seedsweep.config import base  # pylint: disable=g-import-not-at-top
  from seedsweep.run import epoch as epoch_lib  # pylint: disable=g-import-not-at-top
  from tests.conftest import run_steps  # pylint: disable=g-import-not-at-top
  config = base.load_config(spec)
  config.seeds = tuple(range(1, seeds + 1))
  config.train.progress = False
  config.runtime.cpu_threads = threads  # the build pins it (the first one starts JAX)
  exp, state = run_steps(config, steps)
  return {'params': epoch_lib.params_fingerprints(exp, state.params),
          'devices': exp.placement.devices}


# The C-LSTM's input-bias gradient, [members, time, batch, 4 x hidden] summed over
# time and batch, at the lengths whose plain reduce split by the pool (2026-12-04).
SUM_LENGTHS = (4, 6, 8, 12, 38)


def sums(plain: bool = False) -> dict:
  """``{length: hash}`` of :data:`SUM_LENGTHS`' sums under ``make_portable``, or
  ``plain``: as XLA reduces them unrewritten."""
  import hashlib  # pylint: disable=g-import-not-at-top
  import jax  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  from seedsweep.engine import portable  # pylint: disable=g-import-not-at-top
  form = (lambda f: f) if plain else portable.make_portable
  fn = jax.jit(form(lambda x: x.sum((1, 2))))
  rng = np.random.default_rng(0)
  return {str(t): hashlib.sha256(np.asarray(fn(
      rng.standard_normal((2, t, 50, 1200)).astype(np.float32))).tobytes()).hexdigest()[:16]
          for t in SUM_LENGTHS}


def _use_programs() -> list:
  """Where this process's programs come from (:data:`PROGRAMS`); returns a list
  that grows by one for each program read from the cache."""
  import jax  # pylint: disable=g-import-not-at-top
  # XLA sizes some loops' partitions for the pool of the process that compiles, and
  # the cache's key does not name the pool: compiled here unless PROGRAMS says where
  # another pool's programs are (never the user's cache).
  if os.environ.get(PROGRAMS):
    mode, folder = os.environ[PROGRAMS].split(':', 1)
    jax.config.update('jax_compilation_cache_dir', folder)
    # The cache keeps what took this long to compile: everything, or nothing.
    jax.config.update('jax_persistent_cache_min_compile_time_secs',
                      {'write': 0.0, 'read': float('inf')}[mode])
  else:
    jax.config.update('jax_enable_compilation_cache', False)
  hits = []
  jax.monitoring.register_event_listener(
      lambda event, **_: hits.append(1) if event.endswith('/cache_hits') else None)
  return hits


def main(argv):
  if argv[1] == 'sums':
    from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
    runtime.pin_cpu_threads(int(argv[2]))
    runtime.pin_numerics('portable')
    read = _use_programs()
    print(json.dumps({'cpu_threads': runtime.cpu_threads(),
                      'sums': sums(plain=argv[3:] == ['plain']), 'programs_read': len(read)}))
    return
  threads, steps = int(argv[1]), int(argv[2])
  seeds = int(argv[3]) if len(argv) > 3 else 2
  specs = argv[4:] or CONFIGS
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  import tests.conftest  # pylint: disable=g-import-not-at-top,unused-import  (data, numerics)
  runtime.pin_cpu_threads(threads)  # before JAX starts (conftest pinned the default)
  import jax  # pylint: disable=g-import-not-at-top
  hits = _use_programs()
  out = {'cpu_threads': runtime.cpu_threads(), 'usable_cores': runtime.usable_cores(),
         'device_count': jax.device_count(), 'numerics': runtime.numerics(),
         'startup_cpu_s': round(time.process_time(), 1)}
  for spec in specs:
    started, cpu, read = time.time(), time.process_time(), len(hits)
    out[spec] = probe(spec, threads, steps, seeds)
    out[spec].update(cpu_s=round(time.process_time() - cpu, 1),
                     programs_read=len(hits) - read)
    print(f'{spec}: {time.time() - started:.0f} s', file=sys.stderr, flush=True)
  print(json.dumps(out))


if __name__ == '__main__':
  os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  main(sys.argv)

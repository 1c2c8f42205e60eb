r"""Training throughput of the seed-parallel forms, measured side by side in one run.

  python benchmarks/seed_parallel.py --config=experiments/demo.py --steps=60

Compares, on the same batches: ``vmap`` over all seeds, ``lax.map`` over all seeds
(each step one dispatch of the one-step train chunk), and one single-seed step per
seed run one after another (the baseline: what separate runs would cost). Each
child process also runs with and without the glibc malloc settings launch.py uses,
to measure them.
Prints steps/s (one step advances every seed) and ratios to the baseline.
"""
import json
import os
import subprocess
import sys
import time

from absl import app
from absl import flags
from ml_collections import config_flags

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)  # a script: config files import seedsweep.config.base

from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top,wrong-import-position
_CONFIG = config_flags.DEFINE_config_file('config', os.path.join(
    REPO, 'experiments', 'demo.py'), 'Experiment config.', lock_config=False)
_STEPS = flags.DEFINE_integer('steps', 60, 'Timed steps per form (after warm-up).')
_FORM = flags.DEFINE_string('form', None, 'Internal: measure one form and print JSON.')
_MALLOC = flags.DEFINE_bool('malloc_tunables', True, 'Also measure without them.')

FORMS = ('vmap', 'map', 'per_seed')


def measure(config, form: str, steps: int) -> float:
  """Steps per second (every seed advanced once per step) of one form."""
  import jax  # pylint: disable=g-import-not-at-top
  from seedsweep.run import epoch as epoch_lib  # pylint: disable=g-import-not-at-top
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  runtime.enable_compilation_cache()
  config.data.num_buckets = 1  # one padded length: the forms see identical shapes
  # per_seed: a one-seed step under `map` is the plain single-seed program (under
  # `vmap` a lone seed runs as a pair, engine/steps.py, for the bits of a group).
  config.train.seed_parallel = 'vmap' if form == 'vmap' else 'map'
  seed_groups = ([(s,) for s in config.seeds] if form == 'per_seed'
                 else [tuple(config.seeds)])
  runs = []
  for seeds in seed_groups:
    config.seeds = seeds
    exp = pieces.build(config)
    batches = exp.steps.epoch_plan(exp.device, 1, exp.schedule.train_plan.schedule(1))
    runs.append([exp, exp.init_state(), batches, *epoch_lib.chunk_carry(exp, None, 0)])
  schedule = runs[0][0].schedule.train_plan.schedule(1)

  def advance(n, start):
    # A step a dispatch: the loop's one-step chunk (engine/steps.py train_chunk).
    for position in range(start, start + n):
      length = schedule[position % len(schedule)][1]
      for run in runs:
        exp, state, batches, loss_sum, cursor = run
        if position and position % len(schedule) == 0:  # the epoch again
          loss_sum, cursor = epoch_lib.chunk_carry(exp, None, 0)
        run[1], run[3], run[4] = exp.steps.train_chunk(
            state, exp.device, batches, cursor, loss_sum, length=length, count=1)
    jax.block_until_ready([r[1] for r in runs])

  advance(3, 0)  # compile and warm up
  start = time.perf_counter()
  advance(steps, 3)
  return steps / (time.perf_counter() - start)


def child(form: str, malloc: bool, argv) -> float:
  env = dict(os.environ)
  env.pop('GLIBC_TUNABLES', None)
  if malloc:
    env['GLIBC_TUNABLES'] = runtime.GLIBC_TUNABLES
  args = [a for a in argv[1:] if not a.startswith('--form')]
  out = subprocess.run([sys.executable, os.path.abspath(__file__), *args,
                        f'--form={form}'], env=env, capture_output=True, text=True,
                       check=True)
  return json.loads(out.stdout.strip().splitlines()[-1])['steps_per_s']


def main(argv):
  config = _CONFIG.value
  if _FORM.value:
    print(json.dumps({'steps_per_s': measure(config, _FORM.value, _STEPS.value)}))
    return
  settings = (True, False) if _MALLOC.value else (True,)
  table = {(f, m): child(f, m, sys.argv) for m in settings for f in FORMS}
  n = len(config.seeds)
  print(f'{n} seeds, model {config.model.name}, batch {config.train.batch_size}; '
        f'steps/s (each step advances all seeds), ratio to per-seed steps')
  for m in settings:
    base = table[('per_seed', m)]
    label = 'malloc tunables' if m else 'default malloc'
    for f in FORMS:
      print(f'  {label:<16} {f:<9} {table[(f, m)]:8.2f} steps/s  '
            f'{table[(f, m)] / base:5.2f}x')
  if len(settings) == 2:
    for f in FORMS:
      print(f'  malloc tunables speed-up, {f}: '
            f'{table[(f, True)] / table[(f, False)]:.2f}x')


if __name__ == '__main__':
  app.run(main)

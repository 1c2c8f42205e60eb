"""Prints, as JSON, a hash of every member's parameters after a few training steps and
its dev and test metrics, for every model's quick config.

Run in a child process by tests/test_determinism.py, once per core count:
``python -m tests.determinism_probe STEPS [KEY=VALUE...] [CONFIG...]``, where
``KEY=VALUE`` sets a config field of every config (``runtime.numerics=native``,
``train.seed_parallel=vmap``). Run on two CPUs (or under an emulated one, docs/design.md:
"Checking another CPU without one"), it compares their bits.
"""
import json
import os
import sys

from seedsweep.config import base
from seedsweep.config import keys
from seedsweep.run import epoch as epoch_lib
from seedsweep.run import provenance
from seedsweep.run import runtime
from tests.conftest import run_steps  # pins the thread pool, as the configs do
from tests.conftest import tiny_shapes

# Every model family, on the small datasets (TREC: 5.5k questions), as
# tests/test_experiments.py runs them.
CONFIGS = ('experiments/bilstm.py:trec/coarse,quick', 'experiments/dclstm_trec.py:quick',
           'experiments/clstm_trec.py:quick', 'experiments/mtlstm_trec.py:s2f,quick',
           'experiments/dlstm_trec.py:quick', 'experiments/joint_trec.py:quick')


def probe(spec: str, steps: int, settings=None) -> dict:
  # The shapes of tests/test_experiments.py (shared programs). Unpinned, four of
  # these six (all but MT-LSTM and the joint model) give other bits on 1 and 2 cores
  # with them (2026-11-23).
  config = tiny_shapes(keys.with_values(base.load_config(spec), settings or {}, 'probe'))
  exp, state = run_steps(config, steps)
  evals = epoch_lib.evaluate(exp, state.params)
  return {'params': epoch_lib.params_fingerprints(exp, state.params),
          'metrics': provenance.fingerprint_arrays([evals[k] for k in sorted(evals)])}


def main(argv):
  steps = int(argv[1])
  settings = dict(_setting(a) for a in argv[2:] if '=' in a)
  specs = [a for a in argv[2:] if '=' not in a] or CONFIGS
  if 'runtime.numerics' in settings:  # before JAX starts (conftest pinned the default)
    runtime.pin_numerics(settings['runtime.numerics'])
  out = {'usable_cores': runtime.usable_cores(), 'cpu_threads': runtime.cpu_threads(),
         'numerics': runtime.numerics(), 'settings': settings}
  out.update({spec: probe(spec, steps, settings) for spec in specs})
  print(json.dumps(out))


def _setting(text: str):
  key, _, value = text.partition('=')
  return key, value


if __name__ == '__main__':
  os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  main(sys.argv)

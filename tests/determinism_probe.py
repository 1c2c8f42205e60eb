"""Prints, as JSON, a hash of every member's parameters after a few training steps and
its dev and test metrics, for every model's quick config.

Run in a child process by tests/test_determinism.py, once per core count:
``python -m tests.determinism_probe STEPS CONFIG...``.
"""
import json
import os
import sys

from seedsweep.config import base
from seedsweep.run import provenance
from seedsweep.run import runtime
from tests.conftest import run_steps  # pins the thread pool, as the configs do
from tests.conftest import tiny_shapes

# Every model family, on the small datasets (TREC: 5.5k questions), as
# tests/test_experiments.py runs them.
CONFIGS = ('experiments/bilstm.py:trec/coarse,quick', 'experiments/dclstm_trec.py:quick',
           'experiments/clstm_trec.py:quick', 'experiments/mtlstm_trec.py:s2f,quick',
           'experiments/dlstm_trec.py:quick', 'experiments/joint_trec.py:quick')


def probe(spec: str, steps: int) -> dict:
  # The shapes of tests/test_experiments.py (shared programs). Unpinned, four of
  # these six (all but MT-LSTM and the joint model) give other bits on 1 and 2 cores
  # with them (2026-11-23).
  config = tiny_shapes(base.load_config(spec))
  exp, state = run_steps(config, steps)
  evals = exp.evaluate_all(state.params)
  return {'params': exp.params_fingerprints(state.params),
          'metrics': provenance.fingerprint_arrays([evals[k] for k in sorted(evals)])}


def main(argv):
  steps, specs = int(argv[1]), argv[2:] or CONFIGS
  out = {'usable_cores': runtime.usable_cores(), 'cpu_threads': runtime.cpu_threads()}
  out.update({spec: probe(spec, steps) for spec in specs})
  print(json.dumps(out))


if __name__ == '__main__':
  os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  main(sys.argv)

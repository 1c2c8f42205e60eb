r"""DLSTM on TREC question classification (6 classes; Shi et al. 2016, Table 3).

Run:
  python launch.py --config=experiments/dlstm_trec.py --workdir=runs/dlstm_trec
  python launch.py --config=experiments/dlstm_trec.py:quick --workdir=/tmp/q

Protocol: 5452 training / 500 test questions, no dev: the model after epoch 100 is
tested (``selection='last'``). Paper: 94.8 (LSTM 93.2, Bi-LSTM 93.0, C-LSTM 94.6).
Measured 2026-11-26 (AMD EPYC, 2 cores; docs/log.md, campaign): test 83.00 ± 7.40 over
5 seeds (85.4-86.8 but for seed 2, 69.8 after a loss spike); 91.24 ± 0.68 with IMDB
skip-gram 300-d static vectors (2026-11-27). Ten seeds: not yet run.
"""
from seedsweep.config import base
from seedsweep.experiments import dlstm_common


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, quick=False)
  config = dlstm_common.dlstm_config('trec/coarse', 94.8, arg.quick)
  config.train.selection = 'last'
  return config

r"""DLSTM on TREC question classification (6 classes; Shi et al. 2016, Table 3).

Run:
  python launch.py --config=experiments/dlstm_trec.py --workdir=runs/dlstm_trec
  python launch.py --config=experiments/dlstm_trec.py:quick --workdir=/tmp/q

Protocol: 5452 training / 500 test questions, no dev: the model after epoch 100 is
tested (``selection='last'``). Paper: 94.8 (LSTM 93.2, Bi-LSTM 93.0, C-LSTM 94.6).
"""
from seedsweep.config import base
from seedsweep.experiments import dlstm_common


def get_config(arg: str = ''):
  _, flags = base.parse_arg(arg, 'experiments/dlstm_trec.py', {})
  config = dlstm_common.dlstm_config('trec/coarse', 94.8, 'quick' in flags)
  config.train.selection = 'last'
  return config

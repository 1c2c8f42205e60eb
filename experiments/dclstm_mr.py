r"""DC-Bi-LSTM on MR (10-fold CV, all folds and seeds in one program): Ding et al. 2018, Table 1.

Run:
  python launch.py --config=experiments/dclstm_mr.py --workdir=runs/dclstm_mr
  python launch.py --config=experiments/dclstm_mr.py:quick --workdir=/tmp/q

Arguments: ``dclstm`` (default), ``bilstm300``, ``bilstm100`` or ``stacked`` (see
dclstm_sst.py); ``quick`` (2 seeds, 1 epoch, a small model, folds 0 and 1: a smoke test).
Paper (GloVe 42B, static): 82.8 (DC-Bi-LSTM). Measured: docs/log.md.
"""
from seedsweep.config import base
from seedsweep.experiments import dclstm_common

PAPER = {'dclstm': 82.8}


def get_config(arg: str = ''):
  choice, flags = base.parse_arg(arg, 'experiments/dclstm_mr.py',
                                 {'model': tuple(dclstm_common.MODELS)})
  return dclstm_common.dclstm_config('mr', choice['model'], PAPER.get(choice['model']),
                                     'quick' in flags)

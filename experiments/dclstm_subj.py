r"""DC-Bi-LSTM on Subj (10-fold CV, all folds and seeds in one program): Ding et al. 2018, Table 1.

Run:
  python launch.py --config=experiments/dclstm_subj.py --workdir=runs/dclstm_subj
  python launch.py --config=experiments/dclstm_subj.py:quick --workdir=/tmp/q

Arguments: ``dclstm`` (default), ``bilstm300``, ``bilstm100`` or ``stacked`` (see
dclstm_sst.py); ``quick`` (2 seeds, 1 epoch, a small model, folds 0 and 1: a smoke test).
Paper (GloVe 42B, static): 94.5 (DC-Bi-LSTM). Measured: docs/log.md.
"""
from seedsweep.config import base
from seedsweep.experiments import dclstm_common

PAPER = {'dclstm': 94.5}


def get_config(arg: str = ''):
  choice, flags = base.parse_arg(arg, 'experiments/dclstm_subj.py',
                                 {'model': tuple(dclstm_common.MODELS)})
  return dclstm_common.dclstm_config('subj', choice['model'], PAPER.get(choice['model']),
                                     'quick' in flags)

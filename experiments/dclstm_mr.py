r"""DC-Bi-LSTM on MR (10-fold CV, all folds and seeds in one program): Ding et al. 2018, Table 1.

Run:
  python launch.py --config=experiments/dclstm_mr.py --workdir=runs/dclstm_mr
  python launch.py --config=experiments/dclstm_mr.py:quick --workdir=/tmp/q

Arguments: ``dclstm`` (default), ``bilstm300``, ``bilstm100`` or ``stacked`` (see
dclstm_sst.py); ``quick`` (2 seeds, 1 epoch, a small model, folds 0 and 1: a smoke test).
Paper (GloVe 42B, static): 82.8 (DC-Bi-LSTM).
Measured (AMD EPYC, 2 cores; seeds 1-2, the CV mean each; docs/log.md, campaign): test
75.95 ± 0.34 (2026-11-26); 82.29 ± 0.17 with IMDB skip-gram 300-d static vectors
(2026-11-27). Ten seeds, and the other variants: not yet run in full.
"""
from seedsweep.config import base
from seedsweep.experiments import dclstm_common

PAPER = {'dclstm': 82.8}


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, model=tuple(dclstm_common.MODELS), quick=False)
  return dclstm_common.dclstm_config('mr', arg.model, PAPER.get(arg.model), arg.quick)

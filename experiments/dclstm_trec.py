r"""DC-Bi-LSTM on TREC (coarse, 6 classes; 10 % of training held out for epoch selection): Ding et al. 2018, Table 1.

Run:
  python launch.py --config=experiments/dclstm_trec.py --workdir=runs/dclstm_trec
  python launch.py --config=experiments/dclstm_trec.py:quick --workdir=/tmp/q

Arguments: ``dclstm`` (default), ``bilstm300``, ``bilstm100`` or ``stacked`` (see
dclstm_sst.py); ``quick`` (2 seeds, 1 epoch, a small model: a smoke test).
Paper (GloVe 42B, static): 95.6 (DC-Bi-LSTM).
Measured (AMD EPYC, 2 cores, 10 seeds; docs/log.md, campaign): test 87.58 ± 0.65
(2026-11-25); 92.08 ± 0.56 with IMDB skip-gram 300-d static vectors (2026-11-24). The
other variants: not yet run in full.
"""
from seedsweep.config import base
from seedsweep.experiments import dclstm_common

PAPER = {'dclstm': 95.6}


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, model=tuple(dclstm_common.MODELS), quick=False)
  return dclstm_common.dclstm_config('trec/coarse', arg.model, PAPER.get(arg.model),
                                     arg.quick)

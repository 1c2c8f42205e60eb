r"""MT-LSTM on TREC question classification (6 classes; Liu et al. 2015, Table 3 "QC")
and its LSTM baseline.

Run:
  python launch.py --config=experiments/mtlstm_trec.py --workdir=runs/mtlstm_trec
  python launch.py --config=experiments/mtlstm_trec.py:s2f --workdir=runs/mtlstm_s2f_trec
  python launch.py --config=experiments/mtlstm_trec.py:lstm --workdir=runs/lstm_trec
  python launch.py --config=experiments/mtlstm_trec.py:quick --workdir=/tmp/q

Arguments: ``f2s`` (default), ``s2f`` or ``lstm``; ``quick``.

Protocol: 10 % of training held out for epoch selection, 55 hidden units in 3 groups
(19/18/18), at most 30 epochs. Paper: F2S 94.4, S2F 93.3, LSTM 91.3.
"""
from seedsweep.config import base
from seedsweep.experiments import mtlstm_common


def get_config(arg: str = ''):
  choice, flags = base.parse_arg(arg, 'experiments/mtlstm_trec.py',
                                 {'model': tuple(mtlstm_common.MODELS)})
  return mtlstm_common.mtlstm_config('trec/coarse', choice['model'], hidden=55,
                                     groups=3, epochs=30, quick='quick' in flags)

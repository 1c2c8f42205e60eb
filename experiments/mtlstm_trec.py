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
Measured 2026-11-28 (Intel Sapphire Rapids, 2 cores, 10 seeds; docs/log.md, campaign):
F2S test 86.62 ± 1.82; with IMDB skip-gram 100-d vectors, fine-tuned 88.20 ± 1.00,
static 88.30 ± 1.22. ``s2f``, ``lstm``: not yet run in full.
"""
from seedsweep.config import base
from seedsweep.experiments import mtlstm_common


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, model=tuple(mtlstm_common.MODELS), quick=False)
  return mtlstm_common.mtlstm_config('trec/coarse', arg.model, hidden=55, groups=3,
                                     epochs=30, quick=arg.quick)

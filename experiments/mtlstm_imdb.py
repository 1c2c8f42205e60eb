r"""MT-LSTM on IMDB reviews (Liu et al. 2015, Table 3) and its LSTM baseline.

Run:
  python launch.py --config=experiments/mtlstm_imdb.py --workdir=runs/mtlstm_imdb
  python launch.py --config=experiments/mtlstm_imdb.py:s2f --workdir=runs/mtlstm_s2f_imdb
  python launch.py --config=experiments/mtlstm_imdb.py:lstm --workdir=runs/lstm_imdb
  python launch.py --config=experiments/mtlstm_imdb.py:quick --workdir=/tmp/q

Arguments: ``f2s`` (default), ``s2f`` or ``lstm``; ``quick`` (also keeps only the first
64 tokens of each review).

Protocol: 25,000 / 25,000 reviews, 10 % of training held out for epoch selection,
every token kept (lengths bucketed, up to about 2.5k), 100 hidden units in 5 groups
of 20, at most 10 epochs. Paper: F2S 92.1, S2F 90.2, LSTM 88.5.
Measured 2026-11-27 (AMD EPYC, 2 cores, 10 seeds in parts; docs/log.md, campaign): F2S
test 82.96 ± 1.79; 83.28 ± 1.76 with IMDB-train skip-gram 100-d vectors, fine-tuned.
``s2f``, ``lstm``: not yet run in full.
"""
from seedsweep.config import base
from seedsweep.experiments import mtlstm_common


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, model=tuple(mtlstm_common.MODELS), quick=False)
  config = mtlstm_common.mtlstm_config('imdb', arg.model, hidden=100, groups=5,
                                       epochs=10, quick=arg.quick)
  config.data.num_buckets = 8  # lengths from 10 to ~2.5k tokens
  if arg.quick:
    config.data.max_length = 64
    config.data.num_buckets = 2
  return config

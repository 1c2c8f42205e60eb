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
"""
from seedsweep.config import base
from seedsweep.experiments import mtlstm_common


def get_config(arg: str = ''):
  choice, flags = base.parse_arg(arg, 'experiments/mtlstm_imdb.py',
                                 {'model': tuple(mtlstm_common.MODELS)})
  config = mtlstm_common.mtlstm_config('imdb', choice['model'], hidden=100, groups=5,
                                       epochs=10, quick='quick' in flags)
  config.data.num_buckets = 8  # lengths from 10 to ~2.5k tokens
  if 'quick' in flags:
    config.data.max_length = 64
    config.data.num_buckets = 2
  return config

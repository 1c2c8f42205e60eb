r"""MT-LSTM on SST (Liu et al. 2015, Table 3) and its LSTM baseline.

Run (ten seeds in one program; random embeddings unless vectors are given):
  python launch.py --config=experiments/mtlstm_sst.py --workdir=runs/mtlstm_sst2
  python launch.py --config=experiments/mtlstm_sst.py:fine --workdir=runs/mtlstm_sst1
  python launch.py --config=experiments/mtlstm_sst.py:binary,s2f --workdir=runs/mtlstm_s2f_sst2
  python launch.py --config=experiments/mtlstm_sst.py:binary,lstm --workdir=runs/lstm_sst2
  python launch.py --config=experiments/mtlstm_sst.py:binary,quick --workdir=/tmp/q
  # with vectors: --config.data.vectors.path=glove.6B.100d.txt

Arguments (comma-separated): ``binary`` (SST-2, default) or ``fine`` (SST-1); ``f2s``
(fast-to-slow, default), ``s2f`` or ``lstm`` (one group: the paper's LSTM, same
sizes); ``quick`` (2 seeds, 1 epoch, a small model: a smoke test).

Protocol: sentences only, standard dev for epoch selection, 60 hidden units in 3
groups (20/20/20), 100-d fine-tuned vectors, AdaGrad 0.1, batch 32, at most 30
epochs, no dropout. Paper (word2vec trained on Wikipedia): F2S 87.2 / 49.1, S2F
86.7 / 48.9, LSTM 85.8 / 47.9 (SST-2 / SST-1).
Measured 2026-11-28 (Intel Sapphire Rapids, 2 cores, 10 seeds; docs/log.md, campaign):
F2S SST-2 79.02 ± 0.88, SST-1 37.17 ± 1.41; with IMDB skip-gram 100-d vectors,
fine-tuned 82.15 ± 1.21 / 41.55 ± 1.55, static 83.71 ± 1.18 / 45.73 ± 1.04. ``s2f``,
``lstm``: not yet run in full.
"""
from seedsweep.config import base
from seedsweep.experiments import mtlstm_common


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, dataset=('binary', 'fine'),
                       model=tuple(mtlstm_common.MODELS), quick=False)
  return mtlstm_common.mtlstm_config(f'sst/{arg.dataset}', arg.model, hidden=60,
                                     groups=3, epochs=30, quick=arg.quick)

r"""DLSTM on SST (Shi et al. 2016, Table 1), trained on sentences or on phrases.

Run (ten seeds in one program; random embeddings unless vectors are given):
  python launch.py --config=experiments/dlstm_sst.py --workdir=runs/dlstm_sst2
  python launch.py --config=experiments/dlstm_sst.py:binary,phrases --workdir=runs/dlstm_sst2_phrases
  python launch.py --config=experiments/dlstm_sst.py:fine,phrases --workdir=runs/dlstm_sst1_phrases
  python launch.py --config=experiments/dlstm_sst.py:binary,quick --workdir=/tmp/q
  # with the paper's vectors: --config.data.vectors.path=glove.840B.300d.txt

Arguments (comma-separated): ``binary`` (SST-2, default) or ``fine`` (SST-1);
``phrases`` (train on every labelled phrase too: "ours+phrases"); ``quick`` (2 seeds,
1 epoch, a small model).

Protocol: 3 layers x 3 units of 256, eq. 10 read literally, dropout 0.5 on layer
outputs, AdaGrad 0.1 (eps 1e-5 inside the root), batch 64, at most 100 epochs, a
seed's selection stopping after 30 epochs without a better dev score (Lei et al.'s
recipe), test at the best dev epoch. Paper (GloVe 840B): sentences 87.2 / 49.2, phrases 88.7 / 51.9
(SST-2 / SST-1) -- the best of 10 runs; their 10-run statistics, presumably with
phrases: 88.0 ± 0.41 / 50.7 ± 1.04. Measured: docs/log.md.
"""
from seedsweep.config import base
from seedsweep.experiments import dlstm_common

PAPER = {('binary', False): 87.2, ('fine', False): 49.2,
         ('binary', True): 88.7, ('fine', True): 51.9}
MEAN_STD = {'binary': '88.0 ± 0.41', 'fine': '50.7 ± 1.04'}


def get_config(arg: str = ''):
  choice, flags = base.parse_arg(arg, 'experiments/dlstm_sst.py',
                                 {'dataset': ('binary', 'fine')},
                                 flags=('quick', 'phrases'))
  dataset, phrases = choice['dataset'], 'phrases' in flags
  config = dlstm_common.dlstm_config(
      f'sst/{dataset}' + ('_phrases' if phrases else ''), PAPER[dataset, phrases],
      'quick' in flags, note=f'table: best of 10 runs; 10-run mean ± std '
                             f'{MEAN_STD[dataset]} (presumably with phrases)')
  # Lei et al.'s recipe, which DLSTM follows point by point (docs/models.md §1.5): stop
  # after 30 epochs without a better dev score. "At most 100 epochs" still holds.
  if 'quick' not in flags:
    config.train.patience = 30
  return config

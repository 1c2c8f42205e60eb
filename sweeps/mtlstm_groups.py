"""MT-LSTM Figure 5: dev accuracy against the number of groups g = 1..6, the hidden
layer fixed at h = 120 units shared by the groups (F2S).

Base config: experiments/mtlstm_sst.py:binary or :fine, experiments/mtlstm_trec.py or
experiments/mtlstm_imdb.py; the sweep's argument names which (``sst2``, ``sst1``,
``qc``, ``imdb``), to note the paper's best g. The figure gives curves, not numbers:
the best g was 3 (SST-1, SST-2, QC) and 5 (IMDB). g = 1 is the LSTM with the same code.
"""
from seedsweep.config import base
from seedsweep.sweep import grid

GROUPS = (1, 2, 3, 4, 5, 6)
BEST = {'sst1': 3, 'sst2': 3, 'qc': 3, 'imdb': 5}


def sweep(arg: str = ''):
  arg = base.parse_arg(arg, dataset=('sst2', 'sst1', 'qc', 'imdb'))
  points = grid.product(**{'model.groups': GROUPS, 'model.hidden': (120,),
                             'model.strategy': ('f2s',)})
  note = f'Figure 5 (curve, no numbers): best g = {BEST[arg.dataset]}'
  return [{**p, 'paper.metric': 'dev_accuracy', 'paper.value': None,
           'paper.note': note} for p in points]

"""DC-Bi-LSTM Table 4: depth dl = 0, 5, 10, 15, 20 at dh = 10, th = 100.

Base config: experiments/dclstm_sst.py:fine (SST-1) or :binary (SST-2); the sweep's
argument picks whose paper numbers the points carry. dl = 0 is the Bi-LSTM th=100 row.
"""
from seedsweep.config import base
from seedsweep.sweep import grid

DL = (0, 5, 10, 15, 20)
PARAMS = (321_805, 542_205, 802_605, 1_103_005, 1_443_405)  # 5 classes
PAPER = {'fine': (48.5, 49.4, 49.5, 50.6, 50.2), 'binary': (87.5, 88.1, 88.4, 88.8, 88.8)}


def sweep(arg: str = ''):
  arg = base.parse_arg(arg, dataset=('binary', 'fine'))
  points = grid.product(**{'model.dl': DL, 'model.dh': (10,), 'model.th': (100,)})
  return grid.with_values(points, 'paper.value', PAPER[arg.dataset])

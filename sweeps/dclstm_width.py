"""DC-Bi-LSTM Table 5: width dh = 5, 10, 15, 20 at dl = 10, th = 100 (and the Bi-LSTM
th=100 row, dl = 0).

Base config: experiments/dclstm_sst.py:fine (SST-1) or :binary (SST-2); the sweep's
argument picks whose paper numbers the points carry.
"""
from seedsweep.config import base
from seedsweep.sweep import grid

DH = (5, 10, 15, 20)
PARAMS = (321_805, 542_205, 802_605, 1_103_005, 1_443_405)  # 5 classes, row 1 first
PAPER = {'fine': (48.5, 49.2, 49.5, 50.2, 51.0), 'binary': (87.5, 88.3, 88.4, 88.4, 88.5)}


def sweep(arg: str = ''):
  arg = base.parse_arg(arg, dataset=('binary', 'fine'))
  points = grid.concat(
      [{'model.dl': 0, 'model.dh': 0, 'model.th': 100}],
      grid.product(**{'model.dl': (10,), 'model.dh': DH, 'model.th': (100,)}))
  return grid.with_values(points, 'paper.value', PAPER[arg.dataset])

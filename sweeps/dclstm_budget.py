"""DC-Bi-LSTM Table 3: depth and width at an equal budget of ~1.44M parameters.

Base config: experiments/dclstm_sst.py:fine (SST-1) or :binary (SST-2); the sweep's
argument picks whose paper numbers the points carry. Rows: Bi-LSTM th=300 (dl=0),
then (dl, dh) = (5, 40), (10, 20), (15, 13), (20, 10), all with th=100.
"""
from seedsweep.config import base
from seedsweep.sweep import grid

DL = (0, 5, 10, 15, 20)
DH = (0, 40, 20, 13, 10)
TH = (300, 100, 100, 100, 100)
PARAMS = (1_445_405, 1_443_405, 1_443_405, 1_407_565, 1_443_405)  # 5 classes
PAPER = {'fine': (49.2, 49.6, 51.0, 51.9, 50.2), 'binary': (87.2, 88.4, 88.5, 89.7, 88.8)}


def sweep(arg: str = ''):
  arg = base.parse_arg(arg, dataset=('binary', 'fine'))
  points = grid.zipped(**{'model.dl': DL, 'model.dh': DH, 'model.th': TH})
  return grid.with_values(points, 'paper.value', PAPER[arg.dataset])

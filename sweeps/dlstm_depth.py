"""DLSTM Figure 3: SST-2 with 1, 2 and 3 DLSTM layers, ten seeds each, everything
else fixed; the figure plots each seed's test against its dev accuracy.

Base config: experiments/dlstm_sst.py:binary (or :binary,phrases). The figure gives
points, not numbers: deeper was better, 3 layers best (the Table 1 row).
"""
from seedsweep.sweep import grid

LAYERS = (1, 2, 3)


def sweep(arg: str = ''):
  del arg
  points = grid.product(**{'model.layers': LAYERS})
  return [{**p, 'paper.value': None,
           'paper.note': 'Figure 3 (dev/test scatter, no numbers): 3 layers best'}
          for p in points]

"""A small sweep over the demo: Bi-LSTM hidden size x dropout (4 points), ten seeds
each. The manual's sweep and report example (docs/sweeps.md), and the sweep tests' subject.

  python launch.py --config=experiments/demo.py --sweep=sweeps/demo.py \\
      --workdir=/tmp/seedsweep/demo_sweep
  python launch.py --mode=report --workdir=/tmp/seedsweep/demo_sweep

``sweeps/demo.py:hidden`` sweeps the hidden size alone (3 points, dropout 0.2).
"""
from seedsweep.config import base
from seedsweep.sweep import grid

HIDDEN = (16, 32, 64)
DROPOUT = (0.0, 0.2)


def sweep(arg: str = ''):
  if base.parse_arg(arg, hidden=False).hidden:
    return grid.product(**{'model.hidden': HIDDEN})
  return grid.product(**{'model.hidden': HIDDEN[1:], 'model.dropout': DROPOUT})

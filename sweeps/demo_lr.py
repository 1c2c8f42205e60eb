"""Three learning rates around the demo's 5e-3, trained as ONE program: the points
differ only in a value that changes no shape, so the runner stacks them with the
seeds (``[3 points x 10 seeds]`` members, one compile, one data pipeline). Each
point's numbers equal those of its run alone (tests/test_sweep.py).

  seedsweep --config=demo:quick --sweep=demo_lr --workdir=/tmp/seedsweep/demo_lr
  seedsweep --mode=report --workdir=/tmp/seedsweep/demo_lr

``sweeps/demo_lr.py:dropout`` crosses them with two dropout rates (6 points, still
one program).
"""
from seedsweep.config import base
from seedsweep.sweep import grid

LEARNING_RATES = (2e-3, 5e-3, 1e-2)
DROPOUT = (0.2, 0.5)


def sweep(arg: str = ''):
  if base.parse_arg(arg, dropout=False).dropout:
    return grid.product(**{'optimizer.learning_rate': LEARNING_RATES,
                           'model.dropout': DROPOUT})
  return grid.product(**{'optimizer.learning_rate': LEARNING_RATES})

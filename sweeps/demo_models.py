"""Two models compared on the demo: the Bi-LSTM against the one-directional LSTM, the
same seeds, data and settings otherwise (2 points; two programs, as their parameters
differ in shape). The manual's comparison of two models (docs/compare.md).

  seedsweep --config=demo --sweep=demo_models --workdir=runs/cmp_sweep
  seedsweep --mode=report --workdir=runs/cmp_sweep

The report's verdict (printed, and in report.md) names the better model, its tests
against the other and the effect size.
"""
from seedsweep.config import base
from seedsweep.sweep import grid

MODELS = ('bilstm', 'lstm')


def sweep(arg: str = ''):
  base.parse_arg(arg)  # no arguments: a typo is refused, not ignored
  return grid.product(**{'model.name': MODELS})

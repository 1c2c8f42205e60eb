"""``python -m seedsweep``: the ``seedsweep`` command (seedsweep/cli.py).

``python -m seedsweep --mode=list`` lists the packaged experiments, sweeps, searches,
models and datasets, a line each; ``--helpshort`` lists the flags.
"""
import sys

from seedsweep import cli

if __name__ == '__main__':
  cli.run([sys.executable, '-m', 'seedsweep'])

"""``python -m seedsweep``: the ``seedsweep`` command (seedsweep/cli.py)."""
import sys

from seedsweep import cli

if __name__ == '__main__':
  cli.run([sys.executable, '-m', 'seedsweep'])

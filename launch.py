r"""Runs one experiment from a checkout: ``python launch.py --config=experiments/demo.py
--workdir=W``, the same as the installed ``seedsweep`` command (seedsweep/cli.py has
the modes and flags; ``python launch.py --helpshort`` lists them).

``python launch.py --mode=list`` lists the packaged experiments, sweeps, searches,
models and datasets, a line each; ``--mode=describe`` prints a config's fields with
their meaning (all of them: docs/configuration.md)."""
from seedsweep import cli

if __name__ == '__main__':
  cli.run()

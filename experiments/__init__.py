"""Experiment configs (``seedsweep.experiments``): one file per paper row or family,
each with ``get_config(arg)``; ``python launch.py --config=experiments/X.py[:arg]``."""

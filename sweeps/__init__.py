"""Sweep files (``seedsweep.sweeps``): each ``sweep(arg)`` returns a list of points built
with :mod:`seedsweep.sweep.grid`; ``python launch.py --sweep=sweeps/X.py[:arg]``."""

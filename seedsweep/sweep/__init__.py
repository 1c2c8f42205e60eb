"""Sweeps: many configs (points) of one experiment, each with all of its seeds.

* :mod:`~seedsweep.sweep.grid`  what sweep files use to build their points
* :mod:`~seedsweep.sweep.runner`  runs a sweep file's points, one workdir each
"""

"""Sweeps: files in ``sweeps/`` whose ``sweep(arg)`` returns a list of config overrides.

A point is a dict ``{'model.dl': 5, 'model.dh': 40, 'paper.value': 88.4}`` of dotted
config keys, applied on top of the experiment config a sweep names in its docstring.
Build points with :func:`product` (every combination) and :func:`zipped` (values taken
together). Seeds are never a sweep axis: every point runs all of its config's seeds
in one program. ``seedsweep/sweep/runner.py`` runs them (``launch.py --sweep=...``).
"""
import itertools
from typing import Any, Dict, List, Sequence


def product(**axes: Sequence[Any]) -> List[Dict[str, Any]]:
  """Every combination of the axes' values, the last axis varying fastest.

  Keys are config paths with ``__`` for ``.`` (``model__dl``) or, via ``**{}``, dotted.
  """
  keys = [k.replace('__', '.') for k in axes]
  return [dict(zip(keys, values)) for values in itertools.product(*axes.values())]


def zipped(**axes: Sequence[Any]) -> List[Dict[str, Any]]:
  """Points whose i-th values are taken together; every axis has the same length."""
  lengths = {k: len(v) for k, v in axes.items()}
  if len(set(lengths.values())) > 1:
    raise ValueError(f'zipped axes have different lengths: {lengths}')
  keys = [k.replace('__', '.') for k in axes]
  return [dict(zip(keys, values)) for values in zip(*axes.values())]


def concat(*point_lists: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
  """The points of several lists, one list after another (e.g. two grids in one sweep)."""
  return [p for points in point_lists for p in points]


def with_values(points: List[Dict[str, Any]], key: str, values: Sequence[Any]):
  """Adds ``key: values[i]`` to point ``i`` (e.g. the paper's number of each point)."""
  if len(points) != len(values):
    raise ValueError(f'{len(values)} values of {key} for {len(points)} points')
  return [{**p, key: v} for p, v in zip(points, values)]

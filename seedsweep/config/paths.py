"""A run's file paths, resolved once: relative to the folder the run was started in.

A config names files by path: its data files, its word vectors, and a model or
reader given as ``path/to/file.py:Name``. A relative one means relative to the
folder the run was started from, which the workdir records (run/workdir.py,
``started_in.json``), so that eval, predict, verify and a resume find the run's own
files from any folder. :func:`resolved` gives the config a run uses (every such path
absolute); the config a workdir stores stays as it was given (config.json, the
records), so that a record made from a checkout's root reads the same on every
machine.
"""
import json
import os
from typing import Optional

from seedsweep.config import keys

FILE_KEYS = ('data.files.train', 'data.files.dev', 'data.files.test',
             'data.vectors.path')
# Fields that name either a registered name or ``file.py:Name`` (a module reference
# ``package.module:Name`` is left alone).
REFERENCE_KEYS = ('model.name', 'data.name')


def absolute(value, base: str):
  """``value`` (a path, or a ``file.py:Name`` reference) with its file absolute,
  relative ones taken from ``base``; anything else (``''``, a registered name, a
  module reference) as it is."""
  if not isinstance(value, str) or not value:
    return value
  target, colon, name = value.rpartition(':')
  if colon and target.endswith('.py'):
    return f'{_absolute_path(target, base)}:{name}'
  if colon:  # a module reference or a registered name with a ':arg'
    return value
  return _absolute_path(value, base)


def _absolute_path(path: str, base: str) -> str:
  return os.path.normpath(os.path.join(base, os.path.expanduser(path)))


def _resolve(key: str, value, base: str):
  """The value of field ``key`` with its file absolute (:func:`absolute`); a
  reference field holding a registered name (``'bilstm'``, ``'files'``) as it is."""
  if key in REFERENCE_KEYS and not (isinstance(value, str) and ':' in value):
    return value
  return absolute(value, base)


def _get(tree, key: str):
  """``tree``'s value at dotted ``key`` (a ConfigDict or JSON data); None if absent."""
  for part in key.split('.'):
    if not hasattr(tree, 'keys') or part not in tree:
      return None
    tree = tree[part]
  return tree


def resolved(config, base: Optional[str] = None):
  """A copy of ``config`` whose file paths are absolute, relative ones taken from
  ``base`` (None: the current folder); ``config`` itself when none is relative."""
  base = os.getcwd() if base is None else base
  changes = {}
  for key in FILE_KEYS + REFERENCE_KEYS:
    value = _get(config, key)
    absolute_value = _resolve(key, value, base)
    if absolute_value != value:
      changes[key] = absolute_value
  return keys.with_values(config, changes, 'the config') if changes else config


def resolved_dict(stored: dict, base: Optional[str] = None) -> dict:
  """:func:`resolved` of a config as JSON data (config.json's form), a copy."""
  base = os.getcwd() if base is None else base
  out = json.loads(json.dumps(stored))
  for key in FILE_KEYS + REFERENCE_KEYS:
    *parents, leaf = key.split('.')
    node = _get(out, '.'.join(parents))
    if isinstance(node, dict) and leaf in node:
      node[leaf] = _resolve(key, node[leaf], base)
  return out

"""Dotted config keys (``'model.hidden'``): the one walk through a config, and the one
way a config value is written as text.

Used by ``--config.a.b=v`` flags (launch.py), sweep points (seedsweep/sweep/runner.py)
and report labels (seedsweep/reports/collect.py).
"""
import difflib
import re
from typing import Any, List, Optional, Sequence

import ml_collections

from seedsweep.errors import UserError


def did_you_mean(name, options) -> str:
  """``" (did you mean 'x'?)"`` for the option closest to a misspelt ``name``, or ''."""
  close = difflib.get_close_matches(str(name), [str(o) for o in options], n=1,
                                    cutoff=0.6)
  return f' (did you mean {close[0]!r}?)' if close else ''


def missing_field(config, key: str) -> Optional[str]:
  """None if ``key`` names a field of ``config``; else a sentence naming the first part
  that is not one and the fields that exist there."""
  parts = key.split('.')
  node = config
  for depth, part in enumerate(parts):
    if not hasattr(node, 'keys') or part not in node:
      where = '.'.join(['config'] + parts[:depth])
      fields = sorted(node.keys()) if hasattr(node, 'keys') else []
      return (f'{where} has no field {part!r}{did_you_mean(part, fields)}; its fields '
              f'are {fields}')
    node = node[part]
  return None


def _parent(config, key: str, create: bool = False):
  """``(section, leaf)``: the section of ``config`` holding ``key``'s last part, and
  that part; with ``create`` missing sections are added on the way."""
  *parents, leaf = key.split('.')
  node = config
  for part in parents:
    if create and part not in node:
      node[part] = ml_collections.ConfigDict()
    node = node[part]
  return node, leaf


def set_default(config, key: str, value: Any) -> None:
  """Sets field ``key`` to ``value`` unless ``config`` has it (a config stored
  before the field existed), adding missing sections."""
  node, leaf = _parent(config, key, create=True)
  if leaf not in node:
    node[leaf] = value


def set_value(config, key: str, value: Any, where: str) -> None:
  """Sets field ``key`` of ``config`` in place (a list becomes a tuple); an unknown
  key or a value of the wrong type raises UserError naming ``where`` it came from."""
  message = missing_field(config, key)
  if message:
    raise UserError(f'{where}: {message}')
  node, leaf = _parent(config, key)
  # A top-level group (train, model...) set whole would drop the fields not given.
  if '.' not in key and isinstance(node[leaf], ml_collections.ConfigDict):
    raise UserError(f'{where}: config.{key} is a group of fields; expected one field '
                    f'of it, such as config.{key}.{next(iter(node[leaf]), "?")}')
  try:
    node[leaf] = tuple(value) if isinstance(value, list) else value
  except (TypeError, ValueError) as e:
    raise UserError(f'{where}: config.{key}={value!r} does not fit the field: {e}') from e


def with_values(config, overrides: dict, where: str):
  """A resolved copy of ``config`` with ``{dotted key: value}`` set (:func:`set_value`)."""
  config = config.copy_and_resolve_references()
  for key, value in overrides.items():
    set_value(config, key, value, where)
  return config


def value_text(value: Any) -> str:
  """A config value as text: a float by ``repr`` (``0.1``, ``1e-05``), a sequence as
  its items joined by ``-`` (``none`` when empty), anything else by ``str``."""
  if isinstance(value, (tuple, list)):
    return '-'.join(value_text(v) for v in value) or 'none'
  return repr(value) if isinstance(value, float) else str(value)


def folder_safe(text: str) -> str:
  """``text`` with every character a folder name should not hold replaced by ``_``."""
  return re.sub(r'[^A-Za-z0-9._+-]', '_', text)


def short_names(keys: Sequence[str]) -> List[str]:
  """Each dotted key by its last part, or whole where two last parts clash
  (``model.dropout`` and ``data.dropout``)."""
  leaves = [k.split('.')[-1] for k in keys]
  return [leaf if leaves.count(leaf) == 1 else key for key, leaf in zip(keys, leaves)]

"""Validation of a resolved config, and comparison with the config a workdir holds.

Errors name the config key, the value found and what was expected.
"""
import json
from typing import Dict, List, Sequence

from seedsweep.config import base
from seedsweep.config import fields
from seedsweep.config import keys
from seedsweep.config import stacking
from seedsweep.errors import UserError

# The tables below are derived from the declarations of base.py (fields.Field): a
# field's facts are declared there, once.
_FIELDS = base.FIELDS
# Keys that never change a number a run produces (declared semantic=False); a workdir
# may be resumed with other values for them.
NON_SEMANTIC = tuple(k for k, f in _FIELDS.items() if not f.semantic)
# Sections that change no number (declared semantic=False): where runs are logged, what
# scheduler jobs ask for.
NON_SEMANTIC_SECTIONS = tuple(f'{k}.' for k, s in base.SECTIONS.items() if not s.semantic)
# Keys added after runs were made, with the value those runs had in effect (declared
# added=...): a stored config without one is read as having it.
ADDED = {k: f.added for k, f in _FIELDS.items() if f.added is not fields.ORIGINAL}


def to_dict(config) -> dict:
  """The config as plain JSON data (tuples become lists)."""
  return json.loads(config.to_json_best_effort())


def flatten(d: dict, prefix: str = '') -> Dict[str, object]:
  """``{'train.batch_size': 50}``: a nested dict's leaves keyed by their dotted paths,
  each after ``prefix``."""
  out = {}
  for k, v in d.items():
    key = f'{prefix}{k}'
    if isinstance(v, dict):
      out.update(flatten(v, key + '.'))
    else:
      out[key] = v
  return out


def from_dict(stored: dict):
  """The ConfigDict of a run's config.json (:func:`to_dict`'s inverse): JSON lists
  back into tuples, and the keys of :data:`ADDED` a run made before them lacks set to
  the values that run had in effect."""
  import ml_collections  # pylint: disable=g-import-not-at-top
  config = ml_collections.ConfigDict(_lists_to_tuples(stored))
  for key, value in ADDED.items():
    keys.set_default(config, key, value)
  return config


def _lists_to_tuples(value):
  if isinstance(value, dict):
    return {k: _lists_to_tuples(v) for k, v in value.items()}
  if isinstance(value, list):
    return tuple(_lists_to_tuples(v) for v in value)
  return value


def differences(a: dict, b: dict) -> List[str]:
  """``'key: a_value != b_value'`` for every semantic key where two configs differ."""
  fa, fb = flatten(a), flatten(b)
  names = sorted(k for k in (set(fa) | set(fb)) - set(NON_SEMANTIC)
                 if not k.startswith(NON_SEMANTIC_SECTIONS))
  missing = '<absent>'

  def same(x, y):  # JSON text equality: NaN equals NaN, 1 equals 1.0 only if typed so
    return json.dumps(x, sort_keys=True) == json.dumps(y, sort_keys=True)

  def value(f, k):
    return f.get(k, ADDED.get(k, missing))

  return [f'{k}: {value(fa, k)!r} != {value(fb, k)!r}'
          for k in names if not same(value(fa, k), value(fb, k))]


one_of = fields.one_of  # UserError naming the closest option, unless value is one

# The keys whose declaration has a check, in the config's order.
CHECKED = tuple(k for k, f in _FIELDS.items() if f.check is not None)


def validate(config) -> None:
  """UserError naming the first bad value of a resolved config, checked in this
  order: the stack and seed design, each field's declared check (base.py, in the
  config's order: the seeds, the data's ints and padding, the optimiser's numbers,
  training's choices and ints, the runtime), patience without ``best_dev``, and files
  the data never reads. Runs before anything is written."""
  stacking.validate(config)
  check_fields(config)
  t = config.train
  if t.patience and t.selection != 'best_dev':
    raise UserError(f'config.train.patience={t.patience} needs '
                    f"config.train.selection='best_dev' (got {t.selection!r}): "
                    f'early stopping watches the dev score')
  # A file named while the dataset reads none would be ignored without a word.
  data = config.data
  given = [s for s in ('train', 'dev', 'test') if data.files[s]]
  if given and data.name != 'files':
    raise UserError(f'config.data.files.{given[0]}={data.files[given[0]]!r} is set, '
                    f"but config.data.name={data.name!r} reads no such file; expected "
                    "config.data.name='files' (or config.data.files left empty)")


def check_fields(config, names: Sequence[str] = ()) -> None:
  """UserError naming the first of ``names`` (default :data:`CHECKED`: every field
  declared with a check) whose value in ``config`` its declared check refuses."""
  for key in names or CHECKED:
    value = config
    for part in key.split('.'):
      value = None if value is None else value.get(part)
    _FIELDS[key].check(key, value)


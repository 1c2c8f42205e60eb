"""What the stacked member axis holds besides seeds: hyperparameter points
(``config.stack``) and a factorial seed design (``config.seed_design``).

``config.stack.fields`` names config values that change no array shape
(:data:`STACKABLE`); ``config.stack.points`` holds one tuple per point, its values in
the order of the keys. Every point runs every seed, all in one program: members are
point-major, ``[points x folds x seeds]``. ``()`` (the default) is one point, the
config's own values.

``config.seed_design.{init,data,dropout}``, when set (all three), replaces
``config.seeds``: the members are every combination of an init seed, a data-order
seed and a dropout seed (``3 x 3 x 3`` = 27), so the report can split the seed
variance by source. A plain run's member has the same seed in all three streams.
"""
import itertools
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from seedsweep.config import base
from seedsweep.config import fields
from seedsweep.config import keys
from seedsweep.errors import UserError

# Values a point may change inside one program: each is a traced scalar per member
# (seedsweep/engine/steps.py), none changes a shape. {key: how (fields.STACK_*)}: the
# base config's as declared (base.py, stack=), the models' fields (declared by the
# models, models/) here.
HOW_STACKED = {**{k: f.stack for k, f in base.FIELDS.items() if f.stack},
               'model.dropout': fields.STACK_WHEN_SET,
               'model.embed_dropout': fields.STACK_WHEN_SET,
               'model.rho': fields.STACK_ALWAYS,    # the joint model's loss weights
               'model.beta': fields.STACK_ALWAYS}
STACKABLE = tuple(HOW_STACKED)
MODEL_FIELDS = tuple(k.split('.', 1)[1] for k in STACKABLE if k.startswith('model.'))
# Traced in every run (a run alone and its point among others compile the same step).
ALWAYS_TRACED = tuple(k for k, how in HOW_STACKED.items() if how == fields.STACK_ALWAYS)
# Clipping thresholds where 0 means off: a member with 0 among clipped ones gets inf
# (the clip then selects its input unchanged, bit for bit).
OFF_AT_ZERO = tuple(k for k, how in HOW_STACKED.items()
                    if how == fields.STACK_OFF_AT_ZERO)
STREAMS = ('init', 'data', 'dropout')  # the order of seedsweep.engine.rngs' streams


def is_stackable(key: str) -> bool:
  """Whether a config key may differ between the points of one program
  (:data:`STACKABLE`)."""
  return key in STACKABLE


def points(config) -> List[Dict[str, Any]]:
  """``[{key: value}]``: one dict per point of ``config.stack`` ([{}]: no stack)."""
  names = tuple(config.stack.fields)
  return [dict(zip(names, row)) for row in config.stack.points] or [{}]


def point_label(overrides: Dict[str, Any]) -> str:
  """``'learning_rate=0.005'``: a point's values, named by their short names (''
  for a run's one point without a stack)."""
  if not overrides:
    return ''
  names = keys.short_names(list(overrides))
  return ','.join(f'{n}={keys.value_text(v)}' for n, v in zip(names, overrides.values()))


def validate(config) -> None:
  """UserError unless ``config.stack`` and ``config.seed_design`` are well formed."""
  names, rows = tuple(config.stack.fields), tuple(config.stack.points)
  bad = [k for k in names if k not in STACKABLE]
  if bad:
    raise UserError(f'config.stack.fields has {bad}, which cannot share one program; '
                    f'expected keys among {list(STACKABLE)} (values that change no '
                    'shape). Sweep the others as separate runs (--sweep)')
  if len(set(names)) != len(names):
    raise UserError(f'config.stack.fields={names} repeats a key')
  if bool(names) != bool(rows):
    raise UserError(f'config.stack.fields={names} and config.stack.points={rows}: set '
                    'both (one tuple of values per point) or neither')
  for i, row in enumerate(rows):
    if not isinstance(row, (tuple, list)) or len(row) != len(names) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in row):
      raise UserError(f'config.stack.points[{i}]={row!r}; expected a tuple of '
                      f'{len(names)} numbers, one per key of config.stack.fields')
  if len({tuple(r) for r in rows}) != len(rows):
    raise UserError(f'config.stack.points={rows} repeats a point')
  for key in names:
    if keys.missing_field(config, key):
      raise UserError(f'config.stack.fields names {key}, which this config does not '
                      f'have ({keys.missing_field(config, key)})')
  if any(tuple(config.seed_design[s]) for s in STREAMS):  # a factorial seed design
    _validate_design(config.seed_design)


def _validate_design(design) -> None:
  """UserError unless a seed design sets all three streams, each distinct ints."""
  sets = {s: tuple(design[s]) for s in STREAMS}
  given = [s for s in STREAMS if sets[s]]
  if given and len(given) != len(STREAMS):
    raise UserError(f'config.seed_design sets {given} only; a factorial seed design '
                    f'needs all of {list(STREAMS)} (e.g. (1, 2, 3) each)')
  for stream, seeds in sets.items():
    if not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**31
               for s in seeds) or len(set(seeds)) != len(seeds):
      raise UserError(f'config.seed_design.{stream}={seeds!r}; expected distinct ints '
                      'in [0, 2**31)')


def factorial(config) -> bool:
  """Whether ``config.seed_design`` is set, so members are seed triples, not
  ``config.seeds``."""
  return bool(tuple(config.seed_design.init))


def seed_triples(config) -> np.ndarray:
  """``[n, 3]`` int32: each member's (init, data-order, dropout) seed, before points
  and folds: every combination of ``config.seed_design`` (dropout fastest), or each
  seed of ``config.seeds`` in all three streams."""
  if factorial(config):
    combos = itertools.product(*(tuple(config.seed_design[s]) for s in STREAMS))
    return np.asarray(list(combos), np.int32).reshape(-1, len(STREAMS))
  seeds = np.asarray(config.seeds, np.int32)
  return np.repeat(seeds[:, None], len(STREAMS), axis=1)


def stream_label(seed_triple: Sequence[int]) -> str:
  """``'init1_data2_dropout3'``: a factorial member's name."""
  return '_'.join(f'{s}{int(v)}' for s, v in zip(STREAMS, seed_triple))


def split_overrides(overrides: Dict[str, Any], apart: Sequence[str] = ()
                    ) -> Tuple[Dict[str, Any], Dict[str, Any]]:
  """``(stackable, rest)``: a sweep point's overrides that can share a program, and
  the others (``paper.*`` counts with the rest: it names the point's own row; so do
  the keys ``apart``, stackable keys that this point's model tests in Python)."""
  stackable = {k: v for k, v in overrides.items() if is_stackable(k) and k not in apart}
  return stackable, {k: v for k, v in overrides.items() if k not in stackable}

"""What a search file returns: the space a hyperparameter search draws points from,
its budget, and how a point is scored.

A file in ``searches/`` defines ``search(arg) -> Search`` (``searches/demo_search.py``).
Nothing here imports Optuna: a search file loads, and its mistakes are told, without
the ``[search]`` extra; ``seedsweep/sweep/search.py`` runs it.
"""
import dataclasses
import json
import math
from typing import Any, Dict, Tuple, Union

from seedsweep.errors import UserError

SCORES = ('mean', 'lcb')  # the seeds' mean, or the lower end of its 95 % t interval
SAMPLERS = ('tpe', 'random')


@dataclasses.dataclass(frozen=True)
class Uniform:
  """A float in ``[low, high]``: uniform, on a log scale (``log``), or on a grid of
  ``step``."""
  low: float
  high: float
  log: bool = False
  step: float = 0.0


@dataclasses.dataclass(frozen=True)
class Integer:
  """An int in ``[low, high]`` on a grid of ``step``, or on a log scale."""
  low: int
  high: int
  step: int = 1
  log: bool = False


@dataclasses.dataclass(frozen=True)
class Choice:
  """One of ``values`` (numbers, strings, bools, None, or tuples of them)."""
  values: Tuple[Any, ...]


Param = Union[Uniform, Integer, Choice]


def uniform(low: float, high: float, step: float = 0.0) -> Uniform:
  """A float drawn uniformly from ``[low, high]``, on a grid of ``step`` when it is not 0.

  ``space.uniform(0.0, 0.5, step=0.05)``: a dropout rate, one of 0.0, 0.05, ..., 0.5."""
  return Uniform(float(low), float(high), step=float(step))


def log_uniform(low: float, high: float) -> Uniform:
  """A float drawn uniformly on a log scale from ``[low, high]`` (``low > 0``), e.g. a
  learning rate: ``space.log_uniform(1e-3, 3e-2)``."""
  return Uniform(float(low), float(high), log=True)


def integer(low: int, high: int, step: int = 1, log: bool = False) -> Integer:
  """An int from ``[low, high]``, on a grid of ``step`` or, with ``log``, on a log scale
  (``low > 0``; not both), e.g. a hidden size: ``space.integer(50, 300, step=50)``."""
  return Integer(int(low), int(high), int(step), log)


def choice(*values) -> Choice:
  """One of ``values`` (numbers, strings, bools, None, or tuples of them), e.g.
  ``space.choice('adam', 'adagrad')`` or ``space.choice((3, 4, 5), (2, 3))``."""
  return Choice(tuple(values))


@dataclasses.dataclass(frozen=True)
class Search:
  """A search: ``trials`` points drawn from ``params`` ({config key: Param}), asked
  ``points_per_round`` at a time (fewer when their members would not fit one
  program's memory budget), each trained with ``seeds`` (``()``: the config's) and
  scored on ``metric`` (``''``: the dev side of ``config.paper.metric``) by
  ``score`` over its seeds. ``seed`` seeds the sampler: it decides which points are
  tried and is never a member's seed."""
  params: Dict[str, Param]
  trials: int
  points_per_round: int = 4
  seeds: Tuple[int, ...] = ()
  metric: str = ''
  score: str = 'mean'
  sampler: str = 'tpe'
  seed: int = 0

  def describe(self) -> dict:
    """The space as JSON data (what a resumed study must match): tuples are lists,
    as the study's storage gives them back."""
    return json.loads(json.dumps({k: {'kind': type(p).__name__.lower(),
                                      **dataclasses.asdict(p)}
                                  for k, p in self.params.items()}))


def is_plain(value) -> bool:
  """A value Optuna's storage keeps as it is: a number, a string, a bool or None."""
  return value is None or isinstance(value, (bool, int, float, str))


def _check_param(key: str, p, where: str) -> None:
  if isinstance(p, Choice):
    if not p.values:
      raise UserError(f'{where}: {key}: choice() of no values; expected at least one')
    for v in p.values:
      if not (is_plain(v) or isinstance(v, tuple) and all(map(is_plain, v))):
        raise UserError(f'{where}: {key}: choice of {v!r} ({type(v).__name__}); '
                        'expected numbers, strings, bools, None or tuples of them')
    texts = [json.dumps(v) for v in p.values]
    if len(set(texts)) < len(texts):
      raise UserError(f'{where}: {key}: choice{p.values!r} repeats a value; expected '
                      'each value once')
    return
  if not isinstance(p, (Uniform, Integer)):
    raise UserError(f'{where}: {key} is {type(p).__name__}; expected space.uniform, '
                    'log_uniform, integer or choice')
  if not (math.isfinite(p.low) and math.isfinite(p.high) and p.low < p.high):
    raise UserError(f'{where}: {key}: range [{p.low}, {p.high}]; expected finite '
                    'low < high')
  if p.log and p.low <= 0:
    raise UserError(f'{where}: {key}: a log scale from {p.low}; expected low > 0')
  if p.log and p.step != (1 if isinstance(p, Integer) else 0):
    raise UserError(f'{where}: {key}: a log scale with a step; expected one of them')
  if p.step < 0 or (isinstance(p, Integer) and p.step < 1):
    raise UserError(f'{where}: {key}: step {p.step}; expected a positive step')


def check(search, where: str) -> Search:
  """``search`` itself once every field is valid; else UserError naming ``where``
  (the flag and file) and the field."""
  if not isinstance(search, Search):
    raise UserError(f'{where}: search() returned {type(search).__name__}; expected '
                    'seedsweep.sweep.space.Search')
  if not search.params or not isinstance(search.params, dict):
    raise UserError(f'{where}: params is {search.params!r}; expected a non-empty dict '
                    '{config key: space.uniform(...)}')
  for key, p in search.params.items():
    if key == 'seeds' or key.startswith('seeds'):
      raise UserError(f'{where}: params has {key}; seeds are every point\'s members, '
                      'never searched (set Search.seeds)')
    _check_param(key, p, where)
  for name, value in (('trials', search.trials),
                      ('points_per_round', search.points_per_round)):
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
      raise UserError(f'{where}: {name}={value!r}; expected an int >= 1')
  if search.score not in SCORES:
    raise UserError(f'{where}: score={search.score!r}; expected one of {SCORES}')
  if search.sampler not in SAMPLERS:
    raise UserError(f'{where}: sampler={search.sampler!r}; expected one of {SAMPLERS}')
  if search.metric and not search.metric.startswith('dev_'):
    raise UserError(f'{where}: metric={search.metric!r}; expected a dev metric '
                    '(dev_accuracy, ...): a search never sees test scores')
  if not all(isinstance(s, int) for s in search.seeds):
    raise UserError(f'{where}: seeds={search.seeds!r}; expected a tuple of ints')
  if search.score == 'lcb' and 0 < len(search.seeds) < 2:
    raise UserError(f'{where}: score=\'lcb\' with {len(search.seeds)} seed; expected '
                    'two seeds or more (a bound needs a spread)')
  return search

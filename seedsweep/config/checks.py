"""Validation of a resolved config, and comparison with the config a workdir holds.

Errors name the config key, the value found and what was expected.
"""
import json
import math
from typing import Dict, List

from seedsweep.config import keys
from seedsweep.config import stacking
from seedsweep.errors import UserError

SELECTIONS = ('best_dev', 'last')
NAN_POLICIES = ('freeze', 'fatal')
SEED_PARALLEL_MODES = ('vmap', 'map')  # config.train.seed_parallel, besides 'auto'
# Keys that never change a number a run produces; a workdir may be resumed with
# other values for them.
NON_SEMANTIC = ('train.progress', 'data.tfds_dir', 'train.nan_policy',
                'runtime.memory_budget', 'train.steps_per_dispatch')
# Sections that change no number: where runs are logged, what scheduler jobs ask for.
NON_SEMANTIC_SECTIONS = ('log.', 'launch.')
# Keys added after runs were made, with the value those runs had in effect (a run made
# before the thread pool was pinned used the machine's cores: 0; before portable
# numerics, the machine's own; before evaluation's own lengths, the training buckets).
ADDED = {'optimizer.embedding_update': 'dense', 'runtime.cpu_threads': 0,
         'runtime.numerics': 'native', 'runtime.memory_budget': 0,
         # Every run before it was a CPU run (float32 whatever the setting) but the
         # GPU checks of 2026-11-27, which took the backend's default.
         'runtime.matmul_precision': 'highest',
         'data.eval_padding': 0.0,
         'data.files.text_column': '', 'data.files.label_column': '',
         'train.nan_policy': 'freeze', 'train.steps_per_dispatch': 1,
         'log.mlflow': False, 'log.mlflow_uri': '',
         'log.mlflow_experiment': 'seedsweep', 'stack.fields': (), 'stack.points': (),
         'seed_design.init': (), 'seed_design.data': (), 'seed_design.dropout': ()}


# The optimiser's and the L2 term's numbers (None: the optimiser's default), each
# checked before anything runs: a NaN or negative rate would train every seed to NaN.
POSITIVE_NUMBERS = ('optimizer.learning_rate',)
NON_NEGATIVE_NUMBERS = ('optimizer.eps', 'optimizer.initial_accumulator_value',
                        'optimizer.clip_global_norm', 'optimizer.clip_value', 'l2.coef')
RATES = ('optimizer.momentum', 'optimizer.rho', 'optimizer.decay', 'optimizer.b1',
         'optimizer.b2')  # in [0, 1)

# The ints of the sections every config has: (least, most, what the error adds).
# Counts and sizes become int32 shapes (2**31 - 1 at most); every bucket is a
# program of its own, and a bucket's length is a multiple of bucket_multiple.
_MOST = 2**31 - 1
INTS = {'train.num_epochs': (1, _MOST, ''), 'train.batch_size': (1, _MOST, ''),
        'train.eval_batch_size': (1, _MOST, ''), 'train.checkpoint_every': (1, _MOST, ''),
        'train.patience': (0, _MOST, ' (0 = no early stopping)'),
        'train.steps_per_dispatch': (1, 4096, ' (steps one program runs before the '
                                     'host looks again)'),
        'data.num_buckets': (1, 1024, ' (each bucket is a program compiled of its own)'),
        'data.bucket_multiple': (1, 2**16, ' (bucket lengths are its multiples)'),
        'data.min_count': (0, _MOST, ''), 'data.max_length': (0, _MOST, ' (0 = no limit)'),
        'data.num_folds': (2, _MOST, ' (folds of cross-validation)')}


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


def one_of(key: str, value, options) -> None:
  """UserError naming ``config.<key>``, the closest option and all of them, unless
  ``value`` is one of ``options``."""
  if value not in options:
    raise UserError(f'config.{key}={value!r}{keys.did_you_mean(value, options)}; '
                    f'expected one of {tuple(options)}')


def validate(config) -> None:
  """UserError naming the first bad value of a resolved config, checked in this
  order: the stack and seed design, the seeds, the choices, the ints, patience
  without ``best_dev``, the memory budget, the evaluation padding, the optimiser's
  numbers and files the data never reads. Runs before anything is written."""
  stacking.validate(config)
  seeds = config.seeds
  if (not isinstance(seeds, (tuple, list)) or not seeds
      or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds)):
    raise UserError(f'config.seeds={seeds!r}; expected a non-empty tuple of ints, '
                    f"e.g. --config.seeds='(1,2,3)'")
  if len(set(seeds)) != len(seeds):
    raise UserError(f'config.seeds={tuple(seeds)!r} repeats a seed; each seed must '
                    f'appear once')
  if any(not 0 <= s < 2**31 for s in seeds):
    raise UserError(f'config.seeds={tuple(seeds)!r}; seeds must be in [0, 2**31)')
  t = config.train
  one_of('train.selection', t.selection, SELECTIONS)
  one_of('train.seed_parallel', t.seed_parallel, SEED_PARALLEL_MODES + ('auto',))
  one_of('train.nan_policy', t.nan_policy, NAN_POLICIES)
  check_ints(config)
  if t.patience and t.selection != 'best_dev':
    raise UserError(f'config.train.patience={t.patience} needs '
                    f"config.train.selection='best_dev' (got {t.selection!r}): "
                    f'early stopping watches the dev score')
  budget = config.runtime.memory_budget
  if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget < 0:
    raise UserError(f'config.runtime.memory_budget={budget!r}; expected MiB as a '
                    'number >= 0 (0 = 50 % of the memory this process can use)')
  padding = config.data.eval_padding
  if (isinstance(padding, bool) or not isinstance(padding, (int, float))
      or not (padding == 0 or 1 <= padding < float('inf'))):
    raise UserError(f'config.data.eval_padding={padding!r}; expected a finite number '
                    '>= 1 (padded tokens at most this many times the real ones), or 0 '
                    "for the training buckets' lengths")
  check_numbers(config)
  check_unread_files(config.data)


def check_unread_files(data) -> None:
  """UserError when config.data.files names a file while config.data.name reads
  none (the file would be ignored without a word)."""
  given = [s for s in ('train', 'dev', 'test') if data.files[s]]
  if given and data.name != 'files':
    raise UserError(f'config.data.files.{given[0]}={data.files[given[0]]!r} is set, '
                    f"but config.data.name={data.name!r} reads no such file; expected "
                    "config.data.name='files' (or config.data.files left empty)")


def check_ints(config) -> None:
  """UserError naming the first int of :data:`INTS` that is not an int in its range."""
  for key, (least, most, note) in INTS.items():
    section, field = key.split('.')
    value = config[section].get(field)
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
      raise UserError(f'config.{key}={value!r}; expected an int >= {least}{note}')
    if value > most:
      raise UserError(f'config.{key}={value!r}; expected an int <= {most}{note}')


def check_numbers(config) -> None:
  """UserError naming the first optimiser or L2 number that is not a finite number
  in its range (:data:`POSITIVE_NUMBERS`, :data:`NON_NEGATIVE_NUMBERS`, :data:`RATES`)."""
  ranges = ([(k, 'a finite number > 0', lambda v: v > 0) for k in POSITIVE_NUMBERS]
            + [(k, 'a finite number >= 0', lambda v: v >= 0)
               for k in NON_NEGATIVE_NUMBERS]
            + [(k, 'a rate in [0, 1)', lambda v: 0 <= v < 1) for k in RATES])
  for key, expected, ok in ranges:
    section, field = key.split('.')
    value = config[section].get(field)
    if value is None:
      continue
    number = not isinstance(value, bool) and isinstance(value, (int, float))
    if not (number and math.isfinite(value) and ok(value)):
      raise UserError(f'config.{key}={value!r}; expected {expected}')

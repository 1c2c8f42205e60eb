"""Models, found by name: ``build_model(config.model, vocab_size=..., num_classes=...)``.

To add a model: write a Flax module (linen, or NNX for one of your own) that meets the
model contract (:mod:`seedsweep.models.contract`: a batch dict and ``train`` in,
logits or a :class:`~seedsweep.models.output.ModelOutput` out, the word embedding
named ``embedding``) in a file of ``models/`` that declares ``MODELS`` (name ->
:class:`~seedsweep.models.registered.Named`: class, fixed fields, the sizes the tests
build it at): that file is all, :data:`REGISTRY` and the tests' tables are derived
from every such file (:mod:`seedsweep.declared`); or keep it in your own folder and
name it in the config: ``config.model.name = 'path/to/file.py:Name'`` (or
``'package.module:Name'``).
Config fields under ``config.model`` other than ``name`` become the module's
dataclass fields. A model named over a config file's own (``--config.model.name``)
keeps only the file's fields it takes, and adds its own defaults
(:func:`take_named_model`). Any field of the class that the config lacks can be set
over it (``--config.model.unroll=2``: a packaged class's own, or one without a
default, which :func:`build_model` refuses in one line while it is unset).
"""
import dataclasses
import difflib
import inspect
import math
import sys
from typing import Any, Callable, Collection, Dict, Tuple, Type

import flax.linen as nn

from seedsweep import declared
from seedsweep.config import checks as config_checks
from seedsweep.config import keys
from seedsweep.config import python_files
from seedsweep.errors import UserError
from seedsweep.models import pooling
from seedsweep.models import registered

# Every family of this package (a module declaring MODELS), by module name order; each
# registered name's declaration; REGISTRY, name -> (class, fixed fields), from them.
FAMILIES = declared.modules_declaring(sys.modules[__name__], 'MODELS')
NAMED: Dict[str, registered.Named] = declared.merged(FAMILIES, 'MODELS')
REGISTRY: Dict[str, Tuple[Type[nn.Module], Dict[str, Any]]] = {
    name: (named.cls, dict(named.fixed)) for name, named in NAMED.items()}


# Int fields that must be positive; the others (depths such as DC-Bi-LSTM's dl, which
# may be 0, maxlen's 0 = none) must not be negative.
POSITIVE = ('embed_dim', 'hidden', 'filters', 'groups', 'units', 'layers', 'unroll',
            'tag_dim', 'th')
# Counts of layers, units or groups: each is traced into the program on its own.
DEPTHS, MOST_DEPTH = ('dl', 'layers', 'units', 'groups'), 1024


# Float fields with a range, by name (any module's: a naming convention), each as
# (what the error says, the test); a field not named here need only be finite.
FLOAT_RANGES = {'init_scale': ('a number > 0', lambda v: v > 0),
                'beta': ('a number >= 0', lambda v: v >= 0),
                'rho': ('a rate in (0, 1)', lambda v: 0 < v < 1)}
SIZE_LIMIT = 2**31  # sizes reach int32 shapes and indices: larger ones cannot run


def check_field(field: dataclasses.Field, value) -> None:
  """A model field's value of the right type: ints in [0, 2**31) (sizes in
  :data:`POSITIVE` positive), dropout rates in [0, 1), the floats of
  :data:`FLOAT_RANGES` in their ranges, flags bools, widths non-empty tuples of
  positive ints."""
  where = f'config.model.{field.name}={value!r}'
  is_int = isinstance(value, int) and not isinstance(value, bool)
  if field.type is int:
    least = 1 if field.name in POSITIVE else 0
    if not is_int or value < least:
      raise UserError(f'{where}; expected an int >= {least}')
    if value >= SIZE_LIMIT:
      raise UserError(f'{where}; expected an int below 2**31 (sizes are int32)')
    if field.name in DEPTHS and value > MOST_DEPTH:
      raise UserError(f'{where}; expected at most {MOST_DEPTH} (each one is traced '
                      'into the program)')
  elif field.type is float:
    if (isinstance(value, bool) or not isinstance(value, (int, float))
        or not math.isfinite(value)):
      raise UserError(f'{where}; expected a finite number')
    if 'dropout' in field.name and not 0 <= value < 1:
      raise UserError(f'{where}; expected a rate in [0, 1)')
    expected, ok = FLOAT_RANGES.get(field.name, ('', lambda v: True))
    if not ok(value):
      raise UserError(f'{where}; expected {expected}')
  elif field.type is bool and not isinstance(value, bool):
    raise UserError(f'{where}; expected True or False')
  elif field.type is str and not isinstance(value, str):
    raise UserError(f'{where}; expected a string')
  elif 'Sequence' in str(field.type) and not (
      isinstance(value, (tuple, list)) and value and all(
          isinstance(v, int) and not isinstance(v, bool) and 0 < v < SIZE_LIMIT
          for v in value)):
    raise UserError(f'{where}; expected a non-empty tuple of positive ints')


def model_class(name) -> Tuple[Type[nn.Module], Dict[str, Any]]:
  """``(class, fixed fields)`` of ``config.model.name``: a registered name, or a
  user's own module by reference (``path/to/file.py:Name``, ``package.module:Name``)
  that takes ``vocab_size`` and ``num_classes`` as fields (an ``nnx.Module`` class as
  ``__init__`` arguments: models/nnx_adapter.py gives it a linen face)."""
  if not python_files.is_reference(name):
    if name not in REGISTRY:
      raise UserError(f'config.model.name={name!r} is not a registered model'
                      f'{keys.did_you_mean(name, REGISTRY)}; expected one of '
                      f'{sorted(REGISTRY)} (MODELS of a file of models/), or path/to/file.py:Name')
    return REGISTRY[name]
  cls = python_files.load_object(name, 'config.model.name')
  # flax.nnx takes a second to import (IPython with it): only a run whose model file
  # imported it can name an nnx class, so only then is the adapter imported.
  if 'flax.nnx' in sys.modules:
    from seedsweep.models import nnx_adapter  # pylint: disable=g-import-not-at-top
    if nnx_adapter.is_nnx_class(cls):  # run as a linen module (models/nnx_adapter.py)
      cls = nnx_adapter.linen_class(cls, f'config.model.name={name!r}')
  if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
    raise UserError(f'config.model.name={name!r} is {type(cls).__name__}; expected a '
                    'flax.linen.Module or flax.nnx.Module class (the model contract: '
                    'seedsweep.models.contract)')
  missing = {'vocab_size', 'num_classes'} - {f.name for f in dataclasses.fields(cls)}
  if missing:
    raise UserError(f'config.model.name={name!r}: {cls.__name__} has no field(s) '
                    f'{sorted(missing)}; expected vocab_size: int and num_classes: int '
                    '(the framework sets them from the data)')
  return cls, {}


# A model's fields that the framework sets (from the data), or flax itself.
NOT_CONFIG = ('vocab_size', 'num_classes', 'num_tags', 'parent', 'name')


NO_DEFAULT = object()  # a field the class gives no default


def config_fields(cls, fixed: Collection[str] = ()) -> Dict[str, Any]:
  """``{field: default}`` (:data:`NO_DEFAULT` for none) of model class ``cls`` that a
  config may set, in their declared order: its dataclass fields (a linen module's),
  else its constructor's keyword parameters, less :data:`NOT_CONFIG` and ``fixed``
  (a registered name's fixed fields)."""
  if dataclasses.is_dataclass(cls):
    found = {f.name: (f.default if f.default is not dataclasses.MISSING else
                      f.default_factory() if f.default_factory is not dataclasses.MISSING
                      else NO_DEFAULT) for f in dataclasses.fields(cls)}
  else:
    params = inspect.signature(cls.__init__).parameters.values()
    found = {p.name: NO_DEFAULT if p.default is p.empty else p.default for p in params
             if p.name != 'self' and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
  return {n: d for n, d in found.items() if n not in NOT_CONFIG and n not in fixed}


def class_defaults(model_config) -> Dict[str, Any]:
  """``{field: default}`` of the fields of ``config.model``'s class that it does not
  set and a config can hold (numbers, strings, tuples): what ``--mode=describe``
  shows besides the config, each settable (``--config.model.unroll=2``)."""
  takes = config_fields(*model_class(model_config.name))
  return {k: d for k, d in takes.items()
          if k not in model_config and d is not NO_DEFAULT and _plain(d)}


def closest(field: str, fields: Collection[str]) -> str:
  """``"; the closest it has is 'x'"``: the field of ``fields`` nearest in spelling to
  ``field`` (one a model lacks), or '' without any."""
  close = difflib.get_close_matches(field, sorted(fields), n=1, cutoff=0)
  return f'; the closest it has is {close[0]!r}' if close else ''


def _plain(value) -> bool:
  """A value a config holds as it is (and config.json writes): a number, a string, a
  bool, None, or a tuple of those."""
  if isinstance(value, tuple):
    return all(_plain(v) for v in value)
  return value is None or isinstance(value, (bool, int, float, str))


def take_named_model(config, file_name, explicit: Collection[str],
                     where: Callable[[str], str]) -> None:
  """``config.model`` (in place) once ``--config.model.name`` (or
  ``load_config(..., model__name=...)``) named another model than the config file's
  own ``file_name``: the file's model fields the named class takes are kept, the
  others left out (they were set for the file's model), and the class's own
  defaults fill the rest (those a config can hold: numbers, strings, tuples), so
  they are recorded and can be set. A field in ``explicit`` (the dotted keys set
  over the file) that ``config.model`` lacks is added (None, for the caller to set)
  when the class takes it, whether or not another model was named: a field without
  a default, a packaged class's own (``unroll``). One the class does not take is
  refused in one line naming the field (``where(key)``: how it was set), the class
  and the closest field it has."""
  name = config.model.name
  named = name != file_name  # else the file's own fields were written for this model
  fields = [key.partition('.')[2] for key in explicit
            if key.startswith('model.') and key != 'model.name']
  if not named and all(f in config.model for f in fields):
    return
  cls, fixed = model_class(name)
  takes = config_fields(cls, fixed)
  for field in fields:
    if field not in takes and (named or field not in config.model):
      raise UserError(f'{where("model." + field)}: model {name!r} ({cls.__name__}) has '
                      f'no field {field!r}{closest(field, takes)}; its fields are '
                      f'{list(takes)}')
  left_out = [k for k in config.model if k != 'name' and k not in takes] if named else []
  with config.unlocked():
    for k in left_out:
      del config.model[k]
    for k, default in takes.items():
      if (named and k not in config.model and default is not NO_DEFAULT
          and _plain(default)):
        config.model[k] = default
    for field in fields:
      if field not in config.model:
        config.model[field] = None  # untyped until the caller sets its value


def set_with_named_model(config, overrides: Dict[str, Any], where: Callable[[str], str],
                         refused: Callable[[str], str] = None) -> None:
  """Sets ``overrides`` ({dotted key: value}) in ``config`` (in place), ``model.name``
  first if set: the model it names takes its own fields (:func:`take_named_model`),
  and a field of the model's class that ``config.model`` lacks is added, before the
  values are set. ``where(key)`` says how a key was set, for the one-line errors;
  ``refused(key)`` (default ``where``) for a model field the class lacks."""
  file_model = config.model.name
  if 'model.name' in overrides:
    keys.set_value(config, 'model.name', overrides['model.name'], where('model.name'))
  take_named_model(config, file_model, list(overrides), refused or where)
  for key, value in overrides.items():
    keys.set_value(config, key, value, where(key))


def build_model(model_config, *, vocab_size: int, num_classes: int,
                num_tags: int = 0) -> nn.Module:
  """Instantiates ``config.model`` (a ConfigDict or dict with a ``name`` key).

  ``num_tags`` (the dataset's slot tags) reaches models that have such a field.
  """
  fields = dict(model_config)
  name = fields.pop('name', None)
  cls, fixed = model_class(name)
  field_names = {f.name for f in dataclasses.fields(cls)}
  allowed = field_names - {'vocab_size', 'num_classes', 'num_tags', 'parent',
                           'name'} - set(fixed)
  unknown = sorted(set(fields) - allowed)
  if unknown:
    named = (' (named by --config.model.name or load_config(..., model__name=...), '
             "a model keeps only the config's fields it takes)"
             if python_files.is_reference(name) else '')
    raise UserError(f'config.model has field(s) {unknown} that model {name!r} '
                    f'({cls.__name__}) does not take{closest(unknown[0], allowed)}; '
                    f'it takes {sorted(allowed)}{named}')
  missing = [f for f, default in config_fields(cls, fixed).items()
             if default is NO_DEFAULT and f not in fields]
  if missing:  # a field the class gives no default: the config must set it
    field = missing[0]
    raise UserError(f'config.model.{field} is not set: field {field!r} of '
                    f'{cls.__name__} (config.model.name={name!r}) has no default; set '
                    f'--config.model.{field}=VALUE (in Python load_config(..., '
                    f'model__{field}=VALUE) or config.model.{field} = VALUE)')
  for field in dataclasses.fields(cls):
    if field.name in fields:
      check_field(field, fields[field.name])
  if 'pooling' in fields:
    config_checks.one_of('model.pooling', fields['pooling'], sorted(pooling.POOLINGS))
  check = NAMED[name].check if name in NAMED else None
  if check:
    check(fields)
  if 'num_tags' in field_names:
    fields['num_tags'] = num_tags
  return cls(vocab_size=vocab_size, num_classes=num_classes, **fixed, **fields)

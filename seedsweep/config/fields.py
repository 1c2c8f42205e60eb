"""How a config field is declared: once, in ``seedsweep/config/base.py``.

A :class:`Field` holds everything the code knows about one field: its default, its
one-line doc, the check its value must pass before anything runs, whether it changes
a run's numbers, the value runs made before it existed had in effect, and whether the
points of a stack may vary it. :class:`Section` groups fields (``config.train``).
The tables the rest of the code reads are derived from these declarations:
``checks.NON_SEMANTIC``, ``checks.NON_SEMANTIC_SECTIONS``, ``checks.ADDED``,
``checks.CHECKED``, ``stacking.STACKABLE``, ``stacking.OFF_AT_ZERO``.
"""
import dataclasses
import math
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import ml_collections
from ml_collections import config_dict

from seedsweep.config import keys
from seedsweep.errors import UserError


class _Original:
  def __repr__(self):
    return 'ORIGINAL'


# Field.added of a field every stored config has (it was there from the start).
ORIGINAL = _Original()

# How the points of a stack may vary a field (Field.stack; config/stacking.py): each
# point's value is a traced scalar per member, so no point changes an array shape.
# Traced when some point sets it above 0 (a run without it pays nothing):
STACK_WHEN_SET = 'when set'
# Traced in every run, so that a run alone and its point among others compile the
# same step (the same bits under map):
STACK_ALWAYS = 'always'
# As STACK_WHEN_SET, 0 meaning off: a member at 0 among points above 0 gets inf (the
# clip then selects its input unchanged, bit for bit):
STACK_OFF_AT_ZERO = 'off at zero'


def one_of(key: str, value, options) -> None:
  """UserError naming ``config.<key>``, the closest option and all of them, unless
  ``value`` is one of ``options``."""
  if value not in options:
    raise UserError(f'config.{key}={value!r}{keys.did_you_mean(value, options)}; '
                    f'expected one of {tuple(options)}')


@dataclasses.dataclass(frozen=True)
class Choice:
  """A check: the value is one of ``options`` (the error names the closest)."""
  options: Tuple[Any, ...]

  def __call__(self, key: str, value) -> None:
    one_of(key, value, self.options)


@dataclasses.dataclass(frozen=True)
class Int:
  """A check: an int (not a bool) in ``[least, most]`` (None: no upper bound);
  ``note`` ends the error."""
  least: int
  most: Optional[int] = 2**31 - 1  # counts and sizes become int32 shapes
  note: str = ''

  def __call__(self, key: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < self.least:
      raise UserError(f'config.{key}={value!r}; expected an int >= {self.least}'
                      f'{self.note}')
    if self.most is not None and value > self.most:
      raise UserError(f'config.{key}={value!r}; expected an int <= {self.most}'
                      f'{self.note}')


@dataclasses.dataclass(frozen=True)
class Number:
  """A check: an int or float (not a bool) for which ``ok`` holds, else UserError
  ``expected <expected>``; None passes when ``optional`` (the optimiser's default)."""
  expected: str
  ok: Callable[[float], bool] = dataclasses.field(compare=False)
  optional: bool = True

  def __call__(self, key: str, value) -> None:
    if value is None and self.optional:
      return
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not (number and self.ok(value)):
      raise UserError(f'config.{key}={value!r}; expected {self.expected}')


def seed_tuple(key: str, seeds) -> None:
  """A check: a non-empty tuple of distinct ints in ``[0, 2**31)`` (``config.seeds``)."""
  if (not isinstance(seeds, (tuple, list)) or not seeds
      or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds)):
    raise UserError(f'config.{key}={seeds!r}; expected a non-empty tuple of ints, '
                    f"e.g. --config.{key}='(1,2,3)'")
  if len(set(seeds)) != len(seeds):
    raise UserError(f'config.{key}={tuple(seeds)!r} repeats a seed; each seed must '
                    f'appear once')
  if any(not 0 <= s < 2**31 for s in seeds):
    raise UserError(f'config.{key}={tuple(seeds)!r}; seeds must be in [0, 2**31)')


# The optimiser's and the L2 term's numbers: a NaN or negative rate would train every
# seed to NaN.
POSITIVE = Number('a finite number > 0', lambda v: math.isfinite(v) and v > 0)
NON_NEGATIVE = Number('a finite number >= 0', lambda v: math.isfinite(v) and v >= 0)
RATE = Number('a rate in [0, 1)', lambda v: math.isfinite(v) and 0 <= v < 1)


@dataclasses.dataclass(frozen=True)
class Placeholder:
  """A default of None that takes values of ``type`` only
  (``ml_collections.config_dict.placeholder``), made afresh for every config."""
  type: type

  def make(self):
    return config_dict.placeholder(self.type)


def placeholder(field_type: type) -> Placeholder:
  """The default of a field unset until a config sets it (to a ``field_type``)."""
  return Placeholder(field_type)


@dataclasses.dataclass(frozen=True)
class Field:
  """One config field, declared once.

  Attributes:
    default: its value in the base config (a :func:`placeholder`: None until set).
    doc: what it is, in a line.
    check: called as ``check(dotted key, value)`` before anything runs; raises a
      one-line UserError naming the field (:class:`Choice`, :class:`Int`,
      :class:`Number`, :data:`POSITIVE`, :data:`NON_NEGATIVE`, :data:`RATE`).
    semantic: False for a field that changes no number a run produces (a workdir may
      be resumed with another value; tracking leaves it out).
    added: the value in effect for runs made before the field existed (a stored
      config.json without it is read as having it); :data:`ORIGINAL`: every stored
      config has it.
    stack: how the points of a stack may vary it (:data:`STACK_WHEN_SET`,
      :data:`STACK_ALWAYS`, :data:`STACK_OFF_AT_ZERO`); None: they may not.
  """
  default: Any
  doc: str = ''
  check: Optional[Callable[[str, Any], None]] = None
  semantic: bool = True
  added: Any = ORIGINAL
  stack: Optional[str] = None

  def make(self):
    """The default as a config holds it (a fresh placeholder each time)."""
    return self.default.make() if isinstance(self.default, Placeholder) else self.default


@dataclasses.dataclass(frozen=True)
class Section:
  """A group of fields (``config.train``), each a :class:`Field` or a Section, in the
  order the config holds them; ``semantic=False``: none of its fields, declared or
  not, changes a number."""
  doc: str
  fields: Dict[str, Union[Field, 'Section']]
  semantic: bool = True

  def build(self) -> ml_collections.ConfigDict:
    """A ConfigDict of every field at its default, in declaration order."""
    config = ml_collections.ConfigDict()
    for name, item in self.fields.items():
      config[name] = item.build() if isinstance(item, Section) else item.make()
    return config

  def flat(self, prefix: str = '') -> Dict[str, Field]:
    """``{'train.batch_size': Field}``: every field by its dotted key, in order."""
    out = {}
    for name, item in self.fields.items():
      if isinstance(item, Section):
        out.update(item.flat(f'{prefix}{name}.'))
      else:
        out[f'{prefix}{name}'] = item
    return out

  def sections(self, prefix: str = '') -> Dict[str, 'Section']:
    """``{'data.vectors': Section}``: every section inside, by its dotted key."""
    out = {}
    for name, item in self.fields.items():
      if isinstance(item, Section):
        out[f'{prefix}{name}'] = item
        out.update(item.sections(f'{prefix}{name}.'))
    return out


def default_text(field: Field) -> str:
  """A field's default as ``--config.KEY=`` would spell it (``None`` for a
  placeholder)."""
  return 'None' if isinstance(field.default, Placeholder) else repr(field.default)


def _markdown_cell(text: str) -> str:
  # Table cells: a '|' ends a cell, '$' starts math (dollarmath), '<' raw HTML.
  return text.replace('|', '\\|').replace('$', '\\$').replace('<', '\\<')


def _code_cell(text: str) -> str:
  return text.replace('|', '\\|')  # in a code span of a table too


def markdown_tables(section: Section, prefix: str = '') -> List[str]:
  """The manual's tables of every field (docs/configuration.md): per section a line of
  its doc and a table of its fields, each with its default and doc, in declaration
  order; the lines of a MyST Markdown page."""
  own = [(name, item) for name, item in section.fields.items()
         if isinstance(item, Field)]
  lines = []
  if own or not section.fields:
    title = f'``config.{prefix[:-1]}``' if prefix else '``config``'
    doc = (section.doc if section.doc.startswith('``') else
           f'{title}: {section.doc}' if prefix else f'{title}: the top level')
    lines += [_markdown_cell(doc), '']
  if own:
    lines += ['| field | default | what it is |', '| --- | --- | --- |']
    lines += [f'| `{prefix}{name}` | `{_code_cell(default_text(f))}` | '
              f'{_markdown_cell(f.doc)} |' for name, f in own]
    lines.append('')
  for name, item in section.fields.items():
    if isinstance(item, Section):
      lines += markdown_tables(item, f'{prefix}{name}.')
  return lines

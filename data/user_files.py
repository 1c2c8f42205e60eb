"""Your own data: a builder over TSV, CSV, JSONL or Parquet files named in the config.

``config.data.name = 'files'`` with ``config.data.files.train`` (required),
``.dev`` and ``.test`` (optional) paths. The format follows the extension
(:func:`file_format`, :func:`read_file`): ``.tsv``/``.txt`` and ``.csv`` with a header
row naming the text and label columns (``text`` or ``sentence``, ``label``, optional
``tags``; others through ``config.data.files.text_column``/``label_column``) or
headerless ``label<SEP>text[<SEP>tags]``; ``.jsonl``/``.json`` objects with those
keys; ``.parquet`` (pyarrow, the ``[parquet]`` extra) with those columns. CSV, TSV,
JSONL and text files are read as ``config.data.files.encoding`` (UTF-8).

``text`` is pre-tokenised (tokens separated by spaces); ``tags``, when present, has
one tag per token. The classes are the distinct labels of the train file, sorted. The
rule: a file's shape is never guessed. A malformed line is reported with its file and
line number: a row wider or narrower than the header (an unquoted comma in a CSV
text), a first row that names no text column (:func:`_layout`), bytes that are not
the encoding's; a label column of nearly as many values as rows
(:func:`check_labels`) and files that look misread otherwise (:func:`check_splits`)
stop the run before training. Predict's input files (:func:`read_inputs`) get the
same rules and checks.
"""
import codecs
import csv
import dataclasses
import difflib
import json
import os
import re
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import tensorflow_datasets as tfds

from seedsweep.config import base
from seedsweep.data.spec import DatasetSpec
from seedsweep.errors import UserError
from seedsweep.inputs import tfds_base

SPLITS = ('train', 'dev', 'test')
DELIMITERS = {'.tsv': '\t', '.txt': '\t', '.csv': ','}
JSONL_EXTENSIONS = ('.jsonl', '.json')
PARQUET = '.parquet'  # read through pyarrow (the [parquet] extra)
TEXT_NAMES = ('text', 'sentence')  # header names taken as the text column
LABEL_NAMES = ('label',)
TAGS_NAME = 'tags'
DEFAULT_ENCODING = 'utf-8'  # config.data.files.encoding's default
# Part of every prepared dataset's cache key: bump it when the reading changes, so
# that files read the old way are read again (3: rows must have the header's width,
# a UTF-8 byte order mark is dropped).
READER_VERSION = 3


def codec(encoding: str) -> str:
  """Python's name of the text encoding ``encoding`` ('UTF8' -> 'utf-8'); one
  UserError naming config.data.files.encoding for one Python does not know (the
  config's own check: a stored config is read without it)."""
  base.check_text_encoding('data.files.encoding', encoding)
  return codecs.lookup(encoding).name


@dataclasses.dataclass(frozen=True)
class Columns:
  """How a user's files are read: which columns (header names, JSON keys) hold the
  text and the label ('' = the defaults: ``text``/``sentence`` and ``label``;
  headerless delimited files allowed), and the text encoding of its CSV, TSV, JSONL
  and text files (Parquet carries its own)."""
  text: str = ''
  label: str = ''
  encoding: str = DEFAULT_ENCODING

  @classmethod
  def of(cls, files_config) -> 'Columns':
    """The columns and encoding that ``config.data.files`` (a config, or a stored
    config's dict) names; a field a stored config lacks at its default."""
    return cls(str(files_config.get('text_column') or ''),
               str(files_config.get('label_column') or ''),
               str(files_config.get('encoding') or DEFAULT_ENCODING))

  @property
  def named(self) -> bool:
    """Whether the config names a text or label column (then a header row is required)."""
    return bool(self.text or self.label)

  def text_names(self) -> Tuple[str, ...]:
    """The header names taken as the text column."""
    return (self.text,) if self.text else TEXT_NAMES

  def label_names(self) -> Tuple[str, ...]:
    """The header names taken as the label column."""
    return (self.label,) if self.label else LABEL_NAMES

  def key(self) -> str:
    """The columns, a non-default encoding and :data:`READER_VERSION` as part of a
    prepared dataset's cache key."""
    encoding = codec(self.encoding)
    return (f'text={self.text}|label={self.label}|reader={READER_VERSION}' +
            (f'|encoding={encoding}' if encoding != DEFAULT_ENCODING else ''))


def _open_text(path: str, encoding: str):
  """``path`` opened for reading as ``encoding`` text (csv's ``newline=''``); UTF-8
  as 'utf-8-sig', which reads the same but drops the byte order mark that some
  editors (Excel's "CSV UTF-8") put first."""
  encoding = codec(encoding)
  return open(path, encoding='utf-8-sig' if encoding == DEFAULT_ENCODING else encoding,
              newline='')


def _undecodable(path: str, encoding: str) -> UserError:
  """The UserError for a file that is not ``encoding`` text: its first line that does
  not decode, the bytes there, and the fix."""
  fix = (f'expected {encoding} text: set config.data.files.encoding to the '
         "file's encoding (e.g. 'cp1252' or 'latin-1'), or convert the file to "
         f'{encoding}')
  name = codec(encoding)
  with open(path, 'rb') as f:
    for number, raw_line in enumerate(f, 1):
      try:
        raw_line.decode(name)
      except UnicodeDecodeError as e:
        return UserError(f'{path}:{number}: not {encoding} text (byte {e.start + 1} of '
                         f'the line, {raw_line[e.start:e.end]!r}: {e.reason}); {fix}')
  return UserError(f'{path}: not {encoding} text; {fix}')  # no line alone fails


def file_format(path: str) -> str:
  """``'tsv'``, ``'csv'``, ``'jsonl'`` or ``'parquet'``, from ``path``'s extension;
  UserError for any other extension."""
  ext = os.path.splitext(path)[1].lower()
  if ext in DELIMITERS:
    return 'csv' if ext == '.csv' else 'tsv'
  if ext in JSONL_EXTENSIONS:
    return 'jsonl'
  if ext == PARQUET:
    return 'parquet'
  raise UserError(f'{path}: unknown extension {ext!r}; expected one of '
                  f'{tuple(DELIMITERS) + JSONL_EXTENSIONS + (PARQUET,)} (TSV, CSV, '
                  'JSONL or Parquet, data/user_files.py)')


def example(text, label, tags, where: str) -> tfds_base.Example:
  """One checked example (``where`` names its file and line, or row, in errors)."""
  if not isinstance(text, str) or not text.strip():
    raise UserError(f'{where}: empty or missing text; expected pre-tokenised text')
  if not isinstance(label, (str, int)) or isinstance(label, bool) or str(label) == '':
    raise UserError(f'{where}: label {label!r}; expected a non-empty string')
  tokens = [t for t in text.split(' ') if t]
  if tags is not None:
    if isinstance(tags, str):
      tags = [t for t in tags.split(' ') if t]
    if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
      raise UserError(f'{where}: tags {tags!r}; expected one tag string per token')
    if len(tags) != len(tokens):
      raise UserError(f'{where}: {len(tags)} tags for {len(tokens)} tokens; expected '
                      'one tag per token')
  return tfds_base.Example(' '.join(tokens), str(label).strip(),
                           ' '.join(tags) if tags is not None else None)


def _find(header: Sequence[str], names: Sequence[str]) -> Optional[int]:
  lowered = [h.strip().lower() for h in header]
  for name in names:
    if name.lower() in lowered:
      return lowered.index(name.lower())
  return None


def _dialect(path: str, fmt: str):
  """``(delimiter, quoting, the separator's name)`` of a TSV or CSV file."""
  delimiter = DELIMITERS[os.path.splitext(path)[1].lower()]
  # TSV fields hold no tabs, so quotes in them are text; CSV fields may be quoted.
  quoting = csv.QUOTE_NONE if fmt == 'tsv' else csv.QUOTE_MINIMAL
  return delimiter, quoting, 'TAB' if delimiter == '\t' else ','


def _delimited_rows(path: str, fmt: str, encoding: str) -> List[Tuple[int, List[str]]]:
  """``(line, fields)`` of every row of a TSV or CSV file, ``line`` where the row
  starts (a quoted field may span lines), a blank row's fields ``[]``; a row the
  csv module cannot read is one UserError naming its line."""
  delimiter, quoting, _ = _dialect(path, fmt)
  rows = []
  with _open_text(path, encoding) as f:
    reader = csv.reader(f, delimiter=delimiter, quoting=quoting, strict=True)
    line = 1
    try:
      for fields in reader:
        rows.append((line, fields if any(x.strip() for x in fields) else []))
        line = reader.line_num + 1
    except csv.Error as e:
      raise UserError(f'{path}:{reader.line_num}: {e}; expected {fmt.upper()} '
                      'rows') from None
  return rows


class _Layout(NamedTuple):
  """Where a TSV or CSV file's columns are: the fields of the text, the label and the
  tags (None: none), every row's number of fields, the header's line (0: headerless),
  the columns' names (headerless: ``HEADERLESS``) and the first row's line (the
  header's, or the first example's)."""
  text: int
  label: Optional[int]
  tags: Optional[int]
  width: int
  header_line: int
  names: Tuple[str, ...]
  first_line: int


# The columns of headerless rows by their number of fields (1: a text to predict).
HEADERLESS = {1: ('text',), 2: ('label', 'text'), 3: ('label', 'text', 'tags')}


def _layout(path: str, rows, columns: Columns, fmt: str, inputs: bool) -> _Layout:
  """The layout of a TSV or CSV file from its non-blank ``rows`` (``(line, fields)``,
  at least one). A first row naming the text and label columns (in a file to
  predict, the text column) is a header; one naming none of the text, label and tags
  columns, of 2 or 3 fields (to predict, also 1), is the first of headerless
  ``label<SEP>text[<SEP>tags]`` rows unless it is unlike them
  (:func:`_unlike_the_rows`); anything else is one UserError (:func:`_unnamed`)."""
  line, first = rows[0]
  text, label = _find(first, columns.text_names()), _find(first, columns.label_names())
  tags = _find(first, (TAGS_NAME,))
  if text is not None and (label is not None or inputs):
    return _Layout(text, label, tags, len(first), line, tuple(h.strip() for h in first),
                   line)
  sep = _dialect(path, fmt)[2]
  if (text, label, tags) != (None, None, None) or (columns.text if inputs
                                                   else columns.named):
    raise _unnamed(path, line, first, rows[1:], columns, inputs, f'the header {first}')
  if len(first) not in ((1, 2, 3) if inputs else (2, 3)):
    raise _unnamed(path, line, first, rows[1:], columns, inputs,
                   f'the first row {first} ({len(first)} {sep}-separated fields) is no '
                   f'headerless row {"text, " if inputs else ""}label<{sep}>text'
                   f'[<{sep}>tags], and as a header it')
  if len(first) > 1 and _unlike_the_rows(rows):  # a text alone has no label field
    raise _unnamed(path, line, first, rows[1:], columns, inputs,
                   f'the first row {first} is a header (its first value '
                   f'{first[0].strip()!r} is the label of no row below it), and it')
  width = len(first)
  return _Layout(HEADERLESS[width].index('text'), 0 if width > 1 else None,
                 2 if width == 3 else None, width, 0, HEADERLESS[width], line)


def _unlike_the_rows(rows) -> bool:
  """Whether a first row that names no column is a header all the same: its first
  field (a headerless row's label) is in no other row, while theirs repeat (at least
  :data:`MIN_ROWS_FOR_DISTINCT_CHECK` rows below it, at most half of their first
  fields distinct: a headerless file's classes each have several rows)."""
  others = [fields[0].strip() for _, fields in rows[1:]]
  return (len(others) >= MIN_ROWS_FOR_DISTINCT_CHECK
          and rows[0][1][0].strip() not in others
          and len(set(others)) <= MAX_DISTINCT_FRACTION * len(others))


def _unnamed(path: str, line: int, first: Sequence[str], rows, columns: Columns,
             inputs: bool, what: str) -> UserError:
  """The UserError for a first row that names no text column (or, in a training
  file, no label column): ``what`` it is, and :func:`_naming`'s lack and fix."""
  missing, fix = _naming(first, rows, columns, inputs)
  return UserError(f'{path}:{line}: {what} has {missing}; {fix}')


def _naming(first: Sequence[str], rows, columns: Columns,
            inputs: bool) -> Tuple[str, str]:
  """``(the columns a first row lacks, the fix)`` ("no text column 'text'/'sentence'",
  "set config.data.files.text_column='review' (the likeliest column), or name the
  column 'text'"): the config fields that would name them, with the likeliest column
  of each (:func:`_likeliest`); a file to predict needs no label column."""
  taken = {i for i in (_find(first, columns.text_names()),
                       _find(first, columns.label_names()), _find(first, (TAGS_NAME,)))
           if i is not None}
  missing, fixes, names_wanted = [], [], []
  for kind, names, longest in (('text', columns.text_names(), True),
                               ('label', columns.label_names(), False)):
    if _find(first, names) is not None or (kind == 'label' and inputs):
      continue
    missing.append(f'no {kind} column {"/".join(repr(n) for n in names)}')
    names_wanted.append(repr(names[0]))
    guess = _likeliest(first, rows, names, taken, longest)
    fixes.append(f'config.data.files.{kind}_column' +
                 (f'={first[guess].strip()!r}' if guess is not None else ''))
    taken.add(guess)
  plural = 's' if len(fixes) > 1 else ''
  likeliest = f' (the likeliest column{plural})' if any('=' in f for f in fixes) else ''
  return ' and '.join(missing), (f'set {" and ".join(fixes)}{likeliest}, or name the '
                                 f'column{plural} {" and ".join(names_wanted)}')


def _likeliest(header: Sequence[str], rows, names: Sequence[str], taken,
               longest: bool) -> Optional[int]:
  """For an error's fix, the column of ``header`` likeliest to be the one ``names``
  name: by its values in ``rows``, the one of the most words (``longest``: a text) or
  of the fewest distinct values, more than one (a label); without rows, the closest
  name; None without a column left."""
  free = [i for i, h in enumerate(header) if i not in taken and h.strip()]
  values = {i: [f[i].strip() for _, f in rows if i < len(f)] for i in free}
  values = {i: v for i, v in values.items() if v}
  if values and longest:
    return max(values, key=lambda i: sum(len(v.split()) for v in values[i]) /
               len(values[i]))
  if values:  # on a tie the later column (ids come first, labels last)
    return min(values, key=lambda i: (len(set(values[i])) < 2, len(set(values[i])), -i))
  lowered = {header[i].strip().lower(): i for i in free}
  for name in names:
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    if close:
      return lowered[close[0]]
  return None


def _check_width(path: str, line: int, fields: Sequence[str], layout: _Layout,
                 fmt: str) -> None:
  """One UserError unless a row has as many fields as the header (headerless: as
  the first row): a comma in an unquoted CSV text, or a tab in a TSV text, would
  cut it and shift the label."""
  if len(fields) == layout.width:
    return
  sep = 'TAB' if fmt == 'tsv' else 'comma'
  names = ', '.join(repr(n) for n in layout.names[:8]) + (
      ', ...' if len(layout.names) > 8 else '')
  than = (f'the header (line {layout.header_line})' if layout.header_line
          else f'the first row (line {layout.first_line})')
  if len(fields) > layout.width:
    fix = ('a comma in a text splits it: quote that text ("a fine, warm film"), or '
           'write the file as TSV' if fmt == 'csv' else
           'a tab in a text splits it: replace the tabs in texts with spaces (TSV '
           'fields are not quoted)')
  else:
    fix = 'expected a value for every column' + (
        ' (quote a text that holds a comma or a line break, or write the file as '
        'TSV)' if fmt == 'csv' else '')
  plural = 's' if len(fields) > 1 else ''
  raise UserError(f'{path}:{line}: {len(fields)} {sep}-separated field{plural}, but '
                  f'{than} has {layout.width} ({names}); {fix}')


def _label_fix(layout: _Layout, fmt: str) -> Tuple[str, str]:
  """``(the label column's name, the fix)`` for :func:`check_labels` of a TSV or
  CSV file."""
  if layout.header_line:
    return (repr(layout.names[layout.label]),
            'Set config.data.files.label_column to the column of the classes (the '
            f'header has {list(layout.names[:8])})')
  sep = ',' if fmt == 'csv' else '<TAB>'
  return '', (f'Are text and label swapped, or is line {layout.first_line} a header? '
              f'Headerless rows are label{sep}text; a header row names the columns '
              '(text/sentence and label, or config.data.files.text_column and '
              'label_column)')


def _headerless_note(layout: _Layout, fmt: str, rows, columns: Columns,
                     inputs: bool) -> str:
  """What an error in a headerless file's row adds: how its non-blank ``rows`` were
  read, and what would name the columns if the first row is a header."""
  if layout.header_line:
    return ''
  sep = '<TAB>' if fmt == 'tsv' else ','
  first = rows[0][1]
  missing, fix = _naming(first, rows[1:], columns, inputs)
  return (f' (line {layout.first_line} {first} has {missing}, so each row is read as '
          f'{sep.join(layout.names)}; if that line is a header, {fix})')


def _read_delimited(path: str, fmt: str, columns: Columns) -> List[tfds_base.Example]:
  """A TSV or CSV file's examples (:func:`_layout`): every row as wide as the
  header (headerless: the first row), the labels checked (:func:`check_labels`)."""
  rows = [(line, fields) for line, fields in _delimited_rows(path, fmt, columns.encoding)
          if fields]
  if not rows:
    return []
  layout = _layout(path, rows, columns, fmt, inputs=False)
  data = [(line, fields) for line, fields in rows if line != layout.header_line]
  for line, fields in data:
    _check_width(path, line, fields, layout, fmt)
  check_labels([f[layout.label].strip() for _, f in data], path,
               *_label_fix(layout, fmt))
  examples = []
  for line, fields in data:
    try:
      examples.append(example(fields[layout.text], fields[layout.label],
                              fields[layout.tags] if layout.tags is not None else None,
                              f'{path}:{line}'))
    except UserError as e:
      raise UserError(f'{e}{_headerless_note(layout, fmt, rows, columns, False)}'
                      ) from None
  return examples


def _read_jsonl(path: str, columns: Columns) -> List[tfds_base.Example]:
  """A JSONL file's examples: objects with the text and label keys, the labels
  checked (:func:`check_labels`)."""
  text_key, label_key = columns.text or 'text', columns.label or 'label'
  examples = []
  for _, where, obj, line in _jsonl_objects(path, columns.encoding):
    if not line.strip():
      continue
    if not isinstance(obj, dict) or text_key not in obj or label_key not in obj:
      keys = f', got the keys {sorted(obj)[:8]}' if isinstance(obj, dict) else ''
      raise UserError(f'{where}: expected an object with "{text_key}" and '
                      f'"{label_key}" (and optionally "tags"){keys}; other keys '
                      'through config.data.files.text_column / label_column')
    examples.append(example(obj[text_key], obj[label_key], obj.get(TAGS_NAME), where))
  check_labels([e.label for e in examples], path, repr(label_key),
               'Set config.data.files.label_column to the key of the classes')
  return examples


def _jsonl_objects(path: str, encoding: str):
  """``(line number, 'path:line', its object (None for a blank line), the line)``
  for each line of a JSONL file; a line that is not JSON is one UserError."""
  with _open_text(path, encoding) as f:
    for number, line in enumerate(f, 1):
      where = f'{path}:{number}'
      if not line.strip():
        yield number, where, None, line
        continue
      try:
        yield number, where, json.loads(line), line
      except json.JSONDecodeError as e:
        raise UserError(f'{where}: not valid JSON ({e.msg}); expected one object '
                        'per line') from None


def _parquet_table(path: str):
  """``path``'s pyarrow table; one UserError without pyarrow (naming the extra) or
  for a file pyarrow cannot read."""
  try:
    import pyarrow.parquet as pq  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    raise UserError(f"{path}: reading Parquet needs pyarrow: pip install "
                    "'seedsweep[parquet]'") from e
  try:
    return pq.read_table(path)
  except Exception as e:  # pylint: disable=broad-except  (pyarrow's many errors)
    raise UserError(f'{path}: not a readable Parquet file ({type(e).__name__}: '
                    f'{str(e)[:120]}); expected a Parquet table of examples') from None


def _read_parquet(path: str, columns: Columns) -> List[tfds_base.Example]:
  """A Parquet file's rows (Hugging Face datasets' format) as a JSONL file's objects;
  the text column ``text`` or ``sentence`` unless the config names one."""
  table = _parquet_table(path)
  names = table.column_names
  text = _find(names, columns.text_names())
  label = _find(names, columns.label_names())
  if text is None or label is None:
    raise UserError(f'{path}: columns {names}; expected a text column '
                    f'{"/".join(columns.text_names())} and a label column '
                    f'{"/".join(columns.label_names())} (config.data.files.text_column, '
                    'label_column)')
  tags = _find(names, (TAGS_NAME,))
  rows = table.to_pylist()
  examples = [example(r[names[text]], r[names[label]],
                      r[names[tags]] if tags is not None else None,
                      f'{path}: row {i + 1}')
              for i, r in enumerate(rows)]
  check_labels([e.label for e in examples], path, repr(names[label]),
               'Set config.data.files.label_column to the column of the classes')
  return examples


def read_file(path: str, columns: Columns = Columns()) -> List[tfds_base.Example]:
  """Examples of one TSV, CSV, JSONL or Parquet file, in file order (tags None when
  absent), its shape checked: a header naming the columns or headerless rows, every
  row as wide, a label column of classes (:func:`check_labels`)."""
  fmt = file_format(path)
  if not os.path.isfile(path):
    raise UserError(f'{path}: file not found; expected a {fmt.upper()} file of '
                    'examples (config.data.files)')
  readers = {'jsonl': _read_jsonl, 'parquet': _read_parquet}
  try:
    examples = (readers[fmt](path, columns) if fmt in readers
                else _read_delimited(path, fmt, columns))
  except UnicodeDecodeError:
    raise _undecodable(path, columns.encoding) from None
  if not examples:
    raise UserError(f'{path}: no examples; expected one example per line')
  return examples


# ------------------------------------------------- texts to predict (--mode=predict)


class InputRow(NamedTuple):
  """One row of a file to predict: its line in the file (where the row starts),
  its text (tokens joined by single spaces; '' for an empty row) and its gold label
  (None without one)."""
  line: int
  text: str
  label: Optional[str]


def _input_row(text, label, where: str, line: int) -> InputRow:
  """A row to predict, checked as training checks its examples but allowed to be
  empty (it keeps its place) and to have no label."""
  if text is None:
    text = ''
  if not isinstance(text, str):
    raise UserError(f'{where}: text {text!r}; expected a string')
  if label is not None and (not isinstance(label, (str, int)) or isinstance(label, bool)):
    raise UserError(f'{where}: label {label!r}; expected a string')
  label = str(label).strip() if label is not None and str(label).strip() else None
  return InputRow(line, ' '.join(t for t in text.split(' ') if t), label)


def _check_gold(rows: Sequence[InputRow], path: str, column: str, fix: str) -> None:
  """:func:`check_labels` of the gold labels of a file to predict (if any)."""
  check_labels([r.label for r in rows if r.label is not None], path, column, fix)


def _delimited_inputs(path: str, columns: Columns) -> List[InputRow]:
  """The rows of a TSV or CSV file to predict, one per row (a blank row included),
  by training's rules (:func:`_layout`): a header naming the text (and label)
  column, else ``label<SEP>text[<SEP>tags]`` rows or a text alone per row; every row
  as wide as the header (headerless: the first row), gold labels checked."""
  fmt = file_format(path)
  rows = _delimited_rows(path, fmt, columns.encoding)
  filled = [(line, fields) for line, fields in rows if fields]
  if not filled:
    return [InputRow(line, '', None) for line, _ in rows]
  layout = _layout(path, filled, columns, fmt, inputs=True)
  out = []
  for line, fields in rows:
    if line == layout.header_line:
      continue
    if not fields:  # a blank row keeps its place
      out.append(InputRow(line, '', None))
      continue
    _check_width(path, line, fields, layout, fmt)
    try:
      out.append(_input_row(fields[layout.text], None if layout.label is None else
                            fields[layout.label], f'{path}:{line}', line))
    except UserError as e:
      raise UserError(f'{e}{_headerless_note(layout, fmt, filled, columns, True)}'
                      ) from None
  if layout.label is not None:
    _check_gold(out, path, *_label_fix(layout, fmt))
  return out


def _jsonl_inputs(path: str, columns: Columns) -> List[InputRow]:
  """The lines of a JSONL file to predict, one row each (a blank line included):
  objects with the text key (``text``, or config.data.files.text_column) and,
  optionally, the label key."""
  text_key, label_key = columns.text or 'text', columns.label or 'label'
  rows = []
  for number, where, obj, line in _jsonl_objects(path, columns.encoding):
    if not line.strip():  # a blank line keeps its place
      rows.append(InputRow(number, '', None))
      continue
    if not isinstance(obj, dict) or text_key not in obj:
      raise UserError(f'{where}: expected an object with "{text_key}" (and '
                      f'optionally "{label_key}"), got {line.strip()[:80]!r}')
    rows.append(_input_row(obj[text_key], obj.get(label_key), where, number))
  _check_gold(rows, path, repr(label_key),
              'Set config.data.files.label_column to the key of the classes')
  return rows


def _parquet_inputs(path: str, columns: Columns) -> List[InputRow]:
  """The rows of a Parquet file to predict, one each (a null text an empty row, its
  ``line`` the row's number from 1): the text column as training finds it
  (``text``/``sentence``, or config.data.files.text_column), the label column
  optional."""
  table = _parquet_table(path)
  names = table.column_names
  text, label = _find(names, columns.text_names()), _find(names, columns.label_names())
  if text is None:
    raise UserError(f'{path}: columns {names}; expected a text column '
                    f'{"/".join(columns.text_names())} (config.data.files.text_column)')
  rows = [_input_row(r[names[text]], r[names[label]] if label is not None else None,
                     f'{path}: row {i}', i)
          for i, r in enumerate(table.to_pylist(), 1)]
  if label is not None:
    _check_gold(rows, path, repr(names[label]),
                'Set config.data.files.label_column to the column of the classes')
  return rows


def _text_inputs(path: str, encoding: str) -> List[InputRow]:
  """A plain text file: one text per line, a blank line an empty row."""
  with _open_text(path, encoding) as f:
    lines = f.read().splitlines()
  return [_input_row(line, None, f'{path}:{n}', n) for n, line in enumerate(lines, 1)]


def read_inputs(path: str, columns: Columns = Columns()) -> List[InputRow]:
  """The rows of a file of texts to predict, in file order, one per row: TSV, CSV
  (``.tsv``, ``.txt``, ``.csv``), JSONL (``.jsonl``, ``.json``) and Parquet
  (``.parquet``, pyarrow) by the rules and checks training reads them with
  (:func:`read_file`), a label optional; any other file one text per line. An empty
  row is kept (text ''), so answers line up with the input."""
  ext = os.path.splitext(path)[1].lower()
  if not os.path.isfile(path):
    raise UserError(f'--input={path}: file not found')
  try:
    if ext == PARQUET:
      rows = _parquet_inputs(path, columns)
    elif ext in JSONL_EXTENSIONS:
      rows = _jsonl_inputs(path, columns)
    elif ext in DELIMITERS:
      rows = _delimited_inputs(path, columns)
    else:
      rows = _text_inputs(path, columns.encoding)
  except UnicodeDecodeError:
    raise _undecodable(path, columns.encoding) from None
  if not any(r.text for r in rows):
    raise UserError(f'--input={path}: no text in it; expected one text per row')
  return rows


_NUMBER = re.compile(r'^[-+]?(\d+([.,]\d*)?|[.,]\d+)([eE][-+]?\d+)?$')
# A label column is one of classes when it has at most half as many distinct values
# as rows (each class two examples on average); more, and it holds texts or ids
# (text and label swapped, the wrong column). Below this many rows the ratio says
# nothing.
MIN_ROWS_FOR_DISTINCT_CHECK = 20
MAX_DISTINCT_FRACTION = 0.5
MAX_NUMERIC_TEXT_FRACTION = 0.9


def check_labels(labels: Sequence[str], path: str, column: str, fix: str) -> None:
  """One UserError naming ``path``, its label ``column`` ('' unnamed), the count and
  ``fix`` when ``labels`` (at least :data:`MIN_ROWS_FOR_DISTINCT_CHECK`) have more
  distinct values than :data:`MAX_DISTINCT_FRACTION` of them."""
  distinct = sorted(set(labels))
  if (len(labels) >= MIN_ROWS_FOR_DISTINCT_CHECK
      and len(distinct) > MAX_DISTINCT_FRACTION * len(labels)):
    raise UserError(
        f'{path}: the label column{" " + column if column else ""} has {len(distinct)} '
        f'distinct values in {len(labels)} rows (e.g. {distinct[0][:40]!r}); expected '
        f'a few classes, each with several examples: it holds texts or ids. {fix}')


def check_splits(splits: Dict[str, List[tfds_base.Example]], paths: Dict[str, str]):
  """Refuses files that look misread, naming the file, the column and what was seen:
  labels nearly all distinct, numeric text, fewer than two train classes, dev/test
  labels that train lacks, tags in some examples only."""
  train, path = splits['train'], paths['train']
  labels = [e.label for e in train]
  distinct = sorted(set(labels))
  check_labels(labels, path, '', 'Are text and label swapped? Headerless rows are '
               'label<TAB>text; a header row can name the columns (text/sentence, '
               'label)')
  for split, rows in splits.items():
    numeric = sum(bool(_NUMBER.match(e.text)) for e in rows)
    if numeric > MAX_NUMERIC_TEXT_FRACTION * len(rows):
      raise UserError(
          f'{paths[split]}: the text column is numeric in {numeric} of {len(rows)} rows '
          f'(e.g. {rows[0].text!r}); expected sentences. Are text and label swapped? '
          'Headerless rows are label<TAB>text')
  if len(distinct) < 2:
    raise UserError(f'{path}: every train example has the label {distinct[0]!r}; '
                    'expected at least two classes')
  train_labels = set(distinct)
  for split in SPLITS[1:]:
    unseen = sorted({e.label for e in splits.get(split, ())} - train_labels)
    if unseen:
      count = sum(e.label not in train_labels for e in splits[split])
      raise UserError(
          f'{paths[split]}: {count} examples have labels that {path} lacks '
          f'({", ".join(repr(u) for u in unseen[:5])}{"..." if len(unseen) > 5 else ""});'
          f' expected only the train labels {distinct[:10]}')
  with_tags = {(e.tags is not None) for rows in splits.values() for e in rows}
  if len(with_tags) > 1:
    raise UserError(f'{sorted(paths.values())}: some examples have tags and others do '
                    'not; give tags for all or none')


@dataclasses.dataclass(eq=False)
class FilesConfig(tfds.core.BuilderConfig):
  paths: Optional[Dict[str, str]] = None  # split -> file
  columns: Columns = Columns()


class SeedsweepFiles(tfds_base.RawTextBuilder):
  """A user's own TSV/CSV/JSONL/Parquet files (data/user_files.py); one config per set
  of files, named by their content hash, the column names, a non-UTF-8 encoding and
  the reader version (:meth:`Columns.key`)."""
  name = 'seedsweep_files'
  HAS_TAGS = True
  READS_ROOT = False

  def read(self, root):
    """The config's files, read and checked (:func:`check_splits`), as ``{split:
    [Example]}``."""
    del root  # the files are named by the config
    paths, columns = self.builder_config.paths, self.builder_config.columns
    out = {split: read_file(path, columns) for split, path in paths.items()}
    check_splits(out, paths)
    return {split: [e._replace(tags=e.tags or '') for e in rows]
            for split, rows in out.items()}


# The registry's name of this module (data/spec.py): the files config.data.files names.
DATASETS = {'files': DatasetSpec(SeedsweepFiles)}

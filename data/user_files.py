"""Your own data: a builder over TSV, CSV, JSONL or Parquet files named in the config.

``config.data.name = 'files'`` with ``config.data.files.train`` (required),
``.dev`` and ``.test`` (optional) paths. The format follows the extension
(:func:`file_format`, :func:`read_file`): ``.tsv``/``.txt`` and ``.csv`` with a header
row naming the text and label columns (``text`` or ``sentence``, ``label``, optional
``tags``; others through ``config.data.files.text_column``/``label_column``) or
headerless ``label<SEP>text[<SEP>tags]``; ``.jsonl``/``.json`` objects with those
keys; ``.parquet`` (pyarrow, the ``[parquet]`` extra) with those columns.

``text`` is pre-tokenised (tokens separated by spaces); ``tags``, when present, has
one tag per token. The classes are the distinct labels of the train file, sorted. The
rule: a malformed line is reported with its file and line number, and files that look
misread (:func:`check_splits`) stop the run before training.
"""
import csv
import dataclasses
import json
import os
import re
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import tensorflow_datasets as tfds

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
# Part of every prepared dataset's cache key: bump it when the reading changes, so
# that files read the old way are read again.
READER_VERSION = 2


@dataclasses.dataclass(frozen=True)
class Columns:
  """Which columns (header names, JSON keys) hold the text and the label; '' = the
  defaults (``text``/``sentence`` and ``label``; headerless delimited files allowed)."""
  text: str = ''
  label: str = ''

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
    """The columns and :data:`READER_VERSION` as part of a prepared dataset's cache key."""
    return f'text={self.text}|label={self.label}|reader={READER_VERSION}'


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


def _header_columns(header: Sequence[str], columns: Columns,
                    where: str) -> Optional[Tuple[int, int, Optional[int]]]:
  """``(text, label, tags)`` indices when ``header`` is a header row, else None."""
  text, label = _find(header, columns.text_names()), _find(header, columns.label_names())
  if text is not None and label is not None:
    return text, label, _find(header, (TAGS_NAME,))
  if not columns.named and text is None and label is None:
    return None  # headerless label<SEP>text
  wanted = [f'{what} column {"/".join(repr(n) for n in names)}'
            for what, names, found in (('text', columns.text_names(), text),
                                       ('label', columns.label_names(), label))
            if found is None]
  raise UserError(f'{where}: the header {list(header)} has no {" and no ".join(wanted)}; '
                  'expected a header naming them (config.data.files.text_column / '
                  'label_column choose other names)')


def _dialect(path: str, fmt: str):
  """``(delimiter, quoting, the separator's name)`` of a TSV or CSV file."""
  delimiter = DELIMITERS[os.path.splitext(path)[1].lower()]
  # TSV fields hold no tabs, so quotes in them are text; CSV fields may be quoted.
  quoting = csv.QUOTE_NONE if fmt == 'tsv' else csv.QUOTE_MINIMAL
  return delimiter, quoting, 'TAB' if delimiter == '\t' else ','


def _read_delimited(path: str, fmt: str, columns: Columns) -> List[tfds_base.Example]:
  delimiter, quoting, sep = _dialect(path, fmt)
  examples, indices = [], None
  with open(path, encoding='utf-8', newline='') as f:
    reader = csv.reader(f, delimiter=delimiter, quoting=quoting, strict=True)
    try:
      for fields in reader:
        where = f'{path}:{reader.line_num}'
        if not any(x.strip() for x in fields):
          continue
        if indices is None:  # the first row: a header, or () for headerless rows
          indices = _header_columns(fields, columns, where) or ()
          if indices:
            continue
        if indices:
          if len(fields) <= max(i for i in indices if i is not None):
            raise UserError(f'{where}: {len(fields)} fields; expected the '
                            f'{len([i for i in indices if i is not None])} columns '
                            'the header names')
          text, label, tags = indices
          examples.append(example(fields[text], fields[label],
                                   fields[tags] if tags is not None else None, where))
          continue
        if len(fields) not in (2, 3):
          raise UserError(f'{where}: {len(fields)} {sep}-separated fields; expected '
                          f'label<{sep}>text or label<{sep}>text<{sep}>tags, or a header '
                          'row naming the text and label columns')
        examples.append(example(fields[1], fields[0],
                                 fields[2] if len(fields) == 3 else None, where))
    except csv.Error as e:
      raise UserError(f'{path}:{reader.line_num}: {e}; expected {fmt.upper()} '
                      'rows') from None
  return examples


def _read_jsonl(path: str, columns: Columns) -> List[tfds_base.Example]:
  text_key, label_key = columns.text or 'text', columns.label or 'label'
  examples = []
  for _, where, obj, line in _jsonl_objects(path):
    if not line.strip():
      continue
    if not isinstance(obj, dict) or text_key not in obj or label_key not in obj:
      raise UserError(f'{where}: expected an object with "{text_key}" and '
                      f'"{label_key}" (and optionally "tags")')
    examples.append(example(obj[text_key], obj[label_key], obj.get(TAGS_NAME), where))
  return examples


def _jsonl_objects(path: str):
  """``(line number, 'path:line', its object (None for a blank line), the line)``
  for each line of a JSONL file; a line that is not JSON is one UserError."""
  with open(path, encoding='utf-8') as f:
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
  return [example(r[names[text]], r[names[label]],
                   r[names[tags]] if tags is not None else None, f'{path}: row {i + 1}')
          for i, r in enumerate(rows)]


def read_file(path: str, columns: Columns = Columns()) -> List[tfds_base.Example]:
  """Examples of one TSV, CSV, JSONL or Parquet file, in file order (tags None when
  absent)."""
  fmt = file_format(path)
  if not os.path.isfile(path):
    raise UserError(f'{path}: file not found; expected a {fmt.upper()} file of '
                    'examples (config.data.files)')
  readers = {'jsonl': _read_jsonl, 'parquet': _read_parquet}
  try:
    examples = (readers[fmt](path, columns) if fmt in readers
                else _read_delimited(path, fmt, columns))
  except UnicodeDecodeError as e:
    raise UserError(f'{path}: not UTF-8 text (byte {e.start}: {e.reason}); expected '
                    'a UTF-8 file') from None
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


def _input_header(fields: Sequence[str], columns: Columns,
                  where: str) -> Optional[Tuple[int, Optional[int]]]:
  """``(text, label)`` indices when ``fields`` is a header row (naming the text
  column; the label column optional), else None (headerless rows)."""
  text = _find(fields, columns.text_names())
  label = _find(fields, columns.label_names())
  if text is not None:
    return text, label
  if columns.text or (columns.named and label is not None):
    raise UserError(f'{where}: the header {list(fields)} has no text column '
                    f'{"/".join(repr(n) for n in columns.text_names())}; expected a '
                    'header naming it (config.data.files.text_column)')
  return None


def _delimited_inputs(path: str, columns: Columns) -> List[InputRow]:
  """The rows of a TSV or CSV file to predict, one per row (a blank row included),
  by training's column rules: a header naming the text (and label) column, else
  ``label<SEP>text[<SEP>tags]`` rows, and a row of one field is a text alone."""
  fmt = file_format(path)
  delimiter, quoting, sep = _dialect(path, fmt)
  rows, header = [], None
  with open(path, encoding='utf-8', newline='') as f:
    reader = csv.reader(f, delimiter=delimiter, quoting=quoting, strict=True)
    try:
      line = 1
      for fields in reader:
        where = f'{path}:{line}'
        blank = not any(x.strip() for x in fields)
        if header is None and not blank:  # the first row with text: a header?
          found = _input_header(fields, columns, where)
          header = found or ()
          if found:
            line = reader.line_num + 1
            continue
        if blank:
          rows.append(InputRow(line, '', None))
        elif header:
          text, label = header
          rows.append(_input_row(fields[text] if text < len(fields) else '',
                                 fields[label] if label is not None and label < len(
                                     fields) else None, where, line))
        elif len(fields) == 1:
          rows.append(_input_row(fields[0], None, where, line))
        elif len(fields) in (2, 3):
          rows.append(_input_row(fields[1], fields[0], where, line))
        else:
          raise UserError(f'{where}: {len(fields)} {sep}-separated fields; expected '
                          f'a text, label<{sep}>text, or a header row naming the '
                          'text column')
        line = reader.line_num + 1  # a quoted field may span lines
    except csv.Error as e:
      raise UserError(f'{path}:{reader.line_num}: {e}; expected {fmt.upper()} '
                      'rows') from None
  return rows


def _jsonl_inputs(path: str, columns: Columns) -> List[InputRow]:
  """The lines of a JSONL file to predict, one row each (a blank line included):
  objects with the text key (``text``, or config.data.files.text_column) and,
  optionally, the label key."""
  text_key, label_key = columns.text or 'text', columns.label or 'label'
  rows = []
  for number, where, obj, line in _jsonl_objects(path):
    if not line.strip():  # a blank line keeps its place
      rows.append(InputRow(number, '', None))
      continue
    if not isinstance(obj, dict) or text_key not in obj:
      raise UserError(f'{where}: expected an object with "{text_key}" (and '
                      f'optionally "{label_key}"), got {line.strip()[:80]!r}')
    rows.append(_input_row(obj[text_key], obj.get(label_key), where, number))
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
  return [_input_row(r[names[text]], r[names[label]] if label is not None else None,
                     f'{path}: row {i}', i)
          for i, r in enumerate(table.to_pylist(), 1)]


def _text_inputs(path: str) -> List[InputRow]:
  """A plain text file: one text per line, a blank line an empty row."""
  with open(path, encoding='utf-8', newline='') as f:
    lines = f.read().splitlines()
  return [_input_row(line, None, f'{path}:{n}', n) for n, line in enumerate(lines, 1)]


def read_inputs(path: str, columns: Columns = Columns()) -> List[InputRow]:
  """The rows of a file of texts to predict, in file order, one per row: TSV, CSV
  (``.tsv``, ``.txt``, ``.csv``), JSONL (``.jsonl``, ``.json``) and Parquet
  (``.parquet``, pyarrow) by the column rules training reads them with
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
      rows = _text_inputs(path)
  except UnicodeDecodeError as e:
    raise UserError(f'{path}: not UTF-8 text (byte {e.start}: {e.reason}); expected '
                    'a UTF-8 file') from None
  if not any(r.text for r in rows):
    raise UserError(f'--input={path}: no text in it; expected one text per row')
  return rows


_NUMBER = re.compile(r'^[-+]?(\d+([.,]\d*)?|[.,]\d+)([eE][-+]?\d+)?$')
# A train split whose labels are nearly all distinct is text read as labels; below
# this many rows the ratio says nothing.
MIN_ROWS_FOR_DISTINCT_CHECK = 20
MAX_DISTINCT_FRACTION = 0.5
MAX_NUMERIC_TEXT_FRACTION = 0.9


def check_splits(splits: Dict[str, List[tfds_base.Example]], paths: Dict[str, str]):
  """Refuses files that look misread, naming the file, the column and what was seen:
  labels nearly all distinct, numeric text, fewer than two train classes, dev/test
  labels that train lacks, tags in some examples only."""
  train, path = splits['train'], paths['train']
  labels = [e.label for e in train]
  distinct = sorted(set(labels))
  if (len(train) >= MIN_ROWS_FOR_DISTINCT_CHECK
      and len(distinct) > MAX_DISTINCT_FRACTION * len(train)):
    raise UserError(
        f'{path}: the label column has {len(distinct)} distinct values in '
        f'{len(train)} rows (e.g. {distinct[0][:40]!r}); expected a few classes. Are '
        'text and label swapped? Headerless rows are label<TAB>text; a header row '
        'can name the columns (text/sentence, label)')
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
  """A user's own TSV/CSV/JSONL files (data/user_files.py); one config per set of
  files, named by their content hash, the column names and the reader version."""
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

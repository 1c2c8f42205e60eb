"""Your own dataset as code in your own folder: ``config.data.name`` set to
``'path/to/file.py:Name'`` or ``'package.module:Name'`` naming either

* a **reader**, a function ``Name(data_config) -> {split: rows}`` with splits
  ``train`` (required), ``dev`` and ``test``, each row ``(text, label)``,
  ``(text, label, tags)`` or a dict with those keys: text pre-tokenised (tokens
  separated by spaces), labels any strings, tags one per token; or
* a **builder**, a subclass of :class:`seedsweep.inputs.tfds_base.RawTextBuilder` (a TFDS
  builder whose ``read(root)`` returns ``{split: [Example]}``; ``READS_ROOT`` says
  whether it reads the data root).

A reader's rows are checked as a user's files are (data/user_files.py) and cached
under the hash of their content, so changed data is prepared again; a builder is
cached under the hash of its file. Configs are trusted code: the file runs as it is.
"""
import dataclasses
import hashlib
import json
from typing import Any, Dict, List, Optional

import tensorflow_datasets as tfds

from seedsweep.config import python_files
from seedsweep.data import user_files
from seedsweep.errors import UserError
from seedsweep.inputs import tfds_base

FIELD = 'config.data.name'


def _row(row, where: str) -> tfds_base.Example:
  if isinstance(row, dict):
    row = (row.get('text'), row.get('label'), row.get('tags'))
  if not isinstance(row, (tuple, list)) or len(row) not in (2, 3):
    raise UserError(f'{where}: {row!r:.80}; expected (text, label), (text, label, '
                    'tags) or a dict with those keys')
  text, label, tags = (*row, None) if len(row) == 2 else row
  return user_files.example(text, label, tags, where)


def read(ref: str, data_config) -> Dict[str, List[tfds_base.Example]]:
  """The checked splits of the reader ``ref``."""
  reader = python_files.load_object(ref, FIELD)
  where = f'{FIELD}={ref!r}'
  try:
    splits = reader(data_config)
  except UserError:
    raise
  except Exception as e:  # pylint: disable=broad-except
    at = python_files.raised_in(ref, e)  # the reader's own line, where it raised
    raise UserError(f'{at + ": " if at else ""}the reader raised {type(e).__name__}: '
                    f'{e} ({where})') from e
  if not isinstance(splits, dict) or 'train' not in splits:
    raise UserError(f'{where}: the reader returned {type(splits).__name__}; expected '
                    "{'train': rows, 'dev': rows, 'test': rows} (dev and test optional)")
  unknown = sorted(set(splits) - set(user_files.SPLITS))
  if unknown:
    raise UserError(f'{where}: splits {unknown}; expected among {user_files.SPLITS}')
  out = {split: [_row(r, f'{where} split {split} row {i}') for i, r in enumerate(rows)]
         for split, rows in splits.items()}
  user_files.check_splits(out, {s: f'{where} split {s}' for s in out})
  return {split: [e._replace(tags=e.tags or '') for e in rows]
          for split, rows in out.items()}


def digest(splits: Dict[str, List[tfds_base.Example]]) -> str:
  """A short name for the content of a reader's splits."""
  h = hashlib.sha256()
  for split in sorted(splits):
    for e in splits[split]:
      h.update(json.dumps([split, e.text, e.label, e.tags]).encode())
      h.update(b'\n')
  return h.hexdigest()[:16]


@dataclasses.dataclass(eq=False)
class ReaderConfig(tfds.core.BuilderConfig):
  splits: Optional[Dict[str, Any]] = None  # the rows read (never written by TFDS)


class SeedsweepReader(tfds_base.RawTextBuilder):
  """A user's reader function (data/user_code.py); one config per content hash."""
  name = 'seedsweep_reader'
  HAS_TAGS = True
  READS_ROOT = False

  def read(self, root):
    """The reader's checked splits, kept in the builder config (``root`` is not read)."""
    del root
    return self.builder_config.splits


def builder_class(ref: str):
  """The object ``ref`` names when it is a builder class, else None (a reader)."""
  found = python_files.load_object(ref, FIELD)
  if isinstance(found, type):
    if not issubclass(found, tfds_base.RawTextBuilder):
      raise UserError(f'{FIELD}={ref!r} is the class {found.__name__}; expected a '
                      'subclass of seedsweep.inputs.tfds_base.RawTextBuilder or a reader '
                      'function (data/user_code.py)')
    return found
  if not callable(found):
    raise UserError(f'{FIELD}={ref!r} is {type(found).__name__}; expected a reader '
                    'function or a RawTextBuilder subclass (data/user_code.py)')
  return None

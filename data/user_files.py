"""Your own data: a builder over TSV or JSONL files named in the config.

``config.data.name = 'files'`` with ``config.data.files.train`` (required),
``.dev`` and ``.test`` (optional) paths. The format follows the extension:

* ``.tsv`` / ``.txt``: one example per line, ``label<TAB>text`` or
  ``label<TAB>text<TAB>tags``;
* ``.jsonl`` / ``.json``: one JSON object per line, ``{"text": ..., "label": ...}``
  with an optional ``"tags"`` (a list, or a space-separated string).

``text`` is pre-tokenised (tokens separated by spaces); ``tags``, when present, has
one tag per token and must be given for every example of every file or for none.
Labels are any strings; the classes are the distinct labels of all files, sorted.
Empty lines are skipped. A malformed line is reported with its file and line number.
"""
import dataclasses
import json
import os
from typing import Dict, List, Optional

import tensorflow_datasets as tfds

from seedsweep.data import tfds_base
from seedsweep.errors import UserError

SPLITS = ('train', 'dev', 'test')
TSV_EXTENSIONS = ('.tsv', '.txt')
JSONL_EXTENSIONS = ('.jsonl', '.json')


def file_format(path: str) -> str:
  ext = os.path.splitext(path)[1].lower()
  if ext in TSV_EXTENSIONS:
    return 'tsv'
  if ext in JSONL_EXTENSIONS:
    return 'jsonl'
  raise UserError(f'{path}: unknown extension {ext!r}; expected one of '
                  f'{TSV_EXTENSIONS + JSONL_EXTENSIONS} (TSV or JSONL, data/user_files.py)')


def _example(text, label, tags, where: str) -> tfds_base.Example:
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
  return tfds_base.Example(' '.join(tokens), str(label),
                           ' '.join(tags) if tags is not None else None)


def read_file(path: str) -> List[tfds_base.Example]:
  """Examples of one TSV or JSONL file, in file order (tags None when absent)."""
  fmt = file_format(path)
  if not os.path.isfile(path):
    raise UserError(f'{path}: file not found; expected a {fmt.upper()} file of '
                    'examples (config.data.files)')
  examples = []
  with open(path, encoding='utf-8') as f:
    for number, line in enumerate(f, 1):
      where = f'{path}:{number}'
      line = line.rstrip('\n').rstrip('\r')
      if not line.strip():
        continue
      if fmt == 'tsv':
        fields = line.split('\t')
        if len(fields) not in (2, 3):
          raise UserError(f'{where}: {len(fields)} tab-separated fields; expected '
                          'label<TAB>text or label<TAB>text<TAB>tags')
        examples.append(_example(fields[1], fields[0],
                                 fields[2] if len(fields) == 3 else None, where))
      else:
        try:
          obj = json.loads(line)
        except json.JSONDecodeError as e:
          raise UserError(f'{where}: not valid JSON ({e.msg}); expected one object '
                          'per line') from None
        if not isinstance(obj, dict) or 'text' not in obj or 'label' not in obj:
          raise UserError(f'{where}: expected an object with "text" and "label" '
                          '(and optionally "tags")')
        examples.append(_example(obj['text'], obj['label'], obj.get('tags'), where))
  if not examples:
    raise UserError(f'{path}: no examples; expected one example per line')
  return examples


@dataclasses.dataclass(eq=False)
class FilesConfig(tfds.core.BuilderConfig):
  paths: Optional[Dict[str, str]] = None  # split -> file


class SeedsweepFiles(tfds_base.RawTextBuilder):
  """A user's own TSV/JSONL files (data/user_files.py); one config per set of files,
  named by their content hash."""
  name = 'seedsweep_files'
  HAS_TAGS = True
  READS_ROOT = False

  def read(self, root):
    del root  # the files are named by the config
    out = {split: read_file(path)
           for split, path in self.builder_config.paths.items()}
    with_tags = {(e.tags is not None) for rows in out.values() for e in rows}
    if len(with_tags) > 1:
      raise UserError(f'{sorted(self.builder_config.paths.values())}: some examples '
                      'have tags and others do not; give tags for all or none')
    return {split: [e._replace(tags=e.tags or '') for e in rows]
            for split, rows in out.items()}

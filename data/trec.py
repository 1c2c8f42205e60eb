"""TREC question classification (Li & Roth 2002): reader for the original label files.

Reads ``<root>/train_5500.label`` (5452 questions) and ``<root>/TREC_10.label`` (500
test questions) from https://cogcomp.seas.upenn.edu/Data/QA/QC/. One question per
line: ``COARSE:fine tokens ...``, e.g. ``NUM:dist How far is it from Denver to Aspen ?``.
The files are latin-1 (train line 66 has a single 0xF0 byte, not UTF-8).

Pure Python: :func:`read_split` gives ``(text, label)`` examples with the coarse (6
classes) or fine (``COARSE:fine``, 50 classes in train) label string.
"""
import os
import re
from typing import List, Tuple

import tensorflow_datasets as tfds

from seedsweep.data.spec import DatasetSpec
from seedsweep.errors import UserError
from seedsweep.inputs import raw as raw_lib
from seedsweep.inputs import tfds_base

FILES = {'train': 'train_5500.label', 'test': 'TREC_10.label'}
SPLITS = tuple(FILES)
LABELS_COARSE = ('ABBR', 'DESC', 'ENTY', 'HUM', 'LOC', 'NUM')
ENCODING = 'latin-1'
SOURCE = ('the TREC question classification file {name} of Li & Roth '
          '(https://cogcomp.seas.upenn.edu/Data/QA/QC/)')

_LABEL_RE = re.compile(r'([^: ]+):([^: ]+)')


def split_path(root: str, split: str) -> str:
  """``<root>/train_5500.label`` for 'train', ``<root>/TREC_10.label`` for 'test'."""
  if split not in FILES:
    raise ValueError(f'TREC split {split!r}; expected one of {SPLITS}')
  return os.path.join(root, FILES[split])


def parse_line(line: str, *, path: str = '<string>',
               line_number: int = 0) -> Tuple[str, str, str]:
  """``'NUM:dist How far ... ?'`` -> ``(question, 'NUM', 'dist')``.

  The question is the rest of the line after the label and one ASCII space,
  unchanged (original case and tokens). Raises UserError naming ``path`` and
  ``line_number`` when the first field is not ``COARSE:fine`` with a known coarse
  class, or the question is empty.
  """
  line = line.rstrip('\n').rstrip('\r')
  label, _, question = line.partition(' ')
  m = _LABEL_RE.fullmatch(label)
  if m is None:
    raise UserError(f'{path}:{line_number}: first field {label!r} is not a label; '
                    f'expected "COARSE:fine question ..." (e.g. "NUM:dist How far ...")')
  if m.group(1) not in LABELS_COARSE:
    raise UserError(f'{path}:{line_number}: unknown coarse class {m.group(1)!r}; '
                    f'expected one of {LABELS_COARSE}')
  if not question.strip(' '):
    raise UserError(f'{path}:{line_number}: empty question after label {label!r}; '
                    'expected "COARSE:fine question ..."')
  return question, m.group(1), m.group(2)


def _read(root: str, split: str) -> List[Tuple[str, str, str]]:
  """All lines of a split file parsed: (question, coarse, fine) in file order."""
  path = split_path(root, split)
  if not os.path.isfile(path):
    raise UserError(f'{path} not found; expected '
                    f'{SOURCE.format(name=FILES[split])} in {root}')
  with open(path, encoding=ENCODING, newline='\n') as f:
    return [parse_line(line, path=path, line_number=n) for n, line in enumerate(f, 1)]


def read_split(root: str, split: str, *, fine: bool) -> List[Tuple[str, str]]:
  """Examples ``(question, label)`` of 'train' or 'test' in file order.

  Args:
    root: folder holding ``train_5500.label`` and ``TREC_10.label``.
    split: 'train' or 'test'.
    fine: False: the coarse label (one of :data:`LABELS_COARSE`). True: the whole
      ``'COARSE:fine'`` string, e.g. ``'LOC:city'`` (fine names repeat across coarse
      classes, e.g. ``'HUM:desc'`` vs ``'DESC:desc'``, so the prefix is kept).

  Returns:
    A list of (question str, label str) pairs; questions are space-separated tokens
    in their original case, decoded as latin-1.
  """
  return [(q, f'{c}:{f}' if fine else c) for q, c, f in _read(root, split)]


def fine_labels(root: str) -> Tuple[str, ...]:
  """The sorted ``'COARSE:fine'`` labels of the training file (50 in the release)."""
  return tuple(sorted({label for _, label in read_split(root, 'train', fine=True)}))


# --- TFDS builder -------------------------------------------------------------------

RAW_FILES = tuple(f'trec/{name}' for name in FILES.values())
_URL = 'https://cogcomp.seas.upenn.edu/Data/QA/QC/'
DOWNLOADS = {rel: raw_lib.Download(_URL + rel[len('trec/'):]) for rel in RAW_FILES}
# Each raw file, relative to the data root, and the sha256 it must have (the offline
# copy's SHA256SUMS; data/raw_files.py).
SHA256 = {
    'trec/TREC_10.label':
        '033f22c028c2bbba9ca682f68ffe204dc1aa6e1cf35dd6207f2d4ca67f0d0e8e',
    'trec/train_5500.label':
        '9e4c8bdcaffb96ed61041bd64b564183d52793a8e91d84fc3a8646885f466ec3',
}


class SeedsweepTrec(tfds_base.RawTextBuilder):
  """TREC question classification: configs ``coarse`` (6 classes) and ``fine`` (50,
  ``COARSE:fine``); train 5452, test 500 questions, original case."""
  name = 'seedsweep_trec'
  HOMEPAGE = 'https://cogcomp.seas.upenn.edu/Data/QA/QC/'
  BUILDER_CONFIGS = [tfds.core.BuilderConfig(name=n, description=n)
                     for n in ('coarse', 'fine')]

  def read(self, root):
    """The train and test questions under ``root/trec``, with the config's coarse or fine
    labels."""
    fine = self.builder_config.name == 'fine'
    return {split: [tfds_base.Example(q, label) for q, label in
                    read_split(os.path.join(root, 'trec'), split, fine=fine)]
            for split in SPLITS}


# The registry's names of this module (data/spec.py): coarse labels in their order.
DATASETS = {
    'trec/coarse': DatasetSpec(SeedsweepTrec, 'coarse', RAW_FILES, DOWNLOADS, LABELS_COARSE),
    'trec/fine': DatasetSpec(SeedsweepTrec, 'fine', RAW_FILES, DOWNLOADS),
}

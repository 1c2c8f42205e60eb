"""MR, movie-review sentence polarity v1.0 (Pang & Lee 2005): raw-file reader.

Files under ``root``: ``rt-polarity.neg`` and ``rt-polarity.pos``, 5331 snippets each,
one lower-cased, tokenised snippet per line, Windows-1252 encoded (not UTF-8). There is
no train/test split; papers use 10-fold cross-validation (:mod:`seedsweep.inputs.folds`).

Examples are read in a fixed order: all of ``rt-polarity.neg`` (label 0, 'negative'),
then all of ``rt-polarity.pos`` (label 1, 'positive'), each in file order; the index of
an example in :func:`read_all` is its position in that order.
"""
import os
from typing import List, Tuple

from seedsweep.data.spec import DatasetSpec
from seedsweep.errors import UserError
from seedsweep.inputs import raw as raw_lib
from seedsweep.inputs import tfds_base

LABEL_NAMES = ('negative', 'positive')
FILES = ('rt-polarity.neg', 'rt-polarity.pos')  # in label order
NUM_PER_FILE = 5331


# Where cp1252 differs from latin-1: its characters for the bytes 0x80-0x9f, but for
# the five it leaves undefined, which stay latin-1 (a str.translate table).
_UNDEFINED = (0x81, 0x8d, 0x8f, 0x90, 0x9d)
_CP1252 = {b: bytes([b]).decode('cp1252') for b in range(0x80, 0xa0)
           if b not in _UNDEFINED}


def decode_cp1252(data: bytes) -> str:
  """Decodes cp1252; the five bytes it leaves undefined decode as latin-1 (never fails).
  """
  return data.decode('latin-1').translate(_CP1252)


def read_lines(path: str) -> List[str]:
  """Lines of a cp1252 file, ASCII spaces and line ends stripped from both ends.

  Lines are split on ``\\n`` bytes only (0x85 is an ellipsis in cp1252, not a line
  break). Raises UserError for a missing file or an empty line.
  """
  if not os.path.isfile(path):
    raise UserError(f'{path}: file not found; expected the raw dataset file there '
                    '(check the data root)')
  with open(path, 'rb') as f:
    data = f.read()
  raw = data.split(b'\n')
  if raw and not raw[-1]:
    raw.pop()  # the final line's newline
  lines = []
  for number, line in enumerate(raw, 1):
    text = decode_cp1252(line).strip(' \r')
    if not text:
      raise UserError(f'{path}:{number}: empty line; expected one tokenised sentence '
                      'per line')
    lines.append(text)
  return lines


def read_all(root: str) -> List[Tuple[str, int]]:
  """All 10662 ``(text, label)`` pairs: negatives then positives, in file order."""
  examples = []
  for label, name in enumerate(FILES):
    examples += [(text, label) for text in read_lines(os.path.join(root, name))]
  return examples


# --- TFDS builder -------------------------------------------------------------------

RAW_FILES = tuple(f'mr/{name}' for name in FILES)
_TAR = 'https://www.cs.cornell.edu/people/pabo/movie-review-data/rt-polaritydata.tar.gz'
DOWNLOADS = {rel: raw_lib.Download(_TAR, 'rt-polaritydata/' + rel[len('mr/'):])
             for rel in RAW_FILES}
# Each raw file, relative to the data root, and the sha256 it must have (the offline
# copy's SHA256SUMS; data/raw_files.py).
SHA256 = {
    'mr/rt-polarity.neg':
        '4af43bf489620b498a0852c5a8c6a535155dec7985fdfea782b8f7756b957ccc',
    'mr/rt-polarity.pos':
        'd79ef14009bbf87cd6be21f91c3ea1a3cbcb73b34dfb4231aef7bbcd7677abc4',
}


class SeedsweepMr(tfds_base.RawTextBuilder):
  """MR sentence polarity v1.0: 10662 snippets in one split ``train`` (negatives then
  positives, file order); experiments cross-validate over it (inputs/folds.py)."""
  name = 'seedsweep_mr'
  HOMEPAGE = 'https://www.cs.cornell.edu/people/pabo/movie-review-data/'

  def read(self, root):
    """Every snippet under ``root/mr`` in one split ``train``."""
    return {'train': [tfds_base.Example(text, LABEL_NAMES[label])
                      for text, label in read_all(os.path.join(root, 'mr'))]}


# The registry's name of this module (data/spec.py): its folds are cross-validation's.
DATASETS = {'mr': DatasetSpec(SeedsweepMr, None, RAW_FILES, DOWNLOADS, LABEL_NAMES,
                              cross_validation=True)}

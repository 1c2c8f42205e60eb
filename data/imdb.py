"""IMDB Large Movie Review Dataset v1.0 (Maas et al. 2011): raw-archive reader.

``<root>/aclImdb_labeled.tar.gz`` holds
``aclImdb/{train,test}/{pos,neg}/<id>_<rating>.txt`` (one raw UTF-8 review per file,
with ``<br />`` line breaks); 12500 reviews per split and class. The archive is
streamed (nothing is extracted to disk); a split's reviews are returned sorted by
member name (so ``neg`` before ``pos``, ids in string order: 0, 1, 10, 100, ...).
Labels: 0 'negative' (``neg``, ratings 1-4), 1 'positive' (``pos``, ratings 7-10).

Text is kept in its original case (lower-casing is a config option of the pipeline);
:func:`tokenize` splits it into tokens, and :func:`token_text` joins them with spaces,
the form every dataset here uses.
"""
import os
import re
import tarfile
import zlib
from typing import List, Tuple

from seedsweep.data.spec import DatasetSpec
from seedsweep.errors import UserError
from seedsweep.inputs import raw as raw_lib
from seedsweep.inputs import tfds_base

LABEL_NAMES = ('negative', 'positive')
ARCHIVE = 'aclImdb_labeled.tar.gz'
SPLITS = ('train', 'test')
NUM_PER_SPLIT = 25000

_MEMBER_RE = re.compile(r'aclImdb/(train|test)/(neg|pos)/(\d+)_(\d+)\.txt')
_BREAK_RE = re.compile(r'<br\s*/?>', re.IGNORECASE)

# Tokens, tried left to right at each position (whitespace separates, is dropped):
#   (?:[^\W\d_]\.){2,}        letter-dot abbreviations: U.S.  e.g.
#   \d+(?:[.,]\d+)+           numbers with separators: 7.5  1,000
#   \w+(?:[-'’]\w+)*          words, with inner hyphens/apostrophes: don't  well-made
#   [^\w\s]                   any other character alone: . , ! ? ( " ...
_TOKEN_RE = re.compile(r"(?:[^\W\d_]\.){2,}|\d+(?:[.,]\d+)+|\w+(?:[-'’]\w+)*|[^\w\s]")


def archive_path(root: str) -> str:
  """The labelled archive's path under ``root`` (the data root's ``imdb/`` folder)."""
  return os.path.join(root, ARCHIVE)


def clean(text: str) -> str:
  """Replaces each ``<br />`` tag (any case, ``<br>``, ``<br/>``) by a space."""
  return _BREAK_RE.sub(' ', text)


def tokenize(text: str) -> List[str]:
  """Tokens of a review: ``_TOKEN_RE`` matches, case kept.

  ``<br />`` tags are removed first, and U+0085 (a cp1252 ellipsis mis-decoded as
  latin-1 in about 700 reviews) becomes U+2026 '…', a punctuation token.
  """
  return _TOKEN_RE.findall(clean(text).replace('\x85', '\u2026'))


def token_text(text: str) -> str:
  """``tokenize(text)`` joined by single spaces: the stored text of an example."""
  return ' '.join(tokenize(text))


def parse_member(name: str) -> Tuple[str, int, int, int]:
  """``'aclImdb/train/pos/12_9.txt'`` -> ``('train', label 1, id 12, rating 9)``.

  Raises ValueError for a name that is not a labelled review.
  """
  m = _MEMBER_RE.fullmatch(name)
  if not m:
    raise ValueError(f'{name!r} is not aclImdb/<split>/<neg|pos>/<id>_<rating>.txt')
  return m[1], int(m[2] == 'pos'), int(m[3]), int(m[4])


def read_splits_with_ratings(root: str, splits=SPLITS) -> dict:
  """``{split: [(text, label, rating)]}``, each sorted by member name, in one pass
  over the archive.

  Text is decoded UTF-8 with ``<br />`` tags replaced by spaces (see :func:`clean`).
  """
  bad = [s for s in splits if s not in SPLITS]
  if bad:
    raise UserError(f'IMDB split {bad[0]!r} is unknown; expected one of {SPLITS} '
                    '(data/imdb.py)')
  path = archive_path(root)
  if not os.path.isfile(path):
    raise UserError(f'{path}: file not found; expected the IMDB archive there '
                    '(check the data root)')
  found = {s: [] for s in splits}
  try:
    with tarfile.open(path, 'r:gz') as tar:
      for member in tar:
        m = _MEMBER_RE.fullmatch(member.name)
        if not m or m[1] not in found or not member.isfile():
          continue
        data = tar.extractfile(member).read()
        try:
          text = data.decode('utf-8')
        except UnicodeDecodeError as e:
          raise UserError(
              f'{path}: member {member.name} is not valid UTF-8 ({e.reason} at byte '
              f'{e.start}); expected UTF-8 text') from None
        _, label, _, rating = parse_member(member.name)
        found[m[1]].append((member.name, clean(text), label, rating))
  except (tarfile.TarError, EOFError, OSError, zlib.error) as e:
    raise UserError(f'{path}: cannot be read as a .tar.gz archive ({e}); expected '
                    'aclImdb_labeled.tar.gz as described in the data README') from None
  for split, rows in found.items():
    if not rows:
      raise UserError(f'{path}: no aclImdb/{split}/{{neg,pos}}/<id>_<rating>.txt '
                      'members; expected the labelled IMDB reviews')
    rows.sort(key=lambda r: r[0])
  return {s: [(text, label, rating) for _, text, label, rating in rows]
          for s, rows in found.items()}


def read_split_with_ratings(root: str, split: str) -> List[Tuple[str, int, int]]:
  """``(text, label, rating)`` of every review of ``split``, sorted by member name."""
  return read_splits_with_ratings(root, (split,))[split]


def read_split(root: str, split: str) -> List[Tuple[str, int]]:
  """``(text, label)`` of every review of ``split`` (``'train'`` or ``'test'``)."""
  return [(text, label) for text, label, _ in read_split_with_ratings(root, split)]


# --- TFDS builder -------------------------------------------------------------------

RAW_FILES = (f'imdb/{ARCHIVE}',)
# The original archive also holds train/unsup and *.feat files, which are skipped.
DOWNLOADS = {RAW_FILES[0]: raw_lib.Download(
    'https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz')}
# Each raw file, relative to the data root, and the sha256 it must have (the offline
# copy's SHA256SUMS; data/raw_files.py).
SHA256 = {
    'imdb/aclImdb_labeled.tar.gz':
        '303c3113354d16f21cbd94d7392f82c924ff8af86e67f292bd3a56cf6cadd37f',
}


class SeedsweepImdb(tfds_base.RawTextBuilder):
  """IMDB Large Movie Review Dataset v1.0, labelled part: 25000 train / 25000 test
  reviews, ``<br />`` removed, tokenised by :func:`tokenize` (case kept)."""
  name = 'seedsweep_imdb'
  HOMEPAGE = 'https://ai.stanford.edu/~amaas/data/sentiment/'

  def read(self, root):
    """The train and test reviews of the archive under ``root/imdb``, tokenised."""
    splits = read_splits_with_ratings(os.path.join(root, 'imdb'))
    return {split: [tfds_base.Example(token_text(text), LABEL_NAMES[label])
                    for text, label, _ in rows] for split, rows in splits.items()}


# The registry's name of this module (data/spec.py).
DATASETS = {'imdb': DatasetSpec(SeedsweepImdb, None, RAW_FILES, DOWNLOADS, LABEL_NAMES)}

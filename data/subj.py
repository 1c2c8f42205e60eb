"""Subj, subjectivity dataset v1.0 (Pang & Lee 2004): raw-file reader.

Files under ``root``: ``plot.tok.gt9.5000`` (5000 objective sentences from IMDb plot
summaries, ASCII) and ``quote.tok.gt9.5000`` (5000 subjective Rotten Tomatoes snippets,
cp1252), one lower-cased, tokenised sentence per line. No split: papers use 10-fold
cross-validation (:mod:`seedsweep.inputs.folds`).

Labels: 0 'objective' (plot), 1 'subjective' (quote). Examples are read in a fixed
order: all of ``plot.tok.gt9.5000`` then all of ``quote.tok.gt9.5000``, each in file
order; the index of an example in :func:`read_all` is its position in that order.
"""
import os
from typing import List, Tuple

from seedsweep.data.mr import read_lines
from seedsweep.data.spec import DatasetSpec
from seedsweep.inputs import raw as raw_lib
from seedsweep.inputs import tfds_base

LABEL_NAMES = ('objective', 'subjective')
FILES = ('plot.tok.gt9.5000', 'quote.tok.gt9.5000')  # in label order
NUM_PER_FILE = 5000


def read_all(root: str) -> List[Tuple[str, int]]:
  """All 10000 ``(text, label)`` pairs: objective then subjective, in file order.

  Text is decoded as cp1252 (latin-1 for bytes cp1252 leaves undefined), with ASCII
  spaces and the newline stripped from both ends.
  """
  examples = []
  for label, name in enumerate(FILES):
    examples += [(text, label) for text in read_lines(os.path.join(root, name))]
  return examples


# --- TFDS builder -------------------------------------------------------------------

RAW_FILES = tuple(f'subj/{name}' for name in FILES)
_TAR = 'https://www.cs.cornell.edu/people/pabo/movie-review-data/rotten_imdb.tar.gz'
DOWNLOADS = {rel: raw_lib.Download(_TAR, rel[len('subj/'):]) for rel in RAW_FILES}
# Each raw file, relative to the data root, and the sha256 it must have (the offline
# copy's SHA256SUMS; data/raw_files.py).
SHA256 = {
    'subj/plot.tok.gt9.5000':
        '5ddc9b44dc60d64d651347fcd7bdd489b0c70661e3f768215c16eea36f51204a',
    'subj/quote.tok.gt9.5000':
        '73a2dcf8dc3cbcc7f068a70ef9f021c86b2a8e4dac81566b7fd015b3e938f2c5',
}


class SeedsweepSubj(tfds_base.RawTextBuilder):
  """Subjectivity v1.0: 10000 sentences in one split ``train`` (objective then
  subjective, file order); experiments cross-validate over it (inputs/folds.py)."""
  name = 'seedsweep_subj'
  HOMEPAGE = 'https://www.cs.cornell.edu/people/pabo/movie-review-data/'

  def read(self, root):
    """Every sentence under ``root/subj`` in one split ``train``."""
    return {'train': [tfds_base.Example(text, LABEL_NAMES[label])
                      for text, label in read_all(os.path.join(root, 'subj'))]}


# The registry's name of this module (data/spec.py): its folds are cross-validation's.
DATASETS = {'subj': DatasetSpec(SeedsweepSubj, None, RAW_FILES, DOWNLOADS, LABEL_NAMES,
                                cross_validation=True)}

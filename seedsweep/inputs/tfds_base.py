"""The TFDS builder shared by every raw-file dataset.

A dataset module (``data/sst.py``, ``data/trec.py``, ...) reads its original files in
pure Python and subclasses :class:`RawTextBuilder` with a ``read(root)`` that returns
``{split: [Example]}``. The builder stores, per example, ``text`` (space-separated
tokens), ``label`` (the class name) and, for tagging datasets, ``tags`` (one
space-separated tag per token). Shuffling is disabled: records are written, and read
back, in the documented reading order of the raw files. The raw
files are read from ``dl_manager.manual_dir``: the data root with the layout of
``data/raw_files.py``, which ``seedsweep.data.prepare`` resolves (``$SEEDSWEEP_DATA``,
or the files downloaded from their original addresses).

TFDS writes the array_record files into a temporary folder and renames it only when
every split was written, so a failed preparation leaves nothing behind that
``is_prepared()`` would accept.
"""
import os
from typing import Dict, List, NamedTuple

import tensorflow_datasets as tfds


class Example(NamedTuple):
  text: str   # tokens joined by single ASCII spaces
  label: str  # class name
  tags: str = ''  # one tag per token, space-separated ('' for datasets without tags)


class LocalDatasetInfo(tfds.core.DatasetInfo):
  """The info of a dataset built here only: TFDS never looks for it on its GCS
  bucket (a network query, and an empty temporary folder left in /tmp, per builder
  made before the dataset is prepared)."""

  def initialize_from_bucket(self) -> None:
    """Does nothing: the dataset has no copy on TFDS's bucket."""
    pass


class RawTextBuilder(tfds.core.GeneratorBasedBuilder):
  """Base class: subclasses set ``HAS_TAGS``, ``HOMEPAGE`` and implement ``read``."""

  VERSION = tfds.core.Version('1.0.0')
  RELEASE_NOTES = {'1.0.0': 'First release.'}
  HAS_TAGS = False
  READS_ROOT = True  # False: read() needs no data root (generated or named files)
  HOMEPAGE = ''
  MANUAL_DOWNLOAD_INSTRUCTIONS = (
      'Point $SEEDSWEEP_DATA (or --data_dir) at a folder with the layout documented in '
      'data/raw_files.py, e.g. the offline copy ../shared/data.')

  def _info(self):
    features = {
        'text': tfds.features.Text(),
        'label': tfds.features.Text(),
    }
    if self.HAS_TAGS:
      features['tags'] = tfds.features.Text()
    return LocalDatasetInfo(
        builder=self, description=(type(self).__doc__ or '').strip(),
        features=tfds.features.FeaturesDict(features), homepage=self.HOMEPAGE,
        disable_shuffling=True)  # records keep the raw files' order

  def read(self, root: str) -> Dict[str, List[Example]]:
    """The dataset's examples, read from its raw files; subclasses implement it.

    Args:
      root: The data root (the layout of ``data/raw_files.py``); ``''`` when
        ``READS_ROOT`` is False.

    Returns:
      ``{split: [Example]}``, each split's examples in the raw files' order."""
    raise NotImplementedError

  def _split_generators(self, dl_manager):
    examples = self.read(os.fspath(dl_manager.manual_dir) if self.READS_ROOT else '')
    return {split: self._generate_examples(rows) for split, rows in examples.items()}

  def _generate_examples(self, rows):
    for i, example in enumerate(rows):
      record = {'text': example.text, 'label': example.label}
      if self.HAS_TAGS:
        record['tags'] = example.tags
      yield i, record

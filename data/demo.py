"""The embedded demo dataset as a TFDS builder (``seedsweep_demo``).

The sentences come from :mod:`data.demo_grammar`; nothing is downloaded. Built once into
array_record files and read back through ``tfds.data_source`` like every dataset here.
"""
from typing import Dict

import tensorflow_datasets as tfds

from seedsweep.data import demo_grammar
from seedsweep.data.spec import DatasetSpec
from seedsweep.inputs import pool as pool_lib
from seedsweep.inputs import tfds_base


class SeedsweepDemo(tfds_base.RawTextBuilder):
  """Synthetic sentiment sentences whose labels need word order (see demo_grammar)."""
  name = 'seedsweep_demo'
  READS_ROOT = False
  VERSION = tfds.core.Version('2.0.0')
  RELEASE_NOTES = {'1.0.0': 'First release.',
                   '2.0.0': 'Labels stored as class names, in file order, no index.'}

  def read(self, root):
    """The grammar's generated train, dev and test sentences (``root`` is not read)."""
    del root  # Nothing to read: the grammar generates the sentences.
    return {split: [tfds_base.Example(text, demo_grammar.LABEL_NAMES[label])
                    for text, label in demo_grammar.generate_split(split)]
            for split in demo_grammar.SPLIT_SIZES}


def expected_checksums() -> Dict[str, str]:
  """split -> the sha256 of the grammar's examples (inputs/pool.py ``checksum``)."""
  return {split: pool_lib.checksum(*zip(*demo_grammar.generate_split(split)))
          for split in demo_grammar.SPLIT_SIZES}


# The registry's name of this module (data/spec.py): nothing to read, the sentences
# checked as generated.
DATASETS = {'demo': DatasetSpec(SeedsweepDemo, label_names=demo_grammar.LABEL_NAMES,
                                expected_checksums=expected_checksums)}

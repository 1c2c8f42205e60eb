"""The embedded demo dataset as a TFDS builder (``seedsweep_demo``).

The sentences come from :mod:`data.demo_grammar`; nothing is downloaded. Built once into
array_record files and read back through ``tfds.data_source`` like every dataset here.
"""
import tensorflow_datasets as tfds

from seedsweep.data.spec import DatasetSpec
from seedsweep.inputs import tfds_base

LABEL_NAMES = ('negative', 'positive')  # the grammar's labels 0 and 1
# split -> the sha256 of the grammar's examples (inputs/pool.py ``checksum``), checked
# against every prepared copy as a real dataset's raw files are against their SHA256;
# tests/test_demo_grammar.py checks that the grammar still generates exactly these.
SPLIT_SHA256 = {
    'train': 'f53b90b6f6bcf55ba205b4eafcd842efd7325febfb0ab0c2edbc5345f1ee9495',
    'dev': '81878b0fd3f53fdfd11377a04b4a4685cfa94c08ec30684b776d80a3739a6bbe',
    'test': '357acc76023e8eab7def23d88867dbe2d6d752c6c6024a74f91c3614ae796129',
}


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
    # Imported here: only preparing the dataset runs the grammar (a run reads the
    # prepared copy and checks it against SPLIT_SHA256).
    from seedsweep.data import demo_grammar  # pylint: disable=g-import-not-at-top
    return {split: [tfds_base.Example(text, LABEL_NAMES[label])
                    for text, label in demo_grammar.generate_split(split)]
            for split in SPLIT_SHA256}


# The registry's name of this module (data/spec.py): nothing to read, the prepared
# sentences checked against SPLIT_SHA256.
DATASETS = {'demo': DatasetSpec(SeedsweepDemo, label_names=LABEL_NAMES,
                                expected_checksums=SPLIT_SHA256)}

"""The embedded demo dataset as a TFDS builder (``seedsweep_demo``).

The sentences come from :mod:`data.demo_grammar`; nothing is downloaded. Built once into
array_record files and read back through ``tfds.data_source`` like every dataset here.
"""
import numpy as np
import tensorflow_datasets as tfds

from data import demo_grammar


class SeedsweepDemo(tfds.core.GeneratorBasedBuilder):
  """Synthetic sentiment sentences whose labels need word order (see demo_grammar)."""

  VERSION = tfds.core.Version('1.0.0')
  RELEASE_NOTES = {'1.0.0': 'First release.'}

  def _info(self):
    return tfds.core.DatasetInfo(
        builder=self,
        description=demo_grammar.__doc__,
        features=tfds.features.FeaturesDict({
            'text': tfds.features.Text(),
            'label': tfds.features.ClassLabel(names=demo_grammar.LABEL_NAMES),
            'index': tfds.features.Scalar(dtype=np.int32),
        }),
        supervised_keys=('text', 'label'),
    )

  def _split_generators(self, dl_manager):
    del dl_manager  # Nothing to download.
    return {split: self._generate_examples(split)
            for split in demo_grammar.SPLIT_SIZES}

  def _generate_examples(self, split):
    for i, (text, label) in enumerate(demo_grammar.generate_split(split)):
      yield i, {'text': text, 'label': label, 'index': i}

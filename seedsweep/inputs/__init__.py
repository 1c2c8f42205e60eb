"""The input machinery: from a dataset's raw files to arrays on the device.

The readers (``data/``, :mod:`seedsweep.data`: one module per dataset and the
registry) say what a dataset is; this package does the rest, for every dataset alike:

* :mod:`~seedsweep.inputs.raw`: the raw-data root (``$SEEDSWEEP_DATA`` or downloads),
  the files' sha256 checked against their record, fetching them;
* :mod:`~seedsweep.inputs.tfds_base`: the TFDS builder every reader subclasses
  (``RawTextBuilder``: array_record files, built once);
* :mod:`~seedsweep.inputs.cache`: where prepared datasets live (``$SEEDSWEEP_CACHE``),
  preparing one under a file lock, and the integrity record that every later open
  checks;
* :mod:`~seedsweep.inputs.pool`: a prepared dataset's records, every split pooled;
* :mod:`~seedsweep.inputs.encoded`: views (splits, cross-validation folds from
  :mod:`~seedsweep.inputs.folds`, held-out dev), each with the vocabulary of its
  training rows (:mod:`~seedsweep.inputs.vocabulary`) and pretrained vectors
  (:mod:`~seedsweep.inputs.vectors`, :mod:`~seedsweep.inputs.embeddings`), as flat
  int32 arrays;
* :mod:`~seedsweep.inputs.pipeline`: the device-resident pipeline the engine's steps
  gather their batches from.

It imports only the bottom layers (:mod:`seedsweep.errors`, :mod:`seedsweep.files`,
:mod:`seedsweep.config`), never a reader (tests/test_layers.py). This file imports
nothing, so that the engine's ``from seedsweep.inputs import pipeline`` loads no TFDS.
"""

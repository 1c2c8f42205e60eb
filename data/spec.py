"""What a dataset module declares, so that one file adds a dataset (docs/design.md,
"How to add a dataset").

A module of ``data/`` that defines ``DATASETS`` (``{config.data.name:
DatasetSpec}``) adds those names to :data:`seedsweep.data.REGISTRY`; one that reads
raw files defines ``SHA256`` too (each raw file, relative to the data root, -> its
recorded sha256: :func:`seedsweep.data.raw_files.recorded`). Both are found by
scanning the package (:mod:`seedsweep.declared`).
"""
import dataclasses
from typing import Mapping, Optional, Tuple, Type

import tensorflow_datasets as tfds

from seedsweep.inputs import raw


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
  builder: Type[tfds.core.GeneratorBasedBuilder]
  config: Optional[str] = None             # the builder config
  raw_files: Tuple[str, ...] = ()          # relative to the data root; () = generated
  downloads: Mapping[str, raw.Download] = dataclasses.field(default_factory=dict)
  label_names: Optional[Tuple[str, ...]] = None  # class order; None: sorted names
  cross_validation: bool = False           # one pooled split, k-fold CV
  # split -> sha256 the decoded examples must have (see pool.checksum), recorded as
  # constants for a generated dataset (data/demo.py); None: unchecked.
  expected_checksums: Optional[Mapping[str, str]] = None

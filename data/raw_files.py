"""The raw files of the registered datasets: their layout and recorded sha256.

One setting says where raw data lives, for every builder and command: the environment
variable ``SEEDSWEEP_DATA`` (``launch.py --data_dir`` and ``python -m seedsweep.data --data_dir``
set it). It names a folder with the layout of the project's offline copy, one folder
per dataset module, ``$SEEDSWEEP_DATA/<module>/...``: the keys of each dataset
module's ``SHA256`` (data/spec.py), e.g. ``trec/train_5500.label`` (data/trec.py),
``atis/slotgated/train/seq.in`` (data/atis.py), ``imdb/aclImdb_labeled.tar.gz``.

Unset, builders download the files from their original addresses (each reader's
``DOWNLOADS``) and assemble the same layout (:mod:`seedsweep.inputs.raw`).

Every raw file of that layout has a recorded sha256 (:func:`recorded`, the union of
the modules' ``SHA256``: the offline copy's ``SHA256SUMS``). Before a dataset is
prepared, its files are hashed and compared with the record; a mismatch is an error
unless ``config.data.verify_checksums`` is False. A new dataset records its raw files
in its own module.
"""
import functools
import sys
from typing import Dict

from seedsweep import declared


@functools.lru_cache(maxsize=None)
def recorded() -> Dict[str, str]:
  """sha256 of every raw file, relative to the data root (= ../shared/data/SHA256SUMS):
  every module of ``data/`` that declares ``SHA256``, found when first asked (the
  package is then whole)."""
  package = sys.modules[__name__.rpartition('.')[0]]
  return declared.merged(declared.modules_declaring(package, 'SHA256'), 'SHA256')

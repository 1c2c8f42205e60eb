"""Datasets, found by name: ``load_dataset(config.data)``.

The readers live here, one module per dataset (``sst.py``, ``trec.py``, ``mr.py``,
``subj.py``, ``imdb.py``, ``atis.py``, ``demo.py``; ``user_files.py`` and
``user_code.py`` for a user's files and code), with the sha256 of their raw files
(each module's ``SHA256``, ``raw_files.py`` the layout) and the registry
below; what every dataset goes through is
:mod:`seedsweep.inputs`: raw files (``$SEEDSWEEP_DATA`` or downloads, checked against
their record) -> TFDS builder (array_record, built once; :mod:`seedsweep.inputs.cache`)
-> pooled examples (:mod:`seedsweep.inputs.pool`) -> views (splits, folds, held-out
dev) with a vocabulary from each view's training rows -> flat int32 arrays
(:mod:`seedsweep.inputs.encoded`) -> the device-resident pipeline
(:mod:`seedsweep.inputs.pipeline`).

Names (``config.data.name``): see :data:`REGISTRY` and ``python -m seedsweep.data --list``.
To add a dataset: one module of ``data/`` with a reader, a
:class:`seedsweep.inputs.tfds_base.RawTextBuilder` subclass, ``DATASETS`` (its names'
:class:`DatasetSpec`) and ``SHA256`` (its raw files' record): :data:`REGISTRY` and the
record (``raw_files.recorded()``) are derived from every such module
(:mod:`seedsweep.declared`).
"""
import importlib
import os
import sys
from typing import Dict, List, Tuple

# From a checkout's root this folder is also the top-level package ``data`` (``python
# -m data``, ``python -m data.word2vec``, ``import data.sst``), whose second copy of
# each module would register every TFDS builder again ("already registered"). That
# name and its modules' are made this package's, seedsweep.data's, which run once
# (the rest of this file then runs on them, in a module object dropped after).
if __name__ != 'seedsweep.data':
  sys.modules[__name__] = importlib.import_module('seedsweep.data')
  for _name, _module in list(sys.modules.items()):
    if _name.startswith('seedsweep.data.'):
      sys.modules.setdefault(f'{__name__}.{_name[len("seedsweep.data."):]}', _module)

import tensorflow_datasets as tfds

from seedsweep import declared
from seedsweep import files
from seedsweep.config import checks as config_checks
from seedsweep.config import keys
from seedsweep.config import python_files
from seedsweep.data import raw_files
from seedsweep.data import user_code
from seedsweep.data import user_files
from seedsweep.data.spec import DatasetSpec
from seedsweep.errors import UserError
from seedsweep.inputs import cache
from seedsweep.inputs import encoded
from seedsweep.inputs import pool as pool_lib
from seedsweep.inputs import raw
from seedsweep.inputs import vocabulary as vocab_lib

# Every dataset module of this package (one declaring DATASETS), by module name; the
# registry is the union of their DATASETS.
MODULES = declared.modules_declaring(sys.modules[__name__], 'DATASETS')
REGISTRY: Dict[str, DatasetSpec] = declared.merged(MODULES, 'DATASETS')


def spec_of(name: str) -> DatasetSpec:
  """The spec of a registered name, or of a user's reader or builder by reference
  (``path/to/file.py:Name``: data/user_code.py)."""
  if python_files.is_reference(name):
    builder = user_code.builder_class(name)
    return DatasetSpec(builder or user_code.SeedsweepReader)
  if name not in REGISTRY:
    raise UserError(f'config.data.name={name!r} is not a registered dataset'
                    f'{keys.did_you_mean(name, REGISTRY)}; expected one of '
                    f'{sorted(REGISTRY)} (DATASETS of a module of data/)')
  return REGISTRY[name]


def _user_files(data_config) -> Dict[str, str]:
  files = data_config.files
  paths = {s: os.path.abspath(os.path.expanduser(files[s]))
           for s in pool_lib.SPLIT_ORDER if files[s]}
  if 'train' not in paths:
    raise UserError("config.data.name='files' needs config.data.files.train (a TSV or "
                    'JSONL file; optional .dev and .test), see docs/data.md, "Your own data"')
  return paths


def _user_code(name: str, spec: DatasetSpec, data_config):
  """``(builder config, data root, digests, cache key)`` of a user's reader (keyed
  by the rows it returns) or builder (keyed by its file and class)."""
  if spec.builder is user_code.SeedsweepReader:
    splits = user_code.read(name, data_config)
    key = 'reader_' + user_code.digest(splits)
    return user_code.ReaderConfig(name=key, splits=splits), None, {name: key}, key
  file_digest = python_files.reference_digest(name) or name
  digests = {name: file_digest}
  root = raw.root() if spec.builder.READS_ROOT else None
  key = f'builder_{raw.digest_of({**digests, "version": str(spec.builder.VERSION)})}'
  return None, root, digests, key


def prepare(name: str, data_config) -> Tuple[tfds.core.DatasetBuilder, Dict[str, str]]:
  """The prepared builder of dataset ``name`` and the sha256 of its raw files."""
  spec = spec_of(name)
  verify = bool(data_config.verify_checksums)
  config, root = spec.config, None
  if name == 'files':
    paths = _user_files(data_config)
    for split, path in paths.items():
      files.refuse_folder(path, f'config.data.files.{split}', 'a data file')
      user_files.file_format(path)
      if not os.path.isfile(path):
        raise UserError(f'{path}: file not found (config.data.files.{split})')
    digests = {path: raw.sha256_file(path) for path in paths.values()}
    columns = user_files.Columns.of(data_config.files)
    key = raw.digest_of({**digests, 'columns': columns.key()})
    config = user_files.FilesConfig(name=f'files_{key}', paths=paths, columns=columns)
  elif python_files.is_reference(name):
    config, root, digests, key = _user_code(name, spec, data_config)
  elif spec.raw_files:
    root = raw.root() or cache.download_root(spec.raw_files, spec.downloads)
    digests = raw.check_files(root, spec.raw_files, spec.downloads, verify,
                              raw_files.recorded())
    key = raw.digest_of(digests)
  else:
    digests, key = {}, 'generated'
  data_dir = os.path.join(cache.tfds_dir(data_config), key)
  try:
    return cache.prepared_builder(spec.builder, config, data_dir, root), digests
  except Exception as e:  # pylint: disable=broad-except
    at = (python_files.raised_in(name, e) if python_files.is_reference(name)
          and not isinstance(e, UserError) else None)
    if at is None:  # not raised in a user's builder: as it is
      raise
    raise UserError(f'{at}: the builder raised {type(e).__name__}: {e} '
                    f'({user_code.FIELD}={name!r})') from e


def _pool(name: str, spec: DatasetSpec,
          data_config) -> Tuple[pool_lib.Pool, Dict[str, str]]:
  """Dataset ``name``'s pooled examples, prepared first if need be, and the sha256 of
  its raw files."""
  builder, raw_checksums = prepare(name, data_config)
  return pool_lib.read_pool(name, builder, spec.label_names,
                            spec.expected_checksums), raw_checksums


def split_checksums(data_config) -> Dict[str, str]:
  """``{split: sha256 of its decoded examples}`` of ``data_config``'s dataset as its
  files hold them now, without encoding it: what a run's record compares
  (seedsweep.run.verify)."""
  name = data_config.name
  pool, _ = _pool(name, spec_of(name), data_config)
  return pool.checksums


def read_split(data_config, split: str) -> Tuple[List[str], List[str]]:
  """``(texts, label names)`` of one split of ``data_config``'s dataset, as its files
  hold them (before tokenisation and vocabulary): what ``seedsweep.predict`` takes."""
  name = data_config.name
  pool, _ = _pool(name, spec_of(name), data_config)
  return pool.split(name, split)


def load_dataset(data_config) -> encoded.EncodedDataset:
  """Prepares (once) and encodes the dataset named by ``data_config.name``."""
  name = data_config.name
  spec = spec_of(name)
  if data_config.folds and not spec.cross_validation:
    raise UserError(f'config.data.folds={tuple(data_config.folds)!r}, but dataset '
                    f'{name!r} is not cross-validated (only mr and subj are); set it '
                    'to ()')
  config_checks.one_of('data.oov', data_config.oov, vocab_lib.OOV_POLICIES)
  pool, raw_checksums = _pool(name, spec, data_config)
  return encoded.encode(name, pool, data_config, spec.cross_validation, raw_checksums)

"""Datasets, found by name: ``load_dataset(config.data)``.

Data flows one way: raw files (or the demo generator) -> TFDS builder (array_record)
-> ``tfds.data_source`` -> vocabulary and int32 arrays (:class:`EncodedDataset`) ->
device-resident pipeline (:mod:`data.pipeline`).

To add a dataset: write a ``tfds.core.GeneratorBasedBuilder`` whose examples carry
``text`` (space-separated tokens), ``label`` (ClassLabel) and ``index`` (position in the
original file), then add a :class:`DatasetSpec` to ``REGISTRY``.
"""
import contextlib
import dataclasses
import hashlib
import os
import sys
from typing import Callable, Dict, Optional, Tuple, Type

import numpy as np
import tensorflow_datasets as tfds

from data import demo
from data import demo_grammar
from data import vocabulary as vocab_lib
from training.errors import UserError


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
  builder: Type[tfds.core.GeneratorBasedBuilder]
  splits: Tuple[str, ...]  # the TFDS splits, among 'train', 'dev', 'test'
  # split -> sha256 the decoded examples must have (see checksum()); None: unchecked.
  expected_checksums: Optional[Callable[[], Dict[str, str]]] = None


def _demo_checksums() -> Dict[str, str]:
  return {split: checksum(*zip(*demo_grammar.generate_split(split)))
          for split in demo_grammar.SPLIT_SIZES}


REGISTRY: Dict[str, DatasetSpec] = {
    'demo': DatasetSpec(demo.SeedsweepDemo, ('train', 'dev', 'test'), _demo_checksums),
}


@dataclasses.dataclass(frozen=True)
class Split:
  """One encoded split: ``tokens`` int32 [n, max_len], ``lengths`` and ``labels`` [n]."""
  tokens: np.ndarray
  lengths: np.ndarray
  labels: np.ndarray

  def __len__(self):
    return len(self.labels)


@dataclasses.dataclass(frozen=True)
class EncodedDataset:
  name: str
  splits: Dict[str, Split]
  vocab: vocab_lib.Vocabulary
  label_names: Tuple[str, ...]
  checksums: Dict[str, str]  # split -> sha256 of its decoded (text, label) examples

  @property
  def num_classes(self) -> int:
    return len(self.label_names)


def tfds_dir(data_config) -> str:
  """Where built array_record files live: config, $SEEDSWEEP_TFDS_DIR, or a cache."""
  return (data_config.get('tfds_dir') or os.environ.get('SEEDSWEEP_TFDS_DIR')
          or os.path.expanduser('~/.cache/seedsweep/tfds'))


def _read_split(source) -> Tuple[list, np.ndarray]:
  """All examples of a data source in original-file order: (texts, labels)."""
  records = sorted((source[i] for i in range(len(source))), key=lambda r: r['index'])
  texts = [r['text'].decode('utf-8') for r in records]
  labels = np.array([r['label'] for r in records], np.int32)
  return texts, labels


def checksum(texts, labels) -> str:
  """sha256 over the examples' ``label<TAB>text`` lines, in original-file order."""
  h = hashlib.sha256()
  for text, label in zip(texts, labels):
    h.update(f'{label}\t{text}\n'.encode('utf-8'))
  return h.hexdigest()


def _verify(spec: DatasetSpec, checksums: Dict[str, str], where: str) -> None:
  """Raises when prepared data differs from what its builder should produce."""
  if spec.expected_checksums is None:
    return
  expected = spec.expected_checksums()
  bad = [s for s in spec.splits if checksums.get(s) != expected.get(s)]
  if bad:
    raise UserError(
        f'the prepared data in {where} does not match the recorded checksums for '
        f'split(s) {bad} (found {[checksums[s][:12] for s in bad]}, expected '
        f'{[expected.get(s, "?")[:12] for s in bad]}). It was built by another version '
        f'of the builder or was modified; delete {where} to rebuild it.')


def load_dataset(data_config) -> EncodedDataset:
  """Builds (once) and encodes the dataset named by ``data_config.name``."""
  name = data_config.name
  if name not in REGISTRY:
    raise UserError(f'config.data.name={name!r} is not a registered dataset; '
                     f'expected one of {sorted(REGISTRY)} (data/__init__.py)')
  spec = REGISTRY[name]
  builder = spec.builder(data_dir=tfds_dir(data_config), file_format='array_record')
  if not builder.is_prepared():
    tfds.disable_progress_bar()
    # TFDS prints its progress on stdout; keep stdout for results (describe --json).
    with contextlib.redirect_stdout(sys.stderr):
      builder.download_and_prepare(
          download_config=tfds.download.DownloadConfig(try_download_gcs=False))
  sources = builder.as_data_source()
  raw = {split: _read_split(sources[split]) for split in spec.splits}
  lowercase = data_config.get('lowercase', True)
  tokens = {split: [vocab_lib.tokenize(t, lowercase) for t in texts]
            for split, (texts, _) in raw.items()}
  vocab = vocab_lib.Vocabulary.build(tokens['train'], data_config.get('min_count', 1))
  splits = {}
  for split, (_, labels) in raw.items():
    ids, lengths = vocab.encode(tokens[split], data_config.get('oov', 'unk'))
    splits[split] = Split(ids, lengths, labels)
  label_names = tuple(builder.info.features['label'].names)
  checksums = {split: checksum(*raw[split]) for split in spec.splits}
  _verify(spec, checksums, builder.data_dir)
  return EncodedDataset(name, splits, vocab, label_names, checksums)

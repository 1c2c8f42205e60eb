"""A prepared dataset's examples, every split pooled, train first.

The records of each split are read through ``tfds.data_source`` in record order (the
raw files' documented reading order) and pooled: row ``i`` of a :class:`Pool` is one
example, its label a class id in the order of the dataset's class names. Each split's
decoded examples have a sha256 (:func:`checksum`) that results record, and that a
dataset with expected checksums (the demo) must match.
"""
import dataclasses
import hashlib
from typing import Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
from tensorflow_datasets.proto import tf_example_pb2

from seedsweep.errors import UserError

SPLIT_ORDER = ('train', 'dev', 'test')


def checksum(texts, labels) -> str:
  """sha256 over the examples' ``label<TAB>text`` lines, in original-file order."""
  h = hashlib.sha256()
  for text, label in zip(texts, labels):
    h.update(f'{label}\t{text}\n'.encode('utf-8'))
  return h.hexdigest()


def _read_source(source, keys) -> Dict[str, list]:
  """``{key: [str per record]}`` of a ``tfds.data_source`` split, in record order.

  The records are fetched in one batch from the source's array_record reader and
  parsed as the ``tf.train.Example`` protos TFDS writes (TFDS's own per-record feature
  decoding runs at ~10k records/s; this at ~200k/s).
  """
  records = source.data_source.__getitems__(list(range(len(source))))
  out = {k: [] for k in keys}
  for record in records:
    feature = tf_example_pb2.Example.FromString(record).features.feature
    for k in keys:
      out[k].append(feature[k].bytes_list.value[0].decode('utf-8'))
  return out


@dataclasses.dataclass
class Pool:
  """The decoded examples of every split, train first, before any vocabulary."""
  texts: list
  labels: np.ndarray        # int32 class ids
  tag_strings: list         # per example ('' without tags)
  positions: Dict[str, Tuple[int, int]]  # split -> (first row, count)
  checksums: Dict[str, str]
  label_names: Tuple[str, ...]

  def split(self, name: str, split: str):
    """``(texts, label names)`` of one split, as its files hold them."""
    if split not in self.positions:
      raise UserError(f'dataset {name!r} has no {split!r} split; it has '
                      f'{sorted(self.positions)}')
    first, count = self.positions[split]
    return (self.texts[first:first + count],
            [self.label_names[i] for i in self.labels[first:first + count]])


def read_pool(name: str, builder, label_names: Optional[Sequence[str]] = None,
              expected_checksums: Optional[Mapping[str, str]] = None) -> Pool:
  """Every split of the prepared ``builder`` of dataset ``name``, pooled.

  ``label_names``: the class order (None: the sorted class names found);
  ``expected_checksums``: split -> the sha256 its decoded examples must have.
  """
  has_tags = 'tags' in builder.info.features
  keys = ('text', 'label', 'tags') if has_tags else ('text', 'label')
  sources = builder.as_data_source()
  read = {s: _read_source(sources[s], keys) for s in SPLIT_ORDER if s in sources}
  label_names = label_names or tuple(sorted({
      label for columns in read.values() for label in columns['label']}))
  index = {n: i for i, n in enumerate(label_names)}
  pool = Pool([], np.zeros(0, np.int32), [], {}, {}, tuple(label_names))
  labels = []
  for split, columns in read.items():
    unknown = sorted(set(columns['label']) - set(index))
    if unknown:
      raise UserError(f'dataset {name!r} split {split}: labels {unknown[:5]} are not '
                      f'among the classes {label_names}')
    ids = [index[label] for label in columns['label']]
    pool.checksums[split] = checksum(columns['text'], ids)
    pool.positions[split] = (len(labels), len(ids))
    pool.texts += columns['text']
    pool.tag_strings += columns.get('tags') or [''] * len(ids)
    labels += ids
  pool.labels = np.asarray(labels, np.int32)
  if expected_checksums is not None:
    bad = [s for s in read if pool.checksums[s] != expected_checksums.get(s)]
    if bad:
      raise UserError(
          f'the prepared data in {builder.data_dir} does not match the recorded '
          f'checksums for split(s) {bad}; it was built by another version of the '
          f'builder or was modified: delete {builder.data_dir} to rebuild it.')
  return pool

"""Datasets, found by name: ``load_dataset(config.data)``.

Data flows one way: raw files (``$SEEDSWEEP_DATA`` or downloads, checked against the
recorded sha256, data/raw.py) -> TFDS builder (array_record, built once) ->
``tfds.data_source`` -> pooled examples -> views (splits, folds, held-out dev) with a
vocabulary from each view's training rows -> flat int32 arrays (data/encoded.py) ->
the device-resident pipeline (data/pipeline.py).

Names (``config.data.name``): see :data:`REGISTRY` and ``python -m data --list``.
To add a dataset: a reader and a :class:`data.tfds_base.RawTextBuilder` subclass in
its own module, its raw files in ``data/raw.py``, and a :class:`DatasetSpec` here.
"""
import contextlib
import dataclasses
import hashlib
import os
import sys
from typing import Callable, Dict, Mapping, Optional, Tuple, Type

import numpy as np
import tensorflow_datasets as tfds
from tensorflow_datasets.proto import tf_example_pb2

from data import atis
from data import demo
from data import demo_grammar
from data import embeddings as embeddings_lib
from data import encoded
from data import imdb
from data import mr
from data import raw
from data import sst
from data import subj
from data import trec
from data import user_files
from data import vocabulary as vocab_lib
from data.encoded import EncodedDataset, View  # noqa: F401  (re-exported)
from training.errors import UserError

SPLIT_ORDER = ('train', 'dev', 'test')


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
  builder: Type[tfds.core.GeneratorBasedBuilder]
  config: Optional[str] = None             # the builder config
  raw_files: Tuple[str, ...] = ()          # relative to the data root; () = generated
  downloads: Mapping[str, raw.Download] = dataclasses.field(default_factory=dict)
  label_names: Optional[Tuple[str, ...]] = None  # class order; None: sorted names
  cross_validation: bool = False           # one pooled split, k-fold CV
  # split -> sha256 the decoded examples must have (see checksum()); None: unchecked.
  expected_checksums: Optional[Callable[[], Dict[str, str]]] = None


def _demo_checksums() -> Dict[str, str]:
  return {split: checksum(*zip(*demo_grammar.generate_split(split)))
          for split in demo_grammar.SPLIT_SIZES}


def _sst(config, labels):
  return DatasetSpec(sst.SeedsweepSst, config, sst.RAW_FILES, sst.DOWNLOADS, labels)


def _atis(config):
  return DatasetSpec(atis.SeedsweepAtis, config, atis.RAW_FILES[config], atis.DOWNLOADS)


REGISTRY: Dict[str, DatasetSpec] = {
    'demo': DatasetSpec(demo.SeedsweepDemo, label_names=demo_grammar.LABEL_NAMES,
                        expected_checksums=_demo_checksums),
    'sst/fine': _sst('fine', sst.LABEL_NAMES_FINE),
    'sst/binary': _sst('binary', sst.LABEL_NAMES_BINARY),
    'sst/fine_phrases': _sst('fine_phrases', sst.LABEL_NAMES_FINE),
    'sst/binary_phrases': _sst('binary_phrases', sst.LABEL_NAMES_BINARY),
    'trec/coarse': DatasetSpec(trec.SeedsweepTrec, 'coarse', trec.RAW_FILES,
                               trec.DOWNLOADS, trec.LABELS_COARSE),
    'trec/fine': DatasetSpec(trec.SeedsweepTrec, 'fine', trec.RAW_FILES, trec.DOWNLOADS),
    'mr': DatasetSpec(mr.SeedsweepMr, None, mr.RAW_FILES, mr.DOWNLOADS, mr.LABEL_NAMES,
                      cross_validation=True),
    'subj': DatasetSpec(subj.SeedsweepSubj, None, subj.RAW_FILES, subj.DOWNLOADS,
                        subj.LABEL_NAMES, cross_validation=True),
    'imdb': DatasetSpec(imdb.SeedsweepImdb, None, imdb.RAW_FILES, imdb.DOWNLOADS,
                        imdb.LABEL_NAMES),
    'atis': _atis('slotgated'),
    'atis/jointslu': _atis('jointslu'),
    'files': DatasetSpec(user_files.SeedsweepFiles),
}


def cache_root() -> str:
  return os.environ.get('SEEDSWEEP_CACHE') or os.path.expanduser('~/.cache/seedsweep')


def tfds_dir(data_config) -> str:
  """Where built array_record files live: config, $SEEDSWEEP_TFDS_DIR, or a cache."""
  return (data_config.get('tfds_dir') or os.environ.get('SEEDSWEEP_TFDS_DIR')
          or os.path.join(cache_root(), 'tfds'))


def checksum(texts, labels) -> str:
  """sha256 over the examples' ``label<TAB>text`` lines, in original-file order."""
  h = hashlib.sha256()
  for text, label in zip(texts, labels):
    h.update(f'{label}\t{text}\n'.encode('utf-8'))
  return h.hexdigest()


def spec_of(name: str) -> DatasetSpec:
  if name not in REGISTRY:
    raise UserError(f'config.data.name={name!r} is not a registered dataset; '
                    f'expected one of {sorted(REGISTRY)} (data/__init__.py)')
  return REGISTRY[name]


def _download_root(spec: DatasetSpec) -> str:
  """Without $SEEDSWEEP_DATA: fetch the raw files once into the cache; their root."""
  target = os.path.join(cache_root(), 'raw')
  missing = [r for r in spec.raw_files if not os.path.isfile(os.path.join(target, r))]
  if missing:
    manager = tfds.download.DownloadManager(
        download_dir=os.path.join(cache_root(), 'downloads'))
    try:
      raw.fetch(manager, target, missing, spec.downloads)
    except Exception as e:  # network errors come in many types
      raise UserError(
          f'could not download {missing[0]} from {spec.downloads[missing[0]].url} '
          f'({type(e).__name__}: {e}). Offline? Point ${raw.ENV} (or --data_dir) at a '
          'folder with the raw files (layout: data/raw.py).') from e
  return target


def _user_files(data_config) -> Dict[str, str]:
  files = data_config.get('files')
  paths = {s: os.path.abspath(os.path.expanduser(files.get(s)))
           for s in SPLIT_ORDER if files is not None and files.get(s)}
  if 'train' not in paths:
    raise UserError("config.data.name='files' needs config.data.files.train (a TSV or "
                    'JSONL file; optional .dev and .test), see README "Your own data"')
  return paths


def prepare(name: str, data_config) -> Tuple[tfds.core.DatasetBuilder, Dict[str, str]]:
  """The prepared builder of dataset ``name`` and the sha256 of its raw files."""
  spec = spec_of(name)
  verify = bool(data_config.get('verify_checksums', True))
  config, root = spec.config, None
  if name == 'files':
    paths = _user_files(data_config)
    for split, path in paths.items():
      user_files.file_format(path)
      if not os.path.isfile(path):
        raise UserError(f'{path}: file not found (config.data.files.{split})')
    digests = {path: raw.sha256_file(path) for path in paths.values()}
    key = raw.digest_of(digests)
    config = user_files.FilesConfig(name=f'files_{key}', paths=paths)
  elif spec.raw_files:
    root = raw.root() or _download_root(spec)
    digests = raw.check_files(root, spec.raw_files, spec.downloads, verify)
    key = raw.digest_of(digests)
  else:
    digests, key = {}, 'generated'
  builder = spec.builder(config=config, data_dir=os.path.join(tfds_dir(data_config), key),
                         file_format='array_record')
  if not builder.is_prepared():
    tfds.disable_progress_bar()
    # TFDS prints its progress on stdout; keep stdout for results (--json output).
    with contextlib.redirect_stdout(sys.stderr):
      builder.download_and_prepare(download_config=tfds.download.DownloadConfig(
          manual_dir=root, try_download_gcs=False))
  return builder, digests


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


def load_dataset(data_config) -> EncodedDataset:
  """Prepares (once) and encodes the dataset named by ``data_config.name``."""
  name = data_config.name
  spec = spec_of(name)
  builder, raw_checksums = prepare(name, data_config)
  has_tags = 'tags' in builder.info.features
  keys = ('text', 'label', 'tags') if has_tags else ('text', 'label')
  sources = builder.as_data_source()
  splits = [s for s in SPLIT_ORDER if s in sources]
  read = {s: _read_source(sources[s], keys) for s in splits}

  label_names = spec.label_names or tuple(sorted({
      label for s in splits for label in read[s]["label"]}))
  label_index = {n: i for i, n in enumerate(label_names)}
  positions, start, texts, labels, tag_strings = {}, 0, [], [], []
  checksums = {}
  for s in splits:
    t, ls, tg = read[s]['text'], read[s]['label'], read[s].get('tags')
    unknown = sorted(set(ls) - set(label_index))
    if unknown:
      raise UserError(f'dataset {name!r} split {s}: labels {unknown[:5]} are not among '
                      f'the classes {label_names}')
    ids = [label_index[label] for label in ls]
    checksums[s] = checksum(t, ids)
    positions[s] = (start, len(t))
    start += len(t)
    texts += t
    labels += ids
    if tg is not None:
      tag_strings += tg
  if spec.expected_checksums is not None:
    expected = spec.expected_checksums()
    bad = [s for s in splits if checksums[s] != expected.get(s)]
    if bad:
      raise UserError(
          f'the prepared data in {builder.data_dir} does not match the recorded '
          f'checksums for split(s) {bad}; it was built by another version of the '
          f'builder or was modified: delete {builder.data_dir} to rebuild it.')
  labels = np.asarray(labels, np.int32)

  data_config = _with_protocol(data_config, spec)
  lowercase = data_config.get('lowercase', True)
  oov = data_config.get('oov', 'unk')
  if oov not in vocab_lib.OOV_POLICIES:
    raise UserError(f'config.data.oov={oov!r}; expected one of {vocab_lib.OOV_POLICIES}')
  token_lists = [vocab_lib.tokenize(t, lowercase) for t in texts]
  raw_lengths = np.array([len(t) for t in token_lists], np.int32)
  parts, protocol = encoded.partitions(positions, labels, data_config)

  words, looked_up = [], None
  if embeddings_lib.vectors_config(data_config) is not None:
    words = sorted({w for tokens in token_lists for w in tokens})
    looked_up = embeddings_lib.lookup(data_config, words,
                                      os.path.join(cache_root(), 'vectors'))
  keep, extra_for = None, lambda rows: ()
  if looked_up is not None:
    vcfg = embeddings_lib.vectors_config(data_config)
    with_vector = {w for w, f in zip(words, looked_up[1]) if f}
    if vcfg.get('only_found', False):
      keep = with_vector
    if vcfg.get('add_eval_words', False):
      def extra_for(rows):
        eval_rows = np.concatenate([rows[s] for s in rows if s != 'train'])
        return sorted({w for i in eval_rows for w in token_lists[i]} & with_vector)
  views = tuple(encoded.encode_view(view_name, rows, token_lists,
                                    data_config.get('min_count', 1), oov,
                                    extra_for(rows), keep)
                for view_name, rows in parts)
  tables = None
  if looked_up is not None:
    tables = embeddings_lib.tables([v.vocab for v in views],
                                   {w: i for i, w in enumerate(words)}, *looked_up,
                                   data_config)

  tag_names, tags = (), None
  if has_tags and any(tag_strings):
    if oov == 'delete':
      raise UserError(f"config.data.oov='delete' cannot be used with the tagged "
                      f'dataset {name!r}: deleting tokens would misalign their tags')
    tag_lists = [t.split(' ') if t else [] for t in tag_strings]
    tag_names = tuple(sorted({t for tl in tag_lists for t in tl}))
    tag_index = {t: i for i, t in enumerate(tag_names)}
    tags = np.asarray([tag_index[t] for tl in tag_lists for t in tl], np.int32)
  return EncodedDataset(name=name, label_names=tuple(label_names), labels=labels,
                        views=views, sources=positions, checksums=checksums,
                        raw_checksums=raw_checksums, protocol=protocol,
                        raw_lengths=raw_lengths, tag_names=tag_names, tags=tags,
                        embedding_tables=tables)


def _with_protocol(data_config, spec: DatasetSpec):
  """``data_config`` as a dict with the spec's ``cross_validation`` flag."""
  d = data_config.to_dict() if hasattr(data_config, 'to_dict') else dict(data_config)
  d['cross_validation'] = spec.cross_validation
  if d.get('folds') and not spec.cross_validation:
    raise UserError(f'config.data.folds={tuple(d["folds"])!r}, but dataset '
                    f'{d["name"]!r} is not cross-validated (only mr and subj are); '
                    'set it to ()')
  return _Config(d)


class _Config(dict):
  """A dict with ``.attr`` access, for the few places that read configs that way."""

  def __getattr__(self, key):
    try:
      value = self[key]
    except KeyError:
      raise AttributeError(key) from None
    return _Config(value) if isinstance(value, dict) else value

  def get(self, key, default=None):
    value = super().get(key, default)
    return _Config(value) if isinstance(value, dict) else value

"""Datasets, found by name: ``load_dataset(config.data)``.

Data flows one way: raw files (``$SEEDSWEEP_DATA`` or downloads, checked against the
recorded sha256, data/raw.py) -> TFDS builder (array_record, built once) ->
``tfds.data_source`` -> pooled examples -> views (splits, folds, held-out dev) with a
vocabulary from each view's training rows -> flat int32 arrays (data/encoded.py) ->
the device-resident pipeline (data/pipeline.py).

Names (``config.data.name``): see :data:`REGISTRY` and ``python -m seedsweep.data --list``.
To add a dataset: a reader and a :class:`data.tfds_base.RawTextBuilder` subclass in
its own module, its raw files in ``data/raw.py``, and a :class:`DatasetSpec` here.
"""
import contextlib
import dataclasses
import fcntl
import hashlib
import json
import logging
import os
import shutil
import sys
from typing import Callable, Dict, List, Mapping, Optional, Tuple, Type

import numpy as np
import tensorflow_datasets as tfds
from tensorflow_datasets.proto import tf_example_pb2

from seedsweep import files
from seedsweep.config import checks as config_checks
from seedsweep.config import keys
from seedsweep.config import python_files
from seedsweep.data import atis
from seedsweep.data import demo
from seedsweep.data import demo_grammar
from seedsweep.data import embeddings as embeddings_lib
from seedsweep.data import encoded
from seedsweep.data.encoded import EncodedDataset
from seedsweep.data import imdb
from seedsweep.data import mr
from seedsweep.data import raw
from seedsweep.data import sst
from seedsweep.data import subj
from seedsweep.data import trec
from seedsweep.data import user_code
from seedsweep.data import user_files
from seedsweep.data import vectors as vectors_lib
from seedsweep.data import vocabulary as vocab_lib
from seedsweep.errors import UserError

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
  """``$SEEDSWEEP_CACHE``, else ``~/.cache/seedsweep``: the folder of prepared datasets,
  downloads and vector caches."""
  return os.environ.get('SEEDSWEEP_CACHE') or os.path.expanduser('~/.cache/seedsweep')


def tfds_dir(data_config) -> str:
  """Where built array_record files live: config, $SEEDSWEEP_TFDS_DIR, or a cache."""
  where, folder = next((w, f) for w, f in (
      ('config.data.tfds_dir', data_config.tfds_dir),
      ('$SEEDSWEEP_TFDS_DIR', os.environ.get('SEEDSWEEP_TFDS_DIR')),
      ('$SEEDSWEEP_CACHE', os.path.join(cache_root(), 'tfds'))) if f)
  files.refuse_file(folder, where, 'a folder for prepared datasets')
  return folder


def checksum(texts, labels) -> str:
  """sha256 over the examples' ``label<TAB>text`` lines, in original-file order."""
  h = hashlib.sha256()
  for text, label in zip(texts, labels):
    h.update(f'{label}\t{text}\n'.encode('utf-8'))
  return h.hexdigest()


def spec_of(name: str) -> DatasetSpec:
  """The spec of a registered name, or of a user's reader or builder by reference
  (``path/to/file.py:Name``: data/user_code.py)."""
  if python_files.is_reference(name):
    builder = user_code.builder_class(name)
    return DatasetSpec(builder or user_code.SeedsweepReader)
  if name not in REGISTRY:
    raise UserError(f'config.data.name={name!r} is not a registered dataset'
                    f'{keys.did_you_mean(name, REGISTRY)}; expected one of '
                    f'{sorted(REGISTRY)} (data/__init__.py)')
  return REGISTRY[name]


def _download_root(spec: DatasetSpec) -> str:
  """Without $SEEDSWEEP_DATA: fetch the raw files once into the cache; their root."""
  target = os.path.join(cache_root(), 'raw')
  missing = [r for r in spec.raw_files if not os.path.isfile(os.path.join(target, r))]
  if missing:
    url = spec.downloads[missing[0]].url
    offline = raw.unreachable(url)
    if offline:
      raise UserError(
          f'${raw.ENV} is not set and the raw files of this dataset cannot be '
          f'downloaded: {offline} for {url}. Offline? Point ${raw.ENV} (or '
          '--data_dir) at a folder with the raw files (layout: data/raw.py).')
    print(f'${raw.ENV} is not set: downloading {len(missing)} raw file(s) of this '
          f'dataset from {url} ... into {target} (offline? set ${raw.ENV} or '
          '--data_dir to a local copy)', file=sys.stderr, flush=True)
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
  files = data_config.files
  paths = {s: os.path.abspath(os.path.expanduser(files[s]))
           for s in SPLIT_ORDER if files[s]}
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
    columns = user_files.Columns(str(data_config.files.text_column),
                                 str(data_config.files.label_column))
    key = raw.digest_of({**digests, 'columns': columns.key()})
    config = user_files.FilesConfig(name=f'files_{key}', paths=paths, columns=columns)
  elif python_files.is_reference(name):
    config, root, digests, key = _user_code(name, spec, data_config)
  elif spec.raw_files:
    root = raw.root() or _download_root(spec)
    digests = raw.check_files(root, spec.raw_files, spec.downloads, verify)
    key = raw.digest_of(digests)
  else:
    digests, key = {}, 'generated'
  return _prepared_builder(spec, config, os.path.join(tfds_dir(data_config), key),
                           root), digests


def _prepared_builder(spec: DatasetSpec, config, data_dir: str, manual_dir):
  """``spec``'s builder over ``data_dir``, built first if no process has built it,
  and built again if its files are damaged (:func:`damaged`).

  Building holds an exclusive lock on ``data_dir/.prepare.lock``: processes started
  together on an empty cache (sweep shards, test workers) build each dataset once,
  and the others wait, then read what it wrote. The builder records the sha256 of
  every file it wrote (:data:`INTEGRITY`); every later open checks them, so a
  truncated or garbled entry is never read as data.
  """
  def make():
    with _quiet_tfds():
      return spec.builder(config=config, data_dir=data_dir, file_format='array_record')

  def prepared(builder):
    with _quiet_tfds():
      return builder.is_prepared()

  builder = make()
  if prepared(builder) and damaged(builder.data_dir) is None:
    return builder
  os.makedirs(data_dir, exist_ok=True)
  with open(os.path.join(data_dir, '.prepare.lock'), 'a') as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
    builder = make()  # another process may have built it while this one waited
    if prepared(builder):
      why = damaged(builder.data_dir)
      if why in (None, NO_RECORD):
        if why == NO_RECORD:  # prepared before integrity records existed: trusted
          record_integrity(builder.data_dir)
        return builder
      print(f'warning: the prepared dataset in {builder.data_dir} is damaged ({why}); '
            'preparing it again', file=sys.stderr, flush=True)
      shutil.rmtree(builder.data_dir)
      builder = make()
    print(f'preparing dataset {builder.name} once, in {data_dir}', file=sys.stderr,
          flush=True)
    tfds.disable_progress_bar()
    with _quiet_tfds():
      builder.download_and_prepare(download_config=tfds.download.DownloadConfig(
          manual_dir=manual_dir, try_download_gcs=False))
    record_integrity(builder.data_dir)
  return builder


# Beside a prepared entry's files: {file name: sha256} of every file TFDS wrote.
INTEGRITY = 'seedsweep_integrity.json'
NO_RECORD = 'no integrity record'


def _digests(folder: str) -> Dict[str, str]:
  """sha256 of the files TFDS wrote (not the record, nor a temporary file: dotted)."""
  return {name: raw.sha256_file(os.path.join(folder, name))
          for name in sorted(os.listdir(folder))
          if name != INTEGRITY and not name.startswith('.')
          and os.path.isfile(os.path.join(folder, name))}


def record_integrity(folder: str) -> None:
  """Writes :data:`INTEGRITY` for the entry in ``folder`` (atomically)."""
  with files.atomic_write(os.path.join(folder, INTEGRITY), 'w') as f:
    json.dump(_digests(folder), f, indent=1, sort_keys=True)


def damaged(folder: str) -> Optional[str]:
  """Why the prepared entry in ``folder`` cannot be read as written
  (:data:`NO_RECORD` for one prepared before records existed), or None."""
  path = os.path.join(folder, INTEGRITY)
  try:
    with open(path, encoding='utf-8') as f:
      recorded = json.load(f)
  except FileNotFoundError:
    return NO_RECORD
  except (OSError, ValueError):
    return f'{INTEGRITY} unreadable'
  current = _digests(folder)
  for name, digest in sorted(recorded.items()):
    if name not in current:
      return f'{name} missing'
    if current[name] != digest:
      return f'{name}: sha256 differs from when it was written'
  return None


@contextlib.contextmanager
def _quiet_tfds():
  """Without TFDS's chatter about local files: its 'Downloading and preparing
  dataset' lines on stdout (nothing is downloaded: the raw files are local by then;
  stdout stays for results such as --json) and its warnings that a folder being
  built has no dataset_info.json yet. Errors still raise."""
  absl_logger = logging.getLogger('absl')
  level = absl_logger.level
  absl_logger.setLevel(logging.ERROR)
  try:
    with open(os.devnull, 'w', encoding='utf-8') as devnull:
      with contextlib.redirect_stdout(devnull):
        yield
  finally:
    absl_logger.setLevel(level)


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
class _Pool:
  """The decoded examples of every split, train first, before any vocabulary."""
  texts: list
  labels: np.ndarray        # int32 class ids
  tag_strings: list         # per example ('' without tags)
  positions: Dict[str, Tuple[int, int]]  # split -> (first row, count)
  checksums: Dict[str, str]
  label_names: Tuple[str, ...]


def _pool(name: str, spec: DatasetSpec, builder) -> _Pool:
  has_tags = 'tags' in builder.info.features
  keys = ('text', 'label', 'tags') if has_tags else ('text', 'label')
  sources = builder.as_data_source()
  read = {s: _read_source(sources[s], keys) for s in SPLIT_ORDER if s in sources}
  label_names = spec.label_names or tuple(sorted({
      label for columns in read.values() for label in columns['label']}))
  index = {n: i for i, n in enumerate(label_names)}
  pool = _Pool([], np.zeros(0, np.int32), [], {}, {}, tuple(label_names))
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
  if spec.expected_checksums is not None:
    expected = spec.expected_checksums()
    bad = [s for s in read if pool.checksums[s] != expected.get(s)]
    if bad:
      raise UserError(
          f'the prepared data in {builder.data_dir} does not match the recorded '
          f'checksums for split(s) {bad}; it was built by another version of the '
          f'builder or was modified: delete {builder.data_dir} to rebuild it.')
  return pool


def read_split(data_config, split: str) -> Tuple[List[str], List[str]]:
  """``(texts, label names)`` of one split of ``data_config``'s dataset, as its files
  hold them (before tokenisation and vocabulary): what ``seedsweep.predict`` takes."""
  name = data_config.name
  spec = spec_of(name)
  builder, _ = prepare(name, data_config)
  pool = _pool(name, spec, builder)
  if split not in pool.positions:
    raise UserError(f'dataset {name!r} has no {split!r} split; it has '
                    f'{sorted(pool.positions)}')
  first, count = pool.positions[split]
  return (pool.texts[first:first + count],
          [pool.label_names[i] for i in pool.labels[first:first + count]])


def _vocabulary_words(data_config, token_lists):
  """What pretrained vectors change in the vocabularies.

  Returns ``(looked_up, words, keep, extra_for, record)``: the vectors of ``words``
  (None without a vectors file), the words a vocabulary may hold (None: any), a
  function of a view's rows giving the words added after its training words, and the
  vectors file's record for the provenance (``vectors.file_record`` and how many of
  the dataset's words it has; None without a file).
  """
  vcfg = embeddings_lib.vectors_config(data_config)
  if vcfg is None:
    return None, [], None, lambda rows: (), None
  words = sorted({w for tokens in token_lists for w in tokens})
  cache_dir = os.path.join(cache_root(), 'vectors')
  looked_up = embeddings_lib.lookup(data_config, words, cache_dir)
  with_vector = {w for w, f in zip(words, looked_up[1]) if f}
  record = dict(vectors_lib.file_record(vcfg.path, cache_dir),
                dataset_words=len(words), dataset_words_found=len(with_vector))
  keep = with_vector if vcfg.only_found else None

  def extra_for(rows):
    """Dev/test words with a vector, when they join the vocabulary (C-LSTM)."""
    if not vcfg.add_eval_words:
      return ()
    eval_rows = np.concatenate([rows[s] for s in rows if s != 'train'])
    return sorted({w for i in eval_rows for w in token_lists[i]} & with_vector)

  return looked_up, words, keep, extra_for, record


def _tags(name: str, tag_strings, oov: str, max_length: int = 0):
  """``(tag_names, flat int32 tag ids)`` of a tagged dataset, else ``((), None)``;
  with ``max_length`` each example keeps its first tags, like its tokens."""
  if not any(tag_strings):
    return (), None
  if oov == 'delete':
    raise UserError(f"config.data.oov='delete' cannot be used with the tagged "
                    f'dataset {name!r}: deleting tokens would misalign their tags')
  tag_lists = [t.split(' ') if t else [] for t in tag_strings]
  if max_length:
    tag_lists = [t[:max_length] for t in tag_lists]
  tag_names = tuple(sorted({t for tl in tag_lists for t in tl}))
  index = {t: i for i, t in enumerate(tag_names)}
  return tag_names, np.asarray([index[t] for tl in tag_lists for t in tl], np.int32)


def load_dataset(data_config) -> EncodedDataset:
  """Prepares (once) and encodes the dataset named by ``data_config.name``."""
  name = data_config.name
  spec = spec_of(name)
  if data_config.folds and not spec.cross_validation:
    raise UserError(f'config.data.folds={tuple(data_config.folds)!r}, but dataset '
                    f'{name!r} is not cross-validated (only mr and subj are); set it '
                    'to ()')
  oov = data_config.oov
  config_checks.one_of('data.oov', oov, vocab_lib.OOV_POLICIES)
  builder, raw_checksums = prepare(name, data_config)
  pool = _pool(name, spec, builder)
  max_length = data_config.max_length
  if not isinstance(max_length, int) or max_length < 0:
    raise UserError(f'config.data.max_length={max_length!r}; expected an int >= 0 '
                    '(0 = keep every token)')
  token_lists = vocab_lib.tokenize_texts(pool.texts, data_config.lowercase, max_length)
  parts, protocol = encoded.partitions(pool.positions, pool.labels, data_config,
                                       spec.cross_validation)
  if max_length:
    protocol['max_length'] = max_length
  looked_up, words, keep, extra_for, vectors = _vocabulary_words(data_config,
                                                                 token_lists)
  views = tuple(encoded.encode_view(view_name, rows, token_lists,
                                    data_config.min_count, oov,
                                    extra_for(rows), keep)
                for view_name, rows in parts)
  tables = None
  if looked_up is not None:
    tables = embeddings_lib.tables([v.vocab for v in views],
                                   {w: i for i, w in enumerate(words)}, *looked_up,
                                   data_config)
  tag_names, tags = _tags(name, pool.tag_strings, oov, max_length)
  return EncodedDataset(
      name=name, label_names=pool.label_names, labels=pool.labels, views=views,
      sources=pool.positions, checksums=pool.checksums, raw_checksums=raw_checksums,
      protocol=protocol,
      raw_lengths=np.array([len(t) for t in token_lists], np.int32),
      tag_names=tag_names, tags=tags, embedding_tables=tables, vectors=vectors)

"""Where prepared datasets live, and preparing one once, safely, for every process.

``$SEEDSWEEP_CACHE`` (else ``~/.cache/seedsweep``) holds the prepared datasets
(``tfds/<key>/``, the key named after the raw files' hashes, :func:`tfds_dir`), the
downloaded raw files (``raw/``, :func:`download_root`) and the vectors caches
(``vectors/``). A dataset is prepared under a file lock (:func:`prepared_builder`), so
that test workers and sweep shards can start together on an empty cache, and every
prepared entry carries the sha256 of the files TFDS wrote (:data:`INTEGRITY`), which
every later open checks.
"""
import contextlib
import fcntl
import json
import logging
import os
import shutil
from typing import Dict, Mapping, Optional, Sequence

import tensorflow_datasets as tfds

from seedsweep import files
from seedsweep import notices
from seedsweep.errors import UserError
from seedsweep.inputs import raw


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


def download_root(raw_files: Sequence[str], downloads: Mapping[str, raw.Download]) -> str:
  """Without $SEEDSWEEP_DATA: fetch the raw files once into the cache; their root."""
  target = os.path.join(cache_root(), 'raw')
  missing = [r for r in raw_files if not os.path.isfile(os.path.join(target, r))]
  if missing:
    url = downloads[missing[0]].url
    offline = raw.unreachable(url)
    if offline:
      raise UserError(
          f'${raw.ENV} is not set and the raw files of this dataset cannot be '
          f'downloaded: {offline} for {url}. Offline? Point ${raw.ENV} (or '
          '--data_dir) at a folder with the raw files (layout: data/raw_files.py).')
    notices.say(f'${raw.ENV} is not set: downloading {len(missing)} raw file(s) of '
                f'this dataset from {url} ... into {target} (offline? set ${raw.ENV} or '
                '--data_dir to a local copy)')
    manager = tfds.download.DownloadManager(
        download_dir=os.path.join(cache_root(), 'downloads'))
    try:
      raw.fetch(manager, target, missing, downloads)
    except Exception as e:  # network errors come in many types
      raise UserError(
          f'could not download {missing[0]} from {downloads[missing[0]].url} '
          f'({type(e).__name__}: {e}). Offline? Point ${raw.ENV} (or --data_dir) at a '
          'folder with the raw files (layout: data/raw_files.py).') from e
  return target


def prepared_builder(builder_class, config, data_dir: str, manual_dir):
  """``builder_class``'s builder over ``data_dir``, built first if no process has built
  it, and built again if its files are damaged (:func:`damaged`).

  Building holds an exclusive lock on ``data_dir/.prepare.lock``: processes started
  together on an empty cache (sweep shards, test workers) build each dataset once,
  and the others wait, then read what it wrote. The builder records the sha256 of
  every file it wrote (:data:`INTEGRITY`); every later open checks them, so a
  truncated or garbled entry is never read as data.
  """
  builder, ready = _opened(builder_class, config, data_dir)
  if ready and damaged(builder.data_dir) is None:
    return builder
  os.makedirs(data_dir, exist_ok=True)
  with open(os.path.join(data_dir, '.prepare.lock'), 'a') as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
    # Another process may have built it while this one waited.
    builder, ready = _opened(builder_class, config, data_dir)
    if ready:
      why = damaged(builder.data_dir)
      if why in (None, NO_RECORD):
        if why == NO_RECORD:  # prepared before integrity records existed: trusted
          record_integrity(builder.data_dir)
        return builder
      notices.say(f'warning: the prepared dataset in {builder.data_dir} is damaged '
                  f'({why}); preparing it again')
      shutil.rmtree(builder.data_dir)
      builder, _ = _opened(builder_class, config, data_dir)
    notices.say(f'preparing dataset {builder.name} once, in {data_dir}')
    tfds.disable_progress_bar()
    with quiet_tfds():
      builder.download_and_prepare(download_config=tfds.download.DownloadConfig(
          manual_dir=manual_dir, try_download_gcs=False))
    record_integrity(builder.data_dir)
  return builder


def _opened(builder_class, config, data_dir: str):
  """``(builder, whether it is prepared)`` of ``builder_class`` over ``data_dir``,
  without TFDS's chatter (:func:`quiet_tfds`)."""
  with quiet_tfds():
    builder = builder_class(config=config, data_dir=data_dir, file_format='array_record')
    return builder, builder.is_prepared()


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
def quiet_tfds():
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

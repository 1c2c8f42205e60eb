"""Where raw dataset files live, checking them against a record, and fetching them.

One setting says where raw data lives, for every builder and command: the environment
variable ``SEEDSWEEP_DATA`` (``launch.py --data_dir`` and ``python -m seedsweep.data --data_dir``
set it), a folder with the layout that ``data/raw_files.py`` documents. Unset, builders
download the files from their original addresses (:class:`Download`) through TFDS's
download manager and assemble the same layout.

Before a dataset is prepared, its files are hashed and compared with their recorded
sha256 (its dataset module's ``SHA256``, ``data/raw_files.py``); a mismatch is an
error unless ``config.data.verify_checksums`` is False. The prepared array_record files live under a
folder named after the raw files' hashes (:func:`digest_of`), so prepared data never
outlives the raw files it was made from.
"""
import dataclasses
import hashlib
import os
import shutil
import socket
import urllib.parse
from typing import Dict, Mapping, Optional, Sequence

from seedsweep import files
from seedsweep.errors import UserError

ENV = 'SEEDSWEEP_DATA'


@dataclasses.dataclass(frozen=True)
class Download:
  """Where one raw file comes from: ``url``, and ``member`` inside the extracted
  archive ('' = the downloaded file itself, not extracted)."""
  url: str
  member: str = ''


def root() -> Optional[str]:
  """The raw-data root from ``$SEEDSWEEP_DATA``, or None (download)."""
  value = os.environ.get(ENV, '').strip()
  if not value:
    return None
  folder = os.path.abspath(os.path.expanduser(value))
  files.refuse_file(folder, f'${ENV}', 'the folder of raw datasets (data/raw_files.py)')
  return folder


def sha256_file(path: str) -> str:
  """The hex sha256 of a file's bytes, read in 1 MiB chunks."""
  h = hashlib.sha256()
  with open(path, 'rb') as f:
    for chunk in iter(lambda: f.read(1 << 20), b''):
      h.update(chunk)
  return h.hexdigest()


def missing_file_error(path: str, rel: str, download: Optional[Download]) -> UserError:
  """The UserError for raw file ``rel`` missing at ``path``: where the data root points
  and how to get the file (its download, or the offline copy)."""
  how = (f'download it from {download.url}' + (f' (file {download.member} of that '
                                                 'archive)' if download.member else '')
         if download else 'it is part of the offline copy of the datasets')
  return UserError(
      f'{path} not found: the raw file {rel} of the data root '
      f'${ENV}={os.environ.get(ENV, "")!r} is missing. Point ${ENV} (or --data_dir) '
      f'at a folder with the layout of data/raw_files.py, or {how}.')


def check_files(data_root: str, rels: Sequence[str], downloads: Dict[str, Download],
                verify: bool, recorded: Mapping[str, str]) -> Dict[str, str]:
  """sha256 of each raw file ``rels`` under ``data_root``; checks presence and the
  ``recorded`` sha256 (each dataset module's ``SHA256``: ``data/raw_files.py``).

  Raises UserError naming the path and how to obtain a missing file, or naming the
  file, both digests and the way out for a checksum mismatch.
  """
  digests = {}
  for rel in rels:
    path = os.path.join(data_root, rel)
    if not os.path.isfile(path):
      raise missing_file_error(path, rel, downloads.get(rel))
    digests[rel] = sha256_file(path)
    expected = recorded.get(rel)
    if verify and expected is not None and digests[rel] != expected:
      raise UserError(
          f'{path}: sha256 {digests[rel]} differs from the recorded {expected} '
          f'(SHA256 of data/{rel.split("/")[0]}.py). The file is damaged or another '
          'version; restore the original, or set --config.data.verify_checksums=False to '
          'prepare the dataset from it anyway (its results then record the other '
          'checksum).')
  return digests


def digest_of(digests: Dict[str, str]) -> str:
  """A short name for a set of raw files: sha256 over their sorted digests."""
  h = hashlib.sha256()
  for rel in sorted(digests):
    h.update(f'{rel}\t{digests[rel]}\n'.encode())
  return h.hexdigest()[:16]


def unreachable(url: str, timeout: float = 5.0) -> Optional[str]:
  """Why ``url``'s host cannot be reached within ``timeout`` seconds (no name
  resolution, no route, refused), or None if a connection opens: checked before a
  download, so that an offline machine is told at once instead of after minutes of
  the downloader's retries."""
  parsed = urllib.parse.urlsplit(url)
  port = parsed.port or (443 if parsed.scheme == 'https' else 80)
  try:
    socket.create_connection((parsed.hostname, port), timeout=timeout).close()
  except OSError as e:
    return f'cannot reach {parsed.hostname}:{port} ({type(e).__name__}: {e})'
  return None


def fetch(dl_manager, target: str, rels: Sequence[str],
          downloads: Dict[str, Download]) -> None:
  """Downloads the raw files ``rels`` and copies them to ``target/<rel>``."""
  for rel in rels:
    source = downloads[rel]
    if source.member:
      path = os.path.join(os.fspath(dl_manager.download_and_extract(source.url)),
                          source.member)
    else:
      path = os.fspath(dl_manager.download(source.url))
    dest = os.path.join(target, rel)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copyfile(path, dest)

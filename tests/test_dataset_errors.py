"""Bad raw data: missing files, checksum mismatches and malformed lines are reported
with the path (and line), and a failed preparation leaves nothing a later run would
take for a prepared dataset."""
import os
import shutil

import pytest

from seedsweep.config import base
from seedsweep import data as data_lib
from seedsweep.data import raw_files
from seedsweep.errors import UserError
from seedsweep.inputs import cache
from seedsweep.inputs import raw
from tests.conftest import SHARED_DATA


@pytest.fixture
def trec_root(tmp_path, monkeypatch):
  """A private copy of the TREC raw files as the data root, and a private TFDS dir."""
  root = tmp_path / 'raw'
  shutil.copytree(os.path.join(SHARED_DATA, 'trec'), root / 'trec')
  monkeypatch.setenv('SEEDSWEEP_DATA', str(root))
  monkeypatch.setenv('SEEDSWEEP_TFDS_DIR', str(tmp_path / 'tfds'))
  return root


def config(**fields):
  c = base.get_base_config().data
  c.name = 'trec/coarse'
  for k, v in fields.items():
    c[k] = v
  return c


def prepared_files(tmp_path):
  return [os.path.join(d, f) for d, _, fs in os.walk(tmp_path / 'tfds') for f in fs]


def test_a_missing_file_names_its_path_and_where_to_get_it(trec_root):
  os.remove(trec_root / 'trec' / 'TREC_10.label')
  with pytest.raises(UserError) as e:
    data_lib.load_dataset(config())
  assert str(trec_root / 'trec' / 'TREC_10.label') in str(e.value)
  assert 'https://cogcomp.seas.upenn.edu/Data/QA/QC/TREC_10.label' in str(e.value)


def test_a_changed_file_is_reported_and_a_malformed_line_names_file_and_line(
    trec_root, tmp_path):
  path = trec_root / 'trec' / 'train_5500.label'
  lines = path.read_bytes().split(b'\n')
  lines[9] = b'this line has no label'
  path.write_bytes(b'\n'.join(lines))
  with pytest.raises(UserError, match='differs from the recorded 9e4c8bdc'):
    data_lib.load_dataset(config())
  with pytest.raises(UserError, match=f'{path}:10'):
    data_lib.load_dataset(config(verify_checksums=False))
  # The failed preparation left no files behind (TFDS writes into a temporary
  # folder and renames it only when every split was written).
  left = prepared_files(tmp_path)
  assert not [f for f in left if 'array_record' in f or 'dataset_info' in f], left
  builder = data_lib.REGISTRY['trec/coarse'].builder(
      config='coarse', data_dir=os.path.dirname(os.path.dirname(os.path.dirname(
          [f for f in left if f.endswith('metadata.json')][0]))))
  assert not builder.is_prepared()
  # Restored, the same data root prepares and loads.
  lines[9] = b'NUM:date When was the line restored ?'
  path.write_bytes(b'\n'.join(lines))
  dataset = data_lib.load_dataset(config(verify_checksums=False))
  assert dataset.sizes() == {'train': 5452, 'test': 500}
  assert dataset.raw_checksums['trec/train_5500.label'] != raw_files.recorded()[
      'trec/train_5500.label']


def test_prepared_data_is_keyed_by_the_raw_files(trec_root, tmp_path):
  data_lib.load_dataset(config())
  before = set(os.listdir(tmp_path / 'tfds'))
  path = trec_root / 'trec' / 'TREC_10.label'
  path.write_bytes(path.read_bytes().replace(b'How far is it from Denver to Aspen ?',
                                             b'How far is it from Denver to Vail ?'))
  dataset = data_lib.load_dataset(config(verify_checksums=False))
  assert len(set(os.listdir(tmp_path / 'tfds')) - before) == 1  # a new build
  assert 'vail' not in dataset.vocab.words  # test words never enter the vocabulary
  assert dataset.raw_checksums['trec/TREC_10.label'] != raw_files.recorded()[
      'trec/TREC_10.label']


class FakeDownloads:
  """A download manager whose 'downloads' are local folders and files."""

  def __init__(self, archives):
    self.archives, self.calls = archives, []

  def download_and_extract(self, url):
    self.calls.append(url)
    return self.archives[url]

  def download(self, url):
    self.calls.append(url)
    return self.archives[url]


def test_a_prepared_demo_that_differs_from_its_recorded_sha256_is_refused(monkeypatch):
  """The demo's prepared copy is checked against data/demo.py's SPLIT_SHA256, as a
  real dataset's raw files are against their SHA256: a copy another grammar made, or
  one modified, is refused in one line naming the split and the way out."""
  from seedsweep.data import demo  # pylint: disable=g-import-not-at-top
  demo_config = config()
  demo_config.name = 'demo'
  texts, labels = data_lib.read_split(demo_config, 'dev')  # prepared, and accepted
  assert len(texts) == len(labels) == 500
  monkeypatch.setitem(demo.SPLIT_SHA256, 'dev', '0' * 64)
  with pytest.raises(UserError, match=r"does not match the recorded checksums for "
                     r"split\(s\) \['dev'\].*delete .* to rebuild it"):
    data_lib.read_split(demo_config, 'test')


def test_downloaded_files_are_assembled_into_the_data_root_layout(tmp_path):
  from seedsweep.data import mr  # pylint: disable=g-import-not-at-top
  extracted = tmp_path / 'extracted' / 'rt-polaritydata'
  extracted.mkdir(parents=True)
  for name in mr.FILES:
    shutil.copy(os.path.join(SHARED_DATA, 'mr', name), extracted / name)
  url = mr.DOWNLOADS['mr/rt-polarity.pos'].url
  manager = FakeDownloads({url: str(tmp_path / 'extracted')})
  raw.fetch(manager, str(tmp_path / 'root'), mr.RAW_FILES, mr.DOWNLOADS)
  digests = raw.check_files(str(tmp_path / 'root'), mr.RAW_FILES, mr.DOWNLOADS,
                            verify=True, recorded=raw_files.recorded())
  assert set(digests) == set(mr.RAW_FILES) and manager.calls == [url, url]


def test_without_local_data_an_unreachable_download_fails_at_once(tmp_path, monkeypatch):
  """No $SEEDSWEEP_DATA and no network: one line within seconds (the downloader's
  own retries took 3.5 minutes), naming the host and the variable to set."""
  import socket  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  with socket.socket() as s:  # a port nothing listens on: connections are refused
    s.bind(('127.0.0.1', 0))
    url = f'http://127.0.0.1:{s.getsockname()[1]}/trec/train.txt'
  downloads = {'trec/x.txt': raw.Download(url)}
  monkeypatch.setenv('SEEDSWEEP_CACHE', str(tmp_path))
  start = time.perf_counter()
  with pytest.raises(UserError, match=r'\$SEEDSWEEP_DATA is not set and the raw files '
                     r'.* cannot reach 127\.0\.0\.1:\d+ .*Offline\? Point'):
    cache.download_root(('trec/x.txt',), downloads)
  assert time.perf_counter() - start < 10
  assert not os.path.exists(tmp_path / 'raw' / 'trec')



def _record_files(tfds_dir):
  return sorted(p for p in tfds_dir.rglob('*.array_record*') if p.is_file())


@pytest.mark.parametrize('damage', ['garbled', 'truncated'])
def test_a_damaged_prepared_entry_is_named_and_built_again(trec_root, tmp_path, capfd,
                                                           damage):
  """Bytes flipped in the middle of a prepared file (a bad disk, a killed copy) or the
  file cut short: the next load says so in one line and prepares the entry again,
  never reading the damaged bytes (it used to stop every later run with array_record's
  'Corrupted Riegeli/records file' traceback)."""
  first = data_lib.load_dataset(config())
  (target,) = [p for p in _record_files(tmp_path / 'tfds') if 'train' in p.name]
  body = bytearray(target.read_bytes())
  if damage == 'garbled':
    middle = len(body) // 2
    body[middle:middle + 64] = bytes(b ^ 0xFF for b in body[middle:middle + 64])
  else:
    body = body[:len(body) // 3]
  target.write_bytes(bytes(body))
  capfd.readouterr()
  again = data_lib.load_dataset(config())
  err = capfd.readouterr().err
  assert 'is damaged (' in err and 'sha256 differs from when it was written' in err
  assert again.checksums == first.checksums
  assert again.sizes() == first.sizes()
  data_lib.load_dataset(config())  # healed: no warning the next time
  assert 'damaged' not in capfd.readouterr().err

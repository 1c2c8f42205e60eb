"""seedsweep.files: a file is replaced whole or not at all."""
import os
import stat

import pytest

from seedsweep import files


def test_a_finished_write_replaces_the_file_and_leaves_no_temp(tmp_path):
  path = tmp_path / 'results.json'
  path.write_text('old')
  with files.atomic_write(str(path)) as f:
    f.write('new')
  assert path.read_text() == 'new'
  assert os.listdir(tmp_path) == ['results.json']


def test_an_error_in_the_block_keeps_the_old_file(tmp_path):
  path = tmp_path / 'results.json'
  path.write_text('old')
  with pytest.raises(RuntimeError):
    with files.atomic_write(str(path)) as f:
      f.write('half')
      raise RuntimeError('disk full')
  assert path.read_text() == 'old'
  assert os.listdir(tmp_path) == ['results.json']


def test_the_hook_runs_before_the_rename(tmp_path):
  path, seen = tmp_path / 'a.bin', []
  hook = lambda: seen.append(path.exists())
  with files.atomic_write(str(path), 'wb', before_rename=hook) as f:
    f.write(b'\0')
  assert seen == [False] and path.read_bytes() == b'\0'


def test_permissions_are_those_of_a_plain_open(tmp_path):
  with files.atomic_write(str(tmp_path / 'atomic')) as f:
    f.write('x')
  with open(tmp_path / 'plain', 'w') as f:
    f.write('x')
  mode = lambda name: stat.S_IMODE(os.stat(tmp_path / name).st_mode)
  assert mode('atomic') == mode('plain')

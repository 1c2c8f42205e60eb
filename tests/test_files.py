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


def test_a_path_of_the_wrong_kind_is_one_line_naming_where_it_came_from(
    tmp_path, monkeypatch):
  """A folder where a file is expected, or a file where a folder is: each path a
  user gives is refused by name before anything is written."""
  from seedsweep.config import base
  from seedsweep.config import checks
  from seedsweep.config import python_files
  from seedsweep.errors import UserError
  from seedsweep.inputs import cache
  from seedsweep.inputs import raw
  from seedsweep.inputs import vectors
  from seedsweep.run import predict
  folder, file = tmp_path / 'folder', tmp_path / 'file'
  folder.mkdir()
  file.write_text('x')
  cases = [
      (lambda: python_files.call(str(folder), 'sweep', '--sweep'),
       rf'--sweep={folder} is a folder; expected a Python file'),
      (lambda: python_files.load_object(f'{folder}:Model', 'config.model.name'),
       rf'config.model.name={folder} is a folder; expected path/to/file.py:Name'),
      (lambda: vectors.detect_format(str(folder)),
       rf'config.data.vectors.path={folder} is a folder; expected a vectors file'),
      (lambda: predict.read_inputs(str(folder)),
       rf'--input={folder} is a folder; expected a file of texts'),
  ]
  for call, message in cases:
    with pytest.raises(UserError, match=message):
      call()
  config = base.get_base_config()
  config.data.tfds_dir = str(file)
  with pytest.raises(UserError, match=rf'config.data.tfds_dir={file} is a file; '
                                      'expected a folder'):
    cache.tfds_dir(config.data)
  monkeypatch.setenv('SEEDSWEEP_DATA', str(file))
  with pytest.raises(UserError, match=rf'\$SEEDSWEEP_DATA={file} is a file'):
    raw.root()
  config = base.get_base_config()
  config.data.files.train = str(folder)  # data.name is not 'files': never read
  with pytest.raises(UserError, match=r"config.data.files.train=.* is set, but "
                                      r"config.data.name='demo' reads no such"):
    checks.validate(config)

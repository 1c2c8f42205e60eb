"""A config's file paths resolved once (config/paths.py): relative ones from the folder
a run was started in, registered names and module references left alone."""
import pytest

from seedsweep.config import paths
from tests.conftest import small_config


@pytest.mark.parametrize('value, expected', [
    ('data/train.csv', '/project/data/train.csv'),
    ('../v.txt', '/v.txt'),
    ('/abs/train.csv', '/abs/train.csv'),
    ('my_code/cnn.py:CNN', '/project/my_code/cnn.py:CNN'),
    ('pkg.module:Reader', 'pkg.module:Reader'),  # a module: found by import
    ('', ''),
])
def test_a_relative_path_is_taken_from_the_base(value, expected):
  assert paths.absolute(value, '/project') == expected


def test_the_config_a_run_uses_has_absolute_paths_and_the_given_one_is_kept():
  config = small_config()
  config.data.vectors.path = 'vectors/v.txt'
  config.model.name = 'my.py:Net'
  resolved = paths.resolved(config, '/project')
  assert resolved.data.vectors.path == '/project/vectors/v.txt'
  assert resolved.model.name == '/project/my.py:Net'
  assert resolved.data.name == 'demo'  # a registered name
  assert config.data.vectors.path == 'vectors/v.txt'  # a copy: the given one stays
  assert paths.resolved(small_config(), '/project').data.vectors.path == ''


def test_a_stored_config_resolves_as_the_config_it_was_made_from():
  stored = {'data': {'name': 'files', 'files': {'train': 't.csv', 'dev': ''},
                     'vectors': {'path': '/abs/v.txt'}},
            'model': {'name': 'bilstm'}, 'seeds': [1]}
  out = paths.resolved_dict(stored, '/base')
  assert out == {'data': {'name': 'files', 'files': {'train': '/base/t.csv', 'dev': ''},
                          'vectors': {'path': '/abs/v.txt'}},
                 'model': {'name': 'bilstm'}, 'seeds': [1]}
  assert stored['data']['files']['train'] == 't.csv'  # not changed in place

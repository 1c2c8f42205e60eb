"""The config layer: the base config's JSON round trip, dotted keys, value text."""
import json

import pytest

from seedsweep.config import base
from seedsweep.config import checks
from seedsweep.config import keys
from seedsweep.errors import UserError


def test_a_stored_config_comes_back_with_its_tuples():
  from seedsweep.experiments import dclstm_sst  # pylint: disable=g-import-not-at-top
  for config in (base.get_base_config(), dclstm_sst.get_config('binary')):
    stored = json.loads(json.dumps(checks.to_dict(config)))
    restored = checks.from_dict(stored)
    assert checks.differences(stored, checks.to_dict(restored)) == []
    assert isinstance(restored.seeds, tuple) and isinstance(restored.l2.params, tuple)


def test_a_run_made_before_a_field_existed_gets_the_value_it_ran_with():
  stored = checks.to_dict(base.get_base_config())
  del stored['runtime']
  del stored['optimizer']['embedding_update']
  del stored['data']['eval_padding']
  restored = checks.from_dict(json.loads(json.dumps(stored)))
  assert restored.runtime.cpu_threads == checks.ADDED['runtime.cpu_threads'] == 0
  assert restored.optimizer.embedding_update == 'dense'
  assert restored.data.eval_padding == 0  # evaluation at the training buckets' lengths
  assert checks.differences(stored, checks.to_dict(restored)) == []


def test_an_unknown_dotted_key_names_the_first_missing_part_and_the_fields_there():
  config = base.get_base_config()
  assert keys.missing_field(config, 'train.batch_size') is None
  message = keys.missing_field(config, 'train.bach_size')
  assert message.startswith("config.train has no field 'bach_size' (did you mean "
                            "'batch_size'?); its fields are [")
  assert "'batch_size'" in message
  assert keys.missing_field(config, 'seeds.x') == "config.seeds has no field 'x'; its fields are []"
  with pytest.raises(UserError, match=r"^here: config has no field 'trian'"):
    keys.set_value(config, 'trian.batch_size', 3, 'here')


def test_set_value_sets_in_place_and_refuses_a_wrong_type():
  config = base.get_base_config()
  keys.set_value(config, 'l2.params', ['kernel', 'bias'], 'here')
  assert config.l2.params == ('kernel', 'bias')
  with pytest.raises(UserError, match=r'^here: config.train.batch_size=.abc. does not fit'):
    keys.set_value(config, 'train.batch_size', 'abc', 'here')
  copy = keys.with_values(config, {'train.batch_size': 7}, 'here')
  assert copy.train.batch_size == 7 and config.train.batch_size == 50
  # load_config('demo', train={'progress': False}) would drop every other field.
  with pytest.raises(UserError, match=r'^here: config.train is a group of fields; '
                     r'expected one field of it, such as config.train.\w+$'):
    keys.set_value(config, 'train', {'progress': False}, 'here')
  assert config.train.batch_size == 50


def test_value_text_is_one_form_for_folder_names_and_reports():
  assert [keys.value_text(v) for v in (0.1, 1e-05, 3, 'adam', (5, 40), (), True)] == [
      '0.1', '1e-05', '3', 'adam', '5-40', 'none', 'True']
  assert keys.folder_safe(keys.value_text('a b/c')) == 'a_b_c'
  assert keys.short_names(['model.dropout', 'data.dropout', 'model.hidden']) == [
      'model.dropout', 'data.dropout', 'hidden']


@pytest.mark.parametrize('text, message', [
    ('x = 1\n', r'f.py defines no function get_config\(arg\)'),
    ('def get_config(arg=None):\n  return {"seeds": (1,)}\n',
     r'get_config returned dict; expected an ml_collections.ConfigDict'),
    ('import nonexistent_module_xyz\n', r"f.py, line 1: ModuleNotFoundError: No module "
     r"named 'nonexistent_module_xyz' \(while loading --config="),
])
def test_a_config_file_that_cannot_give_a_config_names_the_file_and_line(
    tmp_path, text, message):
  path = tmp_path / 'f.py'
  path.write_text(text)
  with pytest.raises(UserError, match=message):
    base.load_config(str(path))


def test_choices_suggest_the_closest_valid_value():
  config = base.get_base_config()
  config.train.nan_policy = 'fatl'
  with pytest.raises(UserError, match=r"config.train.nan_policy='fatl' \(did you mean "
                                      r"'fatal'\?\); expected one of \('freeze', 'fatal'\)"):
    checks.validate(config)
  assert keys.did_you_mean('zzz', ['adam', 'sgd']) == ''


@pytest.mark.parametrize('value', [0.9, -1, float('inf'), float('nan')])
def test_a_bad_eval_padding_is_refused_naming_the_field(value):
  config = base.get_base_config()
  config.data.eval_padding = value
  with pytest.raises(UserError, match=r'^config.data.eval_padding=.*; expected a '
                                      r'finite number >= 1'):
    checks.validate(config)


@pytest.mark.parametrize('key, value, expected', [
    ('optimizer.learning_rate', float('nan'), 'a finite number > 0'),
    ('optimizer.learning_rate', -0.1, 'a finite number > 0'),
    ('optimizer.clip_global_norm', float('inf'), 'a finite number >= 0'),
    ('l2.coef', -1e-4, 'a finite number >= 0'),
    ('optimizer.b2', 1.0, r'a rate in \[0, 1\)'),
])
def test_a_bad_optimiser_number_is_refused_before_anything_runs(key, value, expected):
  config = base.get_base_config()
  keys.set_value(config, key, value, 'test')
  with pytest.raises(UserError, match=rf'^config.{key}=.*; expected {expected}$'):
    checks.validate(config)


@pytest.mark.parametrize('key, value, expected', [
    ('train.batch_size', 0, 'an int >= 1$'),
    ('train.num_epochs', 2**40, r'an int <= 2147483647$'),
    ('data.num_buckets', 10**6, r'an int <= 1024 \(each bucket is a program'),
    ('data.bucket_multiple', 10**12, r'an int <= 65536'),
    ('data.min_count', -1, 'an int >= 0$'),
    ('data.num_folds', 1, r'an int >= 2 \(folds'),
    ('data.max_length', -5, r'an int >= 0 \(0 = no limit\)$'),
])
def test_a_count_or_size_out_of_range_is_refused_before_anything_runs(key, value,
                                                                      expected):
  config = base.get_base_config()
  keys.set_value(config, key, value, 'test')
  with pytest.raises(UserError, match=rf'^config.{key}=.*; expected {expected}'):
    checks.validate(config)

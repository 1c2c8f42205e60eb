"""The config layer: the base config's JSON round trip, dotted keys, value text, one
declaration per field and the tables derived from it."""
import importlib
import json
import os
import re

import pytest

from seedsweep.config import base
from seedsweep.config import checks
from seedsweep.config import fields
from seedsweep.config import keys
from seedsweep.config import stacking
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


# --- one declaration per field (base.py); the tables derived from it ---------------


def test_every_field_of_the_base_config_is_declared_once_in_its_order():
  flat = checks.flatten(checks.to_dict(base.get_base_config()))
  assert list(flat) == list(base.FIELDS)
  # A key repeated in a dict literal would silently replace the first declaration.
  import ast  # pylint: disable=g-import-not-at-top
  with open(base.__file__, encoding='utf-8') as f:
    tree = ast.parse(f.read())
  for node in ast.walk(tree):
    if isinstance(node, ast.Dict):
      names = [k.value for k in node.keys if isinstance(k, ast.Constant)]
      assert len(names) == len(set(names)), f'base.py:{node.lineno} repeats a key'
  for key, field in base.FIELDS.items():  # every default passes its own check
    if field.check:
      field.check(key, None if isinstance(field.default, fields.Placeholder)
                  else field.default)
    if field.added is not fields.ORIGINAL and field.check:
      field.check(key, field.added)  # ... and so does the value of older runs


def test_the_tables_are_those_the_declarations_say():
  decl = base.FIELDS
  assert set(checks.NON_SEMANTIC) == {k for k, f in decl.items() if not f.semantic}
  assert set(checks.NON_SEMANTIC_SECTIONS) == {'log.', 'launch.'} == {
      f'{k}.' for k, s in base.SECTIONS.items() if not s.semantic}
  assert checks.ADDED == {k: f.added for k, f in decl.items()
                          if f.added is not fields.ORIGINAL}
  assert checks.CHECKED == tuple(k for k, f in decl.items() if f.check)
  declared = tuple(k for k, f in decl.items() if f.stack)
  assert stacking.STACKABLE == declared + tuple(f'model.{f}' for f in stacking.MODEL_FIELDS)
  assert stacking.OFF_AT_ZERO == tuple(k for k in declared
                                       if decl[k].stack == fields.STACK_OFF_AT_ZERO)
  assert stacking.ALWAYS_TRACED == tuple(
      k for k, how in stacking.HOW_STACKED.items() if how == fields.STACK_ALWAYS)
  # What the tables said before they were derived (issue 73).
  assert set(checks.NON_SEMANTIC) == {'train.progress', 'data.tfds_dir', 'train.nan_policy',
                                      'runtime.memory_budget', 'train.steps_per_dispatch'}
  assert checks.ADDED['runtime.numerics'] == 'native' and len(checks.ADDED) == 20
  assert checks.ADDED['train.lanes'] == 16  # runs before lanes: none took them
  assert stacking.STACKABLE[:4] == ('optimizer.learning_rate', 'optimizer.clip_global_norm',
                                    'optimizer.clip_value', 'l2.coef')


def test_one_declaration_puts_a_new_field_in_every_table(monkeypatch):
  original = (checks.NON_SEMANTIC, checks.ADDED, checks.CHECKED, stacking.STACKABLE)
  knob = fields.Field(3, 'a field this test adds', check=fields.Int(1, 9), semantic=False,
                      added=1, stack=fields.STACK_WHEN_SET)
  monkeypatch.setitem(base.TRAIN.fields, 'knob', knob)
  monkeypatch.setattr(base, 'FIELDS', base.BASE.flat())
  try:
    importlib.reload(stacking)
    importlib.reload(checks)
    config = base.get_base_config()
    assert config.train.knob == 3
    assert 'train.knob' in checks.NON_SEMANTIC and 'train.knob' in checks.CHECKED
    assert checks.ADDED['train.knob'] == 1
    assert 'train.knob' in stacking.STACKABLE
    config.train.knob = 10
    with pytest.raises(UserError, match=r'^config.train.knob=10; expected an int <= 9$'):
      checks.validate(config)
    stored = checks.to_dict(base.get_base_config())
    del stored['train']['knob']  # a run made before the field: read as knob=1
    assert checks.from_dict(stored).train.knob == 1
  finally:
    monkeypatch.undo()
    importlib.reload(stacking)
    importlib.reload(checks)
  assert (checks.NON_SEMANTIC, checks.ADDED, checks.CHECKED, stacking.STACKABLE) == original


def test_every_field_and_section_has_a_doc():
  # What --mode=describe prints beside a value and docs/configuration.md lists: a
  # field declared without one would stand there unexplained.
  empty = [k for k, f in base.FIELDS.items() if not f.doc.strip()]
  assert empty == [], f'fields declared without doc= in config/base.py: {empty}'
  assert [k for k, s in base.SECTIONS.items() if not s.doc.strip()] == []
  assert base.BASE.doc.strip()


def test_the_manuals_tables_list_every_field_with_its_default_and_doc():
  rows = [line for line in fields.markdown_tables(base.BASE)
          if line.startswith('| `')]
  keys = [re.match(r'\| `([\w.]+)` \|', line).group(1) for line in rows]
  assert keys == list(base.FIELDS)  # every field once, in the declarations' order
  for line, (key, field) in zip(rows, base.FIELDS.items()):
    _, _, default, doc, _ = re.split(r'(?<!\\)\|', line)  # cells; '\|' stays
    assert default.strip() == f'`{fields.default_text(field)}`'
    assert doc.strip().replace('\\', '') == field.doc.strip(), key
  assert '| `optimizer.momentum` | `None` |' in '\n'.join(rows)
  assert '| `l2.params` | `(\'kernel\',)` |' in '\n'.join(rows)
  # The page generates them when the manual is built, and is in its table of contents.
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  with open(os.path.join(root, 'docs', 'configuration.md'), encoding='utf-8') as f:
    assert '```{seedsweep-config-fields}' in f.read()
  with open(os.path.join(root, 'docs', 'index.md'), encoding='utf-8') as f:
    assert '\nconfiguration\n' in f.read()

"""The README tier (tests/conftest.py) leaves no test file and no module behind: every
test file keeps a test in it, and every module of the package is imported or named by
a test file of the tier, or run by a test of the tier that THROUGH names."""
import ast
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.test_layers import MODULES

# Modules no test file imports or names, each with the README tier's test that runs
# it (a process, or the package's own use of it).
THROUGH = {
    'seedsweep.__main__': 'tests/test_package.py::test_the_demo_trains_predicts_and_'
                          'reports_through_the_python_api_and_the_command',
    'seedsweep.data.__main__': 'tests/test_datasets.py::test_python_m_data_prints_'
                               'statistics_as_json',
    'seedsweep.data.demo': 'tests/test_golden.py::test_the_installed_jax_is_the_one_'
                           'the_goldens_were_made_with',
    'seedsweep.engine.hosts': 'tests/test_sharding.py::test_seed_axis_is_sharded_over_'
                              'devices_with_the_same_numbers',
    'seedsweep.engine.objectives': 'tests/test_train.py::test_one_train_step_changes_'
                                   'every_parameter_of_every_seed[map]',
    'seedsweep.inputs.embeddings': 'tests/test_embeddings.py::test_vectors_initialise_'
                                   'the_found_words_and_static_keeps_them[False]',
    'seedsweep.inputs.encoded': 'tests/test_pipeline.py::test_each_seed_sees_every_'
                                'example_once_per_epoch_in_its_own_order',
    'seedsweep.inputs.pool': 'tests/test_pipeline.py::test_each_seed_sees_every_'
                             'example_once_per_epoch_in_its_own_order',
    'seedsweep.models.baselines': 'tests/test_models.py::test_padding_never_changes_'
                                  'logits[bilstm-last]',
    'seedsweep.models.nnx_adapter': 'tests/test_model_contract.py::test_an_nnx_member_'
                                    'has_the_same_bits_alone_and_among_others',
    'seedsweep.run.own_model': 'tests/test_model_contract.py::test_describe_checks_the_'
                               'model_too',
    'seedsweep.reports.searches': 'tests/test_search.py::test_a_rerun_with_another_'
                                  'space_is_refused',
    'seedsweep.run.stop_signals': 'tests/test_faults.py::test_a_run_killed_and_stopped_'
                                  'ends_like_an_uninterrupted_one[mid_epoch]',
    'seedsweep.run.timing': 'tests/test_faults.py::test_a_finished_run_is_left_alone_'
                            'and_other_configs_are_refused',
    'seedsweep.sweep.launchers': 'tests/test_chaos.py::test_a_sweep_killed_ends_as_the_'
                                 'undisturbed_one[1]',
}
# The config files (experiments/, sweeps/, searches/): tests/test_experiments.py and
# tests/test_sweeps.py read every one; they are settings, not code of the package.
CONFIG_FILES = ('seedsweep.experiments', 'seedsweep.sweeps', 'seedsweep.searches')


def _test_files():
  """Every test file of the folder, as pytest names it."""
  return sorted(f'tests/{f}' for f in os.listdir(os.path.join(REPO, 'tests'))
                if f.startswith('test_') and f.endswith('.py'))


def _this_session(config):
  """What tests/conftest.py stashed for this session's collection, or {}. (Found
  through pytest's own conftest module: test files import the file again, as
  ``tests.conftest``, with a key of its own.)"""
  for plugin in config.pluginmanager.get_plugins():
    key = getattr(plugin, 'TIER_BY_FILE', None)
    if isinstance(key, pytest.StashKey) and key in config.stash:
      return config.stash[key]
  return {}


_COLLECTED = {}  # tier_by_file's own collection, made once per session


def tier_by_file(config):
  """``{test file: [its node ids in the README tier]}`` of the whole folder: this
  session's collection where it held every file, else a collection of its own."""
  tier = _this_session(config)
  if set(tier) >= set(_test_files()):
    return tier
  if 'tier' in _COLLECTED:
    return _COLLECTED['tier']
  lists = []
  for extra in ([], ['--all']):
    proc = subprocess.run([sys.executable, '-m', 'pytest', '--collect-only', '-q',
                           '-n', '0', '-p', 'no:cacheprovider', *extra, 'tests'],
                          cwd=REPO, capture_output=True, text=True, check=False,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lists.append([l for l in proc.stdout.splitlines() if '::' in l])
  tier = {f: [] for f in {n.split('::')[0] for n in lists[1]}}
  for nodeid in lists[0]:
    tier[nodeid.split('::')[0]].append(nodeid)
  _COLLECTED['tier'] = tier
  return tier


def test_every_test_file_keeps_a_test_in_the_readme_tier(request):
  tier = tier_by_file(request.config)
  assert sorted(tier) == _test_files()
  empty = [f for f in _test_files() if not tier[f]]
  assert not empty, (f'{empty}: every test marked full, so `python -m pytest` runs '
                     'none of it; leave one representative unmarked')


def _imported_or_named(path):
  """The modules the file at ``path`` imports (``from X import Y``: X and X.Y), and
  its text (for dotted names and file paths)."""
  with open(path, encoding='utf-8') as f:
    text = f.read()
  found = set()
  for node in ast.walk(ast.parse(text)):
    if isinstance(node, ast.Import):
      found |= {a.name for a in node.names}
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
      found |= {node.module} | {f'{node.module}.{a.name}' for a in node.names}
  return found, text


def test_every_module_is_imported_or_named_by_a_file_of_the_readme_tier(request):
  tier = tier_by_file(request.config)
  files = [f for f, kept in tier.items() if kept and f != 'tests/test_tiers.py']
  files.append('tests/conftest.py')
  imported, texts = set(), []
  for path in files:
    found, text = _imported_or_named(os.path.join(REPO, path))
    imported |= found
    texts.append(text)
  for helper in ('golden_runs', 'determinism_probe'):  # what tier files run
    if f'tests.{helper}' in imported or f'tests/{helper}.py' in '\n'.join(texts):
      found, text = _imported_or_named(os.path.join(REPO, 'tests', f'{helper}.py'))
      imported |= found
      texts.append(text)
  text = '\n'.join(texts)
  dotted = set(re.findall(r'[A-Za-z_][\w.]*\w', text))  # `seedsweep.run.loop.train`
  dotted |= {'.'.join(name.split('.')[:i]) for name in list(dotted)
             for i in range(2, name.count('.') + 1)}
  left = []
  for module, path in sorted(MODULES.items()):
    if module.startswith(CONFIG_FILES) or module in THROUGH:
      continue
    where = os.path.relpath(path, REPO).replace(os.sep, '/')
    if not (module in imported or module in dotted or where in text):
      left.append(module)
  assert not left, (f'{left}: no test file of the README tier imports or names them; '
                    'test them there, or name the tier test that runs them in THROUGH')
  kept = {n for ids in tier.values() for n in ids}
  assert not [n for n in THROUGH.values() if n not in kept], (
      [n for n in THROUGH.values() if n not in kept], 'not in the README tier')
  assert not [m for m in THROUGH if m not in MODULES], 'THROUGH names no module'

"""One surface (issue 90, item 9): every API function refuses bad input in one line,
eval/verify/predict take the ``--config.*`` flags that change no number, ``--help``
exits 0, a user's reader names its line, absl's and orbax's lines reach
``print_fn``, ``python -m data`` works from a checkout, and a run starts with no
implicit transfer."""
import importlib
import json
import logging
import runpy
import subprocess
import sys

import jax
import numpy as np
import pytest

import seedsweep
from seedsweep.config import checks as config_checks
from seedsweep.errors import UserError
from tests.conftest import REPO
from tests.conftest import run_launch
from tests.conftest import small_config
from tests.conftest import tiny_shapes
from tests.conftest import user_environment

CONFIG = small_config()
WORKDIR = '/nonexistent/seedsweep-run'
# (call, the line's words): a new user's mistakes with each function of the API.
MISTAKES = [
    (lambda: seedsweep.load_config(CONFIG),
     "seedsweep.load_config: spec is a ConfigDict; expected 'experiments/X.py[:arg]'"),
    (lambda: seedsweep.load_config('dmo:quick'),
     "seedsweep.load_config('dmo:quick'): no file 'dmo' here and no packaged "
     'experiment'),
    (lambda: seedsweep.train('demo:quick', WORKDIR),
     "seedsweep.train: config is the string 'demo:quick'; expected a ConfigDict, e.g. "
     "seedsweep.load_config('demo:quick')"),
    (lambda: seedsweep.train(CONFIG.to_dict(), WORKDIR),
     'seedsweep.train: config is a dict; expected the ConfigDict of'),
    (lambda: seedsweep.train(CONFIG.data, WORKDIR),
     'seedsweep.train: config has no seeds, data, model, train; expected a whole '
     'experiment config'),
    (lambda: seedsweep.train(CONFIG, None),
     "seedsweep.train: workdir is None; expected the path of a run's folder"),
    (lambda: seedsweep.train(CONFIG, ''), "seedsweep.train: workdir is ''"),
    (lambda: seedsweep.train(CONFIG, WORKDIR, print_fn='quiet'),
     "seedsweep.train: print_fn is 'quiet'; expected a function called with each line"),
    (lambda: seedsweep.evaluate(CONFIG),
     "seedsweep.evaluate: workdir is a ConfigDict; expected the path of a trained run's "
     'folder (evaluate reads the config the run stored; config=... checks it)'),
    (lambda: seedsweep.evaluate(WORKDIR, config='demo'),
     "seedsweep.evaluate: config is the string 'demo'"),
    (lambda: seedsweep.evaluate(WORKDIR), f'{WORKDIR} holds no config.json'),
    (lambda: seedsweep.predict(CONFIG, ['a film']),
     'seedsweep.predict: workdir is a ConfigDict'),
    (lambda: seedsweep.predict(WORKDIR, 5), 'seedsweep.predict: texts is 5; expected a '
     'list of strings'),
    (lambda: seedsweep.predict(WORKDIR, []), 'seedsweep.predict: texts is empty'),
    (lambda: seedsweep.predict(WORKDIR), 'give texts or input_file=PATH, one of them'),
    (lambda: seedsweep.predict(WORKDIR, input_file=3),
     'seedsweep.predict: input_file is 3'),
    (lambda: seedsweep.workdir_config(None), 'seedsweep.workdir_config: workdir is None'),
    (lambda: seedsweep.run_sweep('demo:quick', 'demo', WORKDIR),
     "seedsweep.run_sweep: config is the string 'demo:quick'"),
    (lambda: seedsweep.run_sweep(CONFIG, 'dmo', WORKDIR),
     "seedsweep.run_sweep('dmo'): no file 'dmo' here and no packaged sweep 'dmo'; "
     'closest packaged: demo'),
    (lambda: seedsweep.run_sweep(CONFIG, 'demo', WORKDIR, shard=1),
     "seedsweep.run_sweep: shard is 1; expected 'i/n'"),
    (lambda: seedsweep.run_search(CONFIG, 'demo_search', None),
     'seedsweep.run_search: root is None'),
    (lambda: seedsweep.run_search(CONFIG, 'demo_search', WORKDIR, study=3),
     'seedsweep.run_search: study is 3; expected an SQLAlchemy URL'),
    (lambda: seedsweep.report(CONFIG), 'seedsweep.report: root is a ConfigDict'),
    (lambda: seedsweep.read_split(None), 'seedsweep.read_split: config is None; expected '
     "a dataset's name ('demo'), an experiment's ConfigDict or its config.data"),
    (lambda: seedsweep.read_split('sst'), "seedsweep.read_split('sst'): no dataset of "
     "that name (did you mean 'sst/binary' or"),
    (lambda: seedsweep.read_split('files'), "seedsweep.read_split('files'): own data "
     "files need their paths; pass the experiment's config"),
    (lambda: seedsweep.read_split('demo', 0), 'seedsweep.read_split: split is 0'),
]


@pytest.mark.parametrize('call,expected', MISTAKES,
                         ids=[e.split(':')[0] + f'-{i}' for i, (_, e) in
                              enumerate(MISTAKES)])
def test_each_api_function_refuses_a_new_users_mistake_in_one_line(call, expected):
  """Before anything is read or written: one UserError line naming the function,
  the argument and what it takes."""
  with pytest.raises(UserError) as raised:
    call()
  message = str(raised.value)
  assert expected in message and '\n' not in message, message


def test_a_misspelt_function_of_the_package_names_the_closest():
  with pytest.raises(AttributeError, match="has no attribute 'evaluat'; did you mean "
                                           "'evaluate'"):
    seedsweep.evaluat  # pylint: disable=pointless-statement


@pytest.mark.slow  # reads the demo dataset (prepared once)
def test_read_split_takes_a_datasets_name_a_config_and_its_data_section():
  """``read_split('demo', 'train')``, as a new user writes it, reads what the
  experiment's config reads; a split the dataset lacks names those it has."""
  by_name = seedsweep.read_split('demo', 'train')
  assert by_name == seedsweep.read_split(CONFIG, 'train')
  assert by_name == seedsweep.read_split(CONFIG.data, 'train')
  texts, labels = by_name
  assert len(texts) == len(labels) == 3000 and set(labels) == {'negative', 'positive'}
  with pytest.raises(UserError, match=r"dataset 'demo' has no 'training' split; it has "
                                      r"\['dev', 'test', 'train'\]"):
    seedsweep.read_split('demo', 'training')


@pytest.mark.slow  # prepares a dataset (the builder's)
@pytest.mark.parametrize('kind', ['reader', 'builder'])
def test_a_users_reader_or_builder_raising_names_its_file_and_line(tmp_path, kind):
  code = {
      'reader': ('def read(data_config):\n'
                 "  rows = [('a film', 'good')] * 8\n"
                 "  return {'train': [row['text'] for row in rows]}\n"),
      'builder': ('from seedsweep.inputs import tfds_base\n\n\n'
                  'class Mine(tfds_base.RawTextBuilder):\n'
                  "  name = 'surface_raising'\n"
                  '  READS_ROOT = False\n\n'
                  '  def read(self, root):\n'
                  '    return {}["train"]\n'),
  }[kind]
  path = tmp_path / f'{kind}.py'
  path.write_text(code)
  ref = f'{path}:{"read" if kind == "reader" else "Mine"}'
  config = seedsweep.load_config('demo:quick', data__name=ref,
                                 data__tfds_dir=str(tmp_path / 'tfds'))
  with pytest.raises(UserError) as raised:
    seedsweep.read_split(config, 'train')
  line = 3 if kind == 'reader' else 9
  error = 'TypeError: tuple indices' if kind == 'reader' else "KeyError: 'train'"
  assert str(raised.value).startswith(
      f'{path}, line {line}: the {kind} raised {error}'), raised.value
  assert f"(config.data.name='{ref}')" in str(raised.value)


def _stored_run(tmp_path) -> str:
  """A workdir holding the config.json of ``CONFIG`` (all the flags read)."""
  workdir = tmp_path / 'run'
  workdir.mkdir()
  (workdir / 'config.json').write_text(
      json.dumps(config_checks.to_dict(CONFIG)))
  return str(workdir)


def test_a_trained_runs_modes_take_the_flags_that_change_no_number(tmp_path,
                                                                   monkeypatch):
  """Without --config, eval/verify/predict set ``--config.*`` on the config the run
  stored (a progress bar, a cache folder); one that changes what it trained is
  refused in one line listing the flags they take; train wants --config."""
  from seedsweep import cli  # pylint: disable=g-import-not-at-top
  workdir = _stored_run(tmp_path)
  argv, held = cli.hold_run_overrides(
      ['seedsweep', '--mode=verify', '--config.train.progress', 'false',
       f'--workdir={workdir}', '--config.data.tfds_dir=/elsewhere'])
  assert argv == ['seedsweep', '--mode=verify', f'--workdir={workdir}']
  assert held == {'train.progress': 'false', 'data.tfds_dir': '/elsewhere'}
  assert cli.hold_run_overrides(['s', '--config=demo', '--config.seeds=(1,)'])[1] == {}
  monkeypatch.setattr(cli, 'RUN_OVERRIDES', held)
  config = cli.stored_with_overrides('verify', workdir)
  assert config.train.progress is False and config.data.tfds_dir == '/elsewhere'
  assert config.model.hidden == CONFIG.model.hidden
  monkeypatch.setattr(cli, 'RUN_OVERRIDES', {'model.hidden': '64'})
  with pytest.raises(UserError) as raised:
    cli.stored_with_overrides('predict', workdir)
  assert str(raised.value) == (
      f'--config.model.hidden=64: --mode=predict uses the config the run in {workdir} '
      f'trained with, and this changes it (model.hidden: {CONFIG.model.hidden} != 64); '
      'it takes the flags that change no number: --config.data.tfds_dir, '
      '--config.train.steps_per_dispatch, --config.train.nan_policy, '
      '--config.train.progress, --config.runtime.memory_budget, --config.log.*, '
      '--config.launch.*')
  monkeypatch.setattr(cli, 'RUN_OVERRIDES', {'train.progres': 'False'})
  with pytest.raises(UserError, match="config.train has no field 'progres' "
                                      r"\(did you mean 'progress'\?\)"):
    cli.stored_with_overrides('eval', workdir)


def test_help_exits_0(capsys):
  """absl's help flags exit 1 after the help; asked for, the command exits 0."""
  from absl import app  # pylint: disable=g-import-not-at-top
  from absl.testing import flagsaver  # pylint: disable=g-import-not-at-top
  from seedsweep import cli  # pylint: disable=g-import-not-at-top
  app.define_help_flags()  # as app.run does
  for flag in ('--help', '--helpshort'):
    with flagsaver.flagsaver(), pytest.raises(SystemExit) as exited:
      cli.parse_flags(['seedsweep', flag])
    assert exited.value.code == 0
    assert 'Try --helpfull to get a list of all flags.' in capsys.readouterr().out


def test_absl_and_orbax_lines_reach_print_fn(capfd, tmp_path):
  """Within a run's door absl's records (orbax's saving and restoring) are print_fn
  lines naming their package, from WARNING up or from the verbosity absl was set to;
  none reaches stderr; after the door, absl logs as before."""
  from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top
  from seedsweep import notices  # pylint: disable=g-import-not-at-top
  from seedsweep.run import checkpoints  # pylint: disable=g-import-not-at-top
  capfd.readouterr()
  lines = []
  with notices.to(lines.append):
    absl_logging.info('chatter')
    absl_logging.warning('the disk is %d%% full', 95)
  assert lines == ['warning: test_surface.py: the disk is 95% full']
  verbosity = absl_logging.get_verbosity()
  lines.clear()
  try:
    absl_logging.set_verbosity(absl_logging.INFO)
    with notices.to(lines.append):
      ckpts = checkpoints.Checkpoints(str(tmp_path))
      ckpts.save(1, {'w': np.zeros(3, np.float32)}, {'epoch': 1})
      ckpts.close()
  finally:
    absl_logging.set_verbosity(verbosity)
  assert lines and all(l.startswith('info: orbax: ') for l in lines), lines[:3]
  assert capfd.readouterr() == ('', '')
  assert logging.getLogger('absl').propagate and not logging.getLogger('absl').handlers


def test_python_m_data_from_a_checkout_is_the_packaged_data(monkeypatch, capsys):
  """The checkout's ``data/`` imported as ``data`` is seedsweep.data (no second TFDS
  registration): ``python -m data --list`` runs. (``python -m data.word2vec`` runs
  in a process of its own, below: in this one another test may have imported
  seedsweep.data.word2vec already, whose loader runpy cannot hand the other name.)"""
  from seedsweep import data as packaged  # pylint: disable=g-import-not-at-top
  monkeypatch.syspath_prepend(REPO)
  monkeypatch.delitem(sys.modules, 'data', raising=False)
  # By its bare name, as from the checkout's root (tests/test_layers.py keeps the
  # package's own imports off it).
  assert importlib.import_module('data') is packaged
  assert importlib.import_module('data.sst') is packaged.sst
  monkeypatch.setattr(sys, 'argv', ['python -m data', '--list'])
  with pytest.raises(SystemExit) as exited:
    runpy.run_module('data', run_name='__main__')
  assert exited.value.code == 0
  assert 'sst/binary\n' in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.full  # a process: the in-process form above
def test_python_m_data_runs_from_the_checkouts_root():
  proc = subprocess.run([sys.executable, '-m', 'data', '--list'], cwd=REPO,
                        env=user_environment(), capture_output=True, text=True,
                        timeout=300, check=False)
  assert proc.returncode == 0 and 'trec/coarse' in proc.stdout.split(), proc.stderr
  proc = subprocess.run([sys.executable, '-m', 'data.word2vec', '--help'], cwd=REPO,
                        env=user_environment(), capture_output=True, text=True,
                        timeout=300, check=False)
  assert proc.returncode == 0, proc.stderr
  assert 'usage: python -m seedsweep.data.word2vec' in proc.stdout


def test_the_early_stopping_question_stays_on_the_host():
  """``engine.steps.stopped`` on the host's [members] array (patience off or on)
  answers in NumPy, under ``jax.transfer_guard('disallow')``."""
  from seedsweep.engine import steps as steps_lib  # pylint: disable=g-import-not-at-top
  best = np.array([1, 3], np.int32)
  with jax.transfer_guard('disallow'):
    off, on = steps_lib.stopped(best, 4, 0), steps_lib.stopped(best, 4, 2)
  assert isinstance(off, np.ndarray) and off.tolist() == [False, False]
  assert isinstance(on, np.ndarray) and on.tolist() == [True, False]


@pytest.mark.slow
@pytest.mark.full  # trains; tests/test_dispatch.py holds an epoch under the guard
def test_a_whole_run_makes_no_implicit_transfer(tmp_path):
  """A one-epoch run from its start (the build, the first epoch's early-stop question,
  compile-ahead, the epoch, the checkpoint, the results) under
  ``jax.transfer_guard('disallow')``: every copy between host and device is asked
  for."""
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  config = tiny_shapes(small_config(seeds=(1, 2), epochs=1))
  lines = []
  with jax.transfer_guard('disallow'):
    results = loop.train(config, str(tmp_path / 'run'), lines.append)
  assert results['finished'] and results['epochs_completed'] == 1


@pytest.mark.slow
@pytest.mark.full  # trains and starts processes; the flags' rules: in-process above
def test_verify_and_predict_take_overrides_on_a_trained_run(tmp_path):
  """The command's eval/verify/predict without --config: the flags reach the run's
  stored config, and the run verifies and predicts."""
  workdir = str(tmp_path / 'run')
  config = tiny_shapes(small_config(seeds=(1,), epochs=1))
  seedsweep.train(config, workdir, print_fn=lambda *a: None)
  (tmp_path / 'in.txt').write_text('a good film\n')
  proc = run_launch('--mode=verify', f'--workdir={workdir}',
                    '--config.train.steps_per_dispatch=4')
  assert proc.returncode == 0 and 'reproduced' in proc.stdout, proc.stderr[-3000:]
  proc = run_launch('--mode=predict', f'--workdir={workdir}',
                    f'--input={tmp_path / "in.txt"}', '--config.train.progress=False')
  assert proc.returncode == 0 and '"label"' in proc.stdout, proc.stderr[-3000:]

"""A model of one's own named over a packaged experiment (``--config.model.name=
FILE:Class``: the class's own fields, models.take_named_model), and one's own files as
part of a run's identity (an edited model file refused on resume and re-evaluation,
warned about by predict, named by verify: provenance.input_changes). The model and the
command are docs/data.md's own, read from the page, so the manual's example runs as
written."""
import collections
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest

import seedsweep
from seedsweep import models
from seedsweep.errors import UserError
from tests import conftest

DOC = os.path.join(conftest.REPO, 'docs', 'data.md')
MODEL = 'my_code/cnn.py:CNNClassifier'


def _doc_blocks(language: str):
  """The fenced ``language`` blocks of docs/data.md."""
  with open(DOC, encoding='utf-8') as f:
    return re.findall(rf'```{language}\n(.*?)```', f.read(), re.S)


def _doc_model() -> str:
  """The own model docs/data.md shows (the block that starts '# my_code/cnn.py')."""
  return next(b for b in _doc_blocks('python') if b.startswith('# my_code/cnn.py'))


def _doc_command():
  """The arguments of docs/data.md's command that trains that model."""
  block = next(b for b in _doc_blocks('sh') if MODEL in b)
  words = shlex.split(block.replace('\\\n', ' '))
  assert words[0] == 'seedsweep'
  return words[1:]


def _make_project(folder):
  """``folder`` made a user's folder holding docs/data.md's model as my_code/cnn.py."""
  (folder / 'my_code').mkdir(parents=True)
  (folder / 'my_code' / 'cnn.py').write_text(_doc_model())
  return folder


@pytest.fixture
def project(tmp_path):
  """A user's folder holding docs/data.md's model as my_code/cnn.py."""
  return _make_project(tmp_path / 'project')


def _train_args(workdir):
  """docs/data.md's command as written, to ``workdir`` (two seeds, to be quick)."""
  return [f'--workdir={workdir}' if a.startswith('--workdir=') else a
          for a in _doc_command()] + ["--config.seeds=(1,2)",
                                      '--config.train.progress=False']


def manual_run(tmp_path_factory) -> str:
  """A project folder whose ``run`` docs/data.md's command trained, made once per
  run of the suite (tests/test_verdict.py compares it too): tests copy it."""
  def build(folder):
    project = _make_project(pathlib.Path(folder) / 'project')
    trained = _command(*_train_args(project / 'run'), cwd=project)
    assert trained.returncode == 0, trained.stderr[-3000:]
  return os.path.join(conftest.built_once(tmp_path_factory, 'own_code_manual', build),
                      'project')


def _command(*args, cwd):
  """``python -m seedsweep ARGS`` run from ``cwd`` with this checkout's code."""
  env = conftest.user_environment()
  env['PYTHONPATH'] = os.pathsep.join(
      p for p in (conftest.REPO, env.get('PYTHONPATH')) if p)
  return subprocess.run([sys.executable, '-m', 'seedsweep', *args], cwd=cwd, env=env,
                        capture_output=True, text=True, timeout=600, check=False)


def _error_line(proc) -> str:
  """The one ``error:`` line of a refused command (stderr may hold log lines too)."""
  errors = [line for line in proc.stderr.splitlines() if line.startswith('error:')]
  assert len(errors) == 1, proc.stderr[-3000:]
  return errors[0]


def test_a_model_named_over_a_packaged_config_takes_its_own_fields(project,
                                                                   monkeypatch):
  monkeypatch.chdir(project)
  config = seedsweep.load_config('demo:quick', model__name=MODEL)
  # The demo's embed_dim and dropout the class has are kept; its Bi-LSTM's hidden and
  # pooling are left out; the class's defaults fill the rest.
  assert dict(config.model) == {'name': MODEL, 'embed_dim': 32, 'dropout': 0.2,
                                'filters': 16, 'width': 3}
  model = models.build_model(config.model, vocab_size=10, num_classes=2)
  assert (model.filters, model.width, model.dropout) == (16, 3, 0.2)
  mine = seedsweep.load_config('demo:quick', model__filters=8, model__name=MODEL,
                               model__dropout=0.3)  # its own fields can be set
  assert (mine.model.filters, mine.model.dropout) == (8, 0.3)
  bow = seedsweep.load_config('demo:quick', model__name='bow')  # a registered one too
  assert 'hidden' not in bow.model and bow.model.embed_dim == 32


def test_a_field_set_explicitly_that_the_model_lacks_is_refused_in_one_line(
    project, monkeypatch):
  monkeypatch.chdir(project)
  with pytest.raises(UserError) as raised:
    seedsweep.load_config('demo:quick', model__hidden=64, model__name=MODEL)
  message = str(raised.value)
  assert '\n' not in message
  assert message.startswith("load_config('demo:quick', model__hidden=...): model "
                            f"'{MODEL}' (CNNClassifier) has no field 'hidden'; the "
                            'closest it has is ')
  assert "its fields are ['embed_dim', 'filters', 'width', 'dropout']" in message
  with pytest.raises(UserError, match="has no field 'filterz'; the closest it has is "
                     "'filters'"):
    seedsweep.load_config('demo:quick', model__name=MODEL, model__filterz=8)


def test_a_config_file_naming_its_model_keeps_every_field_it_sets(project,
                                                                  monkeypatch):
  monkeypatch.chdir(project)
  (project / 'mine.py').write_text(
      'from seedsweep.config import base\n\n'
      'def get_config():\n'
      '  config = base.get_base_config()\n'
      f'  config.model.name = {MODEL!r}\n'
      '  config.model.hidden = 3\n'
      '  return config\n')
  for config in (seedsweep.load_config('mine.py'),
                 seedsweep.load_config('mine.py', model__name=MODEL)):
    assert config.model.hidden == 3  # written for this very model: not dropped
    with pytest.raises(UserError, match=r"config.model has field\(s\) \['hidden'\] "
                       r"that model 'my_code/cnn.py:CNNClassifier' \(CNNClassifier\) "
                       "does not take; the closest it has is '"):
      models.build_model(config.model, vocab_size=10, num_classes=2)


@pytest.mark.slow
def test_the_command_names_a_model_over_a_packaged_config(project):
  described = _command('--config=demo:quick', f'--config.model.name={MODEL}',
                       '--config.model.filters', '8', '--mode=describe', cwd=project)
  assert described.returncode == 0, described.stderr[-3000:]
  assert "model.name = 'my_code/cnn.py:CNNClassifier'" in described.stdout
  assert 'model.hidden' not in described.stdout
  assert 'model.filters = 8' in described.stdout  # its own field, from the command
  assert 'model.width = 3' in described.stdout  # its own default
  assert 'kernel (3, 32, 8)' in described.stdout
  for flag, closest in (('--config.model.hidden=64', ''),
                        ('--config.model.filterz=8', "'filters'")):
    refused = _command('--config=demo:quick', f'--config.model.name={MODEL}', flag,
                       '--mode=describe', cwd=project)
    assert refused.returncode != 0
    field = flag.split('.')[-1].split('=')[0]
    assert _error_line(refused).startswith(
        f"error: {flag}: model '{MODEL}' (CNNClassifier) has no field {field!r}; "
        f'the closest it has is {closest}')


@pytest.mark.slow
@pytest.mark.full  # trained to the end by the manual's command, in this process by
# the stop-signal test below (the same load_config and seedsweep.train)
def test_load_config_and_train_a_model_named_over_a_packaged_config(project,
                                                                    monkeypatch):
  monkeypatch.chdir(project)
  config = conftest.tiny_shapes(seedsweep.load_config(
      'demo:quick', model__name=MODEL, seeds=(1,), train__num_epochs=1))
  results = seedsweep.train(config, str(project / 'run'), print_fn=lambda *a: None)
  assert results['provenance']['config']['model'] == {
      'name': MODEL, 'embed_dim': 32, 'dropout': 0.2, 'filters': 16, 'width': 3}
  assert set(results['provenance']['user_code']) == {MODEL}


@pytest.mark.slow
def test_the_manuals_own_model_trains_and_its_edited_file_is_named(tmp_path,
                                                                   tmp_path_factory):
  """docs/data.md's command as written (two seeds, to be quick; the run shared with
  tests/test_verdict.py, copied here); then the model file edited (relu -> tanh) as a
  user might between training and what comes after."""
  project = tmp_path / 'project'
  shutil.copytree(manual_run(tmp_path_factory), project)
  workdir = project / 'run'
  results = json.loads((workdir / 'results.json').read_text())
  assert results['provenance']['config']['model'] == {
      'name': MODEL, 'embed_dim': 32, 'dropout': 0.3, 'filters': 16, 'width': 3}
  assert set(results['provenance']['user_code']) == {MODEL}

  source = project / 'my_code' / 'cnn.py'
  source.write_text(source.read_text().replace('nn.relu(', 'nn.tanh('))
  (project / 'texts.txt').write_text('a good film\na dull plot\n')
  predicted = _command('--mode=predict', f'--workdir={workdir}', '--input=texts.txt',
                       '--output=answers.jsonl', cwd=project)
  assert predicted.returncode == 0, predicted.stderr[-3000:]
  warnings = [line for line in predicted.stderr.splitlines()
              if line.startswith('warning:')]
  assert len(warnings) == 1 and 'file my_code/cnn.py: ' in warnings[0], warnings
  assert len((project / 'answers.jsonl').read_text().splitlines()) == 2

  verified = _command('--mode=verify', f'--workdir={workdir}', cwd=project)
  assert verified.returncode == 1, verified.stderr[-3000:]
  assert re.search(r'^  inputs changed since the run was trained \(a likely cause\): '
                   r'file my_code/cnn\.py: \w+\.\.\. -> \w+\.\.\.$', verified.stdout,
                   re.M), verified.stdout

  evaluated = _command('--mode=eval', f'--workdir={workdir}', cwd=project)
  assert evaluated.returncode != 0
  assert 'cannot re-evaluate' in _error_line(evaluated)
  assert 'file my_code/cnn.py: ' in _error_line(evaluated)

  (workdir / 'results.json').unlink()  # unfinished: training resumes from epoch 2
  resumed = _command(*_train_args(workdir), cwd=project)
  assert resumed.returncode != 0
  assert _error_line(resumed).startswith(f'error: {workdir}: cannot resume: ')
  assert 'file my_code/cnn.py: ' in _error_line(resumed)


def test_a_runs_files_are_compared_like_its_data():
  """provenance.input_changes names an edited model file as it names a data file; a
  module reference (no file) and a record made before files were recorded pass."""
  from seedsweep.run import provenance  # pylint: disable=g-import-not-at-top
  data = {'checksums': {'train': 'a' * 64}}
  recorded = {'data': data, 'user_code': {MODEL: 'b' * 64, 'pkg.mod:read': 'module'}}
  assert provenance.input_changes(recorded, recorded) == []
  edited = {'data': data, 'user_code': {MODEL: 'c' * 64, 'pkg.mod:read': 'module'}}
  assert provenance.input_changes(recorded, edited) == [
      'file my_code/cnn.py: bbbbbbbbbbbb... -> cccccccccccc...']
  assert provenance.input_changes({'data': data}, edited) == []


def test_the_digest_recorded_is_of_the_bytes_the_process_ran(project):
  """A file edited after this process loaded it still runs as loaded (its module is
  kept): its recorded sha256 is that of the bytes that ran, not of the file now."""
  import hashlib  # pylint: disable=g-import-not-at-top
  from seedsweep.config import python_files  # pylint: disable=g-import-not-at-top
  source = project / 'my_code' / 'cnn.py'
  ran = hashlib.sha256(source.read_bytes()).hexdigest()
  ref = f'{source}:CNNClassifier'
  python_files.load_object(ref, 'config.model.name')
  source.write_text(source.read_text().replace('nn.relu(', 'nn.tanh('))
  assert python_files.reference_digest(ref) == ran


@pytest.mark.slow
def test_a_stop_signals_checkpoint_records_the_model_file(project, monkeypatch):
  """The mid-epoch checkpoint a stop signal leaves records the user's files too, so
  a resume from it is checked against them."""
  from seedsweep.errors import Stopped  # pylint: disable=g-import-not-at-top
  from seedsweep.run import checkpoints  # pylint: disable=g-import-not-at-top
  from seedsweep.run import faults  # pylint: disable=g-import-not-at-top
  monkeypatch.chdir(project)
  config = conftest.tiny_shapes(seedsweep.load_config(
      'demo:quick', model__name=MODEL, seeds=(1,), train__num_epochs=1))
  monkeypatch.setattr(faults, '_reached', collections.Counter())  # count from 0
  monkeypatch.setenv(faults.ENV, 'step:1@TERM')
  with pytest.raises(Stopped):
    seedsweep.train(config, 'run', print_fn=lambda *a: None)
  stopped = checkpoints.existing('run', checkpoints.INTERRUPTED, read_only=True)
  try:
    meta = stopped.meta(stopped.steps()[-1])
  finally:
    stopped.close()
  assert list(meta['user_code']) == [MODEL]


# A class of one's own with a field it gives no default (docs/data.md, "Its fields").
WIDENED_SOURCE = '''
import flax.linen as nn

from seedsweep.models import baselines
from seedsweep.models import pooling


class Widened(nn.Module):
  """The mean of the word vectors through a hidden layer.

  Attributes:
    width: the hidden layer's units (no default: set it).
  """
  vocab_size: int
  num_classes: int
  width: int
  embed_dim: int = 16

  @nn.compact
  def __call__(self, batch, *, train: bool):
    x, mask = baselines.embed_batch(batch, self.vocab_size, self.embed_dim)
    hidden = nn.relu(nn.Dense(self.width)(pooling.masked_mean(x, mask)))
    return nn.Dense(self.num_classes)(hidden)
'''
WIDENED = 'my_code/widened.py:Widened'
UNSET = ("config.model.width is not set: field 'width' of Widened "
         f"(config.model.name='{WIDENED}') has no default; set "
         '--config.model.width=VALUE (in Python load_config(..., model__width=VALUE) '
         'or config.model.width = VALUE)')


def test_a_field_without_a_default_is_a_config_field_named_when_missing(
    project, monkeypatch):
  from seedsweep.run import describe  # pylint: disable=g-import-not-at-top
  monkeypatch.chdir(project)
  (project / 'my_code' / 'widened.py').write_text(WIDENED_SOURCE)
  unset = seedsweep.load_config('demo:quick', model__name=WIDENED)
  assert dict(unset.model) == {'name': WIDENED, 'embed_dim': 32}
  with pytest.raises(UserError) as raised:
    models.build_model(unset.model, vocab_size=10, num_classes=2)
  assert str(raised.value) == UNSET
  config = seedsweep.load_config('demo:quick', model__name=WIDENED, model__width=8)
  assert models.build_model(config.model, vocab_size=10, num_classes=2).width == 8
  # A config file of one's own naming the class: the field is set over it as well,
  # and describe shows it with its doc, the class's other fields by their defaults.
  (project / 'mine.py').write_text(
      'from seedsweep.config import base\n\n'
      'def get_config():\n'
      '  config = base.get_base_config()\n'
      "  config.data.name = 'demo'\n"
      f'  config.model.name = {WIDENED!r}\n'
      '  return config\n')
  own = seedsweep.load_config('mine.py', model__width=4)
  info = describe.describe(own)
  assert info['config']['model'] == {'name': WIDENED, 'width': 4}
  assert info['model_defaults'] == {'embed_dim': 16}
  text = describe.format_description(info, own)
  assert re.search(r"^model\.width = 4 +# the hidden layer's units \(no default: set "
                   r'it\)\. \(Widened\)$', text, re.M), text
  assert re.search(r'^model\.embed_dim = 16 +# a field of the model class Widened; its '
                   'default, not in the config$', text, re.M), text
  with pytest.raises(UserError, match=re.escape(UNSET)):
    describe.describe(seedsweep.load_config('mine.py'))


def test_a_packaged_classes_own_fields_are_described_and_settable():
  from seedsweep import cli  # pylint: disable=g-import-not-at-top
  from seedsweep.run import describe  # pylint: disable=g-import-not-at-top
  config = seedsweep.load_config('demo:quick', model__unroll=2)  # not in demo.py
  assert models.build_model(config.model, vocab_size=10, num_classes=2).unroll == 2
  with pytest.raises(UserError, match=r"model__unrol=\.\.\.\): model 'bilstm' "
                     r"\(RecurrentClassifier\) has no field 'unrol'; the closest it "
                     "has is 'unroll'"):
    seedsweep.load_config('demo:quick', model__unrol=2)
  demo = seedsweep.load_config('demo:quick')
  info = describe.describe(demo)
  assert info['model_defaults'] == {'embed_dropout': 0.0, 'unroll': 1}
  assert re.search(r'^model\.embed_dropout = 0\.0 +# on the word vectors '
                   r'\(RecurrentClassifier\); its default, not in the config$',
                   describe.format_description(info, demo), re.M)
  # The command holds such a flag back from config_flags, for flag_config to set.
  flag = os.path.join(conftest.REPO, 'experiments', 'demo.py') + ':quick'
  argv = ['seedsweep', f'--config={flag}', '--config.model.unroll=2',
          '--config.model.hidden', '8', '--config.model.embed_dropout', '0.1']
  assert cli.hold_model_fields(argv) == (
      argv[:2] + ['--config.model.hidden', '8'],
      {'unroll': '2', 'embed_dropout': '0.1'})


@pytest.mark.slow
@pytest.mark.full  # the same functions as the two tests above, from the command
def test_the_command_sets_a_classes_fields_the_config_file_lacks(project):
  (project / 'my_code' / 'widened.py').write_text(WIDENED_SOURCE)
  described = _command('--config=demo:quick', '--config.model.unroll=2',
                       '--mode=describe', cwd=project)
  assert described.returncode == 0, described.stderr[-3000:]
  assert re.search(r'^model\.unroll = 2 +# ', described.stdout, re.M)
  refused = _command('--config=demo:quick', f'--config.model.name={WIDENED}',
                     '--mode=describe', cwd=project)
  assert refused.returncode == 1 and _error_line(refused) == f'error: {UNSET}'
  widened = _command('--config=demo:quick', f'--config.model.name={WIDENED}',
                     '--config.model.width', '8', '--mode=describe', cwd=project)
  assert widened.returncode == 0, widened.stderr[-3000:]
  assert re.search(r'^model\.width = 8 +# ', widened.stdout, re.M)
  assert 'kernel (32, 8)' in widened.stdout

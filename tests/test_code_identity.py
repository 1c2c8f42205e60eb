"""A run's code identity is all of the user's code (issue 90): the model or reader
file and every module of the user's own it imports are recorded
(provenance.user_code), re-read when edited in a running process
(config/python_files.py), and compared by eval, resume, verify and a finished run
met again; verify keeps "the bits reproduce" apart from "an input changed"."""
import json
import os
import sys
import textwrap

import pytest

import seedsweep
from seedsweep.config import python_files
from seedsweep.errors import UserError
from seedsweep.run import provenance
from seedsweep.run import workdir as workdir_lib
from tests import conftest

HELPER = textwrap.dedent('''\
    SCALE = 1.0


    def act(x):
      return x * SCALE
    ''')
MODEL = textwrap.dedent('''\
    import flax.linen as nn
    from helper import act  # beside this file: importable as for a script


    class Mean(nn.Module):
      vocab_size: int
      num_classes: int

      @nn.compact
      def __call__(self, batch, train=False):
        x = nn.Embed(self.vocab_size, 8)(batch['tokens']).mean(1)
        return nn.Dense(self.num_classes)(act(x))
    ''')


@pytest.fixture
def project(tmp_path, monkeypatch):
  """A user's folder: ``my/mean.py`` importing ``my/helper.py``, the cwd. (Python
  keeps one module a name: another test's ``helper`` is forgotten first.)"""
  monkeypatch.delitem(sys.modules, 'helper', raising=False)
  (tmp_path / 'my').mkdir()
  (tmp_path / 'my' / 'helper.py').write_text(HELPER)
  (tmp_path / 'my' / 'mean.py').write_text(MODEL)
  monkeypatch.chdir(tmp_path)
  return tmp_path


def test_a_model_files_own_modules_are_recorded_beside_it(project):
  ref = 'my/mean.py:Mean'
  python_files.load_object(ref, 'config.model.name')
  config = seedsweep.load_config('demo:quick', model__name=ref)
  code = provenance.user_code(config)
  assert set(code) == {ref, 'my/helper.py'}  # the helper in the reference's frame
  assert code['my/helper.py'] == python_files.file_digest_now('my/helper.py')
  assert provenance.input_digests({}, code) == {
      'file my/helper.py': code['my/helper.py'], 'file my/mean.py': code[ref]}


def test_a_file_edited_in_a_running_process_is_run_again(project):
  """A notebook's edit-and-rerun loop: the model file, then its helper, edited after
  the class was loaded; the next load runs the new code and records its digest."""
  ref = 'my/mean.py:Mean'
  first = python_files.load_object(ref, 'config.model.name')
  assert python_files.load_object(ref, 'config.model.name') is first  # unchanged
  (project / 'my' / 'mean.py').write_text(MODEL.replace('mean(1)', 'sum(1)'))
  second = python_files.load_object(ref, 'config.model.name')
  assert second is not first
  assert python_files.reference_digest(ref) == python_files.file_digest_now(ref)
  (project / 'my' / 'helper.py').write_text(HELPER.replace('1.0', '2.0'))
  third = python_files.load_object(ref, 'config.model.name')
  assert third is not second
  assert python_files.reference_imports(ref)['my/helper.py'] == (
      python_files.file_digest_now('my/helper.py'))


def test_installed_and_seedsweep_modules_are_not_the_users():
  import numpy  # pylint: disable=g-import-not-at-top
  from seedsweep.models import clstm  # pylint: disable=g-import-not-at-top
  assert python_files.user_module_file(numpy) is None
  assert python_files.user_module_file(clstm) is None
  assert python_files.user_module_file(json) is None


def test_a_finished_runs_changed_code_is_named_from_its_record(project):
  ref = 'my/mean.py:Mean'
  python_files.load_object(ref, 'config.model.name')
  record = {'user_code': provenance.user_code(
      seedsweep.load_config('demo:quick', model__name=ref))}
  assert provenance.code_changes_now(record) == []
  (project / 'my' / 'helper.py').write_text(HELPER + '\n# edited\n')
  [change] = provenance.code_changes_now(record)
  assert change.startswith('file my/helper.py: ')
  os.remove(project / 'my' / 'mean.py')
  assert provenance.code_changes_now(record)[1].endswith('-> (none)')


@pytest.mark.slow
@pytest.mark.full  # the recording and the re-read: above; the model file's: test_own_code
def test_an_edited_helper_stops_eval_and_resume_unless_accepted_and_recorded(project):
  """A run of an own model importing a helper: the helper edited, eval refuses naming
  it; with the documented choice it goes on and the run records the change; a
  finished run met again says its code changed; verify after a class is added to the
  model file (its bits unchanged) reports them reproduced and the input changed. (An
  eval that went on records the new files: its results.json holds their digests and
  the change it accepted.)"""
  ref = 'my/mean.py:Mean'
  config = conftest.tiny_shapes(seedsweep.load_config(
      'demo:quick', model__name=ref, seeds=(1,), train__num_epochs=1))
  quiet = []
  results = seedsweep.train(config, 'run', print_fn=quiet.append)
  assert set(results['provenance']['user_code']) == {ref, 'my/helper.py'}

  (project / 'my' / 'helper.py').write_text(HELPER + '\n# a comment\n')
  said = []
  seedsweep.train(config, 'run', print_fn=said.append)  # finished: nothing to do
  assert any(str(s).startswith('warning: run: its numbers below come from code that '
                               'has changed since (file my/helper.py: ') for s in said)
  with pytest.raises(UserError) as e:
    seedsweep.evaluate('run', print_fn=quiet.append)
  assert 'cannot re-evaluate' in str(e.value) and 'file my/helper.py: ' in str(e.value)
  assert '--accept_changed_inputs' in str(e.value)
  said = []
  evaluated = seedsweep.evaluate('run', print_fn=said.append, accept_changed_inputs=True)
  assert any('as asked (--accept_changed_inputs)' in str(s) for s in said)
  [accepted] = evaluated['provenance']['accepted_changes']
  assert accepted['doing'] == 're-evaluate'
  assert accepted['changes'][0].startswith('file my/helper.py: ')
  assert workdir_lib.accepted_changes('run') == [accepted]

  (project / 'my' / 'mean.py').write_text(MODEL + '\n\nclass Unused:\n  pass\n')
  from seedsweep.run import verify  # pylint: disable=g-import-not-at-top
  lines = []
  checked = verify.verify(None, 'run', epochs=1, print_fn=lines.append)
  assert checked['reproduced'], lines
  assert [c.split(':')[0] for c in checked['inputs_changed']] == ['file my/mean.py']
  assert 'reproduced: epochs 1..1' in lines[0] and 'input(s) changed' in lines[-1]

"""One door for a run (seedsweep/run/prepare.py): through the API and through the
command, a run validates its config once, pins the runtime once and reads its
workdir's config.json once; a finished run met again writes nothing, and what it
writes when its tracking records are missing is written under the workdir's lock."""
import collections
import contextlib
import os
import sys

import pytest

import seedsweep
from seedsweep import models
from seedsweep.config import checks as config_checks
from seedsweep.config import stacking
from seedsweep.run import epoch as epoch_lib
from seedsweep.run import outputs
from seedsweep.run import runtime
from seedsweep.run import tracking
from seedsweep.run import workdir as workdir_lib
from seedsweep.run import workdir as workdir_lib
from tests.conftest import small_config
from tests.conftest import workdir_snapshot

pytestmark = pytest.mark.slow  # real (tiny) runs


def quiet(*_):
  pass


@pytest.fixture
def counts(monkeypatch):
  """Calls per run of what a run should do once: validate the config, pin the
  runtime, read the workdir's config.json, turn the config into JSON data, compute
  the points of its stack, build its model."""
  counter = collections.Counter()

  def count(module, name):
    original = getattr(module, name)

    def counted(*args, **kwargs):
      counter[name] += 1
      return original(*args, **kwargs)
    monkeypatch.setattr(module, name, counted)

  count(config_checks, 'validate')
  count(runtime, 'pin_for')
  count(workdir_lib, 'stored_config')
  count(config_checks, 'to_dict')
  count(stacking, 'points')
  count(models, 'build_model')
  return counter


ONCE = {'validate': 1, 'pin_for': 1, 'stored_config': 1, 'to_dict': 1, 'points': 1}


def test_a_run_through_the_api_checks_pins_and_reads_its_config_once(tmp_path, counts):
  workdir = str(tmp_path / 'run')
  config = small_config(seeds=(1,), epochs=1)
  results = seedsweep.train(config, workdir, print_fn=quiet)
  assert dict(counts) == {**ONCE, 'build_model': 1}
  counts.clear()

  os.remove(os.path.join(workdir, outputs.RESULTS))  # resumed from its checkpoint
  assert seedsweep.train(config, workdir, print_fn=quiet)['metrics'] == (
      results['metrics'])
  assert dict(counts) == {**ONCE, 'build_model': 1}
  counts.clear()

  before = workdir_snapshot(workdir)
  assert seedsweep.train(config, workdir, print_fn=quiet)['metrics'] == (
      results['metrics'])  # finished: nothing built, nothing written
  assert dict(counts) == ONCE
  assert workdir_snapshot(workdir) == before
  counts.clear()

  assert seedsweep.evaluate(workdir, print_fn=quiet)['metrics'] == results['metrics']
  assert dict(counts) == {**ONCE, 'build_model': 1}


def test_a_run_through_the_command_checks_pins_and_reads_its_config_once(
    tmp_path, counts, monkeypatch):
  from absl import logging  # pylint: disable=g-import-not-at-top
  from absl.testing import flagsaver  # pylint: disable=g-import-not-at-top
  from seedsweep import cli  # pylint: disable=g-import-not-at-top
  workdir = str(tmp_path / 'run')
  argv = ['seedsweep', '--config=demo:quick', "--config.seeds=(1,)",
          '--config.train.num_epochs=1', '--config.train.progress=False',
          f'--workdir={workdir}']
  monkeypatch.setattr(sys, 'argv', cli.packaged_files(argv))  # config_flags reads it
  verbosity = logging.get_verbosity()
  try:
    with flagsaver.flagsaver():
      cli.parse_flags(argv)
      counts.clear()
      cli.main(['seedsweep'])
  finally:
    logging.set_verbosity(verbosity)
  assert dict(counts) == {**ONCE, 'build_model': 1}
  assert outputs.read_json(os.path.join(workdir, outputs.RESULTS))['finished']


@pytest.mark.full  # a finished run and verify: test_faults.py, test_determinism.py
def test_a_finished_run_writes_its_missing_records_under_the_lock_only(
    tmp_path, monkeypatch):
  events = []
  hold = workdir_lib.hold

  @contextlib.contextmanager
  def recorded_hold(workdir):
    with hold(workdir):
      events.append('lock')
      yield
      events.append('unlock')
  write_hparams = tracking.write_hparams

  def recorded_write(*args, **kwargs):
    events.append('hparams')
    return write_hparams(*args, **kwargs)
  monkeypatch.setattr(workdir_lib, 'hold', recorded_hold)
  monkeypatch.setattr(tracking, 'write_hparams', recorded_write)

  workdir = str(tmp_path / 'run')
  config = small_config(seeds=(1,), epochs=1)
  seedsweep.train(config, workdir, print_fn=quiet)
  assert events == ['lock', 'hparams', 'unlock']
  events.clear()

  before = workdir_snapshot(workdir)
  seedsweep.train(config, workdir, print_fn=quiet)
  assert events == [] and workdir_snapshot(workdir) == before  # the lock file included

  hparams = os.path.join(workdir, 'tensorboard', tracking.HPARAMS)
  import shutil  # pylint: disable=g-import-not-at-top
  shutil.rmtree(hparams)
  seedsweep.train(config, workdir, print_fn=quiet)
  assert events == ['lock', 'hparams', 'unlock']  # written once, holding the lock
  assert os.path.isdir(hparams)


@pytest.mark.full  # a finished run and verify: test_faults.py, test_determinism.py
def test_verify_reruns_the_epoch_training_ran(tmp_path, monkeypatch, counts):
  from seedsweep.run import verify  # pylint: disable=g-import-not-at-top
  workdir = str(tmp_path / 'run')
  config = small_config(seeds=(1,), epochs=1)
  seedsweep.train(config, workdir, print_fn=quiet)
  counts.clear()
  epochs = []
  run_epoch = epoch_lib.run_epoch

  def counted(exp, state, epoch, *args, **kwargs):
    epochs.append(epoch)
    return run_epoch(exp, state, epoch, *args, **kwargs)
  monkeypatch.setattr(epoch_lib, 'run_epoch', counted)
  assert verify.verify(config, workdir, 1, print_fn=quiet)['reproduced']
  assert epochs == [1]
  assert dict(counts) == {**ONCE, 'build_model': 1}

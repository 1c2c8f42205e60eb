"""Fault injection: real launch.py processes on the demo, killed (SIGKILL), stopped
(SIGTERM, SIGINT), fed garbled checkpoints, a full disk and a second process, then
rerun: the final results equal an uninterrupted run's, and nothing is corrupted.

The faults strike at named moments (seedsweep/run/faults.py, ``$SEEDSWEEP_FAULT``):
a signal the process sends itself there, which timing from outside cannot hit."""
import logging
import os
import resource
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest

from seedsweep.run import checkpoints as ckpt_lib
from seedsweep.run import faults
from seedsweep.run import outputs
from tests.conftest import REPO, built_once, in_tier, run_launch, user_environment
from tests.conftest import workdir_snapshot

pytestmark = pytest.mark.slow  # launch.py processes

ARGS = ['--config=experiments/demo.py:quick', '--config.seeds=(1,2)',
        '--config.train.progress=False', '--config.data.num_buckets=2',
        '--config.train.num_epochs=3']
STEPS = 95  # per epoch of this config (demo quick train split, batch 50)

# One run, signalled at each moment in turn, each time rerun from what the last one
# left: (fault, expected exit status). The order makes every moment reachable
# whatever an asynchronous save had finished when its process died.
CHAIN = [
    ('write:config.json', -9),   # config.json's temporary file written, not renamed
    ('step:3', -9),              # a train step in flight, epoch 1
    ('eval:1', -9),              # evaluating epoch 1
    ('metrics_row:1', -9),       # one of epoch 1's two rows in metrics.jsonl
    ('tensorboard:1', -9),       # epoch 1 logged, its checkpoint not yet started
    (f'step:{STEPS + 5}@TERM', 128 + signal.SIGTERM),  # preemption mid epoch 2
    ('restored', -9),            # just restored the mid-epoch checkpoint
    ('eval:1@INT', 128 + signal.SIGINT),  # Ctrl-C while evaluating epoch 2
    ('checkpoint_saving:1', -9),  # epoch 3's checkpoint in flight
    ('write:metrics.jsonl', -9),  # rewriting metrics.jsonl on resume
    ('checkpoints_removing', -9),  # deleting the superseded mid-epoch checkpoint
    ('write:results.json', -9),  # results.json's temporary file written
    ('finished', -9),            # results written, process not yet ended
]
# The README tier's chain: a kill mid epoch 1 (nothing saved), a preemption mid epoch
# 2 (a mid-epoch checkpoint), a kill as that process saves a checkpoint.
SHORT_CHAIN = [('step:3', -9), (f'step:{STEPS + 5}@TERM', 128 + signal.SIGTERM),
               ('checkpoint_saving:1', -9)]


def launch(workdir, *extra, fault=None, preexec_fn=None):
  env = user_environment()
  env.pop(faults.ENV, None)
  if fault:
    env[faults.ENV] = fault
  return subprocess.run([sys.executable, os.path.join(REPO, 'launch.py'), *ARGS,
                         f'--workdir={workdir}', *extra], cwd=REPO, env=env,
                        capture_output=True, text=True, timeout=600, check=False,
                        preexec_fn=preexec_fn)


def train_here(workdir, **overrides) -> None:
  """What ``launch(workdir)`` does (ARGS, then ``overrides`` as
  ``seedsweep.load_config`` takes them), in this process: where no fault strikes and
  the process boundary is not what a test checks."""
  import seedsweep  # pylint: disable=g-import-not-at-top
  config = seedsweep.load_config('experiments/demo.py:quick', **{
      'seeds': (1, 2), 'train__progress': False, 'data__num_buckets': 2,
      'train__num_epochs': 3, **overrides})
  seedsweep.train(config, workdir, print_fn=lambda *a: None)


def final(workdir):
  """``(per-seed metrics of results.json, metrics.jsonl rows without wall times)``."""
  results = outputs.read_json(os.path.join(workdir, outputs.RESULTS))
  rows = outputs.MetricsLog(workdir).rows()
  for r in rows:
    r.pop('wall_time')
  return results['metrics'], rows


def assert_readable(workdir):
  """Every file a later run reads parses: JSON files whole, metrics rows valid."""
  for name in (outputs.CONFIG, outputs.RESULTS):
    path = os.path.join(workdir, name)
    if os.path.exists(path):
      outputs.read_json(path)
  outputs.MetricsLog(workdir).rows()


@pytest.fixture(scope='module')
def straight(tmp_path_factory):
  """The uninterrupted run, made once per run of the suite (xdist workers share it);
  tests read it or copy it."""
  def build(folder):
    proc = launch(os.path.join(folder, 'run'))
    assert proc.returncode == 0, proc.stderr[-3000:]
  return os.path.join(built_once(tmp_path_factory, 'faults_straight', build), 'run')


@pytest.mark.parametrize('chain', [  # --all: the whole chain (the short one's moments)
    pytest.param(SHORT_CHAIN, id='mid_epoch', marks=pytest.mark.short),
    pytest.param(CHAIN, id='every_moment', marks=pytest.mark.full)])
def test_a_run_killed_and_stopped_ends_like_an_uninterrupted_one(
    straight, tmp_path, chain):
  workdir = str(tmp_path / 'run')
  for fault, status in chain:
    proc = launch(workdir, fault=fault)
    moment, count, signum = faults.parse(fault)
    assert proc.returncode == status, (fault, proc.stderr[-3000:])
    assert f'fault: {signum.name} at {moment}:{count}' in proc.stderr, fault
    assert_readable(workdir)
    if signum != signal.SIGKILL:  # stopped: one line saying how to go on
      last = proc.stderr.strip().splitlines()[-1]
      assert last.startswith(f'stopped: {signum.name} received: stopped ')
      assert last.endswith('rerun the same command to resume')
      assert 'Traceback' not in proc.stderr
  done = launch(workdir)
  assert done.returncode == 0, done.stderr[-3000:]
  if chain[-1][0] == 'finished':  # the kill after 'finished' left it complete
    assert 'nothing to do' in done.stdout
  assert final(workdir) == final(straight)
  assert not os.path.exists(os.path.join(workdir, ckpt_lib.INTERRUPTED))
  assert sorted(os.listdir(workdir)) == sorted(os.listdir(straight))  # nothing half


def _scalars(folder):
  """``{tag: {step: value}}`` of the TensorBoard event files in ``folder``, as
  TensorBoard reads them."""
  from tensorboard.backend.event_processing import event_accumulator  # pylint: disable=g-import-not-at-top
  events = event_accumulator.EventAccumulator(folder, size_guidance={'scalars': 0})
  events.Reload()
  return {tag: {e.step: e.value for e in events.Scalars(tag)}
          for tag in events.Tags()['scalars']}


def test_a_finished_run_is_left_alone_and_other_configs_are_refused(straight, tmp_path):
  workdir = str(tmp_path / 'run')
  shutil.copytree(straight, workdir)
  results = outputs.read_json(os.path.join(workdir, outputs.RESULTS))
  assert results['seeds'] == [1, 2] and results['nonfinite_step'] == [0, 0]
  assert set(results['metrics']) >= {'test_accuracy', 'dev_accuracy', 'best_epoch'}
  assert len(results['metrics']['test_accuracy']) == 2
  assert set(results['summary']['test_accuracy']) == {'mean', 'std', 'min', 'max'}
  prov = results['provenance']
  assert prov['versions']['jax'] and prov['data']['checksums']['train']
  timing = results['timing']  # what the run cost, by phase (seconds, MiB)
  assert timing['train'] > 0 and timing['eval'] > 0 and timing['build'] > 0
  phases = timing['build'] + timing['train'] + timing['eval']
  # compile sums two threads (main and compile-ahead), so it is bounded by twice the phases
  assert 0 < timing['compile'] < 2 * phases and timing['peak_rss_mib'] > 100
  assert sorted(os.listdir(os.path.join(workdir, 'tensorboard'))) == [
      'aggregate', 'hparams', 'seed_1', 'seed_2']  # hparams: tests/test_tracking.py
  rows = outputs.MetricsLog(workdir).rows()
  means = _scalars(os.path.join(workdir, 'tensorboard', 'aggregate'))
  for epoch in (1, 2, 3):
    dev = [r['dev_accuracy'] for r in rows if r['epoch'] == epoch]
    assert means['dev_accuracy/mean'][epoch] == pytest.approx(np.mean(dev), rel=1e-6)
    assert means['dev_accuracy/std'][epoch] == pytest.approx(np.std(dev, ddof=1),
                                                             rel=1e-5, abs=1e-6)
  before = workdir_snapshot(workdir)

  again = launch(workdir)
  assert again.returncode == 0, again.stderr[-3000:]
  assert 'nothing to do' in again.stdout
  assert workdir_snapshot(workdir) == before  # the lock file included

  other = launch(workdir, '--config.model.hidden=9')
  assert other.returncode != 0
  assert 'holds a run of another config' in other.stderr
  assert 'model.hidden: 32 != 9' in other.stderr
  assert workdir_snapshot(workdir) == before

  evaluated = launch(workdir, '--mode=eval')
  assert evaluated.returncode == 0, evaluated.stderr[-3000:]
  assert outputs.read_json(os.path.join(workdir, outputs.RESULTS))['metrics'] == (
      results['metrics'])


@pytest.mark.full  # the README tier kills runs (the chain) and sweeps (test_chaos.py)
def test_a_report_killed_while_writing_its_files_is_whole_after_a_rerun(straight,
                                                                      tmp_path):
  """kill -9 with report.md's new text complete but not yet renamed, then with
  report.csv's: each file is the old one or the new one, never half of one."""
  workdir = str(tmp_path / 'run')
  shutil.copytree(straight, workdir)

  def report(fault):
    return run_launch('--mode=report', f'--workdir={workdir}', env={faults.ENV: fault})

  from seedsweep import api  # pylint: disable=g-import-not-at-top
  api.report(workdir, print_fn=lambda *a: None)  # in this process: no fault to strike
  files = {name: (tmp_path / 'run' / name).read_text() for name in ('report.md',
                                                                      'report.csv')}
  (tmp_path / 'run' / 'report.md').write_text('an older report\n')
  killed = report('write:report.md')
  assert killed.returncode == -9 and 'fault: SIGKILL at write:report.md:1' in (
      killed.stderr)
  assert (tmp_path / 'run' / 'report.md').read_text() == 'an older report\n'
  killed = report('write:report.csv')
  assert killed.returncode == -9 and 'fault: SIGKILL at write:report.csv:1' in (
      killed.stderr)
  assert (tmp_path / 'run' / 'report.md').read_text() == files['report.md']
  assert (tmp_path / 'run' / 'report.csv').read_text() == files['report.csv']
  api.report(workdir, print_fn=lambda *a: None)
  assert {name: (tmp_path / 'run' / name).read_text() for name in files} == files


def _newest_data_file(workdir):
  """The largest array file of the newest epoch checkpoint, and that epoch."""
  directory = os.path.join(workdir, ckpt_lib.EPOCHS)
  epoch = max(int(d) for d in os.listdir(directory) if d.isdigit())
  files = [os.path.join(root, f) for root, _, names in
           os.walk(os.path.join(directory, str(epoch), 'state')) for f in names]
  return max(files, key=os.path.getsize), epoch


@pytest.mark.parametrize('damage', in_tier(['garble', 'truncate'], 'garble'))
def test_a_damaged_newest_checkpoint_is_reported_and_the_one_before_resumes(
    straight, tmp_path, damage):
  workdir = str(tmp_path / 'run')
  shutil.copytree(straight, workdir)
  os.remove(os.path.join(workdir, outputs.RESULTS))  # as if killed before writing it
  path, epoch = _newest_data_file(workdir)
  size = os.path.getsize(path)
  with open(path, 'r+b') as f:
    if damage == 'truncate':
      f.truncate(size // 2)
    else:
      f.seek(size // 2)
      chunk = f.read(64)
      f.seek(size // 2)
      f.write(bytes(b ^ 0xFF for b in chunk))
  proc = launch(workdir)
  assert proc.returncode == 0, proc.stderr[-3000:]
  assert 'warning: ' in proc.stdout and f'{ckpt_lib.CORRUPT}/checkpoints-{epoch}-' in (
      proc.stdout)
  assert f'resuming after epoch {epoch - 1}/3' in proc.stdout
  assert final(workdir) == final(straight)


def _file_size_limit(limit):
  def apply():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past it fail with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
  return apply


@pytest.mark.full  # a failing write: --all, beside the full disk below
def test_a_failing_checkpoint_write_is_a_clear_error_and_keeps_earlier_ones(
    straight, tmp_path):
  """A writer that fails past a file size (disk full, quota, EFBIG): the run stops
  with one line, and the checkpoints written before are intact."""
  workdir = str(tmp_path / 'run')
  first = launch(workdir, fault=f'step:{STEPS + 1}@TERM')  # saves epoch 1, stops
  assert first.returncode == 128 + signal.SIGTERM, first.stderr[-3000:]
  before = sorted(os.listdir(os.path.join(workdir, ckpt_lib.EPOCHS)))
  path, _ = _newest_data_file(workdir)
  proc = launch(workdir, preexec_fn=_file_size_limit(os.path.getsize(path) // 4))
  assert proc.returncode == 1, proc.stderr[-3000:]
  # orbax's and tensorstore's writer threads print their own tracebacks besides.
  [line] = [x for x in proc.stderr.splitlines() if x.startswith('error: ')]
  assert line.startswith('error: cannot save checkpoint 2 in ')
  assert 'the checkpoints saved before it are kept' in line
  assert sorted(os.listdir(os.path.join(workdir, ckpt_lib.EPOCHS))) == before
  train_here(workdir)  # room again: resumes from epoch 1
  assert final(workdir) == final(straight)


def _folder_bytes(folder):
  return sum(os.path.getsize(os.path.join(w, f)) for w, _, fs in os.walk(folder)
             for f in fs)


@pytest.mark.full  # a full disk (a tmpfs): --all, as test_chaos.py's
def test_a_full_disk_stops_the_run_in_one_line_and_a_rerun_with_room_ends_equal(
    straight, small_disk):
  """The workdir on a tmpfs with room for about half of what the run writes: the
  run stops with one line (no traceback), what it wrote before stays readable, and
  once there is room the same command ends equal to an undisturbed run."""
  mount, size = small_disk
  needed = _folder_bytes(straight)
  assert size(needed // 2).returncode == 0
  workdir = str(mount / 'run')
  proc = launch(workdir)
  assert proc.returncode == 1, proc.stderr[-3000:]
  lines = [x for x in proc.stderr.splitlines() if x.startswith('error: ')]
  assert len(lines) == 1 and ('No space left on device' in lines[0]
                              or 'cannot save checkpoint' in lines[0]), proc.stderr[-3000:]
  assert 'Traceback' not in proc.stderr.split(lines[0])[1]  # nothing after the line
  assert_readable(workdir)
  assert size(4 * needed).returncode == 0  # room again
  again = launch(workdir)
  assert again.returncode == 0, again.stderr[-3000:]
  assert final(workdir) == final(straight)


def test_a_second_process_on_a_workdir_is_refused(tmp_path):
  """The first process stops itself (SIGSTOP) at step 3 of a run it has written a
  config and a checkpoint for; the second is refused and changes no file."""
  workdir = str(tmp_path / 'run')
  env = dict(user_environment(), **{faults.ENV: f'step:{STEPS + 3}@STOP'})
  first = subprocess.Popen([sys.executable, os.path.join(REPO, 'launch.py'), *ARGS,
                            f'--workdir={workdir}'], cwd=REPO, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  try:
    _, status = os.waitpid(first.pid, os.WUNTRACED)  # stopped, holding the lock
    assert os.WIFSTOPPED(status), 'the first process ended before its fault'
    before = workdir_snapshot(workdir)
    second = run_launch(*ARGS, f'--workdir={workdir}')
    assert second.returncode == 1
    assert second.stderr.strip().splitlines()[-1] == (
        f'error: {workdir} is in use by process {first.pid} (it holds '
        f'{os.path.join(workdir, ".lock")}); wait for it to end, or use another '
        '--workdir')
    assert workdir_snapshot(workdir) == before
  finally:
    first.kill()
    first.wait()


def _error_record(name, filename):
  """An ERROR record of logger ``name`` whose traceback was raised in ``filename``."""
  code = compile('raise OSError(28, "No space left on device")', filename, 'exec')
  try:
    exec(code)  # pylint: disable=exec-used
  except OSError:
    return logging.LogRecord(name, logging.ERROR, __file__, 1,
                             'Task exception was never retrieved', None, sys.exc_info())


def test_a_failed_orbax_write_task_logs_no_traceback_after_the_one_line_error():
  """asyncio's "Task exception was never retrieved" for an orbax write (a full disk
  can fail a second task after the first failure is reported) is dropped; asyncio's
  other errors are not."""
  orbax_file = os.path.join(os.sep, 'site-packages', 'orbax', 'checkpoint', 'io.py')
  assert not ckpt_lib._QUIET.filter(_error_record('asyncio', orbax_file))  # pylint: disable=protected-access
  assert ckpt_lib._QUIET.filter(_error_record('asyncio', __file__))  # pylint: disable=protected-access

"""A whole sweep killed as a preemptible cluster kills it (benchmarks/chaos_sweep.py,
short form): two jobs through --launcher=local and a report process now and then, the
launch's process group killed at seeded random moments by SIGKILL and SIGTERM and
relaunched; the end equals the undisturbed sweep. The long form (100 kills) runs on
demand: python benchmarks/chaos_sweep.py --kills=100. Also the same sweep and its
report on a disk that fills up."""
import ast
import errno
import json
import os
import subprocess
import time

import pytest

from benchmarks import chaos_sweep
from tests.conftest import built_once


def test_chaos_sweep_compares_reports_without_their_wall_times():
  md = '| run | wall |\n| a | 1 min 05 s |\n| b | 12.5 s |\n'
  blanked = chaos_sweep._without_wall(md)  # pylint: disable=protected-access
  assert blanked == '| run | wall |\n| a | WALL |\n| b | WALL |\n'
  assert chaos_sweep.LEFTOVERS.search('.results.json.abc123.tmp')
  assert chaos_sweep.LEFTOVERS.search('3.orbax-checkpoint-tmp-1700000000')
  assert not chaos_sweep.LEFTOVERS.search('metrics.jsonl')


def _calm_here(tmp):
  """``chaos_sweep.undisturbed(tmp)`` with the sweep trained in this process: the
  same points, flags and bits, without the launch's and its jobs' processes (what
  the test kills is the other sweep); its report is written by the command."""
  import seedsweep  # pylint: disable=g-import-not-at-top
  sweep = os.path.join(tmp, 'chaos_sweep.py')
  with open(sweep, 'w') as f:
    f.write(chaos_sweep.SWEEP)
  spec, overrides = None, {}
  for flag in chaos_sweep.FLAGS:  # '--config=FILE:ARG', '--config.a.b=VALUE'
    name, value = flag[2:].split('=', 1)
    if name == 'config':
      spec = value
    else:
      value = {'false': 'False', 'true': 'True'}.get(value.lower(), value)
      overrides[name[len('config.'):].replace('.', '__')] = ast.literal_eval(value)
  config = seedsweep.load_config(os.path.join(chaos_sweep.REPO, spec), **overrides)
  calm = os.path.join(tmp, 'calm')
  start = time.perf_counter()
  seedsweep.run_sweep(config, sweep, calm, print_fn=lambda *a: None)
  calm_s = time.perf_counter() - start
  assert chaos_sweep.report(calm).returncode == 0
  return sweep, calm, calm_s


@pytest.fixture
def calm(tmp_path_factory):
  """The sweep file, the sweep run undisturbed and its report (:func:`_calm_here`),
  made once per run of the suite; both tests compare with it, neither writes to it."""
  def build(folder):
    made = _calm_here(folder)
    with open(os.path.join(folder, 'undisturbed.json'), 'w') as f:
      json.dump(made, f)
  with open(os.path.join(built_once(tmp_path_factory, 'chaos_calm', build),
                         'undisturbed.json')) as f:
    return tuple(json.load(f))


# The README tier kills once; --all kills three times (the same first kill: one
# seeded schedule), not once more.
@pytest.mark.slow
@pytest.mark.parametrize('kills', [pytest.param(1, marks=pytest.mark.short),
                                   pytest.param(3, marks=pytest.mark.full)])
def test_a_sweep_killed_ends_as_the_undisturbed_one(tmp_path, calm, kills):
  # The jobs kill themselves at rows (a timed group kill can miss a fast sweep).
  figures = chaos_sweep.chaos(kills=kills, seed=0, tmp=str(tmp_path), kinds=('jobs',),
                              print_fn=lambda *a: None, calm=calm)
  assert figures['differences'] == []
  assert figures['kills'] == kills and figures['relaunches'] == kills, figures


def _fill(folder):
  """A file that takes every free byte of ``folder``'s file system: its path, or None
  when the file system is full already (no file could be made)."""
  path = os.path.join(folder, 'filler')
  try:
    f = open(path, 'wb', buffering=0)  # unbuffered: closing it has nothing to flush
  except OSError as e:
    assert e.errno == errno.ENOSPC, e
    return None
  with f:
    try:
      while True:
        f.write(b'\0' * (1 << 16))
    except OSError as e:
      assert e.errno == errno.ENOSPC, e
  return path


def _error_lines(proc):
  return [x for x in proc.stderr.splitlines() if x.startswith('error: ')]


@pytest.mark.slow
@pytest.mark.full  # a full disk (a tmpfs): --all, as test_faults.py's
def test_a_sweep_and_its_report_on_a_full_disk_stop_in_one_line_and_end_equal(
    small_disk, calm):
  """The sweep's root on a tmpfs with room for half of what it writes: the launch
  stops in one line; with room, the same command ends as the undisturbed sweep. Then
  a report on the disk filled up: one line, the report before it intact; with room
  again, the report is the undisturbed one's."""
  mount, size = small_disk
  sweep, calm, _ = calm
  needed = sum(os.path.getsize(os.path.join(w, f)) for w, _, fs in os.walk(calm)
               for f in fs)
  assert size(needed // 2).returncode == 0
  root = str(mount / 'root')
  command = chaos_sweep.launch_command(str(sweep), root)
  full = subprocess.run(command, cwd=chaos_sweep.REPO, capture_output=True, text=True,
                        check=False)
  assert full.returncode == 1, full.stderr[-3000:]
  lines = _error_lines(full)
  assert len(lines) == 1 and ('No space left on device' in lines[0]
                              or 'cannot save checkpoint' in lines[0]), full.stderr[-3000:]
  assert size(4 * needed).returncode == 0
  again = subprocess.run(command, cwd=chaos_sweep.REPO, capture_output=True, text=True,
                         check=False)
  assert again.returncode == 0, again.stderr[-3000:]
  assert chaos_sweep.report(root).returncode == 0
  assert chaos_sweep.differences(calm, root) == []
  with open(os.path.join(root, 'report.md'), 'rb') as f:
    before = f.read()
  os.remove(os.path.join(root, 'report.md'))  # the report must be written again
  os.remove(os.path.join(root, 'report.csv'))
  filler = _fill(str(mount))
  stopped = chaos_sweep.report(root)
  assert stopped.returncode == 1 and len(_error_lines(stopped)) == 1, stopped.stderr
  assert 'Traceback' not in stopped.stderr, stopped.stderr[-3000:]
  if filler:
    os.remove(filler)
  assert size(8 * needed).returncode == 0  # room, however full the rerun left it
  assert chaos_sweep.report(root).returncode == 0
  assert chaos_sweep.differences(calm, root) == []
  with open(os.path.join(root, 'report.md'), 'rb') as f:
    assert f.read() == before

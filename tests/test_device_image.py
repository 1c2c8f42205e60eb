"""benchmarks/device_check.py on an emulated bare device machine.

The machine a GPU comes with has its own Python and packages (jax 0.11.2, flax,
optax, orbax-checkpoint, ...; benchmarks/device_image.txt) and reaches no package
index: seedsweep is not installed there, and what it lacks travels as wheels
(benchmarks/device_wheels.sh). This test builds that machine's Python environment
(Python 3.12 where this machine has one), copies the working tree as the device tool
sends it, and runs the documented command (device_check.py's docstring) with no
index, the smoke check in place of the GPU's.
"""
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.conftest import SHARED_DATA

IMAGE = os.path.join(REPO, 'benchmarks', 'device_image.txt')


def _image_python() -> str:
  """A Python 3.12 (the image's), else this one."""
  candidates = [shutil.which('python3.12')] + sorted(glob.glob(os.path.expanduser(
      '~/.pyenv/versions/3.12*/bin/python3.12')))
  for python in filter(None, candidates):
    if subprocess.run([python, '--version'], capture_output=True,
                      check=False).returncode == 0:
      return python
  return sys.executable


def _image_environment() -> str:
  """The image's packages in a virtual environment, built once per package list and
  Python (kept under the cache folder): its bin/ folder."""
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  python = _image_python()
  key = hashlib.sha256(open(IMAGE, 'rb').read() + python.encode()).hexdigest()[:16]
  home = os.path.join(runtime.cache_dir(), 'device_image', key)
  if not os.path.isfile(os.path.join(home, 'ready')):
    building = f'{home}.{os.getpid()}'
    shutil.rmtree(building, ignore_errors=True)
    subprocess.run([python, '-m', 'venv', building], check=True)
    subprocess.run([os.path.join(building, 'bin', 'python'), '-m', 'pip', 'install',
                    '-q', '-r', IMAGE], check=True, capture_output=True)
    open(os.path.join(building, 'ready'), 'w').close()
    shutil.rmtree(home, ignore_errors=True)
    os.replace(building, home)
  return os.path.join(home, 'bin')


def _documented_command() -> str:
  """The one command device_check.py's docstring gives for the device machine."""
  from benchmarks import device_check  # pylint: disable=g-import-not-at-top
  [line] = [l.strip() for l in device_check.__doc__.splitlines()
            if 'pip install' in l and 'device_check.py' in l]
  return line


def _working_tree(dest):
  """The tracked and untracked-but-not-ignored files, as the device tool sends them."""
  names = subprocess.run(['git', 'ls-files', '-z', '--cached', '--others',
                          '--exclude-standard'], cwd=REPO, capture_output=True,
                         check=True).stdout.decode().split('\0')
  for name in filter(None, names):
    source = os.path.join(REPO, name)
    if os.path.isfile(source):
      os.makedirs(os.path.dirname(os.path.join(dest, name)), exist_ok=True)
      shutil.copy2(source, os.path.join(dest, name))


@pytest.mark.slow
@pytest.mark.full  # installs the image's packages from the index (minutes, once)
def test_the_documented_device_command_runs_on_a_bare_machine(tmp_path):
  bin_dir = _image_environment()
  checkout = tmp_path / 'checkout'
  _working_tree(checkout)
  subprocess.run(['bash', 'benchmarks/device_wheels.sh', '--dest=.whl'], cwd=checkout,
                 check=True, capture_output=True)
  os.makedirs(checkout / '.data' / 'sst')
  shutil.copytree(os.path.join(SHARED_DATA, 'sst', 'trees'),
                  checkout / '.data' / 'sst' / 'trees')
  command = _documented_command()
  assert '--target /tmp/site' in command and 'device_check.py --data=.data' in command
  command = command.replace('--target /tmp/site', f'--target {tmp_path / "site"}')
  command = command.replace('PYTHONPATH=/tmp/site', f'PYTHONPATH={tmp_path / "site"}')
  command = command.replace('device_check.py --data=.data',
                            'device_check.py --smoke --data=.data')
  out = tmp_path / 'out'
  out.mkdir()
  # The bare machine: its Python first, no index, nothing of this one's environment
  # that would find seedsweep or its packages.
  env = {'PATH': f'{bin_dir}{os.pathsep}/usr/bin:/bin', 'HOME': str(tmp_path),
         'OUT': str(out), 'PIP_NO_INDEX': '1', 'PIP_CONFIG_FILE': os.devnull,
         'SEEDSWEEP_CACHE': str(tmp_path / 'cache'), 'LANG': 'C.UTF-8'}
  proc = subprocess.run(['bash', '-c', command], cwd=checkout, env=env,
                        capture_output=True, text=True, timeout=900, check=False)
  assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
  [name] = [n for n in os.listdir(out) if n.endswith('.json')]
  report = json.load(open(out / name))
  assert [r['status'] for r in report['runs']] == ['ok'] * len(report['runs'])
  versions = report['device']['packages']
  assert versions['jax'] == '0.11.2' and {'flax', 'optax', 'orbax-checkpoint',
                                          'numpy'} <= set(versions)
  _assert_every_row_type(report, (out / name.replace('.json', '.md')).read_text())
  assert (out / 'device_check.log').is_file()


def _assert_every_row_type(report: dict, table: str):
  """The smoke's report (a CPU): every row of the check ran in its small form, and
  what the CPU promises holds: a seed's bits in any lane, in any group, in any
  process."""
  from benchmarks import device_check  # pylint: disable=g-import-not-at-top
  from benchmarks import lane_micro  # pylint: disable=g-import-not-at-top
  runs = report['runs']
  assert [(r['kind'], r.get('role'), r.get('variant')) for r in runs] == [
      ('micro', None, None), ('measure', 'main', None), ('measure', 'again', None),
      ('measure', 'setting', 'tf32')]
  micro = runs[0]
  assert micro['lanes'] == report['lanes'] == device_check.SMOKE['lanes']
  assert [k['name'] for k in micro['kernels']] == list(lane_micro.KERNELS) + ['control']
  assert not micro['kernels'][-1]['other_lanes']['equal']  # the control sees lanes
  subs = {s['name']: s for s in runs[1]['subruns']}
  assert list(subs) == list(device_check.SUBRUNS)
  assert {s['lanes'] for s in subs.values()} == {report['lanes']}
  assert (subs['split']['groups'], subs['split']['trained_groups']) == (2, 2)
  assert (subs['many']['groups'], subs['many']['trained_groups']) == (3, 1)
  assert subs['many']['step_basis'] == '3 groups x one group'
  assert subs['reversed']['dumps']['1']['lane'] == 2
  for s in subs.values():
    assert s['step_s'] > 0 and s['compile_s'] > 0 and s['loss_finite']
    assert s['peak_device_mib'] is None and s['estimated_peak_mib'] > 0
  rows = [(c['row'], c.get('equal')) for c in report['bit_checks']]
  assert rows == [('lanes', True)] * 5 + [('processes', True), ('setting', True)], rows
  for heading in ('**Lane independence of single kernels**',
                  '**A seed alone and among others** (lanes, W=4, on cpu (cpu)',
                  '**The same seed in two processes**', '**Seconds a step**',
                  '**One setting against the baseline**'):
    assert heading in table
  assert '| demo Bi-LSTM (quick) | 6 | alone: lane 0 of 4 | among 6: lane 2 of 4, ' \
      'group 2 of 2 | equal | 0 | 0 of ' in table
  assert '| demo Bi-LSTM (quick) | 10 | 3 x 4 | ' in table
  assert report['command'] in table and 'Not measured' not in table


def test_a_checkout_on_the_path_imports_its_own_models_data_and_experiments(tmp_path):
  """A checkout that is only on sys.path (a device machine, a second worktree) finds
  its top-level models/, data/ and experiments/ as seedsweep's subpackages, its own
  copies and not an installed package's."""
  _working_tree(tmp_path)
  program = ('import seedsweep.models, seedsweep.data, seedsweep.experiments.demo\n'
             'for m in (seedsweep, seedsweep.models, seedsweep.data, '
             'seedsweep.experiments.demo): print(m.__file__)\n')
  env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
  out = subprocess.run([sys.executable, '-c', program], cwd=tmp_path, env=env,
                       capture_output=True, text=True, check=True).stdout.split()
  assert [os.path.relpath(p, tmp_path) for p in out] == [
      os.path.join('seedsweep', '__init__.py'), os.path.join('models', '__init__.py'),
      os.path.join('data', '__init__.py'), os.path.join('experiments', 'demo.py')]


def test_the_gpu_check_plans_its_rows_and_renders_them_without_a_gpu(tmp_path):
  """The GPU path, without a GPU: the children's order (the kernels, each model's
  lanes child, the second processes, the settings, the slow deterministic-ops-off
  DLSTM last), the seconds each is expected to take, the lane groups, and the
  tables from a made-up report whose parameter dumps differ in one place."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  from benchmarks import device_check  # pylint: disable=g-import-not-at-top
  plan = device_check.plan_children(['bilstm', 'dlstm'], True)
  assert [(c['kind'], c.get('model'), c.get('role'), c.get('variant'), c.get('det'))
          for c in plan] == [
              ('micro', None, None, None, None),
              ('measure', 'bilstm', 'main', None, True),
              ('measure', 'dlstm', 'main', None, True),
              ('measure', 'bilstm', 'again', None, True),
              ('measure', 'dlstm', 'again', None, True),
              ('measure', 'bilstm', 'setting', 'tf32', True),
              ('measure', 'bilstm', 'setting', 'det_off', False),
              ('measure', 'dlstm', 'setting', 'tf32', True),
              ('measure', 'bilstm', 'setting', 'map', True),
              ('measure', 'dlstm', 'setting', 'det_off', False)]
  assert plan[1]['runs'] == list(device_check.SUBRUNS) and plan[3]['runs'] == ['lone']
  assert [c['runs'] for c in plan[5:]] == [['group'], ['group'], ['group'], ['lone'],
                                           ['group']]
  # A setting goes to the first model that has its field (DLSTM has no unroll).
  assert [(c['model'], c['variant']) for c in device_check.plan_children(
      ['dlstm', 'bilstm'], True, ('unroll4',)) if c.get('role') == 'setting'] == [
          ('dlstm', 'det_off'), ('bilstm', 'unroll4'), ('bilstm', 'det_off')]
  assert [(c.get('role'), c.get('det')) for c in device_check.plan_children(
      ['demo'], False, ('tf32',))] == [(None, None), ('main', None), ('again', None),
                                       ('setting', None)]
  # Seconds: the H200's figures until a child of the kind ran here.
  assert device_check.estimate_s(plan[0], []) == device_check.PRIOR_S['micro']
  assert device_check.estimate_s(plan[1], []) == 45.0
  assert device_check.estimate_s(plan[3], []) == 22.0
  done = [{'kind': 'measure', 'model': 'bilstm', 'role': 'main', 'det': True,
           'status': 'ok', 'wall_s': 40.0,
           'subruns': [{'seconds': s} for s in (20, 4, 4, 6, 3, 3)]}]
  assert device_check.estimate_s(plan[3], done) == 40.0 - 20
  assert device_check.estimate_s(plan[6], done) == 20 * device_check.DET_OFF_FACTOR
  off = done + [dict(done[0], role='setting', det=False, wall_s=50.0, subruns=[])]
  assert device_check.estimate_s(plan[6], off) == 50.0
  assert device_check.estimate_s(plan[2], done) == 90.0
  assert device_check.estimate_s(dict(plan[1], model='own'), []) == \
      device_check.MIN_RUN_S
  named = device_check.subruns((1, 10, 100), 20)
  assert named['reversed'] == (list(range(10, 0, -1)), [1, 10], None)
  assert named['many'] == (list(range(1, 101)), [], 1)

  def dump(name, value):
    path = tmp_path / f'{name}.npz'
    np.savez(path, w=np.float32([1, value]), b=np.float32([0]))
    return str(path)

  def sub(name, members, groups, step, dumps, trained=None):
    trained = groups if trained is None else trained
    return {'name': name, 'members': members, 'lanes': 16, 'size': 16,
            'groups': groups, 'trained_groups': trained,
            'group_runs': [{'step_s': step}] * trained, 'step_s': step * groups,
            'step_basis': ('measured' if trained == groups
                           else f'{groups} groups x one group'),
            'member_step_s': step * groups / members, 'compile_wall_s': 9.0,
            'compile_s': 8.0, 'peak_device_mib': 2048.0, 'estimated_peak_mib': 1900.0,
            'peak_rss_mib': 3000.0, 'seconds': 4.0,
            'dumps': {str(seed): {'path': dump(f'{name}_{seed}_{tag}', v), 'group': g,
                                  'lane': l} for seed, (g, l, v, tag) in dumps.items()}}
  main = {'kind': 'measure', 'model': 'bilstm', 'role': 'main', 'det': True,
          'variant': None, 'status': 'ok', 'wall_s': 60.0,
          'xla_flags': '--xla_gpu_deterministic_ops=true',
          'subruns': [sub('lone', 1, 1, 0.01, {1: (0, 0, 2, 'm')}),
                      sub('group', 10, 1, 0.01, {1: (0, 0, 2, 'm'), 10: (0, 9, 3, 'm')}),
                      sub('reversed', 10, 1, 0.01, {1: (0, 9, 2.5, 'm'),
                                                    10: (0, 0, 3, 'm')}),
                      sub('split', 20, 2, 0.01, {1: (0, 0, 2, 'm'), 20: (1, 9, 4, 'm')}),
                      sub('split_last', 1, 1, 0.01, {20: (0, 0, 4, 'm')}),
                      sub('many', 100, 7, 0.012, {}, trained=1)]}
  again = dict(main, role='again',
               subruns=[sub('lone', 1, 1, 0.01, {1: (0, 0, 2, 'a')})])
  tf32 = dict(main, role='setting', variant='tf32',
              subruns=[sub('group', 10, 1, 0.008, {1: (0, 0, 2.25, 't')})])
  mapped = dict(main, role='setting', variant='map',
                subruns=[sub('lone', 1, 1, 0.005, {1: (0, 0, 2, 'p')})])
  skipped = {'kind': 'measure', 'model': 'bilstm', 'role': 'setting', 'det': False,
             'variant': 'det_off', 'status': 'skipped: needs ~60 s, 30 s of the budget '
             'left'}
  micro = {'kind': 'micro', 'status': 'timed out after 20 s'}
  report = {'date': '2026-12-06', 'command': 'python benchmarks/device_check.py',
            'device': {'backend': 'gpu', 'device_kind': 'NVIDIA H100', 'jax': '0.11.2'},
            'gpu': True, 'models': {'bilstm': device_check.MODELS['bilstm']},
            'lanes': 16, 'counts': [1, 10, 100], 'split': 20, 'steps': 50,
            'form': 'lanes', 'precision': 'highest', 'settings': [], 'budget_s': 480,
            'elapsed_s': 400, 'runs': [micro, main, again, tf32, mapped, skipped]}
  report['bit_checks'] = device_check.bit_checks(report)
  assert [(c['row'], c['seed'], c.get('equal')) for c in report['bit_checks']] == [
      ('lanes', 1, True), ('lanes', 1, False), ('lanes', 10, True), ('lanes', 1, True),
      ('lanes', 20, True), ('processes', 1, True), ('setting', 1, False),
      ('setting', 1, True), ('setting', 1, None)]
  table = device_check.markdown(report)
  assert '**Lane independence of single kernels** (benchmarks/lane_micro.py, W=16, ' \
      'on NVIDIA H100 (gpu), jax 0.11.2): timed out after 20 s' in table
  assert '| Bi-LSTM, SST-2 | 1 | alone: lane 0 of 16 | among 10 reversed: lane 9 of ' \
      '16 | DIFFER | 0.5 | 1 of 2 |' in table
  assert '| Bi-LSTM, SST-2 | 20 | alone: lane 0 of 16 | among 20: lane 9 of 16, ' \
      'group 2 of 2 | equal | 0 | 0 of 2 |' in table
  assert '| Bi-LSTM, SST-2 | equal | 0 | 0 of 2 |' in table  # two processes
  assert '| Bi-LSTM, SST-2 | 100 | 7 x 16 | 0.0120 | 0.0840 | 7 groups x one group | ' \
      '0.00084 | 8.40x | 16.80x | 9.0 / 8.0 | 2,048 | 1,900 | 3,000 |' in table
  assert '| Bi-LSTM, SST-2 | 10 | 1 x 16 | 0.0100 | 0.0100 | measured | 0.00100 | ' \
      '1.00x | 2.00x |' in table
  assert '| Bi-LSTM, SST-2 | 20 | 2 x 16 | 0.0100, 0.0100 | 0.0200 | measured |' in table
  assert "| matmul precision 'default' (TF32 on an NVIDIA GPU) instead of 'highest' | " \
      'Bi-LSTM, SST-2 | 10 | 0.0080 | 0.0100 | 0.80x | 9.0 / 8.0 | 2,048 | 1,900 | ' \
      'DIFFER | 0.25 |' in table
  assert '| deterministic ops off' in table and 'skipped: needs ~60 s' in table
  assert '* the kernels (lane_micro.py): timed out after 20 s' in table
  assert f'XLA_FLAGS={device_check.DET_FLAG}=true' in table

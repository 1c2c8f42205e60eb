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
  assert report['bit_checks'][0]['equal']
  assert (out / 'device_check.log').is_file()


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

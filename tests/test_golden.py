"""Golden fingerprints: the demo and a quick run of every model family give, on this
machine, the committed parameter hashes and metrics of every epoch and seed, to the
bit (tests/golden_runs.py says how they were made and how to regenerate them).

Each run trains in a process of its own on one core, with NPROC=3 in its environment
(a user's setting, which sizes the default pool: 3 threads), and the goldens were made
on two cores (a pool of 2): so the same test holds a seed's bits across CPUs, core
counts and pool sizes.
"""
import json
import os
import re
import subprocess
import sys

import pytest

from seedsweep.run import provenance
from tests import golden_runs
from tests.conftest import REPO
from tests.conftest import in_tier
from tests.conftest import on_cores
from tests.conftest import own_core
from tests.conftest import user_environment

TRAIN = 'import json, sys; from tests import golden_runs; print(json.dumps(golden_runs.train(*sys.argv[1:])))'


def _load(name):
  with open(golden_runs.path(name)) as f:
    return json.load(f)


def _release(version):
  """The version without a suffix such as a git hash ('0.10.2+g1a2b3c' -> '0.10.2')."""
  return re.match(r'[0-9][0-9A-Za-z.]*', version).group(0)


def version_moved(golden):
  """The one line that says which of jax and jaxlib is not the version ``golden`` was
  made with; None when both are. Another jax computes with other kernels, so every
  hash would differ: the line says what to do instead of listing them."""
  import jax  # pylint: disable=g-import-not-at-top
  import jaxlib  # pylint: disable=g-import-not-at-top
  installed = {'jax': jax.__version__, 'jaxlib': jaxlib.__version__}
  moved = [name for name in installed
           if _release(installed[name]) != _release(golden['determinism'][name])]
  if not moved:
    return None
  now = ' and '.join(f'{name} {installed[name]}' for name in moved)
  made = ' and '.join(f'{name} {golden["determinism"][name]}' for name in moved)
  return (f'{now} {"is" if len(moved) == 1 else "are"} installed but the goldens were '
          f'made with {made}: install with pip install -e ".[test]" -c '
          f'constraints.txt, or adopt a new jax on purpose (constraints.txt, '
          f'setup.cfg, python -m tests.golden_runs, README digits)')


def test_the_installed_jax_is_the_one_the_goldens_were_made_with():
  """Fast: the golden runs' bits hold for the jax they were made with only."""
  for name in golden_runs.GOLDEN:
    moved = version_moved(_load(name))
    if moved:
      pytest.fail(f'golden {name!r}: {moved}', pytrace=False)


@pytest.mark.slow
# The README tier runs the Bi-LSTM's (the demo's model, on real data); --all every one.
@pytest.mark.parametrize('name', in_tier(list(golden_runs.GOLDEN), 'bilstm_sst2_quick'))
def test_a_golden_run_gives_its_committed_bits(name, tmp_path):
  golden = _load(name)
  moved = version_moved(golden)
  if moved:  # one line, not a list of differing hashes (nor the training before it)
    pytest.fail(moved, pytrace=False)
  args = ('-c', TRAIN, name, str(tmp_path / name))
  one_core = hasattr(os, 'sched_setaffinity')  # Linux
  command = (on_cores([own_core()], *args) if one_core
             else [sys.executable, *args])
  proc = subprocess.run(command,
                        cwd=REPO, capture_output=True, text=True, timeout=900,
                        check=False, env=dict(user_environment(), NPROC='3'))
  assert proc.returncode == 0, proc.stderr[-3000:]
  found = json.loads(proc.stdout.strip().splitlines()[-1])
  assert found['usable_cores'] == 1 or not one_core
  assert found['determinism']['unportable_ops'] == []  # engine/portable.py's form
  differences = golden_runs.row_differences(golden['rows'], found['rows'])
  if differences:
    record = provenance.record_differences(
        golden['determinism'], found['determinism'],
        provenance.reproducing(golden['determinism']) + ('program',))
    pytest.fail(
        f'golden run {name!r} ({golden["config"]}) differs from its committed bits '
        f'(tests/golden/{name}.json, made {golden.get("made")} on '
        f'{golden["determinism"].get("cpu_model")!r}, '
        f'{golden["determinism"].get("cpu_arch")!r}):\n  ' + '\n  '.join(differences)
        + '\ndeterminism record, golden -> this machine: '
        + ('; '.join(record) if record else
           'no field that decides the bits differs, so the code moved them: if that '
           'was meant, regenerate (python -m tests.golden_runs) and say so in the '
           'commit'), pytrace=False)


def test_every_golden_file_is_a_golden_run():
  """A golden per run and no stray file; each keeps the record fields it is
  compared on."""
  files = sorted(f[:-5] for f in os.listdir(golden_runs.GOLDEN_DIR) if f.endswith('.json'))
  assert files == sorted(golden_runs.GOLDEN)
  for name in files:
    golden = _load(name)
    assert golden['config'] == golden_runs.GOLDEN[name]
    assert set(golden['determinism']) == set(golden_runs.RECORD)
    assert golden['determinism']['numerics'] == 'portable'
    assert golden['determinism']['unportable_ops'] == []
    assert all(len(row['params_sha256']) == 16 for row in golden['rows'])


def test_row_differences_name_the_field_and_both_values():
  golden = [{'epoch': 1, 'seed': 1, 'params_sha256': 'a', 'test_accuracy': 50.0},
            {'epoch': 1, 'seed': 2, 'params_sha256': 'b', 'test_accuracy': 51.0}]
  found = [dict(golden[0]), dict(golden[1], params_sha256='c'),
           {'epoch': 2, 'seed': 1, 'params_sha256': 'd'}]
  assert golden_runs.row_differences(golden, found) == [
      "epoch 1 seed 2: params_sha256 'b' -> 'c'", 'epoch 2 seed 1: not in the golden']
  assert golden_runs.row_differences(golden, found[:1]) == ['epoch 1 seed 2: missing now']

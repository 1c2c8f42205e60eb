"""The XLA:CPU thread pool and a seed's bits at full shapes: every model family's paper
config, a few steps, under pools of 2 to 32 threads, on one CPU device and with the
members on several (docs/design.md, "Core counts").

A pool's size, not the cores, decides how XLA splits the work, so 2 cores check a
32-thread pool. Each pool needs its own process (the pool is fixed when JAX starts
its CPU client); each process trains all six families (tests/pool_probe.py) and
compiles them itself (the compilation cache does not key on the pool).
"""
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.conftest import built_once
from tests.conftest import user_environment
from tests.pool_probe import CONFIGS

pytestmark = pytest.mark.slow  # six families compiled at full size, once a pool

STEPS = 2  # the first update, and one from updated parameters
POOLS = (2, 3, 4, 8, 16, 32)
DEVICES = 4  # forced CPU devices, each holding one of four seeds' members
DEVICE_POOLS = (4, 32)  # a pool has at least one thread per device


def _probe(threads: int, devices: int = 1, seeds: int = 2) -> dict:
  """tests/pool_probe.py's JSON from a process of its own with ``threads`` threads."""
  env = user_environment()
  if devices > 1:
    env['XLA_FLAGS'] = (env.get('XLA_FLAGS', '') +
                        f' --xla_force_host_platform_device_count={devices}').strip()
  proc = subprocess.run(
      [sys.executable, '-m', 'tests.pool_probe', str(threads), str(STEPS), str(seeds)],
      cwd=REPO, capture_output=True, text=True, env=env, timeout=3600, check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  found = json.loads(proc.stdout.strip().splitlines()[-1])
  assert found['cpu_threads'] == threads and found['device_count'] == devices
  assert found['numerics'] == 'portable'
  return found


def _differences(reference: dict, found: dict) -> list:
  """``'CONFIG: hashes A under pool P -> hashes B under pool Q'`` for each family whose
  members' hashes differ."""
  return [f'{spec}: {reference[spec]["params"]} under {reference["cpu_threads"]} threads '
          f'-> {found[spec]["params"]} under {found["cpu_threads"]}'
          for spec in CONFIGS if found[spec]['params'] != reference[spec]['params']]


def _reference(tmp_path_factory, threads: int, devices: int = 1, seeds: int = 2):
  """:func:`_probe`, made once per run of the suite (pytest-xdist's workers share it)."""
  def build(folder):
    with open(os.path.join(folder, 'probe.json'), 'w') as f:
      json.dump(_probe(threads, devices, seeds), f)
  folder = built_once(tmp_path_factory, f'pool_probe_{threads}_{devices}', build)
  with open(os.path.join(folder, 'probe.json')) as f:
    return json.load(f)


@pytest.mark.parametrize('threads', POOLS[1:])
def test_a_pool_of_more_threads_gives_the_bits_of_two(tmp_path_factory, threads):
  """Each pool in a test of its own, so that pytest-xdist's workers share them."""
  reference = _reference(tmp_path_factory, POOLS[0])
  found = _probe(threads)
  assert all(r[spec]['devices'] == 1 for r in (reference, found) for spec in CONFIGS)
  assert not _differences(reference, found), '\n'.join(_differences(reference, found))


def test_members_on_several_devices_give_the_same_bits_whatever_the_pool():
  reference, found = (_probe(threads, DEVICES, seeds=DEVICES) for threads in DEVICE_POOLS)
  assert all(r[spec]['devices'] == DEVICES for r in (reference, found) for spec in CONFIGS)
  assert not _differences(reference, found), '\n'.join(_differences(reference, found))

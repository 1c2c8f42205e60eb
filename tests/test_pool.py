"""The XLA:CPU thread pool and a seed's bits at full shapes: every model family's paper
config, a few steps, under pools of 2 to 32 threads, on one CPU device and with the
members on several (docs/design.md, "Core counts"; docs/log.md, "2026-12-04: the
pool's size and the bits").

A pool's size, not the cores, decides how XLA splits the work, so 2 cores check a
32-thread pool. Each pool needs its own process (the pool is fixed when JAX starts its
CPU client): one process a pool trains all six families (tests/pool_probe.py), once
per run of the suite; each family and pool is then a test of its own.

Where the programs were compiled: the pool splits work when a program runs (the
dots' and reduces' kernels) and, for some loops, when it is compiled (the
compilation cache's key does not name the pool). The ends of each range compile
their own programs (:data:`FRESH`: 2 and 32 threads; 4 on four devices); the pools
between run the reference's programs read from its cache, as a cache shared by
machines of other core counts gives them: every pool runs, three compile
(:func:`test_a_program_read_from_another_pools_cache_splits_by_the_pool_running_it`
checks that a split still follows the pool that runs). Until 2026-12-05 every pool
compiled its own: eight probes, about 1,220 CPU-s, now about 640.
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
from tests.pool_probe import PROGRAMS

pytestmark = pytest.mark.slow
# The README tier's probe: a small Bi-LSTM (the paper-size one agrees under every pool).
DEMO = 'experiments/demo.py:quick'

STEPS = 2  # the first update, and one from updated parameters
# Until 2026-12-04 the C-LSTM had three sets of bits, under 2 and 3 threads, under 4,
# under 8 to 32: its LSTM input bias's gradient, a YNNPACK reduce of [T, 1, 50, 1200]
# whose split followed the pool; engine/portable.py now sums it as a dot (docs/log.md,
# "the pool's size and the bits"). A probe compiling its programs takes about 150
# CPU-s (170 on four devices), one reading them about 35 (2026-12-05); `python -m
# tests.pool_probe` runs any pool.
POOLS = (2, 3, 4, 8, 16, 32)
DEVICES = 4  # forced CPU devices, each holding one of four seeds
DEVICE_POOLS = (4, 32)  # a pool has at least one thread per device
# The pools whose probes compile their own programs, per device count: the first is
# the reference, whose programs the others run.
FRESH = {1: (2, 32), DEVICES: (4,)}


def _probe(threads: int, devices: int = 1, seeds: int = 2, specs=CONFIGS,
           programs: str = '') -> dict:
  """tests/pool_probe.py's JSON for ``specs`` from a process of its own with
  ``threads`` threads; ``programs``: ``write:DIR`` or ``read:DIR``, the compilation
  cache it keeps its programs in or runs them from ('': it compiles them, keeps
  none)."""
  env = user_environment()
  env.pop(PROGRAMS, None)
  if programs:
    env[PROGRAMS] = programs
  if devices > 1:
    env['XLA_FLAGS'] = (env.get('XLA_FLAGS', '') +
                        f' --xla_force_host_platform_device_count={devices}').strip()
  proc = subprocess.run(
      [sys.executable, '-m', 'tests.pool_probe', str(threads), str(STEPS), str(seeds),
       *(() if specs == CONFIGS else specs)],
      cwd=REPO, capture_output=True, text=True, env=env, timeout=3600, check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  found = json.loads(proc.stdout.strip().splitlines()[-1])
  assert found['cpu_threads'] == threads and found['device_count'] == devices
  assert found['numerics'] == 'portable'
  assert all(found[spec]['devices'] == devices for spec in specs)
  return found


def _probed(tmp_path_factory, threads: int, devices: int = 1) -> dict:
  """:func:`_probe`'s JSON, made once per run of the suite (:func:`_made`)."""
  with open(os.path.join(_made(tmp_path_factory, threads, devices), 'probe.json')) as f:
    return json.load(f)


def _made(tmp_path_factory, threads: int, devices: int) -> str:
  """The folder of :func:`_probe`'s JSON, made once per run of the suite
  (pytest-xdist's workers share it): the probe compiled its own programs
  (:data:`FRESH`; the reference keeps them there, in ``programs``) or ran the
  reference's."""
  reference = FRESH[devices][0]
  read = ''
  if threads not in FRESH[devices]:  # the reference's probe first: its programs
    read = 'read:' + os.path.join(_made(tmp_path_factory, reference, devices),
                                  'programs')
  def build(folder):
    kept = 'write:' + os.path.join(folder, 'programs') if threads == reference else ''
    found = _probe(threads, devices, seeds=2 if devices == 1 else devices,
                   programs=read or kept)
    for spec in CONFIGS:  # compiled here, or read: as the module's docstring says
      assert bool(found[spec]['programs_read']) == bool(read), (spec, found[spec])
    with open(os.path.join(folder, 'probe.json'), 'w') as f:
      json.dump(found, f)
  return built_once(tmp_path_factory, f'pool_probe_{threads}_{devices}', build)


def _cases(pools):
  """``(spec, threads)`` for every family and every pool but the first."""
  return [(spec, threads) for threads in pools[1:] for spec in CONFIGS]


def _assert_same(reference: dict, found: dict, spec: str):
  assert found[spec]['params'] == reference[spec]['params'], (
      f'{spec}: {reference[spec]["params"]} under {reference["cpu_threads"]} threads -> '
      f'{found[spec]["params"]} under {found["cpu_threads"]}')


def _sums(threads: int, plain: bool = False, programs: str = '') -> dict:
  """tests/pool_probe.py's sums (``plain``: the unrewritten reduce) from a process
  of its own with ``threads`` threads (``programs``: as :func:`_probe`'s)."""
  env = user_environment()
  env.pop(PROGRAMS, None)
  if programs:
    env[PROGRAMS] = programs
  proc = subprocess.run([sys.executable, '-m', 'tests.pool_probe', 'sums', str(threads),
                         *(['plain'] if plain else [])],
                        cwd=REPO, capture_output=True, text=True, env=env, timeout=600,
                        check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  out = json.loads(proc.stdout.strip().splitlines()[-1])
  assert out['cpu_threads'] == threads
  assert bool(out['programs_read']) == programs.startswith('read:'), out
  return out['sums']


@pytest.mark.full  # six processes of seconds; the C-LSTM's probes below hold it too
def test_the_clstm_bias_gradient_sums_give_the_same_bits_under_every_pool():
  """The op whose split followed the pool, alone in its portable form (a dot of
  ones): pools of 1 to 32 threads, a process each (seconds)."""
  found = {threads: _sums(threads) for threads in (1, 2, 3, 4, 8, 32)}
  assert all(sums == found[1] for sums in found.values()), found


@pytest.mark.full  # what makes the probes that read programs a check (seconds)
def test_a_program_read_from_another_pools_cache_splits_by_the_pool_running_it(
    tmp_path):
  """The plain reduce of the C-LSTM's bias gradient, whose split follows the pool:
  compiled under 2 and read from the cache by a pool of 32, it gives the bits 32
  threads give when they compile it, not those of 2 (2026-12-05: at 4 of its 5
  lengths). Were the split fixed when compiling, the pools that run the reference's
  programs would check nothing."""
  programs = str(tmp_path / 'programs')
  compiled_under_2 = _sums(2, plain=True, programs='write:' + programs)
  compiled_under_32 = _sums(32, plain=True)
  assert compiled_under_32 != compiled_under_2, (
      'the plain reduce no longer splits by the pool here: this test needs an op '
      'that does')
  assert _sums(32, plain=True, programs='read:' + programs) == compiled_under_32


@pytest.mark.short  # --all: the six families at full size under pools 2 to 32, below
def test_a_small_model_gives_the_same_bits_under_pools_of_2_and_8():
  first, second = (_probe(threads, specs=(DEMO,)) for threads in (2, 8))
  assert first[DEMO]['params'] == second[DEMO]['params']


@pytest.mark.full  # six families at full size, a process a pool
@pytest.mark.parametrize('spec, threads', _cases(POOLS))
def test_a_family_gives_the_bits_of_a_pool_of_two(tmp_path_factory, spec, threads):
  """Under 32 threads compiled there, under 3 to 16 the pool of 2's programs."""
  found = _probed(tmp_path_factory, threads)
  _assert_same(_probed(tmp_path_factory, POOLS[0]), found, spec)


@pytest.mark.full  # six families at full size, a process a pool
@pytest.mark.parametrize('spec, threads', _cases(DEVICE_POOLS))
def test_members_on_several_devices_give_the_same_bits_whatever_the_pool(
    tmp_path_factory, spec, threads):
  """Forced CPU devices share the one pool (one seed a device, under vmap); 32
  threads run the pool of 4's programs."""
  found = _probed(tmp_path_factory, threads, DEVICES)
  _assert_same(_probed(tmp_path_factory, DEVICE_POOLS[0], DEVICES), found, spec)

"""seedsweep/run/runtime.py: the compilation cache heals a damaged entry."""
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

PROGRAM = ('from seedsweep.run import runtime\n'
           'runtime.enable_compilation_cache()\n'
           'import jax, jax.numpy as jnp\n'
           "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)\n"
           'print(float(jax.jit(lambda x: jnp.sin(x) * 2 + x ** 3)(1.5)))\n')


def _run(cache):
  return subprocess.run([sys.executable, '-c', PROGRAM], cwd=REPO, capture_output=True,
                        text=True, check=True, env=dict(os.environ, SEEDSWEEP_CACHE=cache))


@pytest.mark.slow
def test_a_garbled_compilation_cache_entry_is_named_removed_and_written_again(tmp_path):
  cache = str(tmp_path / 'cache')
  first = _run(cache)
  entries = [os.path.join(cache, 'jax', f) for f in os.listdir(os.path.join(cache, 'jax'))
             if f.endswith('-cache')]
  assert entries
  for path in entries:  # bytes flipped in the middle, as a bad disk leaves them
    body = bytearray(open(path, 'rb').read())
    middle = len(body) // 2
    body[middle:middle + 16] = bytes(b ^ 0xFF for b in body[middle:middle + 16])
    with open(path, 'wb') as f:
      f.write(bytes(body))
  second = _run(cache)
  assert second.stdout == first.stdout
  assert 'is damaged (' in second.stderr and 'compiling it again' in second.stderr
  third = _run(cache)  # healed: the entry written again reads back
  assert third.stdout == first.stdout and 'damaged' not in third.stderr


@pytest.mark.parametrize('platforms, plugin', [('cuda', 'cuda'), ('tpu,cpu', 'tpu'),
                                               ('cpu', None), ('cpu,cuda', None)])
def test_jax_platforms_says_which_client_starts(monkeypatch, platforms, plugin):
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  monkeypatch.setenv('JAX_PLATFORMS', platforms)
  assert runtime.accelerator_plugin() == plugin


@pytest.mark.slow
@pytest.mark.full  # the pool: test_determinism.py; platforms: the test above
def test_the_cpu_thread_pool_never_reaches_an_accelerator_client():
  """NPROC sizes XLA:GPU's thread pool too: where an accelerator will start, the
  config's cpu_threads leaves it unset (a CPU run sets it)."""
  program = ('import os\nfrom seedsweep.run import runtime\n'
             'runtime.pin_cpu_threads(4)\nprint(os.environ.get("NPROC"))\n')
  env = {k: v for k, v in os.environ.items() if k != 'NPROC'}
  found = [subprocess.run([sys.executable, '-c', program], cwd=REPO, check=True,
                          capture_output=True, text=True,
                          env=dict(env, JAX_PLATFORMS=p)).stdout.split()[-1]
           for p in ('cuda', 'cpu')]
  assert found == ['None', '4']


def test_a_cpu_records_float32_matmuls_and_compares_old_records_equal():
  from seedsweep.run import provenance  # pylint: disable=g-import-not-at-top
  record = provenance.determinism_record()
  assert record['backend'] == 'cpu' and record['matmul_precision'] == 'highest'
  before = dict(record, matmul_precision='default')  # a record made before the field
  assert provenance.record_differences(before, record) == []
  gpu = dict(record, backend='gpu')
  assert provenance.record_differences(dict(gpu, matmul_precision='default'), gpu) == [
      "matmul_precision: 'default' -> 'highest'"]


def test_an_unknown_matmul_precision_is_refused_with_the_closest():
  from seedsweep.errors import UserError  # pylint: disable=g-import-not-at-top
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  from tests.conftest import small_config  # pylint: disable=g-import-not-at-top
  config = small_config()
  config.runtime.matmul_precision = 'hihgest'
  with pytest.raises(UserError, match=r"config.runtime.matmul_precision='hihgest'.*"
                                      r"highest"):
    runtime.pin_for(config)


@pytest.mark.parametrize('platforms, cpu_flags, gpu_flag', [
    ('cuda', False, True), ('tpu', False, True), ('cpu', True, True)])
def test_portable_numerics_give_a_process_only_its_own_platforms_flags(
    monkeypatch, platforms, cpu_flags, gpu_flag):
  """An accelerator's process trains nothing on XLA:CPU: no CPU flag reaches it."""
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  monkeypatch.setenv('JAX_PLATFORMS', platforms)
  names = [f for f, _ in runtime.portable_flags(machine='x86_64')]
  assert any(f.startswith('--xla_cpu_') for f in names) == cpu_flags
  assert ('--xla_gpu_deterministic_ops' in names) == gpu_flag


@pytest.mark.parametrize('platforms, restarts', [('cuda', False), ('cpu', True)])
def test_the_malloc_settings_restart_only_a_cpu_process(monkeypatch, platforms, restarts):
  """GLIBC_TUNABLES were measured for XLA:CPU's buffers; a GPU process keeps glibc's
  defaults (benchmarks/device_check.py measures them there apart)."""
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  calls = []
  monkeypatch.setattr(os, 'execve', lambda *args: calls.append(args))
  monkeypatch.setattr(sys, 'platform', 'linux')
  monkeypatch.delenv('GLIBC_TUNABLES', raising=False)
  monkeypatch.delenv('SEEDSWEEP_NO_REEXEC', raising=False)
  monkeypatch.setenv('JAX_PLATFORMS', platforms)
  runtime.reexec_with_malloc_tunables(['python'])
  assert bool(calls) == restarts
  if restarts:
    assert calls[0][2]['GLIBC_TUNABLES'] == runtime.GLIBC_TUNABLES

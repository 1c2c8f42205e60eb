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

"""Process-wide settings shared by launch.py, tests and benchmarks.

Cheap to import (jax is imported only when a function needs it): launch.py reads
:data:`GLIBC_TUNABLES` before it re-executes itself.
"""
import os
import sys

# XLA:CPU allocates large per-step buffers; glibc's default malloc returns them to the
# kernel and faults them in again (a fifth of CPU time in the kernel). These settings
# keep them. benchmarks/seed_parallel.py measured the demo Bi-LSTM 1.49x faster with
# vmap and 1.17x with per-seed steps; the lax.map form was unaffected.
# glibc reads them only at process start.
GLIBC_TUNABLES = ('glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1:'
                  'glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736')


def reexec_with_malloc_tunables() -> None:
  """Restarts this process once with GLIBC_TUNABLES set (Linux/glibc only).

  Set SEEDSWEEP_NO_REEXEC=1 (or GLIBC_TUNABLES yourself) to opt out.
  """
  if (sys.platform.startswith('linux') and 'GLIBC_TUNABLES' not in os.environ
      and not os.environ.get('SEEDSWEEP_NO_REEXEC')):
    env = dict(os.environ, GLIBC_TUNABLES=GLIBC_TUNABLES)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def cache_dir() -> str:
  return os.environ.get('SEEDSWEEP_CACHE') or os.path.expanduser('~/.cache/seedsweep')


def enable_compilation_cache() -> None:
  """Keeps compiled programs on disk (``$SEEDSWEEP_CACHE/jax``).

  A Bi-LSTM train step takes seconds to compile on a small CPU, once per length
  bucket; the cache makes reruns, evaluations and the test suite start at once.
  The cache key covers the program, the flags and the jax version.
  """
  import jax  # pylint: disable=g-import-not-at-top
  jax.config.update('jax_compilation_cache_dir', os.path.join(cache_dir(), 'jax'))
  jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.2)
  jax.config.update('jax_persistent_cache_min_entry_size_bytes', 0)

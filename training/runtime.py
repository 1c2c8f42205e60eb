"""Process-wide JAX settings shared by launch.py, tests and benchmarks."""
import os

import jax


def cache_dir() -> str:
  return os.environ.get('SEEDSWEEP_CACHE') or os.path.expanduser('~/.cache/seedsweep')


def enable_compilation_cache() -> None:
  """Keeps compiled programs on disk (``$SEEDSWEEP_CACHE/jax``).

  A Bi-LSTM train step takes seconds to compile on a small CPU, once per length
  bucket; the cache makes reruns, evaluations and the test suite start at once.
  The cache key covers the program, the flags and the jax version.
  """
  jax.config.update('jax_compilation_cache_dir', os.path.join(cache_dir(), 'jax'))
  jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.2)
  jax.config.update('jax_persistent_cache_min_entry_size_bytes', 0)

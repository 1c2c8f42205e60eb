"""Process-wide settings shared by launch.py, tests and benchmarks.

Cheap to import (jax is imported only when a function needs it): launch.py reads
:data:`GLIBC_TUNABLES` before it re-executes itself.
"""
import os
import platform
import re
import sys
from typing import Optional, Tuple

from seedsweep import notices

# XLA:CPU allocates large per-step buffers; glibc's default malloc returns them to the
# kernel and faults them in again (a fifth of CPU time in the kernel). These settings
# keep them. benchmarks/seed_parallel.py measured the demo Bi-LSTM 1.49x faster with
# vmap and 1.17x with per-seed steps; the lax.map form was unaffected.
# glibc reads them only at process start.
GLIBC_TUNABLES = ('glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1:'
                  'glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736')


def reexec_with_malloc_tunables(command=None) -> None:
  """Restarts this process once with GLIBC_TUNABLES set (Linux/glibc, CPU runs only).

  ``command`` starts this program again without its arguments (default: ``python
  sys.argv[0]``; ``[python, '-m', 'seedsweep']`` for ``python -m``). Set
  SEEDSWEEP_NO_REEXEC=1 (or GLIBC_TUNABLES yourself) to opt out. A process that will
  start an accelerator keeps glibc's defaults: the settings were measured for
  XLA:CPU's buffers, and benchmarks/device_check.py measures them on a GPU apart.
  """
  if (sys.platform.startswith('linux') and 'GLIBC_TUNABLES' not in os.environ
      and not os.environ.get('SEEDSWEEP_NO_REEXEC') and not accelerator_plugin()):
    env = dict(os.environ, GLIBC_TUNABLES=GLIBC_TUNABLES)
    argv = list(command or [sys.executable, sys.argv[0]]) + sys.argv[1:]
    os.execve(argv[0], argv, env)


def cache_dir() -> str:
  """``$SEEDSWEEP_CACHE``, else ``~/.cache/seedsweep``: where compiled programs are kept."""
  return os.environ.get('SEEDSWEEP_CACHE') or os.path.expanduser('~/.cache/seedsweep')


def enable_compilation_cache() -> None:
  """Keeps compiled programs on disk (``$SEEDSWEEP_CACHE/jax``), damaged entries healed.

  A Bi-LSTM train step takes seconds to compile on a small CPU, once per length
  bucket; the cache makes reruns, evaluations and the test suite start at once.
  The cache key covers the program, the flags and the jax version.
  """
  import jax  # pylint: disable=g-import-not-at-top
  folder = os.path.join(cache_dir(), 'jax')
  jax.config.update('jax_compilation_cache_dir', folder)
  jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.2)
  jax.config.update('jax_persistent_cache_min_entry_size_bytes', 0)
  # An entry that does not read back (zlib's checksum: a garbled or truncated file)
  # is said in one line and removed, so the program compiled instead is written in
  # its place; jax alone warns and recompiles at every run, keeping the bad entry.
  # This wraps jax's internal reader, once; a jax without it keeps its own behaviour.
  try:
    from jax._src import compilation_cache  # pylint: disable=g-import-not-at-top
    read = compilation_cache.get_executable_and_time
  except (ImportError, AttributeError):
    return
  if getattr(read, 'heals', False):
    return

  def healing(cache_key, *args, **kwargs):
    try:
      return read(cache_key, *args, **kwargs)
    except Exception as e:  # pylint: disable=broad-except  (jax warns and compiles)
      path = os.path.join(folder, f'{cache_key}-cache')
      if os.path.exists(path):
        notices.say(f'warning: compilation cache entry {path} is damaged '
                    f'({type(e).__name__}: {str(e)[:80]}); removed, compiling it again')
        os.remove(path)
      raise

  healing.heals = True
  compilation_cache.get_executable_and_time = healing


# XLA:CPU's pool size: XLA takes it from NPROC (else the usable cores) when the CPU
# client starts. Under portable numerics a seed's bits do not depend on it (its sums
# and dots run in forms whose split does not follow the pool: engine/portable.py), so
# by default it follows the usable cores, at least 2 (XLA's plain sums round otherwise
# on one thread); native numerics' Eigen dots do split by it (docs/design.md, "Core
# counts").
THREADS_VARIABLE = 'NPROC'


def usable_cores() -> int:
  """The cores this process may run on (its CPU affinity; ``os.cpu_count()`` outside
  Linux)."""
  try:
    return len(os.sched_getaffinity(0))
  except AttributeError:  # not Linux
    return os.cpu_count() or 1


_pinned = None  # the value the first pin_cpu_threads call of this process chose


def pin_cpu_threads(threads: int) -> None:
  """Sets the XLA:CPU intra-op thread pool to ``threads`` (0, the default: NPROC where
  the environment sets it, else the usable cores, at least 2).

  Must come before JAX starts its CPU client (the first computation); afterwards a
  different request raises UserError, since the pool cannot change in a process.
  """
  from jax._src import xla_bridge  # pylint: disable=g-import-not-at-top
  from seedsweep.errors import UserError  # pylint: disable=g-import-not-at-top
  global _pinned
  if not xla_bridge.backends_are_initialized():
    # NPROC also sizes a GPU client's thread pool: left alone where one will start
    # (the pool then is the usable cores, and the record says so).
    if accelerator_plugin():
      _pinned = 0
      return
    os.environ[THREADS_VARIABLE] = str(
        threads or int(os.environ.get(THREADS_VARIABLE) or 0) or max(2, usable_cores()))
    _pinned = threads
    return
  started = _pinned or int(os.environ.get(THREADS_VARIABLE) or 0) or usable_cores()
  if threads and threads != started:
    raise UserError(
        f'config.runtime.cpu_threads={threads}, but this process started JAX with '
        f'{started} XLA:CPU threads; run it in a new process (launch.py does), or '
        f'call seedsweep.run.runtime.pin_cpu_threads({threads}) before any JAX computation')


def cpu_threads() -> int:
  """The size of this process's XLA:CPU intra-op pool (what a result depends on): the
  threads pinned (else NPROC as the process found it, else the usable cores), at
  least one per CPU device (``--xla_force_host_platform_device_count``)."""
  import jax  # pylint: disable=g-import-not-at-top
  threads = _pinned or int(os.environ.get(THREADS_VARIABLE) or usable_cores())
  cpu_devices = len(jax.devices('cpu')) if jax.default_backend() == 'cpu' else 1
  return max(threads, cpu_devices)


def pin_for(config) -> None:
  """:func:`pin_cpu_threads` and :func:`pin_numerics` with ``config.runtime``, and
  ``config.runtime.matmul_precision``: how a GPU or TPU computes float32 matmuls (a
  CPU computes them in float32 whatever is asked; the choices: config/base.py)."""
  import jax  # pylint: disable=g-import-not-at-top
  from seedsweep.config import checks  # pylint: disable=g-import-not-at-top
  # Their declared checks (config/base.py), before anything starts JAX.
  checks.check_fields(config, ('runtime.cpu_threads', 'runtime.numerics',
                               'runtime.matmul_precision'))
  pin_cpu_threads(config.runtime.cpu_threads)
  pin_numerics(config.runtime.numerics)
  # On a CPU nothing: its programs, and so their fingerprints, stay those of before
  # the setting existed.
  if jax.default_backend() != 'cpu':
    jax.config.update('jax_default_matmul_precision', config.runtime.matmul_precision)


def matmul_precision() -> str:
  """The precision float32 matmuls ran at: 'highest' on a CPU, else jax's setting."""
  import jax  # pylint: disable=g-import-not-at-top
  if jax.default_backend() == 'cpu':
    return 'highest'
  return str(jax.config.jax_default_matmul_precision or 'default')


def accelerator_plugin() -> Optional[str]:
  """The accelerator JAX will start instead of its CPU client, if one is installed or
  asked for (JAX_PLATFORMS): 'cuda', 'tpu', ...; None for a CPU run."""
  import importlib.metadata  # pylint: disable=g-import-not-at-top
  import importlib.util  # pylint: disable=g-import-not-at-top
  import pkgutil  # pylint: disable=g-import-not-at-top
  platforms = os.environ.get('JAX_PLATFORMS', '').strip()
  if platforms:
    first = platforms.split(',')[0].strip().lower()
    return None if first == 'cpu' else first
  names = [e.name for e in importlib.metadata.entry_points(group='jax_plugins')]
  spec = importlib.util.find_spec('jax_plugins')
  if spec is not None and spec.submodule_search_locations:
    names += [m.name for m in pkgutil.iter_modules(spec.submodule_search_locations)]
  if importlib.util.find_spec('libtpu') is not None:
    names.append('tpu')
  return names[0] if names else None


# config.runtime.numerics: 'portable' (the default) gives a seed the same bits on every
# x86-64 CPU with AVX2 and FMA; 'native' lets XLA and its kernels follow the CPU, whose
# numbers are then its own (docs/design.md, "Portable numerics across CPUs").
#
# The XLA flags portable numerics set, each for a source of CPU-dependent bits found on
# 2026-11-28 (an emulated Zen 3 against a Sapphire Rapids):
# * platform-dependent math off: YNNPACK's dots and reductions take its consistent
#   arithmetic (the same bits on AVX2, AVX-512 and AMX kernels), and XLA emits no
#   approximate reciprocal square root;
# * code for AVX2 at most: no AVX-512 or AMX instruction in XLA's own kernels, the
#   instruction set every x86-64 CPU of the promise has (x86 only: other
#   architectures do not know the name);
# * XLA:GPU's deterministic ops: the same numbers from one run to the next on a GPU
#   (see gpu_determinism_warning).
# The rest is in the program: seedsweep.engine.portable (dots in YNNPACK's form, QR
# without LAPACK).
PORTABLE_FLAGS = (('--xla_cpu_enable_platform_dependent_math', 'false'),
                  ('--xla_gpu_deterministic_ops', 'true'))
X86_PORTABLE_FLAGS = (('--xla_cpu_max_isa', 'AVX2'),)
_FLAG = re.compile(r'(--[A-Za-z0-9_]+)(?:=(\S*))?')


def portable_flags(machine: Optional[str] = None,
                   accelerator: Optional[str] = '') -> Tuple[Tuple[str, str], ...]:
  """``((flag, value), ...)`` that portable numerics add to XLA_FLAGS here.

  ``accelerator``: what :func:`accelerator_plugin` says ('' to ask it). A process
  that starts an accelerator trains nothing on XLA:CPU, so it gets the GPU's flag
  alone: the CPU's flags would only reach its idle host client.
  """
  if accelerator == '':
    accelerator = accelerator_plugin()
  if accelerator:
    return tuple(f for f in PORTABLE_FLAGS if f[0].startswith('--xla_gpu_'))
  machine = (machine or platform.machine()).lower()
  x86 = machine in ('x86_64', 'amd64', 'i686', 'i386')
  return PORTABLE_FLAGS + (X86_PORTABLE_FLAGS if x86 else ())


def _flags(text: str) -> dict:
  """``{flag: value}`` of an XLA_FLAGS string (a bare flag reads 'true')."""
  return {m.group(1): 'true' if m.group(2) is None else m.group(2)
          for m in _FLAG.finditer(text or '')}


_numerics = None       # the mode the last pin_numerics call before JAX started chose
_user_xla_flags = None  # XLA_FLAGS as the process had them before that call


def numerics() -> str:
  """This process's numerics: as pinned, else 'portable' when XLA_FLAGS holds every
  portable flag (a process that computed before any pin), else 'native'."""
  if _numerics:
    return _numerics
  have = _flags(os.environ.get('XLA_FLAGS', ''))
  same = all(have.get(flag, '').lower() == value.lower()
             for flag, value in portable_flags())
  return 'portable' if same else 'native'


def pin_numerics(mode: str) -> None:
  """Adds the portable flags to XLA_FLAGS (``mode='portable'``) before JAX starts its
  client; afterwards, a request this process cannot honour raises UserError."""
  from jax._src import xla_bridge  # pylint: disable=g-import-not-at-top
  from seedsweep.errors import UserError  # pylint: disable=g-import-not-at-top
  global _numerics, _user_xla_flags
  if xla_bridge.backends_are_initialized():
    if numerics() != mode:
      raise UserError(
          f'config.runtime.numerics={mode!r}, but this process started JAX with '
          f'{numerics()} numerics (XLA_FLAGS={os.environ.get("XLA_FLAGS", "")!r}); run '
          f'it in a new process (the seedsweep command does), or call '
          f'seedsweep.run.runtime.pin_numerics({mode!r}) before any JAX computation')
    return
  if _user_xla_flags is None:
    _user_xla_flags = os.environ.get('XLA_FLAGS', '')
  text = _user_xla_flags
  have = _flags(text)
  added = ''
  if mode == 'portable':
    for flag, value in portable_flags():
      if flag in have and have[flag].lower() != value.lower():
        raise UserError(
            f'XLA_FLAGS sets {flag}={have[flag]}, but config.runtime.numerics='
            f"'portable' needs {flag}={value}; remove it from XLA_FLAGS, or take this "
            f"machine's own numerics with --config.runtime.numerics=native")
    added = ' '.join(f'{f}={v}' for f, v in portable_flags() if f not in have)
  if text or added:
    os.environ['XLA_FLAGS'] = f'{text} {added}'.strip()
  _numerics = mode


def user_xla_flags() -> str:
  """XLA_FLAGS without what :func:`pin_numerics` added: what a child process of a
  user's shell gets."""
  return os.environ.get('XLA_FLAGS', '') if _user_xla_flags is None else _user_xla_flags


# XLA:GPU's switch for run-to-run identical numbers: with it, a seed trained in two
# processes on an H100 gave the same parameters to the bit after every epoch
# (docs/log.md, "2026-11-27: on a GPU"; docs/design.md, "On a GPU").
GPU_DETERMINISM_FLAG = '--xla_gpu_deterministic_ops=true'
_GPU_FLAG_SET = re.compile(r'(^|\s)--xla_gpu_deterministic_ops(=(true|1))?(\s|$)')


def gpu_determinism_warning(backend: str, xla_flags: str) -> Optional[str]:
  """The line a run on ``backend`` prints when ``xla_flags`` (the XLA_FLAGS it started
  with) leaves XLA:GPU free to vary its numbers from run to run; None when not."""
  if backend not in ('gpu', 'cuda', 'rocm') or _GPU_FLAG_SET.search(xla_flags):
    return None
  return (f'warning: training on {backend} without XLA_FLAGS={GPU_DETERMINISM_FLAG}: '
          "a seed's numbers may differ from one run to the next (docs/reproducibility.md, "
          '"On a GPU")')

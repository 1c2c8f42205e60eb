"""What produced a result: library versions, git commit, devices."""
import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import subprocess
from typing import Dict, List, Optional, Sequence, Tuple

import jax
import numpy as np

from seedsweep.config import paths
from seedsweep.config import python_files

PACKAGES = ('jax', 'jaxlib', 'flax', 'optax', 'orbax-checkpoint', 'ml_collections',
            'tensorflow-datasets', 'numpy', 'absl-py')
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def library_versions() -> dict:
  """``{'python': '3.x.y', package: version}`` for each of :data:`PACKAGES` (None: not
  installed)."""
  versions = {'python': platform.python_version()}
  for name in PACKAGES:
    try:
      versions[name] = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
      versions[name] = None
  return versions


def git_commit(root: str = REPO_ROOT) -> str:
  """``HEAD`` of the checkout holding ``root``, with ``+dirty`` when a tracked Python
  file (code, experiment configs, sweeps) differs from it; '' without git.

  Other files (results records, reports, README, the manual's docs/conf.py) do not
  change what a run computes:
  the campaign publishes a part's records before the next part starts, and those
  uncommitted records must not mark the next part's code as modified.
  """
  git = functools.partial(subprocess.run, capture_output=True, text=True, timeout=10,
                          check=False)
  try:
    head = git(['git', '-C', root, 'rev-parse', 'HEAD'])
    if head.returncode != 0:
      return ''
    changed = git(['git', '-C', root, 'status', '--porcelain',
                   '--untracked-files=no']).stdout.splitlines()
    dirty = any(path.strip('"').endswith('.py') and not path.strip('"').startswith('docs/')
                for line in changed for path in line[3:].split(' -> '))
    return head.stdout.strip() + ('+dirty' if dirty else '')
  except (OSError, subprocess.SubprocessError):
    return ''


def devices() -> dict:
  """``{'backend', 'count', 'kind'}``: jax's backend, its device count and the first
  device's kind."""
  return {'backend': jax.default_backend(), 'count': jax.device_count(),
          'kind': jax.devices()[0].device_kind}


SIMD_FLAGS = ('sse4_2', 'avx', 'avx2', 'fma', 'f16c', 'avx512f', 'avx512bw', 'avx512dq',
              'avx512vl', 'avx512_bf16', 'avx512_vnni', 'avx512_fp16', 'amx_tile',
              'amx_bf16', 'neon', 'asimd', 'sve')


# /proc/cpuinfo fields that name a CPU's microarchitecture: x86 (vendor, family,
# model) and ARM (implementer, architecture, part). XLA:CPU compiles for the host's
# microarchitecture and its kernels dispatch on it, so two CPUs with one marketing
# name and the same SIMD flags can round differently.
ARCH_FIELDS = ('vendor_id', 'cpu family', 'model',
               'CPU implementer', 'CPU architecture', 'CPU part')


def _cpuinfo(path: str = '/proc/cpuinfo') -> Tuple[str, str, List[str]]:
  """``(model name, microarchitecture, SIMD flags)`` of this CPU (Linux /proc/cpuinfo;
  else platform). The microarchitecture reads e.g.
  'AuthenticAMD cpu family 26 model 2'."""
  model, flags, arch = platform.processor() or platform.machine(), set(), {}
  try:
    with open(path, encoding='utf-8', errors='replace') as f:
      for line in f:
        key, _, value = line.partition(':')
        key, value = key.strip(), value.strip()
        if key == 'model name' and value:
          model = value
        elif key in ('flags', 'Features'):
          flags.update(value.split())
        elif key in ARCH_FIELDS and value:
          arch.setdefault(key, value)
  except OSError:
    pass
  arch_text = ' '.join(arch[k] if k == 'vendor_id' else f'{k} {arch[k]}'
                       for k in ARCH_FIELDS if k in arch)
  simd = sorted(f for f in flags if f in SIMD_FLAGS)
  return model, arch_text or platform.machine(), simd


def determinism_record() -> dict:
  """What, besides config, seed and data, decides a result's bits on this machine.

  Results made under equal records (and equal ``program``, the fingerprint of the
  compiled train step that training adds) are bitwise reproducible; REPRODUCING names
  the fields that decide it (docs/design.md, determinism policy).
  """
  import jaxlib  # pylint: disable=g-import-not-at-top
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  device = jax.devices()[0]
  model, arch, simd = _cpuinfo()
  return {
      'jax': jax.__version__, 'jaxlib': jaxlib.__version__,
      'jaxlib_git': getattr(getattr(jaxlib, 'version', None), '_git_hash', None),
      'backend': jax.default_backend(),
      'device_kind': device.device_kind,
      'platform_version': device.client.platform_version,  # GPU: CUDA/ROCm driver
      'cpu_model': model, 'cpu_arch': arch, 'cpu_simd': simd,
      'numerics': runtime.numerics(), 'cpu_isa': cpu_isa(simd),
      'usable_cores': runtime.usable_cores(),
      'cpu_threads': runtime.cpu_threads(),
      'xla_flags': os.environ.get('XLA_FLAGS', ''),
      'matmul_precision': runtime.matmul_precision(),
      'glibc_tunables': os.environ.get('GLIBC_TUNABLES', ''),
  }


# The record fields that change a result's bits. Under native numerics the CPU does:
# cpu_model is a marketing name ('AMD EPYC' covers several generations, which gave the
# demo different bits under otherwise equal records), cpu_arch names the
# microarchitecture; and so do the usable cores, through the orthogonal initialisers'
# QR, which LAPACK runs in OpenBLAS on one thread per core (a Bi-LSTM of hidden 150
# started from other parameters on 1 core than on 2, found 2026-11-28). Under portable
# numerics only the instruction-set class does (cpu_isa): neither the cores nor XLA's
# pool (cpu_threads, recorded: the pool that ran), whose split no portable step's sum
# or dot follows (engine/portable.py; tests/test_pool.py).
REPRODUCING = ('jax', 'jaxlib', 'backend', 'device_kind', 'platform_version',
               'cpu_arch', 'cpu_simd', 'usable_cores', 'cpu_threads', 'xla_flags',
               'matmul_precision')
PORTABLE_REPRODUCING = ('jax', 'jaxlib', 'backend', 'device_kind', 'platform_version',
                        'cpu_isa', 'xla_flags', 'matmul_precision')


def cpu_isa(simd: Sequence[str], machine: Optional[str] = None) -> str:
  """The class of CPUs portable numerics give one result on: 'x86-64 AVX2 FMA' (every
  x86-64 CPU with both), else the architecture and what it lacks."""
  machine = (machine or platform.machine()).lower()
  if machine not in ('x86_64', 'amd64'):
    return machine
  missing = [f.upper() for f in ('avx2', 'fma') if f not in simd]
  return 'x86-64 AVX2 FMA' if not missing else f'x86-64 without {"/".join(missing)}'


def reproducing(record: dict) -> Tuple[str, ...]:
  """The fields that decide the bits of a result made under ``record``: a record of
  portable numerics (a GPU's too) names the instruction-set class, not the CPU."""
  portable = record.get('numerics') == 'portable'
  return ('numerics',) + (PORTABLE_REPRODUCING if portable else REPRODUCING)


def record_differences(recorded: dict, current: dict,
                       fields: Optional[Sequence[str]] = None) -> List[str]:
  """``'field: recorded -> current'`` for each field that decides bits and differs
  (``fields``: those :func:`reproducing` names for ``recorded``). A record made before
  portable numerics reads 'native'."""
  fields = reproducing(recorded) if fields is None else fields
  def value(record, k):
    if k == 'matmul_precision' and record.get('backend') == 'cpu':
      return 'highest'  # a CPU's float32 matmuls, recorded 'default' before 2026-12-02
    return record.get(k, 'native' if k == 'numerics' else None)
  def shown(record, k):
    return repr(value(record, k)) if k in record or k == 'numerics' else '(not recorded)'
  return [f'{k}: {shown(recorded, k)} -> {shown(current, k)}' for k in fields
          if value(recorded, k) != value(current, k)]


def trained_on(meta: Optional[dict]) -> List[dict]:
  """The machines a checkpoint's parameters were trained on, oldest first:
  ``[{'from_epoch', 'from_step', 'determinism'}]``, each from where it took over (a
  checkpoint made before these histories: its own record, from epoch 1)."""
  meta = meta or {}
  if meta.get('machines'):
    return list(meta['machines'])
  record = meta.get('determinism')
  return [{'from_epoch': 1, 'from_step': 0, 'determinism': record}] if record else []


def machine_history(meta: Optional[dict], record: dict, epoch: int,
                    step: int = 0) -> List[dict]:
  """:func:`trained_on` for a run that continues from ``meta`` at ``step`` of
  ``epoch`` under ``record``: a new entry when this machine gives other bits than
  the last one (record_differences), else the same history."""
  before = trained_on(meta) if meta else []  # a fresh run: no machine before it
  if before and not record_differences(before[-1]['determinism'], record):
    return before
  return before + [{'from_epoch': epoch, 'from_step': step, 'determinism': record}]


def history_spans(machines: Sequence[dict], last_epoch: int) -> List[Tuple[int, int, dict]]:
  """``(first epoch, last epoch, record)`` of each machine of a history, for a run of
  ``last_epoch`` epochs (an epoch two machines shared is the second one's)."""
  spans = []
  for i, entry in enumerate(machines):
    end = machines[i + 1]['from_epoch'] - 1 if i + 1 < len(machines) else last_epoch
    first = entry['from_epoch']
    if end >= first:
      spans.append((first, end, entry['determinism']))
  return spans


def describe_machine(record: dict) -> str:
  """A record's machine in words: 'AMD EPYC (AuthenticAMD cpu family 25 model 1),
  native numerics'."""
  if record.get('backend', 'cpu') != 'cpu':
    where = f'{record.get("device_kind")} ({record.get("backend")})'
  else:
    where = f'{record.get("cpu_model")} ({record.get("cpu_arch", "?")})'
  return f'{where}, {record.get("numerics", "native")} numerics'


def portability_warning(record: dict) -> Optional[str]:
  """The line a run prints when it asked for portable numerics but its train step
  still computes with kernels that follow the CPU (an XLA flag that turns YNNPACK
  off, say); None when not."""
  ops = record.get('unportable_ops') or []
  if record.get('numerics') != 'portable' or not ops:
    return None
  shown = ', '.join(ops[:3]) + (f' and {len(ops) - 3} more' if len(ops) > 3 else '')
  return (f'warning: portable numerics, but {len(ops)} op(s) of the train step compute '
          f'with kernels that follow the CPU ({shown}; XLA_FLAGS='
          f'{record.get("xla_flags", "")!r}): these numbers may differ on another CPU')


def user_code(config, as_given: Optional[dict] = None) -> Dict[str, str]:
  """``{reference: sha256 of its file}`` for a model or dataset named by a
  ``file.py:Name`` reference ({} for registered names; a module reference records
  the module's name only), and ``{path: sha256}`` of every module of the user's own
  that such a file imported (python_files.reference_imports): all of the user's
  code a run ran. ``as_given``: the config as JSON data as it was given, whose
  references name the keys (``config``'s are absolute: config.paths)."""
  code = {}
  for section in ('model', 'data'):
    ref = str(config[section].name)
    given = str(as_given[section]['name']) if as_given else ref
    if python_files.is_reference(ref):
      code[given] = python_files.reference_digest(ref) or 'module'
      code.update(python_files.reference_imports(ref, given))
  return code


def user_file(key: str) -> str:
  """The file a ``user_code`` key names: a reference's file, or an imported module's
  path."""
  return key.rpartition(':')[0] if python_files.is_reference(key) else key


def input_digests(data: Optional[dict],
                  code: Optional[Dict[str, str]] = None) -> Dict[str, str]:
  """The sha256 of each input a run read, by what it is ('vectors', 'data train',
  'file my_code/cnn.py', ...), from the ``data`` and ``user_code`` parts of its
  provenance; {} without them. A module reference (no file) has none."""
  data = data or {}
  digests = {f'data {split}': digest
             for split, digest in sorted((data.get('checksums') or {}).items())}
  vectors = (data.get('vectors') or {}).get('sha256')
  if vectors:
    digests['vectors'] = vectors
  for ref, digest in sorted((code or {}).items()):
    if digest != 'module':
      digests[f'file {user_file(ref)}'] = digest
  return digests


def code_changes_now(provenance: Optional[dict], base: Optional[str] = None) -> List[str]:
  """``'file X: recorded -> now'`` for each user file (model, reader, a module of
  theirs) a run's ``provenance`` recorded whose bytes on disk differ now (gone: now
  '(none)'); [] for none or no record. ``base``: the folder its relative keys are
  relative to (the run's, workdir.started_in; None: the current one)."""
  out = []
  for key, digest in sorted(((provenance or {}).get('user_code') or {}).items()):
    if digest == 'module':
      continue
    now = python_files.file_digest_now(paths.absolute(key, base or os.getcwd()))
    if now != digest:
      out.append(f'file {user_file(key)}: {_short(digest)} -> {_short(now)}')
  return out


def test_identity(data: Optional[dict], folds: Sequence[int] = ()) -> Optional[dict]:
  """What identifies the examples a run is tested on, from the ``data`` part of its
  provenance: ``{'sha256', 'examples', 'what'}``; None without a data record.

  A dataset's own test split: the sha256 of its examples (``checksums['test']``:
  ``label<TAB>text`` lines in file order, inputs/pool.py). A cross-validated one
  (``folds``: the folds run, () = all): the sha256 of the pooled splits' checksums,
  the fold protocol and the folds tested. No test split: ``sha256`` None. Two runs
  with one sha256 were tested on the same examples.
  """
  if not data or not data.get('checksums'):
    return None
  checksums, protocol = data['checksums'], data.get('protocol') or {}
  cv = protocol.get('folds')
  if cv:
    k = int(cv.get('num_folds', 0))
    tested = sorted({int(f) for f in folds}) or list(range(k))
    key = {'pooled': sorted(checksums.items()), 'num_folds': k, 'seed': cv.get('seed'),
           'stratified': cv.get('stratified'), 'tested': tested}
    sizes = cv.get('sizes') or []
    return {'sha256': hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest(),
            'examples': (sum(sizes[f] for f in tested)
                         if all(f < len(sizes) for f in tested) else None),
            'what': (f'every fold of {k}-fold cross-validation' if len(tested) == k
                     else f'fold{"s" if len(tested) > 1 else ""} '
                     f'{", ".join(map(str, tested))} of {k}-fold cross-validation')}
  if 'test' not in checksums:
    return {'sha256': None, 'examples': 0, 'what': 'no test split'}
  return {'sha256': checksums['test'], 'examples': (data.get('sizes') or {}).get('test'),
          'what': 'the test split'}


def input_changes(recorded: Optional[dict], current: Optional[dict]) -> List[str]:
  """``'what: recorded -> current'`` (sha256 prefixes) for each input that the
  provenance (or checkpoint record) ``recorded`` names, its data and its user code,
  whose bytes differ in ``current`` (this build's provenance)."""
  def digests(record):
    record = record or {}
    return input_digests(record.get('data'), record.get('user_code'))
  before, now = digests(recorded), digests(current)
  return [f'{k}: {_short(v)} -> {_short(now.get(k))}'
          for k, v in before.items() if now.get(k) != v]


def _short(digest: Optional[str]) -> str:
  """A sha256 as a change names it: its first 12 digits, or '(none)'."""
  return f'{digest[:12]}...' if digest else '(none)'


# Annotations of a compiled HLO text that do not change what it computes: shardings of
# a one-device program (restored arrays carry them, fresh ones do not), source
# locations (they hold the checkout's path), op names, and how many threads share an
# elementwise loop (chosen for the pool of the process that compiled it, which the
# compilation cache does not key on; each element is computed the same either way).
_HLO_ANNOTATION = re.compile(
    r', (?:sharding|frontend_attributes|metadata)=\{(?:[^{}]|\{[^{}]*\})*\}')
_PARTITIONS = re.compile(r',?"outer_dimension_partitions":\[[^\]]*\]')
_EMPTY_BACKEND_CONFIG = ', backend_config={}'


def program_fingerprint(hlo_text: str) -> str:
  """A hash (16 hex digits of a sha256) of what a compiled program computes: its
  computations, without the module header, the source-location tables and the
  annotations above."""
  lines = hlo_text.splitlines()
  first = next((i for i, line in enumerate(lines)
                if line.startswith(('%', 'ENTRY'))), 0)
  kept = (_PARTITIONS.sub('', _HLO_ANNOTATION.sub('', line)).replace(
      _EMPTY_BACKEND_CONFIG, '') for line in lines[first:])
  return hashlib.sha256('\n'.join(kept).encode()).hexdigest()[:16]


def fingerprint_arrays(arrays) -> str:
  """A hash of the arrays' bits, shapes and dtypes, in order."""
  h = hashlib.sha256()
  for a in arrays:
    a = np.ascontiguousarray(a)
    h.update(f'{a.dtype}{a.shape}'.encode())
    h.update(a.tobytes())
  return h.hexdigest()[:16]

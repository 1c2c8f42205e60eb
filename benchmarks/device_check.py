r"""One prepared device check: many members as one program on an accelerator.

For Bi-LSTM SST-2 (experiments/bilstm.py:sst/binary) and DLSTM SST-2
(experiments/dlstm_sst.py:binary), 1, 10 and 100 members (seeds 1..n) as one
program, each run its own process with a fresh compilation cache and a timeout:

* seconds a train step: epoch 1's first ``--steps`` steps, one call of
  ``run.epoch.train_steps``, timed to ``block_until_ready`` after the same call
  ran once to compile every program they use; seconds a member-step (a step over the
  members) and its ratio to the lone member's step;
* compilation, on an empty compilation cache: the first call's seconds less the
  second's (what compiling added to the wall time), and the compile seconds JAX
  reports (tracing, lowering and XLA) during the first call;
* deterministic ops (GPU only): every run on a GPU uses
  ``XLA_FLAGS=--xla_gpu_deterministic_ops=true`` (what portable numerics, the
  default, sets); the same run with ``config.runtime.numerics='native'`` and without
  the flag gives the last columns, their cost;
* memory: ``jax.devices()[0].memory_stats()['peak_bytes_in_use']`` (None on a CPU,
  where the peak RSS is the figure) against the run's own estimate
  (``exp.memory_estimate.peak_mib(n)``, seedsweep/run/memory.py);
* a lone seed against the same seed in a group of 10: seed 1's parameters after
  the first call's ``--steps`` steps from a fresh start, bit for bit (equal, or the
  largest absolute difference), with and without the deterministic ops;
* one setting at a time against the baseline (:data:`VARIANTS`), at 10 members:
  matmul precision 'default' (TF32 on an NVIDIA GPU) against 'highest', the
  time-step scans unrolled 4 against 1, the CPU malloc settings (GLIBC_TUNABLES)
  on against off (a GPU run of the command leaves them off).

The runs in order, the most telling first (:func:`plan_runs`), with the seconds
each took on an H200 on 2026-12-04 (a run mostly pays its process start and
compiling; docs/gpu.md, "Measured"); about 460 s up to row 11:

  1-4   Bi-LSTM 1 and 10, DLSTM 1 and 10, deterministic ops on: the bit check's pairs
        and the 10-member ratio (21, 25, 53, 62 s)
  5-6   Bi-LSTM 100, DLSTM 100: the 100-member target (28, 79 s)
  7     Bi-LSTM 10 without the deterministic ops: their cost (56 s)
  8-10  Bi-LSTM 10 with TF32, unrolled 4, the malloc settings (~25 s each, not yet run)
  11    Bi-LSTM 1 without the deterministic ops: the bit check without them (~55 s)
  12-13 DLSTM 10 and 1 without them (over 147 s each: what the budget leaves)

A whole-script budget (``--budget_s``, 480 s: the check is one device call of at most
8 minutes, start-up apart) skips a run that would not fit, and says so. Prints a
Markdown table and writes ``device_check_<date>.md`` and ``.json`` to ``--out``
(default ``$OUT`` if set, else benchmarks/results/) with the date, the device, the
version of every package that ran (jax, jaxlib, flax, optax, orbax-checkpoint,
numpy, the CUDA plugin), the NVIDIA driver, the XLA flags and the command.

On the device machine (one H200, 16 cores, no package index): its image has Python
3.12, JAX with CUDA, flax, optax and orbax-checkpoint, but not ml_collections,
tensorflow-datasets, array_record and their small needs; those travel as wheels, the
SST files as data, both in folders git ignores. Here, in the repository root, once:

  bash benchmarks/device_wheels.sh      # .whl/: the wheels the image lacks (~10 MiB)
  mkdir -p .data/sst && cp -r --no-preserve=mode ../shared/data/sst/trees .data/sst/

Then on the device machine, one command (``carry: [".whl", ".data"]``,
``timeout_s: 600``; the check ends within its 480 s budget, and writes its table
after every run, so that a kill leaves what was measured). seedsweep is not
installed there: the checkout finds its own ``models/``, ``data/`` and
``experiments/`` (seedsweep/__init__.py). tests/test_device_image.py runs this very
line on an emulation of that machine (benchmarks/device_image.txt):

  set -o pipefail; python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit; PYTHONUNBUFFERED=1 python3 benchmarks/device_check.py --data=.data 2>&1 | tee $OUT/device_check.log

The image's own JAX runs it (0.11.2 with CUDA 13 when last read, not the 0.10.2 the
project pins: the table names the version). For a machine without JAX,
``bash benchmarks/device_wheels.sh --jax`` adds jax[cuda12]==0.10.2's wheels with
NVIDIA's libraries: GiBs, more than the 64 MiB the device tool carries with the
tree. ``--set train.seed_parallel=map`` (say) sets a config field for every run.

Locally, a smoke test on a CPU (the demo's quick Bi-LSTM, 1 and 3 members and 3
unrolled, 3 steps; about 50 s on 2 cores; ``--models``, ``--members`` and ``--steps``
do not apply):

  python benchmarks/device_check.py --smoke --out=/tmp/device_check

``--data``: the raw data root (data/raw_files.py's layout), default ``$SEEDSWEEP_DATA``,
else ``../shared/data`` beside the repository, else ``./.data`` inside it.
"""
import argparse
import ast
import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from typing import Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)

# name -> (config, what it is).
MODELS = {
    'bilstm': ('experiments/bilstm.py:sst/binary', 'Bi-LSTM, SST-2'),
    'dlstm': ('experiments/dlstm_sst.py:binary', 'DLSTM, SST-2'),
}
SMOKE_MODELS = {'demo': ('experiments/demo.py:quick', 'demo Bi-LSTM (quick)')}
# name -> (what it is, config settings, environment, the models that have the field
# or None for any): one setting against the baseline, at the group's size, on the
# first of those models. The open design questions of docs/gpu.md.
VARIANTS = {
    'tf32': ("matmul precision 'default' (TF32) instead of 'highest'",
             {'runtime.matmul_precision': 'default'}, {}, None),
    # DLSTM's recurrence is an associative scan: no unroll field.
    'unroll4': ('time-step scans unrolled 4', {'model.unroll': 4}, {},
                ('bilstm', 'demo')),
    'malloc': ('the CPU malloc settings (GLIBC_TUNABLES) on',
               {}, {'GLIBC_TUNABLES': None}, None),  # None: runtime.GLIBC_TUNABLES
}
GPU_VARIANTS = ('tf32', 'unroll4', 'malloc')
SMOKE_VARIANTS = ('unroll4',)  # on a CPU the precision is float32 whatever is asked
# The distributions whose versions a record names (those installed; the CUDA plugin
# under whichever name the machine has).
PACKAGES = ('jax', 'jaxlib', 'flax', 'optax', 'orbax-checkpoint', 'numpy', 'scipy',
            'ml_collections', 'tensorflow-datasets', 'jax-cuda12-plugin',
            'jax-cuda12-pjrt', 'jax-cuda13-plugin', 'jax-cuda13-pjrt', 'libtpu')
DET_FLAG = '--xla_gpu_deterministic_ops'
GPU_BACKENDS = ('gpu', 'cuda', 'rocm')
# A run of a model not seen yet in this invocation is tried when at least this much
# of the budget is left (seconds); later runs are sized from the model's earlier ones.
MIN_RUN_S = 20.0
# A larger member count than any run so far of its model: that run's wall time times
# this, plus a second a member (more compute, more memory to fill and hash).
LARGER_FACTOR = 1.3
# A run without XLA:GPU's deterministic ops autotunes while it compiles: on an H200
# (2026-12-04) a 10-member Bi-LSTM took 56 s against 25 s with them, a DLSTM over
# 147 s against 62 s.
DET_OFF_FACTOR = 2.5


def default_data_root() -> str:
  """``$SEEDSWEEP_DATA``, else ``../shared/data`` beside the repository when it exists,
  else ``./.data`` inside it (the folder that travels to a device machine)."""
  if os.environ.get('SEEDSWEEP_DATA'):
    return os.environ['SEEDSWEEP_DATA']
  beside = os.path.join(os.path.dirname(REPO), 'shared', 'data')
  return beside if os.path.isdir(beside) else os.path.join(REPO, '.data')


# ---------------------------------------------------------------------- the children

def _last_json(text: str) -> dict:
  return json.loads([l for l in text.splitlines() if l.startswith('{')][-1])


def _parse_setting(text: str):
  """``'key=value'`` -> ``(key, value)``, the value a Python literal where it reads
  as one (else the text)."""
  key, _, value = text.partition('=')
  try:
    return key.strip(), ast.literal_eval(value)
  except (ValueError, SyntaxError):
    return key.strip(), value


def _load_config(name: str, members: int, settings, native: bool, variant=None):
  import seedsweep  # pylint: disable=g-import-not-at-top
  overrides = {'train__progress': False}
  overrides.update({k.replace('.', '__'): v for k, v in map(_parse_setting, settings)})

  if native:
    overrides['runtime__numerics'] = 'native'
  config = seedsweep.load_config(name, **overrides)
  config.seeds = tuple(range(1, members + 1))
  with config.unlocked():  # a model field the experiment leaves at the class default
    for key, value in (VARIANTS[variant][1] if variant else {}).items():
      section, field = key.split('.')
      config[section][field] = value
  return config


def package_versions() -> dict:
  """``{distribution: version}`` of :data:`PACKAGES` installed here."""
  import importlib.metadata  # pylint: disable=g-import-not-at-top
  found = {}
  for name in PACKAGES:
    try:
      found[name] = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
      pass
  return found


def gpu_driver() -> Optional[str]:
  """The NVIDIA driver's version (nvidia-smi), None without one."""
  try:
    out = subprocess.run(['nvidia-smi', '--query-gpu=driver_version',
                          '--format=csv,noheader'], capture_output=True, text=True,
                         timeout=30, check=True).stdout.split()
  except (OSError, subprocess.SubprocessError):
    return None
  return out[0] if out else None


def device_info() -> dict:
  """Versions and the first device (after JAX has started its backend)."""
  import jax  # pylint: disable=g-import-not-at-top
  import jaxlib  # pylint: disable=g-import-not-at-top
  device = jax.devices()[0]
  stats = {}
  if device.platform != 'cpu':
    stats = device.memory_stats() or {}
  return {'jax': jax.__version__, 'jaxlib': getattr(jaxlib, '__version__', '?'),
          'backend': jax.default_backend(), 'device_kind': device.device_kind,
          'device_count': jax.device_count(),
          'platform_version': getattr(device.client, 'platform_version', ''),
          'device_memory_mib': (stats.get('bytes_limit') or 0) / 2 ** 20 or None,
          'matmul_precision': str(getattr(jax.config, 'jax_default_matmul_precision',
                                          None) or 'default'),
          'python': platform.python_version(), 'cores': os.cpu_count(),
          'packages': package_versions(), 'driver': gpu_driver(),
          'xla_flags': os.environ.get('XLA_FLAGS', ''),
          'glibc_tunables': os.environ.get('GLIBC_TUNABLES', '')}


def prepare(spec: dict) -> dict:
  """Child: prepares each config's dataset once (TFDS, under $SEEDSWEEP_TFDS_DIR) and
  says what machine this is."""
  from seedsweep import data as data_lib  # pylint: disable=g-import-not-at-top
  out = {'datasets': {}}
  for name in spec['configs']:
    start = time.perf_counter()
    dataset = data_lib.load_dataset(_load_config(name, 1, spec['settings'], False).data)
    out['datasets'][name] = {'seconds': time.perf_counter() - start,
                             'sizes': dataset.sizes()}
  out.update(device_info())
  return out


def _run_steps(exp, state, max_steps: int):
  """Epoch 1's first ``max_steps`` steps through ``run.epoch.train_steps``'s public
  signature: ``(state, loss_sum)``, both ready."""
  import jax  # pylint: disable=g-import-not-at-top
  from seedsweep.run import epoch as epoch_lib  # pylint: disable=g-import-not-at-top
  out = epoch_lib.train_steps(exp, state, 1, max_steps=max_steps)
  state, loss_sum = (out[0], out[1]) if isinstance(out, tuple) else (out, None)
  jax.block_until_ready((state, loss_sum))
  return state, loss_sum


def measure(spec: dict) -> dict:
  """Child: one run of ``spec['members']`` members: build, the first call of
  ``spec['steps']`` steps (compiling), seed 1's parameters after it (written to
  ``spec['dump']``, .npz, when given), the same steps again timed, memory."""
  import jax  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  from seedsweep.run import timing  # pylint: disable=g-import-not-at-top
  members = spec['members']
  config = _load_config(spec['config'], members, spec['settings'], spec['det'] is False,
                        spec.get('variant'))
  runtime.enable_compilation_cache()  # $SEEDSWEEP_CACHE: a fresh folder per run
  timing.compile_seconds()  # listens from here on
  start = time.perf_counter()
  exp = pieces.build(config)
  state = exp.init_state()
  jax.block_until_ready(state)
  build_s = time.perf_counter() - start
  steps = min(spec['steps'], exp.schedule.train_plan.steps_per_epoch)
  # The first call compiles every program the steps use (a fresh cache); the second,
  # the same call on the state it left, runs them compiled.
  compile0 = timing.compile_seconds()
  start = time.perf_counter()
  state, _ = _run_steps(exp, state, steps)
  first_s = time.perf_counter() - start
  compile_s = timing.compile_seconds() - compile0
  if spec.get('dump'):  # seed 1 (member 0) after `steps` steps from a fresh start
    leaves = jax.tree_util.tree_flatten_with_path(jax.device_get(state.params))[0]
    np.savez(spec['dump'], **{f'{i:04d}{jax.tree_util.keystr(path)}': np.asarray(leaf)[0]
                              for i, (path, leaf) in enumerate(leaves)})
  start = time.perf_counter()
  state, loss_sum = _run_steps(exp, state, steps)
  timed_s = time.perf_counter() - start
  device = jax.devices()[0]
  peak = None
  if device.platform != 'cpu':
    peak = (device.memory_stats() or {}).get('peak_bytes_in_use')
  losses = np.asarray(jax.device_get(loss_sum)) if loss_sum is not None else None
  return {'members': members, 'config': spec['config'], 'steps': steps,
          'variant': spec.get('variant'),
          'steps_per_epoch': exp.schedule.train_plan.steps_per_epoch,
          'build_s': build_s, 'first_call_s': first_s, 'compile_s': compile_s,
          'compile_wall_s': first_s - timed_s, 'train_step_s': timed_s / steps,
          'member_step_s': timed_s / steps / members,
          'loss_finite': None if losses is None else bool(np.all(np.isfinite(losses))),
          'peak_device_mib': None if peak is None else peak / 2 ** 20,
          'peak_rss_mib': timing.peak_rss_mib(),
          'estimated_peak_mib': exp.memory_estimate.peak_mib(members),
          'estimate': exp.memory_estimate.as_dict(members),
          'seed_parallel': exp.placement.mode, 'numerics': runtime.numerics(),
          'xla_flags': os.environ.get('XLA_FLAGS', ''), 'dump': spec.get('dump'),
          **device_info()}


# ------------------------------------------------------------------------ the parent

def run_child(mode: str, spec: dict, env: dict, timeout: float) -> dict:
  """``python device_check.py --<mode>=SPEC`` in its own process group: its last JSON
  line, or ``{'status': why not}`` (a failure, or killed at ``timeout``)."""
  start = time.perf_counter()
  proc = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                           f'--{mode}={json.dumps(spec)}'], cwd=REPO, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True)
  try:
    out, err = proc.communicate(timeout=max(timeout, 1.0))
  except subprocess.TimeoutExpired:
    os.killpg(proc.pid, signal.SIGKILL)  # the child and anything it started
    proc.communicate()
    return {'status': f'timed out after {time.perf_counter() - start:.0f} s',
            'wall_s': time.perf_counter() - start}
  wall = time.perf_counter() - start
  if proc.returncode != 0:
    lines = [l for l in err.strip().splitlines() if l.strip()]
    why = 'killed (SIGKILL: out of memory?)' if proc.returncode == -9 else (
        lines[-1][:300] if lines else '')
    return {'status': f'failed ({proc.returncode}): {why}', 'wall_s': wall,
            'stderr_tail': err[-3000:]}
  try:
    result = _last_json(out)
  except (IndexError, ValueError):
    return {'status': 'failed: no JSON line', 'wall_s': wall, 'stderr_tail': err[-3000:]}
  return {'status': 'ok', 'wall_s': wall, **result}


def child_env(base_env: dict, data: str, tfds_dir: str, cache: str, det,
              variant: Optional[str] = None) -> dict:
  """A child's environment: the data, the prepared datasets, its own compilation
  cache; on a GPU the deterministic-ops flag (``det``) set or removed; the malloc
  settings as the command sets them (on a CPU only), or as ``variant`` asks."""
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  env = dict(base_env, SEEDSWEEP_DATA=data, SEEDSWEEP_TFDS_DIR=tfds_dir,
             SEEDSWEEP_CACHE=cache, PYTHONUNBUFFERED='1')
  if det is None:  # a CPU: as the command runs
    env.setdefault('GLIBC_TUNABLES', runtime.GLIBC_TUNABLES)
  else:  # a GPU: the command leaves glibc's defaults
    env.pop('GLIBC_TUNABLES', None)
  for key, value in (VARIANTS[variant][2] if variant else {}).items():
    env[key] = runtime.GLIBC_TUNABLES if value is None else value
  env['PYTHONPATH'] = os.pathsep.join([REPO] + [p for p in env.get(
      'PYTHONPATH', '').split(os.pathsep) if p])
  if det is not None:
    flags = [f for f in env.get('XLA_FLAGS', '').split()
             if f.split('=')[0] != DET_FLAG]
    if det:
      flags.append(f'{DET_FLAG}=true')
    env['XLA_FLAGS'] = ' '.join(flags)
  return env


def plan_runs(models, counts, gpu: bool, variants=None):
  """The runs in the order they are made, the most telling first: ``[(model,
  members, det, variant)]``.

  Every model's lone member and group of (up to) 10 (the bit check's pair and the
  ratio the design promises), with the deterministic ops on a GPU (``det`` True;
  None on a CPU: no such flag); then the larger counts (the other target); then on
  a GPU the first model's group without the deterministic ops (their cost); then
  each of ``variants`` (default: :data:`GPU_VARIANTS` on a GPU, none on a CPU) at
  the group's size on the first model it applies to; then the first model's lone
  member without the deterministic ops (the bit check's pair without them); last
  the other models' pairs without them: on an H200 a DLSTM compiled without them
  autotuned for over 147 s, more than any other row.
  """
  lone = min(counts)
  group = max([c for c in counts if lone < c <= 10] or [c for c in counts if c > lone]
              or [lone])
  main = True if gpu else None
  runs = [(m, c, main, None) for m in models for c in sorted({lone, group})]
  runs += [(m, c, main, None) for c in sorted(set(counts) - {lone, group})
           for m in models]
  pairs = sorted({group, lone}, reverse=True)  # without det ops: the group first
  if gpu:
    runs.append((models[0], group, False, None))
  for name in (GPU_VARIANTS if gpu else ()) if variants is None else variants:
    takes = VARIANTS[name][3]
    model = next((m for m in models if takes is None or m in takes), None)
    if model is not None:
      runs.append((model, group, main, name))
  if gpu:
    runs += [(models[0], c, False, None) for c in pairs[1:]]
    runs += [(m, c, False, None) for m in models[1:] for c in pairs]
  return runs, lone, group


def estimate_s(model: str, members: int, done: list, det=None) -> float:
  """Seconds a run will likely take, from this model's earlier runs with the same
  deterministic ops (``det``), else with any, times :data:`DET_OFF_FACTOR` for a run
  without them (MIN_RUN_S when there are none)."""
  same = [r for r in done if r['model'] == model and 'wall_s' in r
          and r['status'] == 'ok']
  if not same:
    return MIN_RUN_S
  alike = [r for r in same if r.get('det') == det]
  if not alike and det is False:
    return DET_OFF_FACTOR * estimate_s(model, members, same, same[0].get('det'))
  same = alike or same
  covering = [r for r in same if r['members'] >= members]
  if covering:
    return max(r['wall_s'] for r in covering)
  largest = max(same, key=lambda r: (r['members'], r['wall_s']))
  return largest['wall_s'] * LARGER_FACTOR + (members - largest['members']) * 1.0


def compare_dumps(a: str, b: str) -> dict:
  """Two runs' parameter dumps: equal bit for bit, the largest absolute difference,
  how many arrays differ."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  with np.load(a) as x, np.load(b) as y:
    if sorted(x.files) != sorted(y.files):
      return {'equal': False, 'max_abs_diff': None, 'arrays': len(x.files),
              'differing_arrays': None, 'note': 'different parameter trees'}
    worst, differing = 0.0, 0
    for name in x.files:
      p, q = x[name], y[name]
      if p.shape != q.shape or p.dtype != q.dtype or p.tobytes() != q.tobytes():
        differing += 1
        if p.shape == q.shape:
          diff = np.abs(p.astype(np.float64) - q.astype(np.float64))
          worst = max(worst, float(np.nanmax(diff)) if diff.size else 0.0)
    return {'equal': differing == 0, 'max_abs_diff': worst, 'arrays': len(x.files),
            'differing_arrays': differing}


def _det_label(det) -> str:
  return {True: 'on', False: 'off', None: 'n/a (CPU)'}[det]


def variant_lines(report: dict, plain_runs: list) -> list:
  """The settings table: each variant's step against the same model, members and
  deterministic ops without it (Markdown lines; none when no variant was planned)."""
  variants = [r for r in report['runs'] if r.get('variant')]
  if not variants:
    return []
  lines = ['', '**One setting against the baseline** (the same model, members and '
           'deterministic ops without it; each its own process)', '',
           '| setting | model | members | s a step | baseline s a step | ratio | '
           'compile s (wall) | peak device MiB |', '| --- | --- | ---: | ---: | ---: | '
           '---: | ---: | ---: |']
  for r in variants:
    what = VARIANTS[r['variant']][0]
    label = report['models'][r['model']][1]
    if r['status'] != 'ok':
      lines.append(f"| {what} | {label} | {r['members']} | {r['status']} | | | | |")
      continue
    base = next((x for x in plain_runs if x['model'] == r['model'] and x['status'] == 'ok'
                 and x['members'] == r['members'] and x['det'] == r['det']), None)
    base_s = f"{base['train_step_s']:.4f}" if base else 'not measured'
    ratio = f"{r['train_step_s'] / base['train_step_s']:.2f}x" if base else ''
    device = (f"{r['peak_device_mib']:,.0f}" if r.get('peak_device_mib') is not None
              else 'None (CPU)')
    lines.append(f"| {what} | {label} | {r['members']} | {r['train_step_s']:.4f} | "
                 f"{base_s} | {ratio} | {r['compile_wall_s']:.1f} | {device} |")
  return lines


def markdown(report: dict) -> str:
  info = report.get('device') or {}
  gpu = info.get('backend') in GPU_BACKENDS
  ran = next((r for r in report['runs'] if r['status'] == 'ok'), {})
  lines = [
      f"# Device check, {report['date']}", '',
      f"{info.get('device_kind', '?')} ({info.get('backend', '?')}, "
      f"{info.get('device_count', '?')} device(s)); jax {info.get('jax', '?')}, jaxlib "
      f"{info.get('jaxlib', '?')}, Python {info.get('python', '?')}, "
      f"{info.get('cores', '?')} cores; members step by "
      f"{ran.get('seed_parallel', '?')}, matmul precision "
      f"{ran.get('matmul_precision', '?')}"
      + (f"; every run with {', '.join(f'`{x}`' for x in report['settings'])}"
         if report.get('settings') else '')
      + f". Command: `{report['command']}`.", '',
      'Versions: ' + ', '.join(f'{k} {v}' for k, v in (info.get('packages') or {}).items())
      + f"; NVIDIA driver {info.get('driver') or 'none'}; XLA_FLAGS of the first run: "
      f"`{ran.get('xla_flags') or '(none)'}`.", '',
      f"Each run is its own process with a fresh compilation cache. s a step: the mean "
      f"of epoch 1's first {report['steps']} steps (one `train_steps` call), timed "
      f"after the same call ran once; a member-step is one member's share; compile s: "
      f"the first call's seconds less the second's / what JAX reports compiling."
      + (f" On a GPU every run has XLA_FLAGS={DET_FLAG}=true; the last two columns: "
         f"the same run with numerics='native' and without it." if gpu else
         ' Deterministic ops: a GPU-only flag, not measured on a CPU.'), '',
      '| model | members | s a step | s a member-step | member-step / lone step | '
      'compile s (wall / JAX) | peak device MiB | estimated MiB | peak RSS MiB | '
      's a step, no det ops | det ops cost |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |']
  runs = report['runs']
  order = list(report['models'])
  plain_runs = [r for r in runs if not r.get('variant')]
  main = sorted((r for r in plain_runs if r['det'] is not False),
                key=lambda r: (order.index(r['model']), r['members']))
  for r in main:
    label = report['models'][r['model']][1]
    if r['status'] != 'ok':
      lines.append(f"| {label} | {r['members']} | {r['status']} | | | | | | | | |")
      continue
    lone = next((x for x in main if x['model'] == r['model'] and x['status'] == 'ok'
                 and x['members'] == report['lone']), None)
    ratio = f"{r['member_step_s'] / lone['train_step_s']:.3f}x" if lone else ''
    device = (f"{r['peak_device_mib']:,.0f}" if r.get('peak_device_mib') is not None
              else 'None (CPU)')
    other = next((x for x in plain_runs if x['model'] == r['model']
                  and x['det'] is False
                  and x['members'] == r['members']), None)
    if not gpu:
      plain, cost = 'n/a (CPU)', 'n/a (CPU)'
    elif other is None:
      plain, cost = 'not planned', ''
    elif other['status'] != 'ok':
      plain, cost = other['status'], ''
    else:
      plain = f"{other['train_step_s']:.4f}"
      cost = f"{r['train_step_s'] / other['train_step_s']:.2f}x"
    lines.append(
        f"| {label} | {r['members']} | {r['train_step_s']:.4f} | "
        f"{r['member_step_s']:.5f} | {ratio} | {r['compile_wall_s']:.1f} / "
        f"{r['compile_s']:.1f} | {device} | {r['estimated_peak_mib']:,.0f} | "
        f"{r['peak_rss_mib']:,.0f} | {plain} | {cost} |")
  lines += variant_lines(report, plain_runs)
  lines += ['', f"**Seed 1 alone against seed 1 in a group of {report['group']}** "
            f"(its parameters after {report['steps']} steps from a fresh start, "
            f"each run in its own process)", '',
            '| model | det ops | seed 1 alone vs in the group | max abs difference | '
            'differing arrays |', '| --- | --- | --- | ---: | ---: |']
  for b in report['bit_checks']:
    label = report['models'][b['model']][1]
    if 'equal' not in b:
      lines.append(f"| {label} | {_det_label(b['det'])} | {b['status']} | | |")
      continue
    worst = b['max_abs_diff']
    lines.append(f"| {label} | {_det_label(b['det'])} | "
                 f"{'equal' if b['equal'] else 'DIFFER'} | "
                 f"{'' if worst is None else f'{worst:.3g}'} | "
                 f"{b['differing_arrays']} of {b['arrays']} |")
  missing = [r for r in runs if r['status'] != 'ok']
  if missing or report.get('prepare', {}).get('status') not in (None, 'ok'):
    lines += ['', '**Not measured**', '']
    if report.get('prepare', {}).get('status') not in (None, 'ok'):
      lines.append(f"* preparing the data: {report['prepare']['status']}")
    for r in missing:
      lines.append(f"* {report['models'][r['model']][1]}, {r['members']} member(s), det "
                   f"ops {_det_label(r['det'])}"
                   f"{', ' + r['variant'] if r.get('variant') else ''}: {r['status']}")
  lines += ['', f"Budget {report['budget_s']:.0f} s; used {report['elapsed_s']:.0f} s."]
  return '\n'.join(lines)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--models', default=','.join(MODELS),
                      help='of ' + ','.join(MODELS))
  parser.add_argument('--members', default='1,10,100', help='member counts')
  parser.add_argument('--steps', type=int, default=50, help='timed steps a run')
  parser.add_argument('--budget_s', type=float, default=480.0,
                      help='the whole check, seconds: runs that would not fit are '
                      'skipped, and a run is killed where it would overrun')
  parser.add_argument('--run_timeout_s', type=float, default=300.0,
                      help='the most one run may take')
  parser.add_argument('--data', default=default_data_root(),
                      help='raw data root (default $SEEDSWEEP_DATA, else '
                      '../shared/data beside the repo, else ./.data in it)')
  parser.add_argument('--out', default=os.environ.get('OUT') or os.path.join(
      REPO, 'benchmarks', 'results'))
  parser.add_argument('--set', action='append', default=[],
                      help='a config setting for every run, key=value (repeatable), '
                      'e.g. train.seed_parallel=map')
  parser.add_argument('--smoke', action='store_true',
                      help='CPU smoke test: the demo quick config, 1 and 3 members, '
                      '3 steps')
  parser.add_argument('--prepare', help=argparse.SUPPRESS)  # internal: a child
  parser.add_argument('--measure', help=argparse.SUPPRESS)  # internal: a child
  args = parser.parse_args(argv)
  if args.prepare or args.measure:
    result = prepare(json.loads(args.prepare)) if args.prepare else measure(
        json.loads(args.measure))
    print(json.dumps(result))
    return 0

  began = time.perf_counter()
  if args.smoke:
    models, counts, steps = SMOKE_MODELS, (1, 3), 3
  else:
    names = [m for m in args.models.split(',') if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
      parser.error(f'--models: unknown {unknown}; expected of {list(MODELS)}')
    models = {m: MODELS[m] for m in names}
    counts = tuple(sorted({int(c) for c in args.members.split(',') if c}))
    steps = args.steps
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  data = os.path.abspath(args.data)
  tfds_dir = os.environ.get('SEEDSWEEP_TFDS_DIR') or os.path.join(runtime.cache_dir(),
                                                                  'tfds')
  base_env = dict(os.environ)
  base_env.pop('NPROC', None)  # each run pins its own pool (config.runtime.cpu_threads)
  report = {'date': datetime.date.today().isoformat(),
            'command': ' '.join(['python', os.path.relpath(os.path.abspath(__file__),
                                                           REPO)] + sys.argv[1:]),
            'models': models, 'members': list(counts), 'steps': steps,
            'settings': args.set, 'smoke': args.smoke,
            'budget_s': args.budget_s, 'data': data, 'runs': [], 'bit_checks': []}
  os.makedirs(args.out, exist_ok=True)
  stem = os.path.join(args.out, f"device_check_{report['date']}"
                      + ('_smoke' if args.smoke else ''))

  def left() -> float:
    return args.budget_s - (time.perf_counter() - began)

  with tempfile.TemporaryDirectory(prefix='seedsweep_device_check_') as tmp:
    # The datasets, prepared once for every run, and what machine this is.
    print(f'preparing {", ".join(c for c, _ in models.values())} (data: {data})',
          flush=True)
    prep = run_child('prepare', {'configs': [c for c, _ in models.values()],
                                 'settings': args.set},
                     dict(child_env(base_env, data, tfds_dir, os.path.join(tmp, 'c0'),
                                    None), XLA_PYTHON_CLIENT_PREALLOCATE='false'),
                     min(left(), args.run_timeout_s))
    report['prepare'] = {k: v for k, v in prep.items() if k != 'stderr_tail'}
    report['device'] = {k: prep.get(k) for k in (
        'jax', 'jaxlib', 'backend', 'device_kind', 'device_count', 'platform_version',
        'device_memory_mib', 'python', 'cores', 'packages', 'driver')}
    gpu = prep.get('backend') in GPU_BACKENDS
    print(json.dumps(report['prepare']), flush=True)
    if prep['status'] != 'ok':
      print(prep.get('stderr_tail', ''), file=sys.stderr)
    plan, report['lone'], report['group'] = plan_runs(
        list(models), counts, gpu, SMOKE_VARIANTS if args.smoke else None)
    for i, (model, members, det, variant) in enumerate(plan):
      row = {'model': model, 'members': members, 'det': det, 'variant': variant}
      need, have = estimate_s(model, members, report['runs'], det), left()
      if prep['status'] != 'ok':
        row['status'] = 'not run: preparing the data failed'
      elif have < need:
        row['status'] = (f'skipped: needs ~{need:.0f} s, {max(have, 0):.0f} s of the '
                         'budget left')
      else:
        dump = (os.path.join(tmp, f'params_{i}.npz') if variant is None
                and members in (report['lone'], report['group']) else None)
        spec = {'config': models[model][0], 'members': members, 'det': det,
                'steps': steps, 'settings': args.set, 'variant': variant,
                'dump': dump}
        env = child_env(base_env, data, tfds_dir, os.path.join(tmp, f'cache_{i}'),
                        det if gpu else None, variant)
        print(f'{model}, {members} member(s), det ops {_det_label(det)}'
              f"{f', {variant}' if variant else ''} ({have:.0f} s left)", flush=True)
        row.update(run_child('measure', spec, env, min(have, args.run_timeout_s)))
        if row['status'] != 'ok':
          print(row.get('stderr_tail', ''), file=sys.stderr)
      row.pop('stderr_tail', None)
      print(json.dumps({k: v for k, v in row.items() if k != 'estimate'}), flush=True)
      report['runs'].append(row)
      report['bit_checks'] = bit_checks(report, gpu)
      write(report, stem, began)
    report['bit_checks'] = bit_checks(report, gpu)
    text = write(report, stem, began)
  print(text)
  print(f'wrote {stem}.json and {stem}.md')
  return 0 if prep['status'] == 'ok' else 1


def bit_checks(report: dict, gpu: bool) -> list:
  """Seed 1 alone against seed 1 in the group, per model and det setting, from
  the runs' parameter dumps (those made so far)."""
  checks = []
  for model in report['models']:
    for det in ((True, False) if gpu else (None,)):
      pair = [next((r for r in report['runs'] if r['model'] == model
                    and r['det'] == det and r['members'] == n
                    and not r.get('variant')), None)
              for n in (report['lone'], report['group'])]
      if None in pair:
        continue
      check = {'model': model, 'det': det, 'lone': report['lone'],
               'group': report['group']}
      if all(r['status'] == 'ok' and r.get('dump') for r in pair):
        check.update(compare_dumps(pair[0]['dump'], pair[1]['dump']))
      else:
        why = '; '.join(f"{r['members']} member(s): {r['status']}" for r in pair
                        if r['status'] != 'ok')
        check['status'] = 'not compared: ' + (why or 'no parameters written')
      checks.append(check)
  return checks


def write(report: dict, stem: str, began: float) -> str:
  """Writes ``stem``.json and .md as they stand (after every run, so that a check
  killed at its limit leaves what it measured): the Markdown."""
  report['elapsed_s'] = time.perf_counter() - began
  text = markdown(report)
  public = dict(report, runs=[{k: v for k, v in r.items() if k != 'dump'}
                              for r in report['runs']])
  with open(stem + '.json', 'w') as f:
    json.dump(public, f, indent=1)
  with open(stem + '.md', 'w') as f:
    f.write(text + '\n')
  return text


if __name__ == '__main__':
  sys.exit(main())

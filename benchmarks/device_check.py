r"""One prepared device check: do lanes give a seed its own bits, and at what cost?

Under ``config.train.seed_parallel='lanes'`` the members of a run step under
``jax.vmap`` at a fixed width W (``config.train.lanes``, ``--lanes``, default 16),
padded when fewer, in lane groups run one after another when more, so that a
program's shapes never depend on the member count. This check measures, for Bi-LSTM
SST-2 (experiments/bilstm.py:sst/binary) and DLSTM SST-2
(experiments/dlstm_sst.py:binary), in this order (each measurement a child process
of its own, with a fresh compilation cache and a timeout):

1. **The kernels** (benchmarks/lane_micro.py, one process): the recurrent batched
   dot, a conv1d, the loss's row and column reductions and the embedding gather,
   each vmapped at width W, forward and gradients: lane 0's bits with the other
   lanes refilled, and with its data moved to lane W-1; a control that mixes the
   lanes on purpose must read different.
2. **A seed among others**, per model, all under lanes in one process (the first
   build compiles on an empty cache, the later ones read the same programs back
   from it): seed 1 alone, among 10 (seeds 1-10), among 10 in reversed order (seed 1
   in lane 9), a run of 20 members (two lane groups at W=16, each trained through
   ``exp.group(start, stop)``), seed 20 alone, and one of the 7 lane groups of 100
   members; after ``--steps`` steps of epoch 1 from a fresh start, the parameters
   of seed 1 (alone / among 10 / reversed / among 20), of seed 10 (among 10 /
   reversed) and of seed 20 (alone / among 20) bit for bit: the arrays that differ
   and the largest absolute difference.
3. **The same seed in two processes**: seed 1 alone in a second child, the same
   as the first sub-run of 2 (a fresh process and cache), bit for bit.
4. **Seconds a step** for 1, 10, 20 and 100 members, from the children of 2 (the
   host-free chunk programs off the CPU): a lane group's step is the mean of epoch
   1's first ``--steps`` steps, timed after the same call ran once; n members' step
   is the sum of their groups' when every group was timed (1, 10, 20), else the
   groups times the one timed group's step (100: 7 groups of the same program and
   shapes); n members' step against the lone seed's under lanes (itself a step of W
   lanes, W-1 of them padding) and under ``map`` (row 5's), the form of docs/gpu.md's
   targets (10 members at most 1.5x, 100 at most 5x); a member-step, n members' step
   over n.
5. **Settings**: the deterministic ops off (numerics 'native', no
   ``--xla_gpu_deterministic_ops``; GPU only) and matmul precision 'default' (TF32
   on an NVIDIA GPU) against 'highest', at 10 members, and seed 1 alone under
   ``map`` against lanes, each its own process: the step against the lanes run of
   2, and seed 1's parameters against the baseline's. Compile seconds (the first
   call's seconds less the second's, and what JAX reports) and the peak device
   memory (``peak_bytes_in_use``, the process's peak so far) against the run's
   estimate (``exp.memory_estimate.peak_mib(placement.size)``: the program holds the
   padded lanes) come with every row of 4 and 5.

The runs in order, the most telling first, with the seconds each should take on an
H100 estimated from the H200's of 2026-12-04 (docs/gpu.md, "Measured": a child
mostly pays its process start, about 4 s, and its compiling: Bi-LSTM 22 s a run,
DLSTM 53-62 s; the same compiled programs read back from the cache cost a few
seconds a build; 50 steps take 0.1-1 s); about 405 s up to row 9, in a 480 s budget:

  0     preparing the data (3-8 s)
  1     the kernels at W=16 (~20 s; not yet run)
  2     Bi-LSTM: 1, 10, 10 reversed, 20 (two groups), seed 20 alone, 100's first
        group (~22 s for the first, ~4 s each after: ~45 s)
  3     DLSTM: the same (~60 s for the first, ~6 s each after: ~90 s)
  4-5   Bi-LSTM, DLSTM seed 1 alone in a second process (22, 55 s)
  6     Bi-LSTM 10 with TF32 (~25 s)
  7     Bi-LSTM 10 without the deterministic ops (56 s on the H200: autotuning)
  8     DLSTM 10 with TF32 (~62 s)
  9     Bi-LSTM seed 1 alone under map (~22 s)
  10    DLSTM 10 without the deterministic ops (over 147 s on the H200: what the
        budget leaves)

``--variants=tf32,map`` (the default) picks rows 6, 8 and 9; ``unroll4`` (the
Bi-LSTM's scans unrolled 4) and ``malloc`` (the CPU malloc settings,
GLIBC_TUNABLES, on) are there to add. ``--set train.seed_parallel=vmap`` (say) runs
the same rows under another form (the old comparisons: docs/gpu.md, "Measured").

A whole-script budget (``--budget_s``, 480 s: the check is one device call of at most
8 minutes, start-up apart) skips a run that would not fit, and says so. Prints a
Markdown table and writes ``device_check_<date>.md`` and ``.json`` to ``--out``
(default ``$OUT`` if set, else benchmarks/results/) after every run, so that a kill
leaves what was measured, with the date, the device, the version of every package
that ran (jax, jaxlib, flax, optax, orbax-checkpoint, numpy, the CUDA plugin), the
NVIDIA driver, the XLA flags and the command.

On the device machine (one GPU, 16 cores, no package index): its image has Python
3.12, JAX with CUDA, flax, optax and orbax-checkpoint, but not ml_collections,
tensorflow-datasets, array_record and their small needs; those travel as wheels, the
SST files as data, both in folders git ignores. Here, in the repository root, once:

  bash benchmarks/device_wheels.sh      # .whl/: the wheels the image lacks (~10 MiB)
  mkdir -p .data/sst && cp -r --no-preserve=mode ../shared/data/sst/trees .data/sst/

Then on the device machine, one command (``carry: [".whl", ".data"]``,
``timeout_s: 600``; the check ends within its 480 s budget). seedsweep is not
installed there: the checkout finds its own ``models/``, ``data/`` and
``experiments/`` (seedsweep/__init__.py). tests/test_device_image.py runs this very
line on an emulation of that machine (benchmarks/device_image.txt):

  set -o pipefail; python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit; PYTHONUNBUFFERED=1 python3 benchmarks/device_check.py --data=.data 2>&1 | tee $OUT/device_check.log

The image's own JAX runs it (0.11.2 with CUDA 13 when last read, not the 0.10.2 the
project pins: the table names the version). For a machine without JAX,
``bash benchmarks/device_wheels.sh --jax`` adds jax[cuda12]==0.10.2's wheels with
NVIDIA's libraries: GiBs, more than the 64 MiB the device tool carries with the
tree. ``--set key=value`` sets a config field for every run.

Locally, a smoke test on a CPU: every row in a small form (the kernels at small
shapes; the demo's quick Bi-LSTM at W=4: 1, 3, 3 reversed, 6 in two lane groups,
seed 6 alone, one of 10's 3 groups, 3 steps; TF32 as the setting, though a CPU
computes float32 whatever is asked; about 75 s on 2 cores; ``--models``,
``--members``, ``--split`` and ``--steps`` do not apply):

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
from typing import List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)

# name -> (config, what it is).
MODELS = {
    'bilstm': ('experiments/bilstm.py:sst/binary', 'Bi-LSTM, SST-2'),
    'dlstm': ('experiments/dlstm_sst.py:binary', 'DLSTM, SST-2'),
}
SMOKE_MODELS = {'demo': ('experiments/demo.py:quick', 'demo Bi-LSTM (quick)')}
# The smoke's small forms: the width, the member counts (alone, a group, many), the
# split run's members, the steps.
SMOKE = {'lanes': 4, 'members': (1, 3, 10), 'split': 6, 'steps': 3,
         'variants': ('tf32',)}
# name -> (what it is, config settings, environment, the models that have the field
# or None for any, the sub-run it runs). One setting against the lanes run of the
# same model; ``det_off`` is the deterministic ops off (GPU only).
VARIANTS = {
    'det_off': ('deterministic ops off (numerics native, no '
                '--xla_gpu_deterministic_ops): their cost is the baseline over this',
                {}, {}, None, 'group'),
    'tf32': ("matmul precision 'default' (TF32 on an NVIDIA GPU) instead of 'highest'",
             {'runtime.matmul_precision': 'default'}, {}, None, 'group'),
    'map': ("seed_parallel 'map' (one member at a time, a lone seed's own shapes) "
            'instead of lanes', {'train.seed_parallel': 'map'}, {}, None, 'lone'),
    # DLSTM's recurrence is an associative scan: no unroll field.
    'unroll4': ('time-step scans unrolled 4', {'model.unroll': 4}, {},
                ('bilstm', 'demo'), 'group'),
    'malloc': ('the CPU malloc settings (GLIBC_TUNABLES) on',
               {}, {'GLIBC_TUNABLES': None}, None, 'group'),  # None: runtime's
}
DEFAULT_VARIANTS = ('tf32', 'map')
CPU_NOTE = {'tf32': ' (a CPU computes float32 whatever is asked)'}
# The distributions whose versions a record names (those installed; the CUDA plugin
# under whichever name the machine has).
PACKAGES = ('jax', 'jaxlib', 'flax', 'optax', 'orbax-checkpoint', 'numpy', 'scipy',
            'ml_collections', 'tensorflow-datasets', 'jax-cuda12-plugin',
            'jax-cuda12-pjrt', 'jax-cuda13-plugin', 'jax-cuda13-pjrt', 'libtpu')
DET_FLAG = '--xla_gpu_deterministic_ops'
GPU_BACKENDS = ('gpu', 'cuda', 'rocm')
# Seconds a child is expected to take before any of its kind ran here: from the
# H200's runs of 2026-12-04 (see the docstring's plan); a model not listed gets
# MIN_RUN_S, the least of the budget a child is tried with.
PRIOR_S = {'micro': 20.0, ('main', 'bilstm'): 45.0, ('main', 'dlstm'): 90.0,
           ('single', 'bilstm'): 22.0, ('single', 'dlstm'): 55.0}
MIN_RUN_S = 20.0
# A run without XLA:GPU's deterministic ops autotunes while it compiles: on an H200
# (2026-12-04) a 10-member Bi-LSTM took 56 s against 25 s with them, a DLSTM over
# 147 s against 62 s.
DET_OFF_FACTOR = 2.5
# A model's lanes child's sub-runs, in order (:func:`subruns`).
SUBRUNS = ('lone', 'group', 'reversed', 'split', 'split_last', 'many')


def default_data_root() -> str:
  """``$SEEDSWEEP_DATA``, else ``../shared/data`` beside the repository when it exists,
  else ``./.data`` inside it (the folder that travels to a device machine)."""
  if os.environ.get('SEEDSWEEP_DATA'):
    return os.environ['SEEDSWEEP_DATA']
  beside = os.path.join(os.path.dirname(REPO), 'shared', 'data')
  return beside if os.path.isdir(beside) else os.path.join(REPO, '.data')


def subruns(counts, split: int) -> dict:
  """``{name: (seeds, seeds whose parameters are kept, lane groups trained or None for
  all)}``: the sub-runs of a model's lanes child (row 2), in order. ``counts``:
  (alone, a group, many) members."""
  lone, group, many = counts
  first = list(range(1, group + 1))
  return {'lone': (list(range(1, lone + 1)), [1], None),
          'group': (first, [1, group], None),
          'reversed': (first[::-1], [1, group], None),
          'split': (list(range(1, split + 1)), [1, split], None),
          'split_last': ([split], [split], None),
          'many': (list(range(1, many + 1)), [], 1)}


def lane_pairs(counts, split: int) -> list:
  """Row 2's comparisons: ``[(seed, sub-run a, sub-run b)]``."""
  group = counts[1]
  return [(1, 'lone', 'group'), (1, 'lone', 'reversed'), (group, 'group', 'reversed'),
          (1, 'lone', 'split'), (split, 'split_last', 'split')]


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


def _load_config(name: str, seeds, settings, native: bool, variant=None):
  import seedsweep  # pylint: disable=g-import-not-at-top
  overrides = {'train__progress': False}
  overrides.update({k.replace('.', '__'): v for k, v in map(_parse_setting, settings)})
  if native:
    overrides['runtime__numerics'] = 'native'
  config = seedsweep.load_config(name, **overrides)
  config.seeds = tuple(seeds)
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
    dataset = data_lib.load_dataset(
        _load_config(name, (1,), spec['settings'], False).data)
    out['datasets'][name] = {'seconds': time.perf_counter() - start,
                             'sizes': dataset.sizes()}
  out.update(device_info())
  return out


def micro(spec: dict) -> dict:
  """Child: benchmarks/lane_micro.py's kernels under the program's numerics."""
  from benchmarks import lane_micro  # pylint: disable=g-import-not-at-top
  lane_micro.pin(spec['numerics'], spec['precision'])
  shapes = lane_micro.SMALL_SHAPES if spec['small'] else None
  return lane_micro.run(spec['lanes'], shapes)


def lane_bounds(exp) -> list:
  """The lane groups a run of ``exp`` trains in (seedsweep.run.groups.for_placement,
  memory aside: this check measures what one lane group holds), ``[(start, stop)]``;
  one for a run of one program."""
  from seedsweep.run import groups  # pylint: disable=g-import-not-at-top
  n, placement = len(exp.members), exp.placement
  bounds = groups.for_placement(n, 10 ** 9, placement.group, placement.lanes)
  return [tuple(int(x) for x in b) for b in bounds or [(0, n)]]


def _run_steps(exp, state, max_steps: int):
  """Epoch 1's first ``max_steps`` steps through ``run.epoch.train_steps``'s public
  signature: ``(state, loss_sum)``, both ready."""
  import jax  # pylint: disable=g-import-not-at-top
  from seedsweep.run import epoch as epoch_lib  # pylint: disable=g-import-not-at-top
  out = epoch_lib.train_steps(exp, state, 1, max_steps=max_steps)
  state, loss_sum = (out[0], out[1]) if isinstance(out, tuple) else (out, None)
  jax.block_until_ready((state, loss_sum))
  return state, loss_sum


def _dump(state, lane: int, path: str) -> None:
  """One member's parameters (lane ``lane`` of the state, that lane alone fetched),
  .npz."""
  import jax  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  leaves = jax.tree_util.tree_flatten_with_path(state.params)[0]
  np.savez(path, **{f'{i:04d}{jax.tree_util.keystr(p)}': np.asarray(
      jax.device_get(leaf[lane])) for i, (p, leaf) in enumerate(leaves)})


def _peak_device_mib() -> Optional[float]:
  import jax  # pylint: disable=g-import-not-at-top
  device = jax.devices()[0]
  if device.platform == 'cpu':
    return None
  peak = (device.memory_stats() or {}).get('peak_bytes_in_use')
  return None if peak is None else peak / 2 ** 20


def _subrun(spec: dict, name: str) -> dict:
  """One sub-run of a child: its members built, each lane group trained (of those
  asked) for ``spec['steps']`` steps from a fresh start (compiling, or reading the
  programs back), the kept seeds' parameters written, the same steps again timed."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  from seedsweep.run import timing  # pylint: disable=g-import-not-at-top
  seeds, keep, trained = spec['subruns'][name]
  config = _load_config(spec['config'], seeds, spec['settings'], spec['det'] is False,
                        spec.get('variant'))
  began, compile0 = time.perf_counter(), timing.compile_seconds()
  exp = pieces.build(config)
  build_s = time.perf_counter() - began
  placement = exp.placement
  width = placement.group
  bounds = lane_bounds(exp)
  steps = min(spec['steps'], exp.schedule.train_plan.steps_per_epoch)
  groups, dumps, finite = [], {}, True
  for k, (start, stop) in enumerate(bounds[:trained]):
    part = exp if len(bounds) == 1 else exp.group(start, stop)
    t = time.perf_counter()
    state = part.init_state()
    state, _ = _run_steps(part, state, steps)
    first_s = time.perf_counter() - t
    lanes_of = [int(s) for s in part.members.seeds]
    for seed in keep:
      if seed in lanes_of:
        path = os.path.join(spec['dump_dir'], f"{spec['tag']}_{name}_seed{seed}.npz")
        _dump(state, lanes_of.index(seed), path)
        dumps[str(seed)] = {'path': path, 'group': k, 'lane': lanes_of.index(seed)}
    t = time.perf_counter()
    state, loss_sum = _run_steps(part, state, steps)
    timed_s = time.perf_counter() - t
    if loss_sum is not None:
      finite = finite and bool(np.all(np.isfinite(part.real(loss_sum))))
    groups.append({'bounds': [start, stop], 'size': part.placement.size,
                   'first_call_s': first_s, 'timed_s': timed_s,
                   'step_s': timed_s / steps})
    size = part.placement.size
    del state, loss_sum
  measured = [g['step_s'] for g in groups]
  every = len(groups) == len(bounds)
  step_s = sum(measured) if every else float(np.mean(measured)) * len(bounds)
  return {'name': name, 'members': len(exp.members), 'seeds': [seeds[0], seeds[-1]],
          'lanes': placement.lanes, 'devices': placement.devices, 'size': size,
          'groups': len(bounds), 'trained_groups': len(groups), 'group_runs': groups,
          'steps': steps, 'steps_per_epoch': exp.schedule.train_plan.steps_per_epoch,
          'build_s': build_s, 'step_s': step_s,
          'step_basis': 'measured' if every else f'{len(bounds)} groups x one group',
          'member_step_s': step_s / len(exp.members),
          'compile_s': timing.compile_seconds() - compile0,
          'compile_wall_s': sum(g['first_call_s'] - g['timed_s'] for g in groups),
          'loss_finite': finite, 'dumps': dumps,
          'host_free': bool(getattr(exp.steps, 'host_free', False)),
          'seed_parallel': getattr(placement, 'form', placement.mode),
          'peak_device_mib': _peak_device_mib(), 'peak_rss_mib': timing.peak_rss_mib(),
          'estimated_peak_mib': exp.memory_estimate.peak_mib(size),
          'estimate': exp.memory_estimate.as_dict(size),
          'seconds': time.perf_counter() - began}


def measure(spec: dict) -> dict:
  """Child: the sub-runs ``spec['runs']`` (names of ``spec['subruns']``) one after
  another in this process, its compilation cache fresh ($SEEDSWEEP_CACHE): the first
  compiles, the later ones of the same shapes read its programs back."""
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  from seedsweep.run import timing  # pylint: disable=g-import-not-at-top
  runtime.enable_compilation_cache()
  timing.compile_seconds()  # listens from here on
  runs = [_subrun(spec, name) for name in spec['runs']]
  return {'subruns': runs, 'numerics': runtime.numerics(),
          'matmul_precision_ran': runtime.matmul_precision(), **device_info()}


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
    return {'status': 'failed: no JSON line', 'wall_s': wall,
            'stderr_tail': err[-3000:]}
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


def plan_children(models: List[str], gpu: bool, variants=DEFAULT_VARIANTS) -> list:
  """The children in the order they run, the most telling first: ``[{'kind':
  'micro'}]`` then ``{'kind': 'measure', 'model', 'role', 'det', 'variant', 'runs'}``
  dicts.

  The kernels (row 1); each model's lanes child (rows 2 and 4: every sub-run of
  :func:`subruns`); each model's seed 1 alone again (row 3); then the settings (row
  5): on a GPU the first model's TF32 and deterministic ops off, the other models'
  TF32, the first model's lone seed under map, the rest of ``variants`` on the
  first model that has the field, last the other models' deterministic ops off (on
  an H200 a DLSTM compiled without them autotuned for over 147 s). ``det``: True on
  a GPU (the flag on), False off, None on a CPU (no such flag).
  """
  main = True if gpu else None

  def child(model, role, runs, variant=None, det=main):
    return {'kind': 'measure', 'model': model, 'role': role, 'det': det,
            'variant': variant, 'runs': list(runs)}

  def setting(model, name):
    return child(model, 'setting', [VARIANTS[name][4]], name,
                 False if name == 'det_off' else main)

  names = list(variants)
  plan = [{'kind': 'micro'}]
  plan += [child(m, 'main', SUBRUNS) for m in models]
  plan += [child(m, 'again', ['lone']) for m in models]
  first, rest = models[0], models[1:]
  if 'tf32' in names:
    plan.append(setting(first, 'tf32'))
  if gpu:
    plan.append(setting(first, 'det_off'))
  if 'tf32' in names:
    plan += [setting(m, 'tf32') for m in rest]
  if 'map' in names:
    plan.append(setting(first, 'map'))
  for name in names:
    if name in ('tf32', 'map'):
      continue
    takes = VARIANTS[name][3]
    model = next((m for m in models if takes is None or m in takes), None)
    if model is not None:
      plan.append(setting(model, name))
  if gpu:
    plan += [setting(m, 'det_off') for m in rest]
  return plan


def estimate_s(child: dict, done: list) -> float:
  """Seconds ``child`` will likely take: the same kind's earlier child of this check
  (a one-sub-run child of a model: its lanes child's wall time less the sub-runs after
  the first), else :data:`PRIOR_S`, else :data:`MIN_RUN_S`; without the
  deterministic ops :data:`DET_OFF_FACTOR` times as long, until one such ran."""
  ok = [r for r in done if r.get('status') == 'ok' and 'wall_s' in r]
  if child['kind'] == 'micro':
    return next((r['wall_s'] for r in ok if r['kind'] == 'micro'), PRIOR_S['micro'])
  model = child['model']
  if child['role'] == 'main':
    return PRIOR_S.get(('main', model), MIN_RUN_S)
  if child['det'] is False:
    off = [r['wall_s'] for r in ok if r.get('model') == model and r['det'] is False]
    if off:
      return max(off)
  main = next((r for r in ok if r.get('model') == model and r.get('role') == 'main'),
              None)
  if main is not None:
    need = main['wall_s'] - sum(s['seconds'] for s in main['subruns'][1:])
  else:
    need = PRIOR_S.get(('single', model), MIN_RUN_S)
  return need * (DET_OFF_FACTOR if child['det'] is False else 1.0)


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


def _child(report: dict, model: str, role: str, variant=None) -> Optional[dict]:
  return next((r for r in report['runs'] if r.get('model') == model
               and r.get('role') == role and r.get('variant') == variant), None)


def _sub(child: Optional[dict], name: str) -> Optional[dict]:
  if not child or child.get('status') != 'ok':
    return None
  return next((s for s in child['subruns'] if s['name'] == name), None)


def _compared(a_child, a_name, b_child, b_name, seed: int) -> dict:
  """Seed ``seed``'s parameters in sub-run ``a_name`` of ``a_child`` against
  ``b_name`` of ``b_child``: compare_dumps's answer, or ``{'status': why not}``."""
  out = {}
  for key, child, name in (('a', a_child, a_name), ('b', b_child, b_name)):
    sub = _sub(child, name)
    if sub is None:
      why = 'not run' if child is None else child.get('status')
      return {'status': f'not compared: {name}: {why}'}
    where = sub['dumps'].get(str(seed))
    if where is None:
      return {'status': f'not compared: {name}: seed {seed} not kept'}
    out[key] = dict(where, members=sub['members'], groups=sub['groups'],
                    lanes=sub['lanes'], name=name)
  return {**out, **compare_dumps(out['a']['path'], out['b']['path'])}


def bit_checks(report: dict) -> list:
  """Rows 2, 3 and 5's comparisons of a seed's parameters (those possible so far)."""
  checks = []
  split = report['split']
  for model in report['models']:
    main = _child(report, model, 'main')
    if main is None:
      continue
    for seed, a, b in lane_pairs(report['counts'], split):
      checks.append(dict(_compared(main, a, main, b, seed), model=model, row='lanes',
                         seed=seed))
    again = _child(report, model, 'again')
    if again is not None:
      checks.append(dict(_compared(main, 'lone', again, 'lone', 1), model=model,
                         row='processes', seed=1))
  for r in report['runs']:
    if r.get('role') == 'setting':
      name = VARIANTS[r['variant']][4]
      base = _child(report, r['model'], 'main')
      checks.append(dict(_compared(base, name, r, name, 1), model=r['model'],
                         row='setting', variant=r['variant'], seed=1))
  return checks


# --------------------------------------------------------------------- the tables

def _where(side: dict) -> str:
  """Where a kept seed ran: ``'among 10 reversed: lane 9 of 16'``."""
  what = {'lone': 'alone', 'group': f"among {side['members']}",
          'reversed': f"among {side['members']} reversed",
          'split': f"among {side['members']}", 'split_last': 'alone',
          'many': f"among {side['members']}"}[side['name']]
  if not side['lanes']:
    return f'{what}: member {side["lane"]}'
  group = (f", group {side['group'] + 1} of {side['groups']}" if side['groups'] > 1
           else '')
  return f"{what}: lane {side['lane']} of {side['lanes']}{group}"


def _said(check: dict) -> str:
  if 'equal' not in check:
    return check['status']
  return 'equal' if check['equal'] else 'DIFFER'


def _worst(check: dict) -> str:
  worst = check.get('max_abs_diff')
  return '' if worst is None else f'{worst:.3g}'


def _arrays(check: dict) -> str:
  if check.get('differing_arrays') is None:
    return ''
  return f"{check['differing_arrays']} of {check['arrays']}"


def _mib(x) -> str:
  return 'None (CPU)' if x is None else f'{x:,.0f}'


def _det_label(det) -> str:
  return {True: 'on', False: 'off', None: 'n/a (CPU)'}[det]


def _where_ran(report: dict) -> str:
  info = report.get('device') or {}
  return (f"on {info.get('device_kind', '?')} ({info.get('backend', '?')}), jax "
          f"{info.get('jax', '?')}")


def micro_lines(report: dict) -> list:
  from benchmarks import lane_micro  # pylint: disable=g-import-not-at-top
  child = next((r for r in report['runs'] if r['kind'] == 'micro'), None)
  if child is None:
    return []
  if child['status'] != 'ok':
    return [f"**Lane independence of single kernels** (benchmarks/lane_micro.py, "
            f"W={report['lanes']}, {_where_ran(report)}): {child['status']}"]
  return lane_micro.markdown_lines(child)


def lanes_lines(report: dict) -> list:
  """Rows 2 and 3: a seed's parameters alone, among others, in another process."""
  checks = report['bit_checks']
  det = 'deterministic ops on' if report['gpu'] else 'deterministic ops n/a (CPU)'
  lines = ['', f"**A seed alone and among others** ({report['form']}, W="
           f"{report['lanes']}, {_where_ran(report)}, {det}; each model's runs in one "
           f"process, the first compiling on an empty cache, the others reading the "
           f"same programs back): the seed's parameters after epoch 1's first "
           f"{report['steps']} steps from a fresh start, bit for bit", '',
           '| model | seed | run a | run b | a vs b | max abs difference | differing '
           'arrays |', '| --- | ---: | --- | --- | --- | ---: | ---: |']
  for c in (c for c in checks if c['row'] == 'lanes'):
    label = report['models'][c['model']][1]
    a = _where(c['a']) if 'a' in c else ''
    b = _where(c['b']) if 'b' in c else ''
    lines.append(f"| {label} | {c['seed']} | {a} | {b} | {_said(c)} | {_worst(c)} | "
                 f"{_arrays(c)} |")
  lines += ['', f"**The same seed in two processes** (seed 1 alone, {report['form']}, "
            f"W={report['lanes']}, {_where_ran(report)}, {det}: the lanes child's "
            f"first run and a second child making only that run, each a fresh process "
            f"with an empty compilation cache; its parameters after {report['steps']} "
            f"steps)",
            '', '| model | two processes | max abs difference | differing arrays |',
            '| --- | --- | ---: | ---: |']
  for c in (c for c in checks if c['row'] == 'processes'):
    lines.append(f"| {report['models'][c['model']][1]} | {_said(c)} | {_worst(c)} | "
                 f"{_arrays(c)} |")
  return lines


def step_lines(report: dict) -> list:
  """Row 4: seconds a step of 1, 10, 20 and 100 members, compile seconds, memory."""
  chunks = 'host-free chunk programs' if report['gpu'] else 'the switched chunk (CPU)'
  lines = ['', f"**Seconds a step** ({report['form']}, W={report['lanes']}, "
           f"{_where_ran(report)}, {chunks}, matmul precision "
           f"{report.get('precision', '?')}; from the children of the first table): "
           f"a group's step is the mean of epoch 1's first "
           f"{report['steps']} steps of one lane group, timed after the same call ran "
           f"once; n members' step is the sum over their groups when every group was "
           f"timed, else groups x the one timed group's step (every group runs the "
           f"same program on the same shapes). Against a lone seed's step (the "
           f"targets of docs/gpu.md: 10 members at most 1.5x, 100 at most 5x): under "
           f"lanes, itself a step of {report['lanes']} lanes, and under map (row 5's "
           f"setting, when it ran). Compile: the first call's seconds less the "
           f"second's / what JAX reports, the lone run's on an empty cache, the "
           f"others' reading its programs back. Peak device MiB: the process's peak "
           f"so far (`peak_bytes_in_use`), against the estimate for the padded lanes "
           f"(`exp.memory_estimate.peak_mib(placement.size)`).", '',
           '| model | members | groups x members on device | s a group step | '
           's a step, all members | how | s a member-step | / lone step | / lone step '
           'under map | compile s (wall / JAX) | peak device MiB | estimated MiB | '
           'peak RSS MiB |',
           '| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: '
           '| ---: | ---: |']
  for model in report['models']:
    label = report['models'][model][1]
    main = _child(report, model, 'main')
    if main is None:
      continue
    if main['status'] != 'ok':
      lines.append(f"| {label} | | {main['status']} | | | | | | | | | | |")
      continue
    lone = _sub(main, 'lone')
    alone = _sub(_child(report, model, 'setting', 'map'), 'lone')
    for name in ('lone', 'group', 'split', 'many'):
      s = _sub(main, name)
      if s is None:
        continue
      ratio = f"{s['step_s'] / lone['step_s']:.2f}x" if lone else ''
      mapped = f"{s['step_s'] / alone['step_s']:.2f}x" if alone else 'not measured'
      steps = ', '.join(f"{g['step_s']:.4f}" for g in s['group_runs'])
      lines.append(
          f"| {label} | {s['members']} | {s['groups']} x {s['size']} | {steps} | "
          f"{s['step_s']:.4f} | {s['step_basis']} | {s['member_step_s']:.5f} | "
          f"{ratio} | {mapped} | {s['compile_wall_s']:.1f} / {s['compile_s']:.1f} | "
          f"{_mib(s['peak_device_mib'])} | {s['estimated_peak_mib']:,.0f} | "
          f"{s['peak_rss_mib']:,.0f} |")
  return lines


def setting_lines(report: dict) -> list:
  """Row 5: each setting against the lanes run of the same model and members."""
  rows = [r for r in report['runs'] if r.get('role') == 'setting']
  if not rows:
    return []
  lines = ['', f"**One setting against the baseline** ({_where_ran(report)}; the "
           f"baseline: the same model and members in the lanes child, W="
           f"{report['lanes']}, deterministic ops "
           f"{_det_label(True if report['gpu'] else None)}; each setting its own "
           f"process with an empty cache; seed 1's parameters after {report['steps']} "
           f"steps against the baseline's)", '',
           '| setting | model | members | s a step | baseline s a step | ratio | '
           'compile s (wall / JAX) | peak device MiB | estimated MiB | seed 1 vs the '
           'baseline | max abs difference |',
           '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | '
           '---: |']
  for r in rows:
    what = VARIANTS[r['variant']][0] + ('' if report['gpu']
                                        else CPU_NOTE.get(r['variant'], ''))
    label = report['models'][r['model']][1]
    name = VARIANTS[r['variant']][4]
    s = _sub(r, name)
    if s is None:
      lines.append(f"| {what} | {label} | | {r['status']} | | | | | | | |")
      continue
    base = _sub(_child(report, r['model'], 'main'), name)
    base_s = f"{base['step_s']:.4f}" if base else 'not measured'
    ratio = f"{s['step_s'] / base['step_s']:.2f}x" if base else ''
    check = next(c for c in report['bit_checks'] if c['row'] == 'setting'
                 and c['variant'] == r['variant'] and c['model'] == r['model'])
    lines.append(f"| {what} | {label} | {s['members']} | {s['step_s']:.4f} | "
                 f"{base_s} | {ratio} | {s['compile_wall_s']:.1f} / "
                 f"{s['compile_s']:.1f} | {_mib(s['peak_device_mib'])} | "
                 f"{s['estimated_peak_mib']:,.0f} | "
                 f"{_said(check)} | {_worst(check)} |")
  return lines


def _named(report: dict, r: dict) -> str:
  if r['kind'] == 'micro':
    return 'the kernels (lane_micro.py)'
  label = report['models'][r['model']][1]
  what = {'main': 'the lanes child', 'again': 'seed 1 alone again'}.get(
      r['role'], r.get('variant') or '')
  return f"{label}, {what}, det ops {_det_label(r['det'])}"


def markdown(report: dict) -> str:
  info = report.get('device') or {}
  ran = next((r for r in report['runs'] if r.get('status') == 'ok'
              and r['kind'] == 'measure'), {})
  lines = [
      f"# Device check, {report['date']}", '',
      f"{info.get('device_kind', '?')} ({info.get('backend', '?')}, "
      f"{info.get('device_count', '?')} device(s)); jax {info.get('jax', '?')}, jaxlib "
      f"{info.get('jaxlib', '?')}, Python {info.get('python', '?')}, "
      f"{info.get('cores', '?')} cores; members step by {report['form']} at W="
      f"{report['lanes']}, matmul precision {report.get('precision', '?')}"
      + (f"; every run with {', '.join(f'`{x}`' for x in report['settings'])}"
         if report.get('settings') else '')
      + f". Command: `{report['command']}`.", '',
      'Versions: ' + ', '.join(f'{k} {v}'
                               for k, v in (info.get('packages') or {}).items())
      + f"; NVIDIA driver {info.get('driver') or 'none'}; XLA_FLAGS of the first run: "
      f"`{ran.get('xla_flags') or '(none)'}`.", '',
      'Each measurement is its own process with a fresh compilation cache'
      + (f'; on a GPU every run has XLA_FLAGS={DET_FLAG}=true unless its row says '
         'otherwise.' if report['gpu'] else
         '; deterministic ops: a GPU-only flag, not measured on a CPU.'), '']
  lines += micro_lines(report)
  lines += lanes_lines(report)
  lines += step_lines(report)
  lines += setting_lines(report)
  missing = [r for r in report['runs'] if r['status'] != 'ok']
  if missing or report.get('prepare', {}).get('status') not in (None, 'ok'):
    lines += ['', '**Not measured**', '']
    if report.get('prepare', {}).get('status') not in (None, 'ok'):
      lines.append(f"* preparing the data: {report['prepare']['status']}")
    for r in missing:
      lines.append(f"* {_named(report, r)}: {r['status']}")
  lines += ['', f"Budget {report['budget_s']:.0f} s; used {report['elapsed_s']:.0f} s."]
  return '\n'.join(lines)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--models', default=','.join(MODELS),
                      help='of ' + ','.join(MODELS))
  parser.add_argument('--lanes', type=int, default=None,
                      help='the lane width W, config.train.lanes (default 16; the '
                      f"smoke's {SMOKE['lanes']})")
  parser.add_argument('--members', default='1,10,100',
                      help='member counts: alone, a group, many')
  parser.add_argument('--split', type=int, default=20,
                      help='members of the run trained as two lane groups or more')
  parser.add_argument('--steps', type=int, default=50, help='timed steps a run')
  parser.add_argument('--variants', default=None,
                      help='the settings of row 5 (default '
                      f"{','.join(DEFAULT_VARIANTS)}; the smoke's "
                      f"{','.join(SMOKE['variants'])}), of " + ','.join(
                          v for v in VARIANTS if v != 'det_off')
                      + ' (deterministic ops off is always measured on a GPU)')
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
                      'e.g. train.seed_parallel=vmap')
  parser.add_argument('--smoke', action='store_true',
                      help='CPU smoke test: every row in a small form (the demo quick '
                      f"config, W={SMOKE['lanes']}, {SMOKE['steps']} steps)")
  parser.add_argument('--prepare', help=argparse.SUPPRESS)  # internal: a child
  parser.add_argument('--measure', help=argparse.SUPPRESS)  # internal: a child
  parser.add_argument('--micro', help=argparse.SUPPRESS)  # internal: a child
  args = parser.parse_args(argv)
  for mode, child in (('prepare', prepare), ('measure', measure), ('micro', micro)):
    if getattr(args, mode):
      print(json.dumps(child(json.loads(getattr(args, mode)))))
      return 0

  began = time.perf_counter()
  variants = tuple(v for v in (args.variants or ','.join(
      SMOKE['variants'] if args.smoke else DEFAULT_VARIANTS)).split(',') if v)
  unknown = [v for v in variants if v not in VARIANTS or v == 'det_off']
  if unknown:
    parser.error(f'--variants: unknown {unknown}; expected of '
                 f"{[v for v in VARIANTS if v != 'det_off']}")
  if args.smoke:
    models, steps = SMOKE_MODELS, SMOKE['steps']
    lanes = args.lanes or SMOKE['lanes']
    counts, split = SMOKE['members'], SMOKE['split']
  else:
    names = [m for m in args.models.split(',') if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
      parser.error(f'--models: unknown {unknown}; expected of {list(MODELS)}')
    models = {m: MODELS[m] for m in names}
    counts = tuple(sorted({int(c) for c in args.members.split(',') if c}))
    if len(counts) != 3 or counts[0] != 1:
      parser.error(f'--members={args.members}: expected three counts, 1 (a seed '
                   'alone), a group and many')
    steps, lanes, split = args.steps, args.lanes or 16, args.split
  settings = ['train.seed_parallel=lanes', f'train.lanes={lanes}'] + args.set
  chosen = dict(map(_parse_setting, settings))
  lanes = int(chosen['train.lanes'])  # as --set may have it
  if lanes < 2:
    parser.error(f'lanes={lanes}: expected at least 2 (the kernels compare lanes)')
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  data = os.path.abspath(args.data)
  tfds_dir = os.environ.get('SEEDSWEEP_TFDS_DIR') or os.path.join(runtime.cache_dir(),
                                                                  'tfds')
  base_env = dict(os.environ)
  base_env.pop('NPROC', None)  # each run pins its own pool (config.runtime.cpu_threads)
  report = {'date': datetime.date.today().isoformat(),
            'command': ' '.join(['python', os.path.relpath(os.path.abspath(__file__),
                                                           REPO)] + sys.argv[1:]),
            'models': models, 'lanes': lanes, 'counts': list(counts), 'split': split,
            'steps': steps, 'settings': args.set, 'smoke': args.smoke,
            'form': chosen['train.seed_parallel'],
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
                                 'settings': settings},
                     dict(child_env(base_env, data, tfds_dir, os.path.join(tmp, 'c0'),
                                    None), XLA_PYTHON_CLIENT_PREALLOCATE='false'),
                     min(left(), args.run_timeout_s))
    report['prepare'] = {k: v for k, v in prep.items() if k != 'stderr_tail'}
    report['device'] = {k: prep.get(k) for k in (
        'jax', 'jaxlib', 'backend', 'device_kind', 'device_count', 'platform_version',
        'device_memory_mib', 'python', 'cores', 'packages', 'driver')}
    gpu = report['gpu'] = prep.get('backend') in GPU_BACKENDS
    report['precision'] = (str(chosen.get('runtime.matmul_precision', 'highest'))
                           if prep.get('backend', 'cpu') != 'cpu'
                           else 'highest (a CPU computes float32)')
    print(json.dumps(report['prepare']), flush=True)
    if prep['status'] != 'ok':
      print(prep.get('stderr_tail', ''), file=sys.stderr)
    plan = plan_children(list(models), gpu, variants)
    named = subruns(counts, split)
    for i, child in enumerate(plan):
      row = dict(child)
      need, have = estimate_s(child, report['runs']), left()
      det = child.get('det', True if gpu else None)
      if prep['status'] != 'ok':
        row['status'] = 'not run: preparing the data failed'
      elif have < need:
        row['status'] = (f'skipped: needs ~{need:.0f} s, {max(have, 0):.0f} s of the '
                         'budget left')
      else:
        env = child_env(base_env, data, tfds_dir, os.path.join(tmp, f'cache_{i}'),
                        det if gpu else None, child.get('variant'))
        if child['kind'] == 'micro':
          spec = {'lanes': lanes, 'small': args.smoke, 'numerics': str(chosen.get(
              'runtime.numerics', 'portable')), 'precision': report['precision']
                  if gpu else None}
        else:
          spec = {'config': models[child['model']][0], 'det': child['det'],
                  'steps': steps, 'settings': settings, 'variant': child['variant'],
                  'runs': child['runs'], 'dump_dir': tmp, 'tag': f'c{i}',
                  'subruns': {n: named[n] for n in child['runs']}}
        print(f"{_named(report, row)} ({have:.0f} s left)", flush=True)
        row.update(run_child(child['kind'], spec, env, min(have, args.run_timeout_s)))
        if row['status'] != 'ok':
          print(row.get('stderr_tail', ''), file=sys.stderr)
      row.pop('stderr_tail', None)
      print(json.dumps(row)[:2000], flush=True)
      report['runs'].append(row)
      report['bit_checks'] = bit_checks(report)
      write(report, stem, began)
    text = write(report, stem, began)
  print(text)
  print(f'wrote {stem}.json and {stem}.md')
  return 0 if prep['status'] == 'ok' else 1


def _public(x):
  """``x`` without the temporary dumps' paths (gone once the check ends)."""
  if isinstance(x, dict):
    return {k: _public(v) for k, v in x.items() if k != 'path'}
  if isinstance(x, list):
    return [_public(v) for v in x]
  return x


def write(report: dict, stem: str, began: float) -> str:
  """Writes ``stem``.json and .md as they stand (after every run, so that a check
  killed at its limit leaves what it measured): the Markdown."""
  report['elapsed_s'] = time.perf_counter() - began
  text = markdown(report)
  with open(stem + '.json', 'w') as f:
    json.dump(_public(report), f, indent=1)
  with open(stem + '.md', 'w') as f:
    f.write(text + '\n')
  return text


if __name__ == '__main__':
  sys.exit(main())

r"""Side by side: the ten-seed program against ten separate runs, in one command.

  python benchmarks/compare.py                      # everything, 1 and 2 cores
  python benchmarks/compare.py --cores=2 --parts=whole
  python benchmarks/compare.py --cores=1 --parts=updates
  python benchmarks/compare.py --cores=2 --parts=numerics,seed_parallel
  python benchmarks/compare.py --cores=2 --parts=members   # bilstm; 1, 10, 100 members
  python benchmarks/compare.py --quick              # a smoke test (CI): tiny settings
  python benchmarks/compare.py --data=/path/to/raw  # the raw data root (data/raw_files.py)

The members part's full sweep (60 cold processes; hours on 2 cores):

  python benchmarks/compare.py --parts=members --cores=1,2 \
      --models=bilstm,dclstm,clstm,mtlstm,dlstm,joint --members=1,10,30,100,300

The parts, every contestant run in its own process, alternating, on the same cores
(``os.sched_setaffinity``; PyTorch gets one thread per core it may use):

* ``whole``: the headline. Bi-LSTM SST-2 (experiments/bilstm.py:sst/binary), 10 seeds
  x ``--epochs`` with dev and test evaluated every epoch, whole processes: the
  framework's one ten-seed run (its own fresh compilation cache: a first run) against
  ten runs of the plain PyTorch loop in benchmarks/torch_bilstm.py (same examples,
  vocabulary and protocol) and against ten single-seed runs of the framework (sharing
  one fresh cache, as a user running seeds one by one would); then the ten-seed run
  again on the cache it filled (a second run). Wall time, train and eval time,
  compile time, peak memory, test accuracy. The PyTorch loop has no GPU path: on a
  machine whose JAX has a GPU it runs on the CPU all the same, and the command says
  so (the speed-up column then compares a GPU program with a CPU loop); a baseline
  that fails is left out of the table with its reason, the framework's rows stay.
* ``models``: every paper model on its SST-2 (joint model: ATIS) config, probed
  in-process: compile time, ``--steps`` training steps and one full dev + test
  evaluation, with all ten seeds and with one seed; sentences/s per seed, the matmul
  FLOPs of a step (counted from its jaxpr) as a fraction of the matmul peak measured
  in the same run, peak memory.
* ``members``: one model (``--models``, default ``bilstm`` for this part) with
  ``--members`` (default 1, 10, 100) members in one program, the same probe: seconds
  a member-step (flat is the goal), peak memory (the RSS; on a GPU also the
  device's) beside the run's own estimate (seedsweep/run/memory.py).
* ``updates``, ``numerics``, ``seed_parallel``: one config field at two values, ten
  seeds, the same in-process probe, two rounds in alternation, seconds a train step
  (the faster round of each) and their ratio: the embedding table's update
  (``'dense'`` against ``'rows'``, per model whose optimiser allows ``'rows'``),
  ``config.runtime.numerics`` (the CPU's own against portable) and
  ``config.train.seed_parallel`` (``map`` against ``vmap``) for every model.

Writes ``--out/compare_<date>.json`` (every number) and ``.md`` (the tables docs/speed.md
shows) and prints the Markdown. Ratios are what to read: absolute times move with the
machine's load. ``--data``: the raw data root, default ``$SEEDSWEEP_DATA``, else
``../shared/data`` beside the repository, else ``./.data`` inside it.
"""
import argparse
import datetime
import functools
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)

from benchmarks import device_check  # pylint: disable=wrong-import-position
from seedsweep.config import base  # pylint: disable=wrong-import-position
from seedsweep.run import runtime  # pylint: disable=wrong-import-position

SEEDS = tuple(range(1, 11))
WHOLE_CONFIG = 'experiments/bilstm.py:sst/binary'
# name -> (config, what it is); the models part probes each.
MODELS = {
    'bilstm': ('experiments/bilstm.py:sst/binary', 'Bi-LSTM baseline, SST-2'),
    'dclstm': ('experiments/dclstm_sst.py:binary', 'DC-Bi-LSTM, SST-2'),
    'clstm': ('experiments/clstm_sst.py:binary', 'C-LSTM, SST-2 phrases'),
    'mtlstm': ('experiments/mtlstm_sst.py:binary', 'MT-LSTM F2S, SST-2'),
    'dlstm': ('experiments/dlstm_sst.py:binary', 'DLSTM, SST-2'),
    'joint': ('experiments/joint_atis.py', 'joint slot + intent, ATIS'),
}
QUICK_CONFIG = 'experiments/demo.py:quick'
ALL, TORCH, ONE = ('seedsweep, all seeds in one program', 'PyTorch loop, one run per seed',
                   'seedsweep, one run per seed')
UNPINNED = 'seedsweep, all seeds, cpu_threads=0 (XLA default pool; bits vary by machine)'
WARM = 'seedsweep, all seeds in one program, again (compilation cache warm)'


# --------------------------------------------------------------------------- helpers

def run_process(argv, cores, env=None, timeout=None):
  """Runs ``argv`` (from the repo root) pinned to ``cores``: ``(wall s, stdout)``."""
  start = time.perf_counter()
  proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          env=dict(os.environ, **(env or {})),
                          preexec_fn=lambda: os.sched_setaffinity(0, cores))
  out, err = proc.communicate(timeout=timeout)
  wall = time.perf_counter() - start
  if proc.returncode != 0:
    raise RuntimeError(f'{" ".join(argv)} failed ({proc.returncode}):\n{err[-3000:]}')
  return wall, out


def last_json(text: str) -> dict:
  return json.loads([l for l in text.splitlines() if l.startswith('{')][-1])


def framework_env(cache: str) -> dict:
  """A fresh compilation cache in ``cache``; the usual prepared datasets; the raw
  data root (``--data``, which main puts in $SEEDSWEEP_DATA)."""
  tfds_dir = os.environ.get('SEEDSWEEP_TFDS_DIR') or os.path.join(runtime.cache_dir(),
                                                                  'tfds')
  return {'SEEDSWEEP_CACHE': cache, 'SEEDSWEEP_TFDS_DIR': tfds_dir,
          'GLIBC_TUNABLES': runtime.GLIBC_TUNABLES,
          'SEEDSWEEP_DATA': device_check.default_data_root()}


# ------------------------------------------------------------------- matmul FLOPs

def matmul_flops(jaxpr) -> float:
  """FLOPs of every ``dot_general`` in a jaxpr, loops multiplied out."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  total = 0.0
  for eqn in jaxpr.eqns:
    if eqn.primitive.name == 'dot_general':
      (contract, _), _ = eqn.params['dimension_numbers']
      lhs = eqn.invars[0].aval.shape
      k = float(np.prod([lhs[d] for d in contract])) if contract else 1.0
      total += 2.0 * float(np.prod(eqn.outvars[0].aval.shape)) * k
      continue
    times = float(eqn.params.get('length', 1)) if eqn.primitive.name == 'scan' else 1.0
    for sub in sub_jaxprs(eqn.params):
      total += times * matmul_flops(sub)
  return total


def sub_jaxprs(params: dict):
  """The jaxprs an equation's ``params`` hold (a scan's body, a cond's branches, a
  custom VJP's forward...), each as an open ``Jaxpr``: what the deprecated
  ``jax.core.jaxprs_in_params`` gave, found by their shape so that no jax module path
  is assumed (a ``ClosedJaxpr`` has ``.jaxpr`` and ``.consts``, a ``Jaxpr`` has
  ``.eqns``)."""
  for value in params.values():
    for v in value if isinstance(value, (tuple, list)) else (value,):
      if hasattr(v, 'consts') and hasattr(getattr(v, 'jaxpr', None), 'eqns'):
        yield v.jaxpr
      elif hasattr(v, 'eqns') and hasattr(v, 'outvars'):
        yield v


def measure_peak(seconds: float = 2.0) -> float:
  """f32 matmul GFLOP/s on this process's cores (1024^3 products)."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  a = jnp.ones((1024, 1024), jnp.float32)
  f = jax.jit(lambda x: x @ a)
  x = f(a).block_until_ready()
  n, start = 0, time.perf_counter()
  while time.perf_counter() - start < seconds:
    x = f(x)
    n += 1
  x.block_until_ready()
  return 2 * 1024 ** 3 * n / (time.perf_counter() - start) / 1e9


# ------------------------------------------------------------------------- probes

def probe(config_name: str, seeds, steps: int, peak_seconds: float = 2.0,
          overrides=None) -> dict:
  """In-process measurement of one config (runs in a child: see ``--probe``), with
  ``overrides`` ({dotted config key: value}) set."""
  import jax  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  from seedsweep.config import keys  # pylint: disable=g-import-not-at-top
  from seedsweep.engine import steps as steps_lib  # pylint: disable=g-import-not-at-top
  from seedsweep.run import epoch as epoch_lib  # pylint: disable=g-import-not-at-top
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  from seedsweep.run import timing  # pylint: disable=g-import-not-at-top
  runtime.enable_compilation_cache()
  config = keys.with_values(base.load_config(config_name), overrides or {}, 'probe')
  config.seeds = tuple(seeds)
  runtime.pin_for(config)  # the peak is measured with the pool the config computes in
  peak = measure_peak(peak_seconds)
  compile0 = timing.compile_seconds()
  start = time.perf_counter()
  exp = pieces.build(config)
  state = exp.init_state()
  build = time.perf_counter() - start
  orders = exp.steps.epoch_orders(exp.device, np.int32(1))  # as the loop calls it
  schedule = exp.schedule.train_plan.schedule(1)

  def train(state, count):  # the loop's own path: chunks of steps, one dispatch each
    state, loss_sum, _ = epoch_lib.train_steps(exp, state, 1, max_steps=count)
    return state, loss_sum

  # Compile the chunk program (every bucket a branch; one program whatever the
  # number of steps) and the evaluation first.
  steps = min(steps, len(schedule))  # the timed steps: epoch 1's first ones
  state, loss = train(state, 1)
  jax.block_until_ready(loss)
  epoch_lib.evaluate(exp, state.params)
  compile_s = timing.compile_seconds() - compile0
  # FLOPs of the timed steps, from the one-step program's jaxpr at each length.
  first = {}
  for position, (_, length) in enumerate(schedule):
    first.setdefault(length, position)
  flops_at = {}
  for length, position in first.items():
    at = steps_lib.StepAt(orders=orders, slot=schedule[position][0], epoch=1,
                          position=position)
    jaxpr = jax.make_jaxpr(functools.partial(exp.steps._train_step, length=length))(  # pylint: disable=protected-access
        state, exp.device, at)
    flops_at[length] = matmul_flops(jaxpr.jaxpr)
  start = time.perf_counter()
  state, loss = train(state, steps)
  jax.block_until_ready(loss)
  train_s = time.perf_counter() - start
  flops = sum(flops_at[length] for _, length in schedule[:steps])
  start = time.perf_counter()
  epoch_lib.evaluate(exp, state.params)
  eval_s = time.perf_counter() - start
  members = len(exp.members)
  batch = config.train.batch_size
  eval_rows = sum(exp.data.sizes()[s] for s in exp.schedule.eval_splits)
  # Throughputs count every seed's sentences: 10 seeds in one program against one
  # seed's program run ten times.
  return {'config': config_name, 'members': members, 'build_s': build,
          'embedding_update': config.optimizer.embedding_update,
          'numerics': runtime.numerics(), 'seed_parallel': exp.placement.mode,
          'compile_s': compile_s, 'train_step_s': train_s / steps,
          'train_seed_sentences_per_s': members * steps * batch / train_s,
          'eval_s': eval_s, 'eval_seed_sentences_per_s': members * eval_rows / eval_s,
          'matmul_gflop_per_step': flops / steps / 1e9,
          'matmul_peak_gflops': peak,
          'fraction_of_peak': flops / train_s / 1e9 / peak,
          'epoch_steps': exp.schedule.train_plan.steps_per_epoch,
          'peak_rss_mib': timing.peak_rss_mib(),
          'peak_device_mib': _peak_device_mib(),
          'estimated_peak_mib': exp.memory_estimate.peak_mib(members)}


def _peak_device_mib():
  """A GPU's or TPU's peak memory in use (None on the CPU: its peak is the RSS)."""
  import jax  # pylint: disable=g-import-not-at-top
  device = jax.devices()[0]
  if device.platform == 'cpu':
    return None
  return (device.memory_stats() or {}).get('peak_bytes_in_use', 0) / 2 ** 20


# ------------------------------------------------------------------------- parts

def export_for_torch(config_name: str, path: str) -> None:
  """Writes the dataset of ``config_name`` as padded token ids for the PyTorch loop."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  from seedsweep import data as data_lib  # pylint: disable=g-import-not-at-top
  dataset = data_lib.load_dataset(base.load_config(config_name).data)
  view = dataset.views[0]
  out = {'vocab_size': dataset.vocab_size, 'num_classes': dataset.num_classes}
  for split, rows in view.rows.items():
    lengths = view.lengths[rows]
    tokens = np.zeros((len(rows), max(int(lengths.max(initial=1)), 1)), np.int64)
    for i, r in enumerate(rows):
      tokens[i, :lengths[i]] = view.tokens[view.starts[r]:view.starts[r] + lengths[i]]
    out.update({f'{split}_tokens': tokens, f'{split}_lengths': lengths.astype(np.int64),
                f'{split}_labels': dataset.labels[rows].astype(np.int64)})
  np.savez(path, **out)


def framework_run(config_name, seeds, epochs, cores, workdir, cache, *overrides):
  argv = [sys.executable, 'launch.py', f'--config={config_name}',
          f'--config.seeds={tuple(seeds)!r}', f'--config.train.num_epochs={epochs}',
          '--config.train.progress=False', f'--workdir={workdir}', *overrides]
  wall, _ = run_process(argv, cores, framework_env(cache))
  with open(os.path.join(workdir, 'results.json')) as f:
    results = json.load(f)
  return {'wall_s': wall, 'timing': results.get('timing', {}),
          'backend': results['provenance'].get('devices', {}).get('backend', 'cpu'),
          'train_sentences': results['provenance']['data']['sizes']['train'],
          'peak_rss_mib': results.get('timing', {}).get('peak_rss_mib'),
          'test_accuracy': results['metrics']['test_accuracy']}


def torch_note(backend: str) -> str:
  """What the whole part says when the framework ran on an accelerator."""
  return (f'note: seedsweep ran on {backend}, but the PyTorch baseline '
          '(benchmarks/torch_bilstm.py) runs on the CPU: it has no GPU path, so the '
          'speed-up over PyTorch compares a GPU program with a CPU loop')


def whole_part(config_name, cores, epochs, seeds, tmp, torch_data, caches=None,
               one_seeds=None, notes=None):
  """The three contestants of the headline comparison on ``cores``; ``notes`` (a
  list) gains what the table needs said (the PyTorch baseline on the CPU beside a
  framework on a GPU, a baseline that failed).

  ``caches``: one cache folder for every run (``--quick``: the usual one, so the
  smoke test spends little time compiling); by default each contestant starts
  from a fresh one. ``one_seeds``: the seeds the one-run-per-seed contestant runs
  (default ``seeds``; ``--quick``: the first only).
  """
  contestants = {}
  notes = [] if notes is None else notes
  # 1. The framework, all seeds in one program (fresh cache: its first run).
  contestants[ALL] = [framework_run(
      config_name, seeds, epochs, cores, os.path.join(tmp, 'all'),
      caches or os.path.join(tmp, 'cache_all'))]
  # The same run again on the cache it filled: what a second run costs.
  if not caches:
    contestants[WARM] = [framework_run(
        config_name, seeds, epochs, cores, os.path.join(tmp, 'all_again'),
        os.path.join(tmp, 'cache_all'))]
  # 2. PyTorch, one process per seed: always on the CPU (benchmarks/torch_bilstm.py
  # has no GPU path), whatever device the framework ran on.
  if torch_data:
    backend = contestants[ALL][0].get('backend', 'cpu')
    if backend != 'cpu':
      note = torch_note(backend)
      print(note, flush=True)
      notes.append(note)
    runs = []
    try:
      for seed in seeds:
        wall, out = run_process([sys.executable, 'benchmarks/torch_bilstm.py',
                                 f'--data={torch_data}', f'--seed={seed}',
                                 f'--epochs={epochs}'], cores)
        runs.append({'wall_s': wall, **last_json(out)})
      contestants[TORCH] = runs
    except (RuntimeError, IndexError, ValueError) as e:  # left out, with its reason
      note = f'PyTorch baseline left out: {_failure(str(e))}: {str(e)[-300:].strip()}'
      print(note, flush=True)
      notes.append(note)
  # 3. The framework, one single-seed run per seed (one shared fresh cache).
  contestants[ONE] = [
      framework_run(config_name, (seed,), epochs, cores,
                    os.path.join(tmp, f'seed{seed}'),
                    caches or os.path.join(tmp, 'cache_one'))
      for seed in (one_seeds or seeds)]
  # 4. The ten-seed program with XLA's default pool, one thread per core: what the
  # pinned pool (config.runtime.cpu_threads=4, the same bits on any machine) costs.
  if len(cores) > 1 and not caches:
    contestants[UNPINNED] = [framework_run(
        config_name, seeds, epochs, cores, os.path.join(tmp, 'unpinned'),
        os.path.join(tmp, 'cache_unpinned'), '--config.runtime.cpu_threads=0')]
  return contestants


def summarize_whole(contestants, train_sentences, epochs):
  """One row per contestant: its processes' times added up, its peak memory."""
  rows = []
  for name, runs in contestants.items():
    wall = sum(r['wall_s'] for r in runs)
    train = sum(r['timing'].get('train', 0.0) for r in runs)
    evals = sum(r['timing'].get('eval', 0.0) for r in runs)
    # One value per seed: a framework run lists its seeds', a PyTorch run has one.
    accs = [a for r in runs for a in (r['test_accuracy'] if isinstance(
        r['test_accuracy'], list) else [r['test_accuracy']])]
    n_seeds = len(accs)
    rows.append({'contestant': name, 'processes': len(runs), 'wall_s': wall,
                 'train_s': train, 'eval_s': evals,
                 'compile_s': sum(r['timing'].get('compile', 0.0) for r in runs),
                 # training sentences of all seeds per second of training
                 'train_seed_sentences_per_s':
                     train_sentences * epochs * n_seeds / train if train else None,
                 'peak_rss_mib': max(r.get('peak_rss_mib') or 0 for r in runs),
                 'test_accuracy_mean': sum(accs) / len(accs)})
  ref = next((r['wall_s'] for r in rows if r['contestant'] == TORCH), rows[-1]['wall_s'])
  for r in rows:
    r['speedup_vs_reference'] = ref / r['wall_s']
  return rows


def run_probe(config_name, members, steps, cores, cache, quick=False, overrides=()):
  """:func:`probe` in a child process pinned to ``cores``; ``overrides`` are
  ``'key=value'`` texts."""
  _, text = run_process([sys.executable, 'benchmarks/compare.py',
                         f'--probe={config_name}', f'--seeds={",".join(map(str, members))}',
                         f'--steps={steps}'] + (['--quick'] if quick else []) +
                        [f'--probe_set={o}' for o in overrides],
                        cores, framework_env(cache))
  return last_json(text)


def models_part(names, cores, steps, seeds, tmp, quick=False, caches=None):
  out = {}
  for name in names:
    config_name = QUICK_CONFIG if quick else MODELS[name][0]
    for label, members in (('all seeds', seeds), ('1 seed', seeds[:1])):
      out.setdefault(name, {})[label] = run_probe(
          config_name, members, steps, cores, caches or os.path.join(tmp, 'cache_probe'),
          quick)
  return out


def members_part(names, counts, cores, steps, tmp, quick=False, caches=None):
  """``{model: {count: probe}}``: the same config with 1, 10, 100... members in one
  program (seeds 1..count); a probe that fails (killed for memory) says how."""
  out = {}
  for name in names:
    config_name = QUICK_CONFIG if quick else MODELS[name][0]
    for count in counts:
      try:
        result = run_probe(config_name, tuple(range(1, count + 1)), steps, cores,
                           caches or os.path.join(tmp, 'cache_members'), quick)
      except RuntimeError as e:
        result = {'members': count, 'error': _failure(str(e))}
      out.setdefault(name, {})[str(count)] = result
  return out


def members_table(part: dict, quick: bool) -> list:
  """The Markdown rows of a members part: seconds a member-step against one
  member's, and memory measured against the estimate."""
  lines = ['| model | members | s a step | s a member-step | vs 1 member | '
           'peak MiB (RSS / device) | estimated MiB |',
           '| --- | ---: | ---: | ---: | ---: | ---: | ---: |']
  for name, probes in part.items():
    label = name if quick else MODELS[name][1]
    one = probes.get('1', {})
    for count, p in probes.items():
      if 'error' in p:
        lines.append(f'| {label} | {count} | {p["error"]} | | | | |')
        continue
      per = p['train_step_s'] / p['members']
      ratio = (f"{per / one['train_step_s']:.2f}x" if 'train_step_s' in one else '')
      device = p.get('peak_device_mib')
      lines.append(f"| {label} | {count} | {p['train_step_s']:.3f} | {per:.4f} | "
                   f"{ratio} | {p['peak_rss_mib']:.0f}"
                   f"{f' / {device:.0f}' if device is not None else ''} | "
                   f"{p['estimated_peak_mib']:.0f} |")
  return lines


# Models whose optimiser allows embedding_update='rows' (and whose table trains).
UPDATE_MODELS = ('clstm', 'mtlstm', 'dlstm', 'joint')
# The A/B parts: part -> (config field, its two values, the models it is measured on
# (None: every model), what the table is about).
AB_PARTS = {
    'updates': ('optimizer.embedding_update', ('dense', 'rows'), UPDATE_MODELS,
                "The embedding table's update"),
    'numerics': ('runtime.numerics', ('native', 'portable'), None,
                 'Portable numerics against the CPU\'s own'),
    'seed_parallel': ('train.seed_parallel', ('map', 'vmap'), None,
                      'The seed-parallel form'),
}


def ab_part(part, names, cores, steps, seeds, tmp, quick=False, caches=None):
  """``{model: {value: probe}}`` of an :data:`AB_PARTS` part, the faster of two
  alternating rounds each (one round when ``quick``); each value has its own cache."""
  field, values, _, _ = AB_PARTS[part]
  out = {}
  for name in names:
    config_name = QUICK_CONFIG if quick else MODELS[name][0]
    for _ in range(1 if quick else 2):
      for value in values:
        try:
          result = run_probe(config_name, seeds, steps, cores,
                             caches or os.path.join(tmp, f'cache_{value}'), quick,
                             [f'{field}={value}'] +
                             (['optimizer.name=adagrad'] if quick and part == 'updates'
                              else []))
        except RuntimeError as e:  # a probe that failed (killed for memory, say)
          out.setdefault(name, {}).setdefault(value, {'error': _failure(str(e))})
          continue
        best = out.setdefault(name, {}).get(value)
        if best is None or 'error' in best or result['train_step_s'] < best['train_step_s']:
          out[name][value] = result
  return out


def _step_text(probe: dict) -> str:
  """A probe's seconds a step, or how it failed."""
  return probe.get('error') or f"{probe['train_step_s']:.3f}"


def _failure(message: str) -> str:
  """A failed probe in a few words: how it ended."""
  code = re.search(r'failed \((-?\d+)\)', message)
  if code and int(code.group(1)) == -9:
    return 'killed (SIGKILL: out of memory)'
  return f'failed ({code.group(1) if code else "?"})'


# ------------------------------------------------------------------------ report

def markdown(report) -> str:
  lines = [f"Measured {report['date']} on {report['machine']} "
           f"(`{report['command']}`).", '']
  notes = list(dict.fromkeys(report.get('notes', [])))  # once each, in order
  if notes:
    lines += [f'* {note}' for note in notes] + ['']
  n = report['n_seeds']
  for cores, part in report['parts'].items():
    if 'whole' in part:
      lines += [f'**{report["whole_config"]}, {report["n_seeds"]} seeds x {report["epochs"]} '
                f'epoch(s), whole processes, {cores} core(s)**', '',
                '| contestant | processes | wall s | train s | eval s | compile s | '
                'train sentences x seeds / s | peak RSS MiB | test acc | '
                'speed-up (wall) vs PyTorch |',
                '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |']
      for r in part['whole']:
        rate = r['train_seed_sentences_per_s']
        lines.append(
            f"| {r['contestant']} | {r['processes']} | {r['wall_s']:.1f} | "
            f"{r['train_s']:.1f} | {r['eval_s']:.1f} | {r['compile_s']:.1f} | "
            f"{rate or 0:.0f} | {r['peak_rss_mib']:.0f} | {r['test_accuracy_mean']:.2f} | "
            f"{r['speedup_vs_reference']:.2f}x |")
      lines.append('')
    if 'models' in part:
      lines += [f'**Every model, in-process probe, {cores} core(s)** (train: '
                f'{report["steps"]} steps after compilation; eval: dev + test once)', '',
                f'| model | compile s | train sentences x seeds / s, {n} seeds in one '
                f'program / one seed | ratio | eval sentences x seeds / s, {n} / 1 | '
                f'ratio | matmul % of peak ({n} seeds) | peak RSS MiB ({n} / 1) |',
                '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |']
      for name, probes in part['models'].items():
        many, one = probes['all seeds'], probes['1 seed']
        tr = many['train_seed_sentences_per_s'] / one['train_seed_sentences_per_s']
        ev = many['eval_seed_sentences_per_s'] / one['eval_seed_sentences_per_s']
        lines.append(
            f"| {many['config'] if report['quick'] else MODELS[name][1]} | "
            f"{many['compile_s']:.1f} | "
            f"{many['train_seed_sentences_per_s']:.0f} / "
            f"{one['train_seed_sentences_per_s']:.0f} | {tr:.2f}x | "
            f"{many['eval_seed_sentences_per_s']:.0f} / "
            f"{one['eval_seed_sentences_per_s']:.0f} | {ev:.2f}x | "
            f"{100 * many['fraction_of_peak']:.0f} % | "
            f"{many['peak_rss_mib']:.0f} / {one['peak_rss_mib']:.0f} |")
      lines.append('')
    if 'members' in part:
      lines += [f'**Members in one program, in-process probe, {cores} core(s)** '
                f'(seconds a train step of {report["steps"]} steps after compilation; '
                'a member-step is one member\'s share)', '',
                *members_table(part['members'], report['quick']), '']
    for name_of_part, (field, values, _, title) in AB_PARTS.items():
      if name_of_part not in part:
        continue
      a, b = values
      lines += [f'**{title} (`{field}`), {n} seeds, in-process probe, {cores} core(s)** '
                f'(seconds a train step, the faster of two alternating rounds of '
                f'{report["steps"]} steps)', '',
                f'| model | {a} | {b} | {a} / {b} | compile s ({a} / {b}) |',
                '| --- | ---: | ---: | ---: | ---: |']
      for name, probes in part[name_of_part].items():
        pa, pb = probes[a], probes[b]
        label = MODELS.get(name, (None, name))[1] if not report['quick'] else name
        if 'error' in pa or 'error' in pb:
          lines.append(f'| {label} | {_step_text(pa)} | {_step_text(pb)} | | |')
          continue
        lines.append(
            f"| {label} | "
            f"{pa['train_step_s']:.3f} | {pb['train_step_s']:.3f} | "
            f"{pa['train_step_s'] / pb['train_step_s']:.2f}x | "
            f"{pa['compile_s']:.1f} / {pb['compile_s']:.1f} |")
      lines.append('')
  return '\n'.join(lines)


def machine() -> str:
  cpu = ''
  try:
    with open('/proc/cpuinfo') as f:
      cpu = next((l.split(':', 1)[1].strip() for l in f if l.startswith('model name')), '')
  except OSError:
    pass
  return f'{cpu or platform.processor()}, {os.cpu_count()} cores, {platform.system()}'


def _parse_setting(text: str):
  """``'key=value'`` -> ``(key, value)``, the value a Python literal where it reads
  as one (else the text)."""
  import ast  # pylint: disable=g-import-not-at-top
  key, _, value = text.partition('=')
  try:
    return key, ast.literal_eval(value)
  except (ValueError, SyntaxError):
    return key, value


def torch_available() -> bool:
  import importlib.util  # pylint: disable=g-import-not-at-top
  return importlib.util.find_spec('torch') is not None


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--parts', default='whole,models',
                      help='whole,models,members,' + ','.join(AB_PARTS))
  parser.add_argument('--members', default='1,10,100',
                      help='members: the member counts (the full sweep: '
                      '1,10,30,100,300)')
  parser.add_argument('--cores', default='1,2', help='core counts, e.g. 1,2')
  parser.add_argument('--epochs', type=int, default=1)
  parser.add_argument('--steps', type=int, default=10, help='models: timed steps')
  parser.add_argument('--models', default=None,
                      help=f'of {",".join(MODELS)}; default all of them, and for the '
                      'members part bilstm alone')
  parser.add_argument('--data', default=device_check.default_data_root(),
                      help='raw data root (default $SEEDSWEEP_DATA, else '
                      '../shared/data beside the repo, else ./.data in it)')
  parser.add_argument('--out', default=os.path.join(REPO, 'benchmarks', 'results'))
  parser.add_argument('--quick', action='store_true',
                      help='demo quick config, 2 seeds (one run per seed: the first '
                      'only), 2 steps: checks that it runs')
  parser.add_argument('--render', help='print the Markdown of a JSON report and exit')
  parser.add_argument('--probe', help=argparse.SUPPRESS)  # internal: one probe
  parser.add_argument('--seeds', default='', help=argparse.SUPPRESS)
  parser.add_argument('--probe_set', action='append', default=[],
                      help=argparse.SUPPRESS)  # internal: key=value for the probe
  args = parser.parse_args(argv)
  if args.render:
    with open(args.render) as f:
      print(markdown(json.load(f)))
    return
  if args.probe:
    overrides = dict(_parse_setting(o) for o in args.probe_set)
    print(json.dumps(probe(args.probe, [int(s) for s in args.seeds.split(',')],
                           args.steps, 0.2 if args.quick else 2.0, overrides)))
    return
  os.environ['SEEDSWEEP_DATA'] = os.path.abspath(args.data)  # here and every child
  seeds = SEEDS[:2] if args.quick else SEEDS
  whole_config = QUICK_CONFIG if args.quick else WHOLE_CONFIG
  names = ['bilstm'] if args.quick else [
      m for m in (args.models or ','.join(MODELS)).split(',') if m]
  # The members part alone would start a cold process per model and count: one
  # model unless --models says otherwise.
  member_names = ['bilstm'] if args.quick or not args.models else names
  steps = 2 if args.quick else args.steps
  available = len(os.sched_getaffinity(0))
  report = {'date': datetime.date.today().isoformat(), 'machine': machine(),
            'command': 'python benchmarks/compare.py ' + ' '.join(sys.argv[1:]),
            'whole_config': whole_config, 'quick': args.quick,
            'n_seeds': len(seeds), 'epochs': args.epochs, 'steps': steps, 'parts': {},
            'notes': []}
  with tempfile.TemporaryDirectory(prefix='seedsweep_compare_') as tmp:
    torch_data = None
    if 'whole' in args.parts and torch_available():
      torch_data = os.path.join(tmp, 'data.npz')
      export_for_torch(whole_config, torch_data)
    elif 'whole' in args.parts:  # said, so a table without its baseline is not misread
      report['notes'].append('PyTorch baseline left out: torch is not installed '
                             '(pip install -e ".[bench]")')
      print(report['notes'][-1])
    shared = runtime.cache_dir() if args.quick else None  # the smoke test: warm
    for n in [int(c) for c in args.cores.split(',')]:
      if n > available:
        print(f'skipping {n} cores: this process may use {available}')
        continue
      cores = set(sorted(os.sched_getaffinity(0))[:n])
      part = report['parts'].setdefault(str(n), {})
      if 'whole' in args.parts:
        contestants = whole_part(whole_config, cores, args.epochs, seeds,
                                 os.path.join(tmp, f'whole{n}'), torch_data, shared,
                                 seeds[:1] if args.quick else None, report['notes'])
        part['whole_runs'] = contestants
        train_n = contestants[ALL][0]['train_sentences']
        part['whole'] = summarize_whole(contestants, train_n, args.epochs)
      if 'models' in args.parts:
        part['models'] = models_part(names, cores, steps, seeds,
                                     os.path.join(tmp, f'models{n}'), args.quick,
                                     shared)
      if 'members' in args.parts.split(','):
        counts = (1, 2) if args.quick else [int(c) for c in args.members.split(',')]
        part['members'] = members_part(member_names, counts, cores, steps,
                                       os.path.join(tmp, f'members{n}'), args.quick,
                                       shared)
      for name_of_part, (_, _, models, _) in AB_PARTS.items():
        if name_of_part in args.parts.split(','):
          which = ['bilstm'] if args.quick else [m for m in names
                                                 if models is None or m in models]
          part[name_of_part] = ab_part(name_of_part, which, cores, steps, seeds,
                                       os.path.join(tmp, f'{name_of_part}{n}'),
                                       args.quick, shared)
  text = markdown(report)
  os.makedirs(args.out, exist_ok=True)
  tag = '_'.join([report['date'], args.parts.replace(',', '+'),
                  'cores' + args.cores.replace(',', '+')] + (['quick'] if args.quick else []))
  stem = os.path.join(args.out, f'compare_{tag}')
  with open(stem + '.json', 'w') as f:
    json.dump(report, f, indent=1)
  with open(stem + '.md', 'w') as f:
    f.write(text + '\n')
  print(text)
  print(f'wrote {stem}.json and {stem}.md')


if __name__ == '__main__':
  main()

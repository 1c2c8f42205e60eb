"""Shared fixtures (a small demo config, the JAX compilation cache) and the suite's two
tiers.

Tiers: `python -m pytest` (the README's command) runs every test but those marked
``full``; `python -m pytest --all` (what .ci/run runs) runs them too. Mark ``full`` a
duplicate of a behaviour the README tier already checks (another model family, mode,
golden, parameter): ``@pytest.mark.full``, or ``in_tier(values, kept)`` for a
parametrisation. Every test file keeps a test in the README tier, and every module is
imported or named by such a file (tests/test_tiers.py). A test named by its id
(``file.py::test``) runs whatever its tier. ``short``, the other way round: the
README tier's short form of a test the whole suite runs whole (one kill of the chaos
sweep's three, three moments of the fault chain's thirteen), left out by ``--all``.
``slow`` (over a second) is apart: ``-m "not slow"`` is the README tier's minute-long
part while editing."""
import fcntl
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)
# The real datasets (never copied into the repo): $SEEDSWEEP_DATA, else beside the
# checkout. Tests reading raw files and every builder use the same folder.
SHARED_DATA = (os.environ.get('SEEDSWEEP_DATA')
               or os.path.normpath(os.path.join(REPO, '..', 'shared', 'data')))
os.environ['SEEDSWEEP_DATA'] = SHARED_DATA

from seedsweep.experiments import demo  # pylint: disable=g-import-not-at-top,wrong-import-position
from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top,wrong-import-position

runtime.enable_compilation_cache()
# The configs' default (config.runtime.cpu_threads): set before JAX starts its CPU
# client, so that tests computing before they build a run's pieces share its pool.
DEFAULT_THREADS = demo.get_config().runtime.cpu_threads
runtime.pin_cpu_threads(DEFAULT_THREADS)
# And the configs' numerics (portable: XLA_FLAGS gains the flags of runtime.py).
# pytest-xdist's workers inherit the controller's environment, pinned already: a
# worker still holding those flags starts again from the shell's XLA_FLAGS.
_SHELL, _PINNED = 'SEEDSWEEP_TEST_SHELL_XLA_FLAGS', 'SEEDSWEEP_TEST_PINNED_XLA_FLAGS'
if os.environ.get('XLA_FLAGS') == os.environ.get(_PINNED, object()):
  os.environ['XLA_FLAGS'] = os.environ[_SHELL]
os.environ[_SHELL] = os.environ.get('XLA_FLAGS', '')
DEFAULT_NUMERICS = demo.get_config().runtime.numerics
runtime.pin_numerics(DEFAULT_NUMERICS)
os.environ[_PINNED] = os.environ.get('XLA_FLAGS', '')


def small_config(seeds=(1, 2), epochs=2, **train):
  """The demo's quick Bi-LSTM with few seeds, no progress bar."""
  config = demo.get_config('quick')
  config.seeds = tuple(seeds)
  config.train.num_epochs = epochs
  config.train.progress = False
  for k, v in train.items():
    config.train[k] = v
  return config


def tiny_shapes(config):
  """``config`` in one length bucket of at most 32 tokens, without a progress bar,
  and a cross-validated dataset's first fold only: one train-step and one eval
  compilation, little compute. tests/test_experiments.py and
  tests/determinism_probe.py use it alike (tests/test_cross_validation.py covers the
  folds)."""
  from seedsweep import data  # pylint: disable=g-import-not-at-top
  config.train.progress = False
  config.data.num_buckets = 1
  config.data.max_length = 32
  if data.REGISTRY[config.data.name].cross_validation:
    config.data.folds = (0,)
  return config


def run_launch(*args, env=None, timeout=600):
  """Runs ``python launch.py ARGS`` from the repo root; returns CompletedProcess."""
  return subprocess.run([sys.executable, os.path.join(REPO, 'launch.py'), *args],
                        cwd=REPO, capture_output=True, text=True, timeout=timeout,
                        env=dict(user_environment(), **(env or {})), check=False)


def on_cores(cores, *args):
  """A command line running ``python ARGS`` on the given cores only (what a machine
  with that many cores, or ``taskset``, gives)."""
  start = ('import os, sys; os.sched_setaffinity(0, %r); '
           'os.execv(sys.executable, [sys.executable] + sys.argv[1:])' % (set(cores),))
  return [sys.executable, '-c', start, *args]


def own_core() -> int:
  """The core this pytest-xdist worker gives the one-core processes it starts: workers
  take the usable cores in turn, so two such processes started by two workers do not
  share one core while another idles."""
  cores = sorted(os.sched_getaffinity(0))
  worker = os.environ.get('PYTEST_XDIST_WORKER', 'gw0')
  return cores[int(worker.lstrip('gw') or 0) % len(cores)]


def user_environment() -> dict:
  """This process's environment without the thread pool and the numerics it pinned
  for itself (``NPROC``, XLA_FLAGS' additions): what a user's shell gives a child."""
  env = {k: v for k, v in os.environ.items()
         if k not in (runtime.THREADS_VARIABLE, 'XLA_FLAGS', _SHELL, _PINNED)}
  if runtime.user_xla_flags():
    env['XLA_FLAGS'] = runtime.user_xla_flags()
  return env


def train_epoch(exp, state, epoch: int, max_steps=None):
  """``(state, mean train loss [members])`` after epoch ``epoch``'s steps (its
  first ``max_steps`` only, when given)."""
  from seedsweep.run import epoch as epoch_lib  # pylint: disable=g-import-not-at-top
  state, loss_sum, _ = epoch_lib.train_steps(exp, state, epoch, max_steps=max_steps)
  return state, exp.real(loss_sum).astype(np.float64) / exp.schedule.train_plan.steps_per_epoch


def evaluate_split(exp, params, split: str) -> dict:
  """``{'accuracy', 'loss', ...}``, each ``[members]``, of one split."""
  from seedsweep.run import epoch as epoch_lib  # pylint: disable=g-import-not-at-top
  prefix = split + '_'
  return {k[len(prefix):]: v for k, v in epoch_lib.evaluate(exp, params).items()
          if k.startswith(prefix)}


def run_steps(config, n_steps):
  """``(pieces, state)`` after the first ``n_steps`` batches of epoch 1."""
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  exp = pieces.build(config)
  state, _ = train_epoch(exp, exp.init_state(), 1, max_steps=n_steps)
  return exp, state


@pytest.fixture
def config():
  return small_config()


def workdir_snapshot(workdir):
  """{relative path: (bytes, mtime in ns)} of every file under ``workdir`` (its lock
  file included): equal before and after means nothing was written."""
  out = {}
  for folder, _, names in os.walk(workdir):
    for name in names:
      path = os.path.join(folder, name)
      with open(path, 'rb') as f:
        out[os.path.relpath(path, workdir)] = (f.read(), os.stat(path).st_mtime_ns)
  return out


def built_once(tmp_path_factory, name, build):
  """A folder that ``build(folder)`` fills once per run of the suite, however many
  pytest-xdist workers ask for it: the first builds it under a file lock, the others
  wait for it, then read it. Tests only read it (copy it to change it). A build that
  raised is made again by the next test that asks."""
  root = tmp_path_factory.getbasetemp()
  if os.environ.get('PYTEST_XDIST_WORKER'):
    root = root.parent  # the workers' basetemps (popen-gw0, ...) share their parent
  folder = os.path.join(str(root), f'built_once_{name}')
  with open(folder + '.lock', 'a') as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
    if not os.path.exists(folder + '.done'):
      shutil.rmtree(folder, ignore_errors=True)
      os.makedirs(folder)
      build(folder)
      open(folder + '.done', 'w').close()
  return folder


def assert_logits_ignore_padding(model, vocab_size=30, lengths=(9, 6, 1)):
  """The logits of ``model`` (random init) are the same when the padding after each
  sentence holds other tokens and the batch is padded wider."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(0)
  lengths = np.asarray(lengths)
  time = int(lengths.max())
  tokens = rng.integers(2, vocab_size, (len(lengths), time))
  batch = {'tokens': jnp.asarray(tokens), 'lengths': jnp.asarray(lengths)}
  params = model.init(jax.random.key(0), batch, train=False)
  out = model.apply(params, batch, train=False).logits
  garbage = np.where(np.arange(time)[None] < lengths[:, None], tokens, 1)
  wider = np.concatenate([garbage, rng.integers(2, vocab_size, (len(lengths), 7))], 1)
  np.testing.assert_allclose(
      model.apply(params, {'tokens': jnp.asarray(wider), 'lengths': batch['lengths']},
                  train=False).logits, out, rtol=1e-5, atol=1e-6)


# The longest tests, in seconds (setup + call) of a 2-core run with empty caches
# (`--durations=0`, AMD EPYC Zen 4, 2026-12-02): started first, longest first. Of the
# whole suite's (--all); the README tier's own are at the end.
LONGEST = {
    'tests/test_chaos.py::test_a_sweep_killed_ends_as_the_undisturbed_one[3]': 157,
    ('tests/test_faults.py::test_a_run_killed_and_stopped_ends_like_an_'
     'uninterrupted_one[every'): 109,
    'tests/test_benchmarks.py::test_compare_ab_parts_and_members': 86,
    'tests/test_chaos.py::test_a_sweep_and_its_report_on_a_full_disk': 70,
    'tests/test_golden.py::test_a_golden_run_gives_its_committed_bits[demo]': 67,
    'tests/test_golden.py::test_a_golden_run_gives_its_committed_bits[joint_atis': 60,
    'tests/test_determinism.py::test_a_run_continued_elsewhere': 60,
    'tests/test_embedding_rows.py::test_a_run_on_rows_stopped_mid_epoch': 55,
    'tests/test_reproduction.py::test_statistical_verify_across_numerics': 55,
    'tests/test_groups.py::test_a_split_run_evaluates_predicts': 54,
    'tests/test_models.py::test_initialising_several_seeds_terminates': 53,
    'tests/test_sweep.py::test_stacked_points_give_the_numbers_of_their_runs': 53,
    'tests/test_golden.py::test_a_golden_run_gives_its_committed_bits[dclstm': 50,
    'tests/test_search.py::test_a_search_killed_while_asking': 46,
    'tests/test_sweep.py::test_the_local_launcher_runs_each_shard': 46,
    'tests/test_sharding.py::test_two_processes_train_one_run': 41,
    # tests/test_pool.py: the first test of each pool chain makes its probes (CPU
    # seconds of their processes, their own figures, 2026-12-05): the pool of 2
    # compiling and 3 reading its programs, 185 s, put first (24 tests read its
    # programs; one that waits for them idles its worker); 4 on four devices and 32
    # reading; 32 compiling.
    ('tests/test_pool.py::test_a_family_gives_the_bits_of_a_pool_of_two['
     'experiments/bilstm.py:trec/coarse-3]'): 240,
    ('tests/test_pool.py::test_members_on_several_devices_give_the_same_bits_'
     'whatever_the_pool[experiments/bilstm.py:trec/coarse-32]'): 218,
    ('tests/test_pool.py::test_a_family_gives_the_bits_of_a_pool_of_two['
     'experiments/bilstm.py:trec/coarse-32]'): 150,
    # The README tier's shorter forms, estimated from a loaded machine's ratios (not
    # yet measured quiet): the calm sweep, then two launches 1.7 times as long; the
    # uninterrupted run and five launches.
    'tests/test_chaos.py::test_a_sweep_killed_ends_as_the_undisturbed_one[1]': 125,
    ('tests/test_faults.py::test_a_run_killed_and_stopped_ends_like_an_'
     'uninterrupted_one[mid_epoch'): 50,
}


def pytest_addoption(parser):
  """``--all``: the whole suite instead of the README tier."""
  parser.addoption('--all', action='store_true', dest='whole_suite',
                   help='the whole suite: also the tests marked full (what .ci/run '
                        'runs); without it, the README tier')


def pytest_report_header(config):
  """Which tier runs, on the session's first lines."""
  if config.getoption('whole_suite'):
    return ('tests: the whole suite (--all; the README tier\'s short forms, marked '
            'short, left out)')
  return 'tests: the README tier (tests marked full left out; --all runs them)'


def in_tier(values, *kept):
  """``values`` for ``pytest.mark.parametrize`` with all but ``kept`` marked full:
  the kept ones represent the behaviour in the README tier, the rest run in the whole
  suite only (a tuple value is one case of several arguments; no ``pytest.param``)."""
  missing = [k for k in kept if k not in values]
  assert not missing, f'in_tier: {missing} not among the values'
  out = []
  for value in values:
    args = value if isinstance(value, tuple) else (value,)
    out.append(value if value in kept else pytest.param(*args, marks=pytest.mark.full))
  return out


# What the collection held before the tier was applied: {test file: [node ids in the
# README tier]} (tests/test_tiers.py reads it).
TIER_BY_FILE = pytest.StashKey()


def _named(config):
  """The node ids the command line names (``file.py::test``): they run whatever their
  tier, as a marker expression would not let them."""
  out = []
  for arg in config.args:
    if '::' in arg:
      path, rest = arg.split('::', 1)
      out.append(os.path.relpath(os.path.abspath(path), str(config.rootpath))
                 .replace(os.sep, '/') + '::' + rest)
  return out


@pytest.hookimpl(tryfirst=True)  # before -m and -k deselect: TIER_BY_FILE sees all
def pytest_collection_modifyitems(config, items):
  """Without ``--all``, the tests marked full are deselected, with it those marked
  short (either unless named by id). Then the longest tests first (LONGEST), then the other end-to-end tests (marked
  slow, up to half a minute each) in their files' order, then the many short ones:
  with setup.cfg's ``--dist=worksteal`` the short tests fill in at the end instead of
  a long one starting last while the other worker idles."""
  tier = {}
  for item in items:
    kept = tier.setdefault(item.nodeid.split('::')[0], [])
    if not item.get_closest_marker('full'):
      kept.append(item.nodeid)
  config.stash[TIER_BY_FILE] = tier
  other = 'short' if config.getoption('whole_suite') else 'full'  # the tier leaves out
  named = _named(config)
  def runs(item):
    return not item.get_closest_marker(other) or any(
        item.nodeid == n or item.nodeid.startswith((n + '[', n + '::')) for n in named)
  left_out = [item for item in items if not runs(item)]
  if left_out:
    config.hook.pytest_deselected(items=left_out)
    items[:] = [item for item in items if runs(item)]
  def seconds(item):
    known = [s for name, s in LONGEST.items() if item.nodeid.startswith(name)]
    return known[0] if known else 1 if item.get_closest_marker('slow') else 0
  items.sort(key=lambda item: -seconds(item))


@pytest.fixture
def small_disk(tmp_path):
  """A tmpfs of its own (a real full disk: ENOSPC), or a skip where mounting is
  refused (not root, no CAP_SYS_ADMIN)."""
  mount = tmp_path / 'disk'
  mount.mkdir()
  def size(n_bytes):  # mounts, or remounts with another size (room freed)
    options = f'size={n_bytes}' + (',remount' if os.path.ismount(mount) else '')
    return subprocess.run(['mount', '-t', 'tmpfs', '-o', options, 'tmpfs', str(mount)],
                          capture_output=True, text=True, check=False)
  tried = size(1 << 20)
  if tried.returncode:
    pytest.skip(f'mounting a tmpfs is refused here: {tried.stderr.strip()[:200]}')
  try:
    yield mount, size
  finally:
    subprocess.run(['umount', '-l', str(mount)], check=False)

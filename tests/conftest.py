"""Shared fixtures: a small demo config and the JAX compilation cache."""
import os
import subprocess
import sys

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
# client, so that tests computing before they build an Experiment share its pool.
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
  tests/determinism_probe.py use it alike, so they share compiled programs
  (tests/test_cross_validation.py covers the folds)."""
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


def user_environment() -> dict:
  """This process's environment without the thread pool and the numerics it pinned
  for itself (``NPROC``, XLA_FLAGS' additions): what a user's shell gives a child."""
  env = {k: v for k, v in os.environ.items()
         if k not in (runtime.THREADS_VARIABLE, 'XLA_FLAGS', _SHELL, _PINNED)}
  if runtime.user_xla_flags():
    env['XLA_FLAGS'] = runtime.user_xla_flags()
  return env


def run_steps(config, n_steps):
  """``(experiment, state)`` after the first ``n_steps`` batches of epoch 1."""
  from seedsweep.run import experiment  # pylint: disable=g-import-not-at-top
  exp = experiment.build(config)
  state, _ = exp.train_epoch(exp.init_state(), 1, max_steps=n_steps)
  return exp, state


@pytest.fixture
def config():
  return small_config()


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


def pytest_collection_modifyitems(items):
  """The end-to-end tests (marked slow, up to a minute each) first, in their files'
  order: the workers start on them, and the many short tests fill in at the end,
  instead of a long one starting last while the other worker idles."""
  items.sort(key=lambda item: item.get_closest_marker('slow') is None)


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

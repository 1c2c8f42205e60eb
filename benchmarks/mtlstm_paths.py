r"""MT-LSTM's three implementations and the LSTM of equal total size, training steps per
second side by side in one run, at the paper's IMDB and SST settings.

  python benchmarks/mtlstm_paths.py [--seeds=10 --batch=32 --steps=10 --mode=map]

A step is one AdaGrad update of every seed (``--mode``: ``map`` is the CPU default of
the engine, ``vmap`` the accelerator one) on a batch of random words of one padded
length. Settings (docs/models.md §2.1; 100-d word vectors):

* ``imdb``: 100 hidden units in 5 groups (periods 1-16), length 300;
* ``sst``: 60 units in 3 groups (periods 1-4), length 32.

Rows: ``masked`` / ``unrolled`` / ``strided`` MT-LSTM (F2S and S2F), ``lstm-peep``
(the same code with one group: the paper's LSTM baseline, full peepholes) and
``lstm`` (the engine's plain LSTM layer, no peepholes, last state). Prints steps/s
and the speed-up over ``masked`` and over ``lstm``.
"""
import os
import sys
import time

from absl import app
from absl import flags
import jax
import jax.numpy as jnp
import numpy as np
import optax

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)  # run as a script from anywhere

from seedsweep.engine import objectives  # pylint: disable=g-import-not-at-top,wrong-import-position
from seedsweep.engine import steps as steps_lib  # pylint: disable=g-import-not-at-top,wrong-import-position
from seedsweep import models  # pylint: disable=g-import-not-at-top,wrong-import-position

_SEEDS = flags.DEFINE_integer('seeds', 10, 'Seeds advanced by each step.')
_BATCH = flags.DEFINE_integer('batch', 32, 'Sequences per batch (the paper: 32).')
_STEPS = flags.DEFINE_integer('steps', 10, 'Timed steps per row (after warm-up).')
_MODE = flags.DEFINE_enum('mode', 'map', ['map', 'vmap'], 'Seed-parallel form.')
_SETTINGS = flags.DEFINE_list('settings', ['imdb', 'sst'], 'Which settings to run.')
_UNROLL = flags.DEFINE_integer('unroll', 1, 'lax.scan unrolling of every row.')

SETTINGS = {'imdb': {'hidden': 100, 'groups': 5, 'length': 300},
            'sst': {'hidden': 60, 'groups': 3, 'length': 32}}
VOCAB = 5000


def rows(hidden: int, groups: int):
  """``(label, config.model fields)`` of every row of one setting."""
  out = []
  for strategy in ('f2s', 's2f'):
    for impl in ('masked', 'unrolled', 'strided'):
      out.append((f'{impl} {strategy}', {'name': 'mtlstm', 'hidden': hidden,
                                         'groups': groups, 'strategy': strategy,
                                         'implementation': impl}))
  out.append(('lstm-peep', {'name': 'mtlstm', 'hidden': hidden, 'groups': 1}))
  out.append(('lstm', {'name': 'lstm', 'hidden': hidden, 'pooling': 'last',
                       'dropout': 0.0}))
  return out


def steps_per_second(fields, length: int) -> float:
  model = models.build_model({'embed_dim': 100, 'unroll': _UNROLL.value, **fields},
                             vocab_size=VOCAB,
                             num_classes=2)
  rng = np.random.default_rng(0)
  batch = {'tokens': jnp.asarray(rng.integers(1, VOCAB, (_BATCH.value, length))),
           'lengths': jnp.full((_BATCH.value,), length, jnp.int32),
           'labels': jnp.asarray(rng.integers(0, 2, _BATCH.value)),
           'weights': jnp.ones((_BATCH.value,), jnp.float32)}
  keys = jax.random.split(jax.random.key(0), _SEEDS.value)
  params = jax.vmap(lambda k: model.init(k, batch, train=False)['params'])(keys)
  tx = optax.adagrad(0.1, initial_accumulator_value=0.0, eps=1e-8)
  opt_state = jax.vmap(tx.init)(params)

  def update(p, o, key):
    def loss(p):
      out = model.apply({'params': p}, batch, train=True, rngs={'dropout': key})
      return objectives.loss(out, batch)
    grads = jax.grad(loss)(p)
    updates, o = tx.update(grads, o, p)
    return optax.apply_updates(p, updates), o

  step = jax.jit(steps_lib.seed_parallel(update, _MODE.value), donate_argnums=(0, 1))
  params, opt_state = step(params, opt_state, keys)  # compile
  jax.block_until_ready(params)
  start = time.perf_counter()
  for _ in range(_STEPS.value):
    params, opt_state = step(params, opt_state, keys)
  jax.block_until_ready(params)
  return _STEPS.value / (time.perf_counter() - start)


def main(argv):
  del argv
  print(f'{_SEEDS.value} seeds ({_MODE.value}) x batch {_BATCH.value}, AdaGrad, '
        f'{jax.devices()[0].platform}; steps/s (each step advances every seed)')
  for setting in _SETTINGS.value:
    s = SETTINGS[setting]
    print(f'\n{setting}: hidden {s["hidden"]} in {s["groups"]} groups, length '
          f'{s["length"]}')
    measured = {label: steps_per_second(fields, s['length'])
                for label, fields in rows(s['hidden'], s['groups'])}
    for label, rate in measured.items():
      strategy = label.split()[-1]
      masked = measured.get(f'masked {strategy}')
      vs_masked = f'{rate / masked:5.2f}x masked' if masked else ' ' * 13
      print(f'  {label:<16} {rate:8.2f} steps/s   {vs_masked}   '
            f'{rate / measured["lstm"]:5.2f}x lstm')


if __name__ == '__main__':
  app.run(main)

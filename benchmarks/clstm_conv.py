r"""C-LSTM's window convolution under ``vmap`` over seeds: three formulations side by
side, forward and backward (a training step's work), in one run.

  python benchmarks/clstm_conv.py [--seeds=10 --batch=50 --length=48 --filters=150]

* ``lax_conv``: ``jax.lax.conv_general_dilated`` per seed; vmapped over seeds it
  becomes a grouped convolution (jax-ml/jax#26568 reports these slow);
* ``shifted_matmul``: ``sum_i x[:, i:i+L'] @ F_i`` (what models/clstm.py does);
* ``unfold_matmul``: windows unfolded to ``[B, L', k*m]``, one matmul.

All three give the same numbers (checked before timing). Prints milliseconds per call
and the ratio to ``lax_conv``.
"""
import time

from absl import app
from absl import flags
import jax
import jax.numpy as jnp
import numpy as np

_SEEDS = flags.DEFINE_integer('seeds', 10, 'Seeds (the vmapped axis).')
_BATCH = flags.DEFINE_integer('batch', 50, 'Sentences per batch.')
_LENGTH = flags.DEFINE_integer('length', 48, 'Padded length.')
_DIM = flags.DEFINE_integer('dim', 300, 'Word vector size.')
_FILTERS = flags.DEFINE_integer('filters', 150, 'Feature maps.')
_WIDTH = flags.DEFINE_integer('width', 3, 'Filter width.')
_REPEATS = flags.DEFINE_integer('repeats', 30, 'Timed calls per formulation.')


def lax_conv(x, kernel):
  """``x [B, L, m]``, ``kernel [k, m, n]`` -> ``[B, L-k+1, n]``."""
  return jax.lax.conv_general_dilated(x, kernel, (1,), 'VALID',
                                      dimension_numbers=('NWC', 'WIO', 'NWC'))


def shifted_matmul(x, kernel):
  k = kernel.shape[0]
  n = x.shape[1] - k + 1
  return sum(x[:, i:i + n] @ kernel[i] for i in range(k))


def unfold_matmul(x, kernel):
  k, m, f = kernel.shape
  n = x.shape[1] - k + 1
  windows = jnp.concatenate([x[:, i:i + n] for i in range(k)], axis=-1)
  return windows @ kernel.reshape(k * m, f)


FORMS = {'lax_conv': lax_conv, 'shifted_matmul': shifted_matmul,
         'unfold_matmul': unfold_matmul}


def main(argv):
  del argv
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.normal(size=(_SEEDS.value, _BATCH.value, _LENGTH.value,
                                   _DIM.value)), jnp.float32)
  kernel = jnp.asarray(rng.normal(size=(_SEEDS.value, _WIDTH.value, _DIM.value,
                                        _FILTERS.value)) * 0.05, jnp.float32)

  def step(form):
    def loss(kern, inputs):
      return jnp.sum(jax.nn.relu(FORMS[form](inputs, kern)) ** 2)
    return jax.jit(jax.vmap(jax.value_and_grad(loss)))

  steps = {form: step(form) for form in FORMS}
  reference = steps['lax_conv'](kernel, x)
  for form, fn in steps.items():
    out = fn(kernel, x)
    np.testing.assert_allclose(out[1], reference[1], rtol=2e-3, atol=1e-2)
  times = {}
  for form, fn in steps.items():
    jax.block_until_ready(fn(kernel, x))
    start = time.perf_counter()
    for _ in range(_REPEATS.value):
      jax.block_until_ready(fn(kernel, x))
    times[form] = (time.perf_counter() - start) / _REPEATS.value * 1e3
  print(f'{_SEEDS.value} seeds x batch {_BATCH.value} x length {_LENGTH.value}, '
        f'{_DIM.value} -> {_FILTERS.value} filters of width {_WIDTH.value} '
        f'({jax.devices()[0].platform}), forward + backward:')
  for form, ms in times.items():
    print(f'  {form:<16} {ms:8.2f} ms   {times["lax_conv"] / ms:5.2f}x')


if __name__ == '__main__':
  app.run(main)

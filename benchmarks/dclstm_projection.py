r"""DC-Bi-LSTM's layer-input projection: the model's two formulations side by side,
one seed's training gradient at the paper's sizes, in one run.

  python benchmarks/dclstm_projection.py [--batch=200 --lengths=24,56 --dl=15 --dh=13]

* ``concat``: each layer multiplies the growing concatenation ``[e; h^1; ..]`` by its
  kernel (one matmul per layer);
* ``blocks``: each source (the word vectors, each earlier layer's output) is multiplied
  by its block of every reader's kernel and the products summed (docs/models.md §3.6).

Both give the same gradients (checked before timing). Prints seconds per gradient and
the ratio to ``concat``. A third form, one matmul per source into all readers at once
then sliced per reader, measured 6.5x slower than ``concat`` on CPU (its backward pads
every slice to the full width) and was dropped; see docs/log.md, "Benchmark: DC-Bi-LSTM projection".
"""
import os
import sys
import time

from absl import app
from absl import flags
import jax
import jax.numpy as jnp
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)  # run as a script from anywhere

from seedsweep.models import dclstm  # pylint: disable=g-import-not-at-top,wrong-import-position

_BATCH = flags.DEFINE_integer('batch', 200, 'Sentences per batch (the paper: 200).')
_LENGTHS = flags.DEFINE_list('lengths', ['24', '56'], 'Padded lengths to time.')
_DL = flags.DEFINE_integer('dl', 15, 'Dense layers.')
_DH = flags.DEFINE_integer('dh', 13, 'Units per direction of a dense layer.')
_TH = flags.DEFINE_integer('th', 100, 'Units per direction of the top layer.')
_REPEATS = flags.DEFINE_integer('repeats', 3, 'Timed calls per formulation.')
FORMS = ('concat', 'blocks')


def main(argv):
  del argv
  rng = np.random.default_rng(0)
  print(f'DC-Bi-LSTM dl={_DL.value} dh={_DH.value} th={_TH.value}, batch '
        f'{_BATCH.value}, one seed, gradient of the loss ({jax.devices()[0].platform}):')
  for length in map(int, _LENGTHS.value):
    batch = {'tokens': jnp.asarray(rng.integers(1, 5000, (_BATCH.value, length))),
             'lengths': jnp.asarray(rng.integers(1, length + 1, _BATCH.value))}
    grads, times = {}, {}
    for form in FORMS:
      model = dclstm.DenseBiLSTM(vocab_size=5000, num_classes=2, dl=_DL.value,
                                 dh=_DH.value, th=_TH.value, projection=form)
      params = model.init(jax.random.key(0), batch, train=False)['params']
      fn = jax.jit(jax.grad(lambda p, b, m=model: m.apply({'params': p}, b,
                                                         train=False).logits.sum()))
      grads[form] = jax.block_until_ready(fn(params, batch))
      start = time.perf_counter()
      for _ in range(_REPEATS.value):
        jax.block_until_ready(fn(params, batch))
      times[form] = (time.perf_counter() - start) / _REPEATS.value
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5),
                 grads['concat'], grads['blocks'])
    for form in FORMS:
      print(f'  length {length:3d}  {form:<7} {times[form]:7.3f} s   '
            f'{times["concat"] / times[form]:5.2f}x')


if __name__ == '__main__':
  app.run(main)

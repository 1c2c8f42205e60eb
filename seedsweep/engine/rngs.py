"""Per-seed random streams, each a pure function of the seed (and epoch / step).

Nothing is split off a shared key: seed ``k`` draws the same numbers whatever other
seeds run beside it, and a resumed run draws what an uninterrupted one would.
"""
import jax

INIT, DATA, DROPOUT = 0, 1, 2


def init_key(seed):
  """Key for parameter initialisation of ``seed``."""
  return jax.random.fold_in(jax.random.key(seed), INIT)


def data_key(seed, epoch):
  """Key for ``seed``'s data order in ``epoch``."""
  return jax.random.fold_in(jax.random.fold_in(jax.random.key(seed), DATA), epoch)


def dropout_key(seed, epoch, step):
  """Key for ``seed``'s dropout masks at ``step`` of ``epoch``."""
  key = jax.random.fold_in(jax.random.key(seed), DROPOUT)
  return jax.random.fold_in(jax.random.fold_in(key, epoch), step)

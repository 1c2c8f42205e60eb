import jax.numpy as jnp
import numpy as np
import pytest

from seedsweep.models import pooling


def _batch():
  rng = np.random.default_rng(0)
  h = jnp.asarray(rng.normal(size=(3, 6, 4)), jnp.float32)
  lengths = jnp.array([6, 2, 4])
  return h, lengths, pooling.length_mask(lengths, 6)


def _garbage_in_padding(h, mask):
  return jnp.where(mask[..., None], h, 1e6)


@pytest.mark.parametrize('kind', ['mean', 'max', 'last'])
def test_pooling_ignores_padding(kind):
  h, _, mask = _batch()
  np.testing.assert_array_equal(pooling.pool(kind, h, mask),
                                pooling.pool(kind, _garbage_in_padding(h, mask), mask))


def test_pooling_values():
  h, lengths, mask = _batch()
  for b, n in enumerate(np.asarray(lengths)):
    real = np.asarray(h[b, :n])
    np.testing.assert_allclose(pooling.masked_mean(h, mask)[b], real.mean(0), rtol=1e-6)
    np.testing.assert_allclose(pooling.masked_max(h, mask)[b], real.max(0))
    np.testing.assert_array_equal(pooling.last_real(h, mask)[b], real[-1])


def test_unknown_pooling_names_the_config_key():
  h, _, mask = _batch()
  with pytest.raises(ValueError, match='config.model.pooling'):
    pooling.pool('median', h, mask)

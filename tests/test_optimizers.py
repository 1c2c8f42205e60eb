import jax.numpy as jnp
import numpy as np
import optax
import pytest

from seedsweep.config import base
from seedsweep.engine import optimizers
from seedsweep.errors import UserError


def _opt(**fields):
  config = base.get_base_config().optimizer
  config.unlock()
  for k, v in fields.items():
    config[k] = v
  return config


def test_adagrad_from_a_zero_accumulator_follows_the_papers_formula():
  tx = optimizers.make_optimizer(_opt(name='adagrad', learning_rate=0.1,
                                      initial_accumulator_value=0.0, eps=1e-5))
  params = {'w': jnp.array([1.0, -2.0])}
  state = tx.init(params)
  acc = np.zeros(2)
  p = np.array([1.0, -2.0])
  for g in ([0.5, -1.0], [0.1, 0.3]):
    g = np.array(g)
    acc += g ** 2
    p = p - 0.1 * g / np.sqrt(acc + 1e-5)
    updates, state = tx.update({'w': jnp.asarray(g, jnp.float32)}, state, params)
    params = optax.apply_updates(params, updates)
  np.testing.assert_allclose(params['w'], p, rtol=1e-5)


@pytest.mark.parametrize('name', sorted(optimizers.OPTIMIZERS))
def test_every_optimizer_builds_and_steps(name):
  tx = optimizers.make_optimizer(_opt(name=name, learning_rate=0.1,
                                      clip_global_norm=1.0))
  params = {'w': jnp.ones(3)}
  updates, _ = tx.update({'w': jnp.full(3, 10.0)}, tx.init(params), params)
  assert np.abs(np.asarray(updates['w'])).max() > 0


def test_clipping_bounds_the_update():
  tx = optimizers.make_optimizer(_opt(name='sgd', learning_rate=1.0,
                                      clip_global_norm=1.0))
  params = {'w': jnp.zeros(4)}
  updates, _ = tx.update({'w': jnp.full(4, 100.0)}, tx.init(params), params)
  np.testing.assert_allclose(np.linalg.norm(updates['w']), 1.0, rtol=1e-6)


def test_unknown_optimizer_is_a_clear_error():
  with pytest.raises(UserError, match=r"config.optimizer.name='lamb'"):
    optimizers.make_optimizer(_opt(name='lamb'))


def test_l2_applies_to_matching_parameters_only():
  params = {'dense': {'kernel': jnp.full((2, 2), 2.0), 'bias': jnp.ones(2)},
            'embedding': {'embedding': jnp.ones((3, 2))}}
  mask = optimizers.l2_mask(params, ('dense/kernel',))
  assert mask == {'dense': {'kernel': True, 'bias': False},
                  'embedding': {'embedding': False}}
  assert float(optimizers.l2_penalty(params, mask, 0.5)) == pytest.approx(0.5 * 16)
  assert float(optimizers.l2_penalty(params, mask, 0.0)) == 0.0
  with pytest.raises(UserError, match='config.l2.params'):
    optimizers.l2_mask(params, ('(',))

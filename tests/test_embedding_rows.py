"""Row-sparse embedding updates: the dense optimiser where it allows, lazy where asked."""
import signal

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from seedsweep.engine import embedding_rows
from seedsweep.errors import UserError
from tests.conftest import in_tier
from tests.conftest import run_steps
from tests.conftest import small_config


def _config(optimizer, update, seeds=(1, 2), mode='map', **fields):
  config = small_config(seeds=seeds, seed_parallel=mode)
  config.data.num_buckets = 1
  config.optimizer.name = optimizer
  config.optimizer.learning_rate = 0.1
  config.optimizer.embedding_update = update
  for k, v in fields.items():
    config.optimizer[k] = v
  return config


def _params(config, steps):
  _, state = run_steps(config, steps)
  return jax.tree.map(np.asarray, state.params), state


def _assert_close(expected, actual, **tolerance):
  for (path, e), a in zip(jax.tree_util.tree_flatten_with_path(expected)[0],
                          jax.tree.leaves(actual)):
    np.testing.assert_allclose(a, e, err_msg=jax.tree_util.keystr(path), **tolerance)


# RMSprop at C-LSTM's eps (optax's 1e-8 turns a rounding difference in a tiny
# gradient into a step of +-lr).
RMSPROP = dict(learning_rate=0.01, eps=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize('optimizer,mode,fields', in_tier([
    ('adagrad', 'map', {}), ('sgd', 'vmap', {}), ('adadelta', 'vmap', {})],
    ('adagrad', 'map', {})))
def test_rows_update_equals_the_dense_update(optimizer, mode, fields):
  # RMSprop's: the next test.
  dense, _ = _params(_config(optimizer, 'dense', mode=mode, **fields), 6)
  rows, _ = _params(_config(optimizer, 'rows', mode=mode, **fields), 6)
  _assert_close(dense, rows, rtol=1e-5, atol=1e-7)


@pytest.mark.slow
def test_rows_that_sat_out_catch_up_on_the_decay_they_missed():
  """RMSprop's moments of the rows a batch does not use decay under the dense
  update; without catching up ('lazy') the table ends elsewhere, with it
  ('rows') where the dense update puts it."""
  table = lambda update: _params(_config('rmsprop', update, **RMSPROP),
                                 6)[0]['embedding']['embedding']
  dense, rows, lazy = table('dense'), table('rows'), table('lazy')
  assert np.abs(lazy - dense).max() > 1e-4
  np.testing.assert_allclose(rows, dense, rtol=1e-5, atol=1e-7)


def test_the_clocked_optimiser_is_the_optimiser_and_counts_its_updates():
  params = {'embedding': {'embedding': jnp.linspace(-1, 1, 12).reshape(4, 3)},
            'dense': {'kernel': jnp.ones((3, 2))}}
  tx = optax.rmsprop(0.01, decay=0.9)
  clocked = embedding_rows.clocked(tx)
  plain_state, state = tx.init(params), clocked.init(params)
  for step in range(3):
    grads = jax.tree.map(lambda p: jnp.sin(p * (step + 1)), params)
    expected, plain_state = tx.update(grads, plain_state, params)
    got, state = clocked.update(grads, state, params)
    assert all((np.asarray(a) == np.asarray(b)).all()
               for a, b in zip(jax.tree.leaves(expected), jax.tree.leaves(got)))
  assert int(state.applied) == 3
  np.testing.assert_array_equal(state.current['embedding']['embedding'], [3] * 4)


def test_catch_up_scales_each_row_by_the_decays_it_sat_out():
  """Seed-stacked rows last current after 5, 3 and 0 of 5 updates: scaled by
  0.9 ** (0, 2, 5), and current from then on; other leaves untouched."""
  nu = {'embedding': {'embedding': jnp.full((1, 3, 2), 2.0)},
        'dense': {'kernel': jnp.full((1, 3, 2), 2.0)}}
  state = embedding_rows.ClockState(
      optax.ScaleByRmsState(nu=nu), jnp.array([5], jnp.int32),
      {'embedding': {'embedding': jnp.array([[5, 3, 0]], jnp.int32)}})
  caught = embedding_rows.catch_up(state, 0.9)
  rows = np.asarray(caught.inner.nu['embedding']['embedding'][0])
  np.testing.assert_allclose(rows[:, 0], 2.0 * 0.9 ** np.array([0, 2, 5]), rtol=1e-6)
  assert rows[0, 0] == 2.0  # a factor of exactly 1 for a current row
  np.testing.assert_array_equal(caught.inner.nu['dense']['kernel'], nu['dense']['kernel'])
  np.testing.assert_array_equal(caught.current['embedding']['embedding'], [[5, 5, 5]])
  np.testing.assert_array_equal(embedding_rows.integer_power(0.5, jnp.arange(4)),
                                [1.0, 0.5, 0.25, 0.125])


@pytest.mark.slow
@pytest.mark.full  # alone vs in a group: test_train.py
def test_a_seed_steps_on_its_rows_the_same_alone_and_in_a_group():
  # The group's program is the one test_rows_that_sat_out_catch_up... compiles.
  alone, _ = _params(_config('rmsprop', 'rows', seeds=(2,), **RMSPROP), 4)
  group, _ = _params(_config('rmsprop', 'rows', seeds=(1, 2), **RMSPROP), 4)
  for a, g in zip(jax.tree.leaves(alone), jax.tree.leaves(group)):
    np.testing.assert_array_equal(a[0], g[1])


@pytest.mark.slow
def test_lazy_adam_moves_only_the_rows_a_batch_uses():
  config = _config('adam', 'lazy', seeds=(1,))
  exp, start = run_steps(config, 0)
  after, state = _params(config, 1)
  table0 = np.asarray(start.params['embedding']['embedding'][0])
  table1 = after['embedding']['embedding'][0]
  orders = exp.steps.epoch_orders(exp.device, 1)
  slot, length = exp.schedule.train_plan.schedule(1)[0]
  used = set()
  for row in np.asarray(orders[0, slot]):
    if row >= 0:
      start_, n = exp.data.views[0].starts[row], exp.data.views[0].lengths[row]
      used |= set(exp.data.views[0].tokens[start_:start_ + min(n, length)].tolist())
  moved = set(np.flatnonzero(np.any(table1 != table0, axis=1)).tolist())
  assert moved and moved <= used
  mu = jax.tree_util.tree_leaves(state.opt_state)  # moments of unused rows stay 0
  tables = [np.asarray(m[0]) for m in mu if getattr(m, 'shape', ())[1:] == table0.shape]
  assert tables and all(not t[sorted(set(range(len(t))) - used)].any() for t in tables)
  # Dense Adam moves rows the second batch does not use, lazy Adam does not.
  dense2, _ = _params(_config('adam', 'dense', seeds=(1,)), 2)
  lazy2, _ = _params(config, 2)
  assert not np.array_equal(dense2['embedding']['embedding'],
                            lazy2['embedding']['embedding'])


def test_rows_update_is_refused_where_it_would_not_be_exact():
  with pytest.raises(UserError, match="exact only for .*not 'adam'"):
    run_steps(_config('adam', 'rows'), 0)
  with pytest.raises(UserError, match='with momentum 0.9'):
    run_steps(_config('sgd', 'rows', momentum=0.9), 0)
  with pytest.raises(UserError, match="not 'rmsprop' with momentum 0.5"):
    run_steps(_config('rmsprop', 'rows', momentum=0.5), 0)
  config = _config('adagrad', 'rows')
  config.l2.coef, config.l2.params = 1e-4, ('embedding',)
  with pytest.raises(UserError, match='L2 gradient touches every row'):
    run_steps(config, 0)
  with pytest.raises(UserError, match=r"embedding_update='sparse'; expected one of"):
    run_steps(_config('adagrad', 'sparse'), 0)


def test_batch_rows_lists_each_id_once_and_maps_every_token_to_its_row():
  tokens = np.array([[5, 3, 5, 0], [3, 9, 0, 0]])
  rows, inverse = embedding_rows.batch_rows(tokens, vocab=10)
  rows, inverse = np.asarray(rows), np.asarray(inverse)
  assert sorted(rows[rows < 10].tolist()) == [0, 3, 5, 9]
  assert (rows[rows < 10].size + (rows == 10).sum()) == tokens.size
  np.testing.assert_array_equal(rows[inverse], tokens.reshape(-1))


@pytest.mark.slow
@pytest.mark.full  # a stop and resume: test_faults.py; rows = dense: above
def test_a_run_on_rows_stopped_mid_epoch_resumes_to_the_same_numbers(tmp_path):
  """The rows' update clock is part of the checkpoint: stopped (SIGTERM) in epoch 2
  and rerun, a run ends with an uninterrupted run's numbers."""
  from tests import test_faults  # pylint: disable=g-import-not-at-top
  flags = ['--config.train.num_epochs=2', '--config.optimizer.name=rmsprop',
           '--config.optimizer.eps=1e-6', '--config.optimizer.embedding_update=rows']
  straight, stopped = str(tmp_path / 'straight'), str(tmp_path / 'stopped')
  # The uninterrupted run in this process, with the flags above.
  test_faults.train_here(straight, train__num_epochs=2, optimizer__name='rmsprop',
                         optimizer__eps=1e-6, optimizer__embedding_update='rows')
  proc = test_faults.launch(stopped, *flags, fault=f'step:{test_faults.STEPS + 7}@TERM')
  assert proc.returncode == 128 + signal.SIGTERM, proc.stderr[-2000:]
  assert test_faults.launch(stopped, *flags).returncode == 0
  assert test_faults.final(stopped) == test_faults.final(straight)

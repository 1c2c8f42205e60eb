"""Row-sparse embedding updates: exact where the optimiser allows, lazy where asked."""
import jax
import numpy as np
import pytest

from seedsweep.engine import embedding_rows
from seedsweep.errors import UserError
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


@pytest.mark.parametrize('optimizer,mode', [('adagrad', 'map'), ('sgd', 'vmap')])
def test_rows_update_equals_the_dense_update(optimizer, mode):
  dense, _ = _params(_config(optimizer, 'dense', mode=mode), 4)
  rows, _ = _params(_config(optimizer, 'rows', mode=mode), 4)
  for (path, d), r in zip(jax.tree_util.tree_flatten_with_path(dense)[0],
                          jax.tree.leaves(rows)):
    np.testing.assert_allclose(r, d, rtol=1e-6, atol=1e-7,
                               err_msg=jax.tree_util.keystr(path))


def test_lazy_adam_moves_only_the_rows_a_batch_uses():
  config = _config('adam', 'lazy', seeds=(1,))
  exp, start = run_steps(config, 0)
  after, state = _params(config, 1)
  table0 = np.asarray(start.params['embedding']['embedding'][0])
  table1 = after['embedding']['embedding'][0]
  orders = exp.steps.epoch_orders(exp.device, 1)
  slot, length = exp.schedule.plan.schedule(1)[0]
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

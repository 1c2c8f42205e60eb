"""Cross-validation as a stacked axis: folds x seeds in one program, each (fold, seed)
member independent of the others, results reporting the CV mean per seed."""
import json

import jax
import numpy as np
import pytest

from tests.conftest import evaluate_split
from tests.conftest import run_steps
from tests.conftest import small_config


def mr_config(folds, seeds):
  config = small_config(seeds=seeds, seed_parallel='map')
  config.data.name = 'mr'
  config.data.folds = tuple(folds)
  config.data.dev_holdout = 0.1
  config.data.num_buckets = 1
  return config


@pytest.mark.slow
@pytest.mark.full  # alone vs in a group: test_train.py; the folds: the test below
def test_a_fold_seed_member_alone_equals_the_same_member_among_others():
  group, g_state = run_steps(mr_config((0, 3), (1, 2)), 4)
  np.testing.assert_array_equal(group.members.view_ids, [0, 0, 3, 3])
  np.testing.assert_array_equal(group.members.seeds, [1, 2, 1, 2])
  alone, a_state = run_steps(mr_config((3,), (2,)), 4)
  for a, b in zip(jax.tree.leaves(a_state.params), jax.tree.leaves(g_state.params)):
    np.testing.assert_array_equal(np.asarray(a)[0], np.asarray(b)[3])
  # Members of different folds saw different data: same seed, different parameters.
  emb = np.asarray(g_state.params['embedding']['embedding'])
  assert not np.array_equal(emb[0], emb[2])
  # Dev/test of each member are its own fold's rows.
  dev = evaluate_split(group, g_state.params, 'dev')['accuracy']
  assert dev.shape == (4,)


@pytest.mark.slow
def test_a_cross_validated_run_reports_the_cv_mean_per_seed(tmp_path):
  import seedsweep  # pylint: disable=g-import-not-at-top
  config = seedsweep.load_config(
      'experiments/demo.py:quick', data__name='mr', data__folds=(0, 1),
      data__dev_holdout=0.1, seeds=(1, 2), train__num_epochs=1, train__progress=False,
      data__num_buckets=1, data__max_length=32)  # a fold's numbers, not their size
  said = []  # what the command prints (launch.py: the same call, in this process)
  seedsweep.train(config, str(tmp_path), print_fn=said.append)
  results = json.loads((tmp_path / 'results.json').read_text())
  assert results['folds'] == [0, 0, 1, 1] and results['seeds'] == [1, 2, 1, 2]
  acc = results['metrics']['test_accuracy']
  np.testing.assert_allclose(results['cv_metrics']['test_accuracy'],
                             [(acc[0] + acc[2]) / 2, (acc[1] + acc[3]) / 2])
  assert results['summary']['test_accuracy']['mean'] == np.mean(acc)
  assert any('cross-validation folds' in str(line) for line in said)
  rows = [json.loads(l) for l in (tmp_path / 'metrics.jsonl').read_text().splitlines()]
  assert {(r['fold'], r['seed']) for r in rows} == {(0, 1), (0, 2), (1, 1), (1, 2)}

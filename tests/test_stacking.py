"""config.stack and config.seed_design: what the stacked member axis holds besides
seeds, checked before anything trains."""
import json
import os

import numpy as np
import pytest

import seedsweep
from seedsweep.config import base
from seedsweep.config import checks
from seedsweep.config import stacking
from seedsweep.errors import UserError
from tests.conftest import REPO
from tests.conftest import small_config


def _config(fields=(), points=()):
  config = base.get_base_config()
  config.model.dropout = 0.5
  config.stack.fields = tuple(fields)
  config.stack.points = tuple(points)
  return config


def test_points_pair_each_field_with_its_value():
  config = _config(('optimizer.learning_rate', 'model.dropout'),
                   ((1e-3, 0.2), (5e-3, 0.5)))
  checks.validate(config)
  assert stacking.points(config) == [
      {'optimizer.learning_rate': 1e-3, 'model.dropout': 0.2},
      {'optimizer.learning_rate': 5e-3, 'model.dropout': 0.5}]
  assert stacking.point_label(stacking.points(config)[0]) == (
      'learning_rate=0.001,dropout=0.2')
  assert stacking.points(base.get_base_config()) == [{}]


@pytest.mark.parametrize('fields, points, message', [
    (('model.hidden',), ((32,), (64,)), 'cannot share one program'),
    (('optimizer.learning_rate',), (), 'set both'),
    (('optimizer.learning_rate',), ((1e-3, 2e-3),), r'stack.points\[0\]'),
    (('optimizer.learning_rate',), ((1e-3,), (1e-3,)), 'repeats a point'),
    (('optimizer.learning_rate',), (('fast',),), 'expected a tuple of 1 numbers'),
    (('model.rho',), ((0.1,),), 'does not have'),
])
def test_a_bad_stack_is_named_before_anything_runs(fields, points, message):
  with pytest.raises(UserError, match=message):
    checks.validate(_config(fields, points))


def test_plain_seeds_use_one_seed_for_every_stream():
  config = base.get_base_config()
  config.seeds = (4, 7)
  assert stacking.seed_triples(config).tolist() == [[4, 4, 4], [7, 7, 7]]
  assert not stacking.factorial(config)


def test_a_factorial_design_crosses_the_three_streams():
  config = base.get_base_config()
  config.seed_design.init, config.seed_design.data = (1, 2), (1, 2, 3)
  config.seed_design.dropout = (5,)
  checks.validate(config)
  seed_triples = stacking.seed_triples(config)
  assert seed_triples.shape == (6, 3) and stacking.factorial(config)
  assert ({tuple(s) for s in seed_triples}
          == {(i, d, 5) for i in (1, 2) for d in (1, 2, 3)})
  assert seed_triples[1].tolist() == [1, 2, 5]  # dropout fastest, then data, then init
  assert stacking.stream_label(seed_triples[1]) == 'init1_data2_dropout5'
  config.seed_design.dropout = ()
  with pytest.raises(UserError, match='needs all of'):
    checks.validate(config)
  config.seed_design.dropout = (1, 1)
  with pytest.raises(UserError, match='seed_design.dropout'):
    checks.validate(config)


def test_a_workdir_made_before_stacking_still_matches_its_config():
  stored = checks.to_dict(base.get_base_config())
  del stored['stack'], stored['seed_design']
  assert checks.differences(stored, checks.to_dict(base.get_base_config())) == []
  assert np.array_equal(stacking.seed_triples(checks.from_dict(stored)),
                        stacking.seed_triples(base.get_base_config()))


def _rows(path):
  with open(path) as f:
    return [json.loads(line) for line in f]


@pytest.mark.slow
def test_a_factorial_member_with_one_seed_in_every_stream_is_that_seeds_run(tmp_path):
  """Each stream follows its own seed: the member (1, 1, 1) of a factorial design is
  seed 1's plain run bit for bit, and changing one stream's seed changes it."""
  config = small_config(seeds=(1,), epochs=1)
  config.data.num_buckets = 1
  seedsweep.train(config, str(tmp_path / 'plain'), print_fn=lambda *a: None)
  config.seed_design.init, config.seed_design.data = (1, 2), (1,)
  config.seed_design.dropout = (1, 3)
  results = seedsweep.train(config, str(tmp_path / 'design'), print_fn=lambda *a: None)
  assert results['streams'] == [[1, 1, 1], [1, 1, 3], [2, 1, 1], [2, 1, 3]]
  assert results['members'][1] == 'init1_data1_dropout3'
  (plain,) = _rows(tmp_path / 'plain' / 'metrics.jsonl')
  design = {tuple(r['streams']): r for r in _rows(tmp_path / 'design' / 'metrics.jsonl')}
  assert design[(1, 1, 1)]['params_sha256'] == plain['params_sha256']
  assert design[(1, 1, 1)]['test_accuracy'] == plain['test_accuracy']
  shas = {r['params_sha256'] for r in design.values()}
  assert len(shas) == 4


def test_describe_counts_the_members_and_checks_every_points_values():
  from seedsweep.run import describe  # pylint: disable=g-import-not-at-top
  config = small_config(seeds=(1, 2, 3))
  config.stack.fields, config.stack.points = ('model.dropout',), ((0.1,), (0.3,))
  info = describe.describe(config)
  assert (info['members'], info['member_axis']) == (6, '2 points x 3 seeds')
  config.seed_design.init = config.seed_design.data = (1, 2)
  config.seed_design.dropout = (1, 2, 3)
  assert describe.describe(config)['member_axis'] == (
      '2 points x 12 seed combinations (2 init x 2 data x 3 dropout; config.seeds '
      'not used)')
  config.stack.points = ((0.1,), (1.5,))
  with pytest.raises(UserError, match=r'stack.points\[1\].*dropout=1.5.*\[0, 1\)'):
    describe.describe(config)


@pytest.mark.slow
def test_a_stacked_rate_an_own_model_tests_in_python_is_refused_naming_the_way_apart():
  """flax's nn.Dropout (examples/linen_cnn.py) tests its rate in Python: stacked by
  hand, the one line names the traced dropouts (linen's and NNX's) and the sweep,
  which runs each rate as a program of its own."""
  from seedsweep.run import describe  # pylint: disable=g-import-not-at-top
  config = seedsweep.load_config(
      'demo:quick', model__name=os.path.join(REPO, 'examples', 'linen_cnn.py')
      + ':CNNClassifier', stack__fields=('model.dropout',),
      stack__points=((0.1,), (0.3,)))
  with pytest.raises(UserError, match=r'tests config.model.dropout in Python .*'
                     r'seedsweep.models.dropout.Dropout.*seedsweep.models.nnx_dropout.'
                     r'Dropout.*--sweep=FILE'):
    describe.describe(config)

"""Sweep definitions: helpers, and the DC-Bi-LSTM tables' points building models with
the paper's parameter counts."""
import importlib

import pytest

from seedsweep.config import keys
from seedsweep.experiments import dclstm_sst
from seedsweep import models
from seedsweep.sweep import grid
from tests.test_dclstm import count_without_embeddings
from tests.conftest import in_tier


def test_product_and_zip():
  assert grid.product(model__hidden=(1, 2), **{'model.dropout': (0.1,)}) == [
      {'model.hidden': 1, 'model.dropout': 0.1},
      {'model.hidden': 2, 'model.dropout': 0.1}]
  assert grid.zipped(a=(1, 2), b=(3, 4)) == [{'a': 1, 'b': 3}, {'a': 2, 'b': 4}]
  with pytest.raises(ValueError, match='different lengths'):
    grid.zipped(a=(1, 2), b=(3,))


def apply(config, point):
  return keys.with_values(config, point, 'test')


@pytest.mark.slow
@pytest.mark.parametrize('name', in_tier(
    ['dclstm_budget', 'dclstm_depth', 'dclstm_width'], 'dclstm_depth'))
@pytest.mark.parametrize('dataset', in_tier(['fine', 'binary'], 'binary'))
def test_every_point_of_the_dclstm_tables_has_the_papers_parameter_count(name, dataset):
  module = importlib.import_module(f'seedsweep.sweeps.{name}')
  points = module.sweep(dataset)
  assert len(points) == len(module.PARAMS)
  for point, expected in zip(points, module.PARAMS):
    config = apply(dclstm_sst.get_config(dataset), point)
    assert config.paper.value == point['paper.value']
    model = models.build_model(config.model, vocab_size=100, num_classes=5)
    assert count_without_embeddings(model) == expected, point


@pytest.mark.parametrize('arg, base', [('sst2', ('mtlstm_sst', 'binary')),
                                       ('qc', ('mtlstm_trec', '')),
                                       ('imdb', ('mtlstm_imdb', ''))])
def test_mtlstm_groups_points_build_models_sharing_120_units(arg, base):
  from seedsweep.models import mtlstm  # pylint: disable=g-import-not-at-top
  points = importlib.import_module('seedsweep.sweeps.mtlstm_groups').sweep(arg)
  assert [p['model.groups'] for p in points] == [1, 2, 3, 4, 5, 6]
  for point in points:
    experiment = importlib.import_module(f'seedsweep.experiments.{base[0]}')
    config = apply(experiment.get_config(base[1]), point)
    model = models.build_model(config.model, vocab_size=100, num_classes=2)
    assert sum(model.group_sizes()) == 120
    assert count_without_embeddings(model) == mtlstm.parameter_count(
        100, 120, point['model.groups'], 'f2s', 2)
  with pytest.raises(ValueError, match='mtlstm_groups.py'):
    importlib.import_module('seedsweep.sweeps.mtlstm_groups').sweep('sst3')


def test_dlstm_depth_points_build_one_to_three_layers():
  from seedsweep.experiments import dlstm_sst  # pylint: disable=g-import-not-at-top
  from seedsweep.models import dlstm  # pylint: disable=g-import-not-at-top
  points = importlib.import_module('seedsweep.sweeps.dlstm_depth').sweep()
  for layers, point in zip((1, 2, 3), points):
    config = apply(dlstm_sst.get_config('binary'), point)
    model = models.build_model(config.model, vocab_size=100, num_classes=2)
    assert count_without_embeddings(model) == dlstm.parameter_count(300, 256, layers, 2)


def test_joint_sparsity_grid_builds_the_sparse_head_with_each_pair():
  from seedsweep.experiments import joint_atis  # pylint: disable=g-import-not-at-top
  points = importlib.import_module('seedsweep.sweeps.joint_sparsity').sweep()
  assert len(points) == 12
  pairs = set()
  for point in points:
    config = apply(joint_atis.get_config(''), point)
    model = models.build_model(config.model, vocab_size=100, num_classes=5, num_tags=9)
    assert model.head == 'sparse' and config.paper.metric == 'dev_accuracy'
    pairs.add((model.rho, model.beta))
  assert len(pairs) == 12

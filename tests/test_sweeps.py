"""Sweep definitions: helpers, and the DC-Bi-LSTM tables' points building models with
the paper's parameter counts."""
import importlib

import pytest

import models
import sweeps
from experiments import dclstm_sst
from tests.test_dclstm import count_without_embeddings


def test_product_and_zip():
  assert sweeps.product(model__hidden=(1, 2), **{'model.dropout': (0.1,)}) == [
      {'model.hidden': 1, 'model.dropout': 0.1},
      {'model.hidden': 2, 'model.dropout': 0.1}]
  assert sweeps.zipped(a=(1, 2), b=(3, 4)) == [{'a': 1, 'b': 3}, {'a': 2, 'b': 4}]
  with pytest.raises(ValueError, match='different lengths'):
    sweeps.zipped(a=(1, 2), b=(3,))


def apply(config, point):
  for key, value in point.items():
    *parents, leaf = key.split('.')
    node = config
    for p in parents:
      node = node[p]
    node[leaf] = value
  return config


@pytest.mark.parametrize('name', ['dclstm_budget', 'dclstm_depth', 'dclstm_width'])
@pytest.mark.parametrize('dataset', ['fine', 'binary'])
def test_every_point_of_the_dclstm_tables_has_the_papers_parameter_count(name, dataset):
  module = importlib.import_module(f'sweeps.{name}')
  points = module.sweep(dataset)
  assert len(points) == len(module.PARAMS)
  for point, expected in zip(points, module.PARAMS):
    config = apply(dclstm_sst.get_config(dataset), point)
    assert config.paper.value == point['paper.value']
    model = models.build_model(config.model, vocab_size=100, num_classes=5)
    assert count_without_embeddings(model) == expected, point

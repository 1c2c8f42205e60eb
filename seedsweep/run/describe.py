"""``--mode=describe``: the resolved config and the model's parameters per module.

Parameters under a module named ``embedding`` are counted apart (the papers quote
sizes without embeddings).
"""
import json
from typing import Dict, List

import jax
import numpy as np
from flax import traverse_util

from seedsweep import data as data_lib
from seedsweep.config import checks as config_checks
from seedsweep.engine import optimizers
from seedsweep.engine import state as state_lib
from seedsweep.run import experiment


def parameter_rows(params) -> List[Dict[str, object]]:
  """One row per module path (the param path minus the leaf name)."""
  rows: Dict[str, Dict[str, object]] = {}
  for path, leaf in traverse_util.flatten_dict(params).items():
    module = '/'.join(path[:-1]) or '(root)'
    row = rows.setdefault(module, {'module': module, 'params': 0, 'shapes': {},
                                   'embedding': 'embedding' in path[:-1]})
    row['params'] += int(np.prod(leaf.shape))
    row['shapes'][path[-1]] = list(leaf.shape)
  return list(rows.values())


def describe(config) -> dict:
  config_checks.validate(config)
  dataset = data_lib.load_dataset(config.data)
  model = experiment.make_model(config, dataset)
  optimizers.make_optimizer(config.optimizer)  # a bad optimiser is refused here too
  params = jax.eval_shape(lambda: state_lib.init_params(model, 0))
  rows = parameter_rows(params)
  total = sum(r['params'] for r in rows)
  embeddings = sum(r['params'] for r in rows if r['embedding'])
  return {'config': config_checks.to_dict(config), 'model': type(model).__name__,
          'vocab_size': dataset.vocab_size, 'num_classes': dataset.num_classes,
          'modules': rows, 'params_total': total, 'params_embeddings': embeddings,
          'params_without_embeddings': total - embeddings}


def config_lines(config, prefix: str = '') -> List[str]:
  """``key = value`` per leaf, in the spelling of ``--config.key=value`` overrides."""
  lines = []
  for key, value in sorted(config.items()):
    if hasattr(value, 'items'):
      lines += config_lines(value, f'{prefix}{key}.')
    else:
      lines.append(f'{prefix}{key} = {value!r}')
  return lines


def format_description(info: dict, config) -> str:
  lines = ['# config (override any line with --config.KEY=VALUE)', *config_lines(config),
           f'# model {info["model"]} (vocab {info["vocab_size"]}, '
           f'{info["num_classes"]} classes)']
  width = max(len(r['module']) for r in info['modules']) + 2
  lines.append(f'{"module":<{width}}{"params":>12}  shapes')
  for r in info['modules']:
    shapes = ', '.join(f'{k} {tuple(v)}' for k, v in r['shapes'].items())
    lines.append(f'{r["module"]:<{width}}{r["params"]:>12,}  {shapes}')
  lines.append(f'{"total":<{width}}{info["params_total"]:>12,}')
  lines.append(f'{"embeddings":<{width}}{info["params_embeddings"]:>12,}')
  lines.append(f'{"without embeddings":<{width}}'
               f'{info["params_without_embeddings"]:>12,}')
  return '\n'.join(lines)


def to_json(info: dict) -> str:
  return json.dumps(info, indent=1)

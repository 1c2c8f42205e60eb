"""Models, found by name: ``build_model(config.model, vocab_size=..., num_classes=...)``.

To add a model: write a Flax module that maps a batch dict to a
:class:`~seedsweep.models.output.ModelOutput` and names its word embedding
``embedding``, then add one line to ``REGISTRY`` (name -> (class, fixed fields)).
Config fields under ``config.model`` other than ``name`` become the module's
dataclass fields.
"""
import dataclasses
from typing import Any, Dict, Tuple, Type

import flax.linen as nn

from seedsweep.errors import UserError
from seedsweep.models import baselines
from seedsweep.models import clstm
from seedsweep.models import dclstm
from seedsweep.models import dlstm
from seedsweep.models import joint_slu
from seedsweep.models import mtlstm
from seedsweep.models import pooling

REGISTRY: Dict[str, Tuple[Type[nn.Module], Dict[str, Any]]] = {
    'lstm': (baselines.RecurrentClassifier, {'bidirectional': False}),
    'bilstm': (baselines.RecurrentClassifier, {'bidirectional': True}),
    'bow': (baselines.BagOfWords, {}),
    'dclstm': (dclstm.DenseBiLSTM, {}),
    'stacked_bilstm': (dclstm.DenseBiLSTM, {'dense': False}),
    'clstm': (clstm.CLSTM, {}),
    'mtlstm': (mtlstm.MTLSTM, {}),
    'dlstm': (dlstm.DLSTM, {}),
    'joint_slu': (joint_slu.JointSLU, {}),
}


def build_model(model_config, *, vocab_size: int, num_classes: int,
                num_tags: int = 0) -> nn.Module:
  """Instantiates ``config.model`` (a ConfigDict or dict with a ``name`` key).

  ``num_tags`` (the dataset's slot tags) reaches models that have such a field.
  """
  fields = dict(model_config)
  name = fields.pop('name', None)
  if name not in REGISTRY:
    raise UserError(f'config.model.name={name!r} is not a registered model; '
                    f'expected one of {sorted(REGISTRY)} (models/__init__.py)')
  cls, fixed = REGISTRY[name]
  field_names = {f.name for f in dataclasses.fields(cls)}
  allowed = field_names - {'vocab_size', 'num_classes', 'num_tags', 'parent',
                           'name'} - set(fixed)
  unknown = sorted(set(fields) - allowed)
  if unknown:
    raise UserError(f'config.model has field(s) {unknown} that model {name!r} '
                    f'({cls.__name__}) does not take; it takes {sorted(allowed)}')
  if 'pooling' in fields and fields['pooling'] not in pooling.POOLINGS:
    raise UserError(f'config.model.pooling={fields["pooling"]!r}; expected one of '
                    f'{sorted(pooling.POOLINGS)}')
  if 'num_tags' in field_names:
    fields['num_tags'] = num_tags
  return cls(vocab_size=vocab_size, num_classes=num_classes, **fixed, **fields)

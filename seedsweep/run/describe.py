"""``--mode=describe``: the resolved config and the model's parameters per module.

Parameters under a module named ``embedding`` are counted apart (the papers quote
sizes without embeddings).
"""
import inspect
import json
import keyword
import re
from typing import Dict, List, Optional

import jax
import numpy as np
from flax import traverse_util

from seedsweep import data as data_lib
from seedsweep import models
from seedsweep.config import base
from seedsweep.config import stacking
from seedsweep.engine import optimizers
from seedsweep.engine import state as state_lib
from seedsweep.inputs import pipeline
from seedsweep.run import groups as groups_lib
from seedsweep.run import memory
from seedsweep.run import own_model
from seedsweep.run import pieces as pieces_lib
from seedsweep.run import prepare


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
  """``--mode=describe``'s numbers, without training: the config, the model's parameters
  per module, the members and the memory estimate against the budget. UserError for a bad
  config.

  Returns:
    A JSON-ready dict: ``config``, ``model``, ``model_fields`` (the model class's
    field docs, :func:`attribute_docs`), ``model_defaults`` (its fields the config
    does not set, with their defaults: each can be set), ``members``, ``member_axis``,
    ``vocab_size``, ``num_classes``, ``vectors``, ``modules`` (one row per module, see
    :func:`parameter_rows`), ``params_total``, ``params_embeddings``,
    ``params_without_embeddings`` and ``memory_mib``."""
  checked = prepare.check_config(config)  # validated, each point too; runtime pinned
  dataset = data_lib.load_dataset(config.data)
  model = pieces_lib.make_model(config, dataset)
  optimizers.make_optimizer(config.optimizer)  # a bad optimiser is refused here too
  params = jax.eval_shape(lambda: state_lib.init_params(model, 0))
  rows = parameter_rows(params)
  total = sum(r['params'] for r in rows)
  embeddings = sum(r['params'] for r in rows if r['embedding'])
  members = pieces_lib.select_members(config, dataset, checked.points)
  in_python = own_model.check(checked, dataset, model)  # a user's: the model contract
  hparams = pieces_lib.member_hparams(checked, model, members, in_python)
  placement = pieces_lib.place(config, len(members))
  schedule = pieces_lib.make_schedule(config, dataset)
  estimate = memory.estimate(
      pieces_lib.make_learner(config, dataset, hparams, model), schedule.train_plan,
      schedule.eval_plan,
      pipeline.device_arrays(dataset.views, dataset.labels, dataset.tags),
      placement.mode)
  budget = memory.budget_mib(config)
  fits = estimate.members_within(budget)
  bounds = groups_lib.for_placement(len(members), fits, placement.group,
                                   placement.lanes, placement.devices)
  groups = len(bounds) if bounds else 1
  on_device = placement.group if placement.lanes else len(members)
  return {'memory_mib': {**estimate.as_dict(on_device), 'budget_mib': round(budget),
                         'members_within_budget': fits, 'groups': groups,
                         'seed_parallel': placement.form, 'lanes': placement.lanes},
          'config': checked.as_dict, 'model': type(model).__name__,
          'model_fields': attribute_docs(type(model)),
          'model_defaults': models.class_defaults(config.model),
          'members': len(members), 'member_axis': member_axis(members),
          'vocab_size': dataset.vocab_size, 'num_classes': dataset.num_classes,
          'vectors': dataset.vectors, 'modules': rows, 'params_total': total, 'params_embeddings': embeddings,
          'params_without_embeddings': total - embeddings}


def member_axis(members) -> str:
  """``'3 points x 10 seeds'``, ``'27 seeds (3 init x 3 data x 3 dropout)'``: what
  the stacked axis of one program holds."""
  n_seeds = len({tuple(s) for s in members.seed_triples})
  if members.factorial:
    sizes = ' x '.join(f'{len(set(members.seed_triples[:, i]))} {name}'
                       for i, name in enumerate(stacking.STREAMS))
    seeds = f'{n_seeds} seed combinations ({sizes}; config.seeds not used)'
  else:
    seeds = f'{n_seeds} seed' + ('s' if n_seeds != 1 else '')
  parts = [seeds]
  if members.folds:
    parts.insert(0, f'{len(members.folds)} folds')
  if len(members.point_labels) > 1:
    parts.insert(0, f'{len(members.point_labels)} points')
  return ' x '.join(parts)


def config_lines(config, prefix: str = '', model: str = '',
                 model_docs: Optional[Dict[str, str]] = None,
                 model_defaults: Optional[Dict[str, object]] = None) -> List[str]:
  """``key = value  # what it is`` per leaf, in the spelling of ``--config.key=value``
  overrides; the doc is the field's declaration (seedsweep/config/base.py), a model
  field's its line in ``model_docs`` (:func:`attribute_docs` of the ``model``
  class) or the class it goes to. ``model_defaults``: the class's fields the config
  does not set, by their defaults, among them (marked so)."""
  defaults = {f'{prefix}model.{k}': v for k, v in (model_defaults or {}).items()}
  pairs = sorted(_config_pairs(config, prefix)
                 + [(f'{key} = {value!r}', key) for key, value in defaults.items()],
                 key=lambda pair: pair[1])
  width = min(max(len(text) for text, _ in pairs), 44)  # a long value pushes its doc
  lines = []
  for text, key in pairs:
    doc = field_doc(key, model, model_docs or {})
    if key in defaults:  # not in config.json until set
      doc = f'{doc}; its default, not in the config'
    lines.append(f'{text:<{width}}  # {doc}' if doc else text)
  return lines


def _config_pairs(config, prefix: str):
  """``[('key = value', key)]`` per leaf, sorted by key."""
  pairs = []
  for key, value in sorted(config.items()):
    if hasattr(value, 'items'):
      pairs += _config_pairs(value, f'{prefix}{key}.')
    else:
      pairs.append((f'{prefix}{key} = {value!r}', f'{prefix}{key}'))
  return pairs


def field_doc(key: str, model: str = '', model_docs: Optional[Dict[str, str]] = None
              ) -> str:
  """What config field ``key`` is, in a line: its declared doc, or for a field of
  ``config.model`` besides ``name``, its line in ``model_docs`` with the model class
  ``model``, else that class ('' if neither)."""
  if key in base.FIELDS:
    return base.FIELDS[key].doc
  name = key[len('model.'):]
  if key.startswith('model.') and (model_docs or {}).get(name):
    return f'{model_docs[name]} ({model})'
  if key.startswith('model.') and model:
    return f'a field of the model class {model}'
  return ''


def attribute_docs(cls) -> Dict[str, str]:
  """``{field: its text}`` from the ``Attributes:`` section of a class's
  Google-style docstring (a model's fields, for :func:`config_lines`), else from
  the comment on or above the field's line (:func:`field_comments`, as the packaged
  models document theirs); {} without either."""
  docs, name, indent, inside = field_comments(cls), None, None, False
  for line in (inspect.getdoc(cls) or '').splitlines():
    if line.strip() == 'Attributes:':
      inside = True
      continue
    if not inside or not line.strip():
      continue
    depth = len(line) - len(line.lstrip())
    if depth == 0:  # the next section
      break
    indent = depth if indent is None else indent
    match = re.match(r'\s*(\w+)(?: \([^)]*\))?: ?(.*)', line)
    if depth == indent and match:
      name = match.group(1)
      docs[name] = match.group(2).strip()
    elif name:
      docs[name] = f'{docs[name]} {line.strip()}'.strip()
  return docs


def field_comments(cls) -> Dict[str, str]:
  """``{field: its comment}`` from the source of class ``cls`` (an NNX model's own
  class): the ``# comment`` ending a field's line (``unroll: int = 1  # ...``), else
  the comment lines right above it; {} where the source cannot be read."""
  try:
    lines = inspect.getsource(getattr(cls, 'nnx_class', cls)).splitlines()
  except (OSError, TypeError):
    return {}
  docs, above = {}, []
  for line in lines:
    comment = re.fullmatch(r'\s*# ?(.*)', line)
    if comment:
      above.append(comment.group(1).strip())
      continue
    field = re.fullmatch(r'\s*(\w+)\s*:[^#]*?(?:#\s*(.*))?', line)
    if (field and field.group(1) not in docs and not keyword.iskeyword(field.group(1))
        and (field.group(2) or above)):
      docs[field.group(1)] = (field.group(2) or ' '.join(above)).strip()
    above = []
  return docs


def format_description(info: dict, config) -> str:
  """:func:`describe`'s dict as the command prints it: the config's lines, the members, the
  model, a table of parameters per module and the memory line."""
  lines = ['# config (override any line with --config.KEY=VALUE; docs/configuration.md)',
           *config_lines(config, model=info['model'],
                         model_docs=info.get('model_fields'),
                         model_defaults=info.get('model_defaults')),
           f'# members: {info["members"]} in one program ({info["member_axis"]})',
           f'# model {info["model"]} (vocab {info["vocab_size"]}, '
           f'{info["num_classes"]} classes)']
  if info.get('vectors'):
    lines.append(vectors_line(info['vectors']))
  width = max(len(r['module']) for r in info['modules']) + 2
  lines.append(f'{"module":<{width}}{"params":>12}  shapes')
  for r in info['modules']:
    shapes = ', '.join(f'{k} {tuple(v)}' for k, v in r['shapes'].items())
    lines.append(f'{r["module"]:<{width}}{r["params"]:>12,}  {shapes}')
  lines.append(f'{"total":<{width}}{info["params_total"]:>12,}')
  lines.append(f'{"embeddings":<{width}}{info["params_embeddings"]:>12,}')
  lines.append(f'{"without embeddings":<{width}}'
               f'{info["params_without_embeddings"]:>12,}')
  lines.append(memory_line(info['memory_mib'], info['members']))
  return '\n'.join(lines)


def memory_line(m: dict, members: int) -> str:
  """One line: the run's estimated peak memory, its parts and the budget."""
  form = m.get('seed_parallel', m['mode'])
  lanes = m.get('lanes', 0)
  held = (f'{members} members in lanes of {lanes}' if lanes else f'{members} members')
  return (f'# memory (estimated from the shapes): {m["peak_mib"]:,.0f} MiB at peak for '
          f'{held} = {m["shared_mib"]:,.0f} shared + {m["member_mib"]:,.0f} '
          f'a member ({form}; a member: state {m["state_mib"]:,.0f}, step '
          f'{m["step_mib"]:,.0f}, activations {m["activations_mib"]:,.0f}); budget '
          f'{m["budget_mib"]:,} MiB, within it {m["members_within_budget"]:,} members'
          + (f': a run trains them in {m["groups"]} '
             f'{"lane " if lanes else ""}groups one after another'
             if m['groups'] > 1 else ''))


def vectors_line(record: dict) -> str:
  """One line: the vectors file, its digest, what trained it, how many words it covers."""
  v = record
  trained = v.get('trained_by', {}).get('corpus', {}).get('name')
  made = f', trained by seedsweep word2vec on {trained}' if trained else ''
  return (f'# vectors {v["path"]} (sha256 {v["sha256"][:12]}...{made}): '
          f'{v["dataset_words_found"]:,} of the dataset\'s {v["dataset_words"]:,} '
          'distinct words have a vector')


def to_json(info: dict) -> str:
  """:func:`describe`'s dict as the text ``--mode=describe --json`` prints."""
  return json.dumps(info, indent=1)

"""A Flax NNX model as a linen module, so that the engine trains it as any other.

``config.model.name = 'my_file.py:MyModel'`` may name a ``flax.nnx.Module`` class
(the model contract, seedsweep.models.contract). :func:`linen_class` gives it a linen
face whose dataclass fields are the arguments of its ``__init__`` (but ``rngs``), so
that everything the engine does with a linen model holds unchanged: ``config.model``
fields checked and set, ``init`` under ``lax.map`` over members, ``apply`` with the
``'dropout'`` key of each member's step, ``clone(dropout=r)`` for stacked rates.

Each ``init`` or ``apply`` constructs the NNX module afresh, inside the trace:

* its ``rngs`` are ``nnx.Rngs(params=..., dropout=...)``, the engine's two streams
  under the same names: at ``init`` the member's ``'params'`` key (its init seed), in
  a training step the member's ``'dropout'`` key (its dropout seed, epoch and step).
  So a member draws the same numbers alone or in any group. A stream the engine does
  not give (at ``init`` the dropout one, while training the params one) is a fixed
  key whose draws nothing keeps: the parameters drawn while training are replaced
  by the member's own before the call (XLA removes the dead initialisation), and
  dropout is off at ``init`` (``train=False``);
* ``train=False`` puts it in ``eval()`` mode (``deterministic=True`` on every
  ``nnx.Dropout``), ``train=True`` in ``train()`` mode, and the call gets
  ``train=`` as a linen model's does;
* its ``nnx.Param`` leaves are the linen ``'params'``, at the same paths (an
  ``nnx.List``'s indices as strings: ``layers/0/kernel``), so ``self.embedding =
  nnx.Embed(...)`` is the table ``embedding/embedding`` that word vectors fill.

State other than ``nnx.Param`` (``nnx.BatchNorm``'s running averages, a counter) is
refused when the model is checked: the engine keeps parameters only.
"""
import dataclasses
import functools
import inspect
import typing
from typing import Any, ClassVar, Dict, Tuple

import flax.linen as nn
import jax
from flax import nnx

from seedsweep.errors import UserError
from seedsweep.models.contract import SEE
from seedsweep.models.output import as_output

RNG_STREAMS = ('params', 'dropout')  # the engine's streams: init, training steps
# Draws of a stream the engine does not give at that moment; nothing keeps them.
UNUSED_KEY_SEED = 0
SKIPPED = ('self', 'rngs')  # __init__ arguments that are not config fields


def is_nnx_class(obj) -> bool:
  """Whether ``obj`` is a ``flax.nnx.Module`` subclass."""
  return isinstance(obj, type) and issubclass(obj, nnx.Module)


class NNXModel(nn.Module):
  """The linen face of an NNX class (:data:`nnx_class`, set by :func:`linen_class`):
  ``__call__(batch, *, train)`` constructs it, gives it the parameters and calls it."""
  nnx_class: ClassVar[type] = None

  def __call__(self, batch, *, train: bool):
    module = self.nnx_class(**self.nnx_arguments(), rngs=nnx.Rngs(
        **{name: self._key(name) for name in RNG_STREAMS}))
    params = nnx.state(module, nnx.Param)
    if self.is_initializing():
      for name, value in _string_keys(params.to_pure_dict()).items():
        self.put_variable('params', name, value)
      # Other state, in a collection named by its type, for the contract to refuse.
      for path, leaf in nnx.to_flat_state(nnx.state(
          module, nnx.Not(nnx.Any(nnx.Param, nnx.RngState)))):
        self.put_variable(type(leaf).__name__, '/'.join(map(str, path)),
                          getattr(leaf, 'value', leaf))
    else:
      given = self.variables.get('params', {})
      nnx.replace_by_pure_dict(params, jax.tree_util.tree_map_with_path(
          lambda path, _: _at(given, path), params.to_pure_dict()))
      nnx.update(module, params)
    if train:
      module.train()
    else:
      module.eval()
    return as_output(module(batch, train=train))

  def nnx_arguments(self) -> Dict[str, Any]:
    """The NNX class's ``__init__`` arguments: this module's fields."""
    return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
            if f.name not in ('parent', 'name')}

  def _key(self, stream: str):
    """The engine's key of ``stream`` here, or a key whose draws nothing keeps."""
    if self.has_rng(stream):
      return self.make_rng(stream)
    return jax.random.key(UNUSED_KEY_SEED)


def _string_keys(tree):
  """``tree`` (nested dicts) with every key a string (an nnx.List's indices)."""
  if isinstance(tree, dict):
    return {str(k): _string_keys(v) for k, v in tree.items()}
  return tree


def _at(tree, path):
  """The leaf of ``tree`` (string keys) at a ``tree_map_with_path`` ``path``."""
  for entry in path:
    tree = tree[str(getattr(entry, 'key', getattr(entry, 'idx', entry)))]
  return tree


def init_fields(nnx_cls: type, where: str) -> Tuple[Tuple[str, Any, Any], ...]:
  """``((name, type, default or dataclasses.MISSING), ...)``: the arguments of
  ``nnx_cls.__init__`` but ``self`` and ``rngs``; UserError where it takes no
  ``rngs`` or takes ``*args``/``**kwargs`` (a config field needs a name)."""
  try:
    signature = inspect.signature(nnx_cls.__init__)
    hints = typing.get_type_hints(nnx_cls.__init__)
  except (TypeError, ValueError, NameError) as e:
    raise UserError(f'{where}: cannot read {nnx_cls.__name__}.__init__\'s arguments '
                    f'({type(e).__name__}: {e}); expected __init__(self, vocab_size: '
                    f'int, num_classes: int, ..., *, rngs: nnx.Rngs) {SEE}') from e
  parameters = signature.parameters
  if 'rngs' not in parameters:
    raise UserError(f'{where}: {nnx_cls.__name__}.__init__ takes no rngs; expected '
                    '__init__(self, vocab_size: int, num_classes: int, ..., *, rngs: '
                    "nnx.Rngs) (the engine's 'params' and 'dropout' streams) " + SEE)
  loose = [p.name for p in parameters.values()
           if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
  if loose:
    raise UserError(f'{where}: {nnx_cls.__name__}.__init__ takes *{loose[0]}; expected '
                    f'named arguments only (each one a config.model field) {SEE}')
  fields = []
  for p in parameters.values():
    if p.name in SKIPPED:
      continue
    default = dataclasses.MISSING if p.default is p.empty else p.default
    kind = hints.get(p.name, Any if default is dataclasses.MISSING else type(default))
    fields.append((p.name, kind, default))
  return tuple(fields)


@functools.lru_cache(maxsize=None)
def _linen_class(nnx_cls: type, fields: Tuple[Tuple[str, Any, Any], ...]) -> type:
  """The :class:`NNXModel` subclass of ``nnx_cls``, one per class (jit caches key on
  it): named like it, its fields those of ``__init__``."""
  namespace = {'__annotations__': {}, 'nnx_class': nnx_cls,
               '__module__': nnx_cls.__module__,
               '__qualname__': nnx_cls.__qualname__,
               '__doc__': nnx_cls.__doc__ or f'{nnx_cls.__name__} (flax.nnx)'}
  required = [f for f in fields if f[2] is dataclasses.MISSING]
  # A dataclass lists fields without a default first.
  for name, kind, default in required + [f for f in fields if f not in required]:
    namespace['__annotations__'][name] = kind
    if default is not dataclasses.MISSING:
      namespace[name] = default
  return type(nnx_cls.__name__, (NNXModel,), namespace)


def linen_class(nnx_cls: type, where: str) -> type:
  """The linen module class that runs the NNX class ``nnx_cls`` (the same class each
  time it is asked for); ``where`` names it in errors (``config.model.name=...``)."""
  fields = init_fields(nnx_cls, where)
  try:
    return _linen_class(nnx_cls, fields)
  except (TypeError, ValueError) as e:  # a default a dataclass refuses (a list)
    raise UserError(f'{where}: {nnx_cls.__name__}.__init__\'s arguments cannot be '
                    f'config fields ({type(e).__name__}: {e}); expected defaults that '
                    f'are numbers, strings, bools or tuples {SEE}') from e

"""The model contract: what the engine asks of a model, checked before anything trains.

A model is a ``flax.linen.Module`` or ``flax.nnx.Module`` class, registered in
``models/__init__.py`` or named by ``config.model.name = 'path/to/file.py:Name'``.

* **Fields.** A linen model has the dataclass fields ``vocab_size: int`` and
  ``num_classes: int`` (an NNX model takes them as ``__init__`` arguments, with ``*,
  rngs: nnx.Rngs`` last), set from the data; ``num_tags`` too if it has that field.
  Its other fields come from ``config.model`` (all keys but ``name``).
* **The call.** Every step calls it as
  ``model.apply({'params': p}, batch, train=True, rngs={'dropout': key})`` and every
  evaluation as ``model.apply({'params': p}, batch, train=False)``: so ``__call__(self,
  batch, *, train: bool)``. ``batch['tokens']`` is int32 ``[batch, time]`` (padded),
  ``batch['lengths']`` int32 ``[batch]``; mask the padding
  (``seedsweep.models.pooling.length_mask``).
* **Dropout and train.** Only with ``train=True`` may it draw from the ``'dropout'``
  stream (each member's own key for each step): ``nn.Dropout(rate,
  deterministic=not train)(x)`` in linen; ``nnx.Dropout(rate, rngs=rngs)`` in NNX
  (the engine puts an NNX model in ``eval()`` mode when ``train=False``). Flax's
  layers test their rate in Python, so a model using them keeps its dropout rates
  as Python numbers: fine for a run and for a sweep that does not stack them; to
  stack rates in one program (``config.stack.fields = ('model.dropout',)``) use
  ``seedsweep.models.dropout.Dropout``, which takes a traced rate.
* **What it returns.** A ``seedsweep.models.output.ModelOutput`` whose ``logits``
  are ``[batch, num_classes]`` of a float dtype (pooled over time), or that logits
  array alone, which the engine takes as ``ModelOutput(logits=...)``.
* **The embedding.** Word vectors (``config.data.vectors``) fill the parameter
  ``embedding/embedding`` ``[vocab_size, dim]``: a linen module named
  ``'embedding'`` (``seedsweep.models.baselines.embed_batch`` makes it), an NNX
  attribute ``self.embedding = nnx.Embed(...)``. With row-sparse table updates
  (``config.optimizer.embedding_update`` 'rows' or 'lazy') the step looks the batch's
  vectors up itself and hands them over as ``batch['word_vectors']`` ``[batch, time,
  dim]``: the model must then use them instead of reading its table
  (``embed_batch`` does).
* **State.** Parameters only (the ``'params'`` collection; ``nnx.Param``): no
  running averages.
* **Randomness.** Only from the keys the engine gives: the init key
  (``self.param``'s initialisers, ``self.make_rng('params')``; NNX ``rngs.params()``)
  and the ``'dropout'`` stream. Host randomness (``np.random``, Python's ``random``,
  an unseeded ``np.random.default_rng()``) is drawn once per trace, so two processes,
  or a resume, would train other numbers from one seed. The parameters should follow
  the init key (else every seed starts from the same point), and the logits are
  scores before a softmax (the loss applies its own).

:func:`check` tests all of it for a user's model when the run is built, on abstract
shapes (``jax.eval_shape``: nothing is computed), each failure one ``UserError``
line naming the model's file and class, what came and what was expected;
:func:`check_randomness` its randomness, on traces (and, for a model using ``exp``,
one small call on the CPU).
"""
import inspect
import os
import re
import traceback
from typing import Dict, List, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.interpreters import partial_eval

from seedsweep.errors import UserError
from seedsweep.models.output import ModelOutput, as_output

SEE = '(the model contract: seedsweep.models.contract, docs/data.md)'
TABLE = ('embedding', 'embedding')  # the word table's path in the parameters


def _first_line(error: BaseException) -> str:
  """``'TypeError: message'``, the message cut to its first line."""
  lines = str(error).strip().splitlines()
  return f'{type(error).__name__}: {lines[0] if lines else ""}'.rstrip(': ')


def _user_line(error: BaseException, where: str) -> str:
  """``' at FILE, line N'`` of the deepest frame of ``error`` in the model's file."""
  found = re.search(r"'([^']+\.py):", where)  # config.model.name='FILE.py:Class'
  if not found:
    return ''
  path = found.group(1)
  real = os.path.realpath(os.path.expanduser(path))
  frames = [f for f in _frames(error) if os.path.realpath(f.filename) == real]
  return f' at {path}, line {frames[-1].lineno}' if frames else ''


def _frames(error: BaseException):
  """The traceback frames of ``error`` and of the errors it was raised from."""
  frames, seen = [], set()
  while error is not None and id(error) not in seen:
    seen.add(id(error))
    frames = list(traceback.extract_tb(error.__traceback__)) + frames
    error = error.__cause__ or error.__context__
  return frames


def abstract_batch(num_classes: int,
                   longer: int = 0) -> Dict[str, jax.ShapeDtypeStruct]:
  """``{'tokens' int32 [batch, time], 'lengths' int32 [batch]}`` with batch, time and
  ``num_classes`` three different sizes, so a wrong axis shows in the shapes;
  ``longer``: that many more tokens."""
  batch = next(n for n in range(3, 64) if n != num_classes)
  time = next(n for n in range(7, 64) if n not in (num_classes, batch)) + longer
  return {'tokens': jax.ShapeDtypeStruct((batch, time), jnp.int32),
          'lengths': jax.ShapeDtypeStruct((batch,), jnp.int32)}


def _shapes(batch) -> str:
  """``'tokens int32 [3, 7], lengths int32 [3]'``."""
  return ', '.join(f'{k} {v.dtype} {list(v.shape)}' for k, v in batch.items())


def check_signature(cls: type, where: str) -> None:
  """``cls.__call__`` takes a batch and ``train``; UserError otherwise."""
  call = getattr(cls, 'nnx_class', None) or cls  # an NNX model's own __call__
  try:
    parameters = inspect.signature(call.__call__).parameters
  except (TypeError, ValueError):
    return  # not introspectable (a C extension): the abstract call will tell
  names = [p for p in parameters if p != 'self']
  takes_any = any(p.kind == p.VAR_KEYWORD for p in parameters.values())
  positional = [p for p in parameters.values() if p.name != 'self' and p.kind in (
      p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
  if not positional:
    raise UserError(f'{where}: {call.__name__}.__call__{_signature(parameters)} takes '
                    'no batch; expected __call__(self, batch, *, train: bool) ' + SEE)
  if 'train' not in names and not takes_any:
    raise UserError(f'{where}: {call.__name__}.__call__{_signature(parameters)} takes '
                    'no train argument; expected __call__(self, batch, *, train: bool) '
                    '(the engine passes train=True in training steps: dropout on, '
                    'train=False to evaluate) ' + SEE)


def _signature(parameters) -> str:
  """``'(self, batch)'``."""
  return '(' + ', '.join(str(p) for p in parameters.values()) + ')'


def _abstract(fn, where: str, doing: str, *args, traced: bool = False):
  """``jax.eval_shape(fn, *args)``; an error the model raises becomes one line
  (:func:`_guarded`)."""
  return _guarded(jax.eval_shape, where, doing, fn, *args, traced=traced)


def _guarded(fn, where: str, doing: str, *args, traced: bool = False):
  """``fn(*args)`` of a model's code; an error it raises becomes one line (``traced``:
  but a value tested in Python, for :func:`traced_fields` to judge)."""
  try:
    return fn(*args)
  except UserError:
    raise
  except jax.errors.ConcretizationTypeError as e:
    if traced:
      raise
    raise UserError(f'{where}: {_first_line(e)}{_user_line(e, where)}, {doing}: it '
                    'tests an array in Python (if, bool, int); expected jnp.where or '
                    f'lax.cond on arrays {SEE}') from e
  except Exception as e:  # pylint: disable=broad-except  (any error of user code)
    raise UserError(f'{where}: {_first_line(e)}{_user_line(e, where)}, {doing} '
                    + SEE) from e


def check_output(out, where: str, batch, num_classes: int, train: bool) -> None:
  """``out`` (abstract) is a ModelOutput or an array of logits ``[batch,
  num_classes]`` of a float dtype; UserError naming what came otherwise."""
  called = f'called with train={train}'
  if not isinstance(out, (ModelOutput, jax.ShapeDtypeStruct)):
    raise UserError(f'{where}: returned {type(out).__name__} ({called}); expected a '
                    'seedsweep.models.output.ModelOutput or an array of logits '
                    f'[batch, num_classes] {SEE}')
  logits = as_output(out).logits
  size, time = batch['tokens'].shape
  expected = f'[batch, num_classes] = [{size}, {num_classes}]'
  if not isinstance(logits, jax.ShapeDtypeStruct):
    raise UserError(f'{where}: returned logits of type {type(logits).__name__} '
                    f'({called}); expected an array {expected} {SEE}')
  shape = list(logits.shape)
  if shape != [size, num_classes]:
    hint = ''
    if shape[:2] == [size, time] and len(shape) == 3:
      hint = ('; one value per token: pool over time first (masked mean, max or '
              'the last state: seedsweep.models.pooling)')
    elif len(shape) == 2 and shape[0] == size:
      hint = (f'; its last layer has {shape[1]} outputs, the data '
              f'{num_classes} classes (use num_classes)')
    raise UserError(f'{where}: returned logits {shape} for a batch of {size} '
                    f'sentences of {time} tokens ({called}); expected {expected}'
                    f'{hint} {SEE}')
  if not jnp.issubdtype(logits.dtype, jnp.floating):
    raise UserError(f'{where}: returned logits of dtype {logits.dtype} ({called}); '
                    f'expected a float dtype {SEE}')


def check_state(variables, where: str) -> None:
  """The model keeps parameters only; UserError naming any other collection."""
  others = sorted(set(variables) - {'params'})
  if others:
    raise UserError(f'{where}: keeps variables in {others} besides params; expected '
                    'parameters only (no running averages such as BatchNorm\'s: the '
                    f'engine trains and saves params) {SEE}')


def check_table(params, where: str, vocab_size: int, why: str) -> None:
  """``params`` has the word table ``embedding/embedding`` ``[vocab_size, dim]``;
  ``why`` says what needs it."""
  table = params.get(TABLE[0], {})
  table = table.get(TABLE[1]) if isinstance(table, dict) else None
  if table is None or len(table.shape) != 2 or table.shape[0] != vocab_size:
    came = (f'embedding/embedding {list(table.shape)}' if table is not None else
            f'no parameter embedding/embedding (its parameters: {sorted(params)})')
    raise UserError(f'{where}: has {came}; {why} needs its word table there, '
                    f'[vocab_size, dim] = [{vocab_size}, dim]: a linen module named '
                    "'embedding' (seedsweep.models.baselines.embed_batch), in NNX "
                    f'self.embedding = nnx.Embed(...) {SEE}')


def check_word_vectors(model, params, where: str, batch) -> None:
  """With row-sparse table updates the model takes ``batch['word_vectors']`` and
  never reads its table (here cut to no rows); UserError otherwise."""
  table = params[TABLE[0]][TABLE[1]]
  size, time = batch['tokens'].shape
  given = {**batch, 'word_vectors': jax.ShapeDtypeStruct((size, time, table.shape[1]),
                                                         table.dtype)}
  cut = {**params, TABLE[0]: {**params[TABLE[0]], TABLE[1]: jax.ShapeDtypeStruct(
      (0, table.shape[1]), table.dtype)}}
  try:
    jax.eval_shape(lambda p, b: model.apply({'params': p}, b, train=False), cut, given)
  except Exception as e:  # pylint: disable=broad-except  (it read the cut table)
    raise UserError(
        f'{where}: reads its word table although the step handed it '
        f"batch['word_vectors'] ({_first_line(e)}); with "
        "config.optimizer.embedding_update='rows' or 'lazy' the model must use "
        "batch['word_vectors'] when present (seedsweep.models.baselines.embed_batch "
        "does), or set --config.optimizer.embedding_update=dense " + SEE) from e


def traced_fields(model, params, where: str, batch, fields: Sequence[str],
                  stacked: Sequence[str]) -> Tuple[str, ...]:
  """Of the model's stackable ``fields`` (dropout rates, loss weights), those it can
  take as traced scalars; the others it tests in Python (flax's ``Dropout``), so
  they stay the config's numbers. UserError where one of those is ``stacked``
  (differs between the points of one program)."""
  key = jax.random.key(0)

  def apply(names):
    def fn(p, b, values):
      clone = model.clone(**dict(zip(names, values)))
      return clone.apply({'params': p}, b, train=True, rngs={'dropout': key})
    values = [jax.ShapeDtypeStruct((), jnp.float32)] * len(names)
    return _abstract(fn, where, 'called with train=True and traced '
                     f'{", ".join(names)}', params, batch, values, traced=True)

  def traceable(names) -> bool:
    try:
      apply(names)
      return True
    except (jax.errors.ConcretizationTypeError, UserError):  # it needs a number
      return False

  fields = tuple(fields)
  if not fields or traceable(fields):
    return fields
  ok = tuple(f for f in fields if traceable((f,)))
  in_python = [f for f in fields if f not in ok and f in stacked]
  if in_python:
    raise UserError(f'{where}: tests config.model.{in_python[0]} in Python (flax\'s '
                    'nn.Dropout and nnx.Dropout do: rate == 0), so it cannot differ '
                    'between the points of one program (config.stack.fields); use '
                    'seedsweep.models.dropout.Dropout, which takes a traced rate (in '
                    'NNX seedsweep.models.nnx_dropout.Dropout), or give the values as '
                    'the points of a sweep (--sweep=FILE), which runs each value of a '
                    f'field the model tests in Python as a program of its own {SEE}')
  return ok


def _program(fn, *args) -> Tuple[tuple, list]:
  """``((text, constants), used)``: the jaxpr of ``fn`` on abstract ``args``, cut to
  what reaches its outputs, as text and the constants it holds, and which of its
  flat inputs reach them (traced afresh: jax keeps a function's trace)."""
  closed = jax.make_jaxpr(lambda *a: fn(*a))(*args)
  jaxpr, used = partial_eval.dce_jaxpr(closed.jaxpr, True)
  refs = {id(v) for e in jaxpr.eqns for v in e.invars} | {id(v) for v in jaxpr.outvars}
  consts = [jax.random.key_data(c) if jnp.issubdtype(jnp.result_type(c),
                                                     jax.dtypes.prng_key) else c
            for v, c in zip(jaxpr.constvars, closed.consts) if id(v) in refs]
  # A function in an equation's parameters (custom_jvp's rule) prints its address.
  text = re.sub(r' at 0x[0-9a-f]+', '', str(jaxpr))
  return (text, [np.asarray(c) for c in jax.device_get(consts)]), used


def _same_program(a: tuple, b: tuple) -> bool:
  """Two :func:`_program` texts and constants equal, the constants bit for bit."""
  return a[0] == b[0] and len(a[1]) == len(b[1]) and all(
      x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
      for x, y in zip(a[1], b[1]))


def concrete_batch(batch, vocab_size: int) -> Dict[str, np.ndarray]:
  """Values for :func:`abstract_batch`'s shapes: lengths from the full length down
  (at least 1), tokens 1.. cycling below ``vocab_size``, 0 as padding."""
  size, time = batch['tokens'].shape
  lengths = np.maximum(time - np.arange(size), 1).astype(np.int32)
  ids = 1 + np.arange(size * time).reshape(size, time) % max(vocab_size - 1, 1)
  real = np.arange(time)[None, :] < lengths[:, None]
  return {'tokens': np.where(real, ids, 0).astype(np.int32), 'lengths': lengths}


def looks_like_probabilities(model, params, batch, vocab_size: int) -> bool:
  """Whether ``model``'s logits (``train=False``), on :func:`concrete_batch` values
  and parameters drawn here (on the CPU), have every row non-negative and summing to
  1: a softmax's probabilities, which the loss would take as scores."""
  try:
    device = jax.local_devices(backend='cpu')[0]
  except RuntimeError:  # a runtime without the CPU backend: its default device
    device = jax.local_devices()[0]
  draw = np.random.default_rng(0)  # parameter values only: any give a softmax's sums
  values = jax.tree.map(lambda p: (0.1 * draw.standard_normal(p.shape)).astype(p.dtype),
                        params)
  args = jax.device_put((values, concrete_batch(batch, vocab_size)), device)
  logits = jax.device_get(jax.jit(lambda p, b: as_output(
      model.apply({'params': p}, b, train=False)).logits)(*args))
  logits = np.asarray(logits, np.float64)
  return bool(logits.shape[-1] > 1 and np.all(logits >= 0)
              and np.allclose(logits.sum(axis=-1), 1, atol=1e-2))  # bf16 too


def check_randomness(model, params, where: str, *, num_classes: int,
                     vocab_size: int) -> List[str]:
  """UserError where ``model`` (built, its contract checked: ``params`` its abstract
  parameters) draws from host randomness: two traces of ``init`` with one key give
  other parameters, or two of ``apply`` other programs. Returns the lines to tell
  the user: a warning when the parameters ignore the init key, a hint when the
  logits look like probabilities."""
  batch, longer = abstract_batch(num_classes), abstract_batch(num_classes, 2)
  key = jax.eval_shape(lambda: jax.random.key(0))
  doing = f'initialised twice with one key on a batch of {_shapes(longer)}'

  def init(k, b):
    return model.init({'params': k}, b, train=False).get('params', {})

  (first, used), (second, _) = (_guarded(_program, where, doing, init, key, longer)
                                for _ in range(2))
  if not _same_program(first, second):
    raise UserError(f'{where}: two inits with one key gave other parameters: it draws '
                    "from host randomness (np.random, Python's random, an unseeded "
                    'np.random.default_rng()), which no seed reproduces; draw from the '
                    "init key instead (self.param's initialiser gets it, or "
                    f"self.make_rng('params'); in NNX rngs.params()) {SEE}")
  doing = f'called twice with train=True on a batch of {_shapes(batch)}'

  def step(p, b, k):
    return model.apply({'params': p}, b, train=True, rngs={'dropout': k})

  calls = [_guarded(_program, where, doing, step, params, batch, key)[0]
           for _ in range(2)]
  if not _same_program(*calls):
    raise UserError(f'{where}: two traces of model.apply(..., train=True) with one '
                    'input gave other programs: it draws from host randomness in '
                    "__call__ (np.random, Python's random), fixed once per compiled "
                    'step, which no seed reproduces; draw from '
                    "self.make_rng('dropout') instead (in NNX rngs.dropout()) " + SEE)
  lines = []
  if not used[0]:
    lines.append(f'warning: {where}: no parameter depends on the init key, so every '
                 'seed starts from the same parameters and seeds differ only in data '
                 "order and dropout; draw initial values from the key (self.param's "
                 "initialiser, self.make_rng('params'); in NNX rngs.params())")
  doing = f'called with train=False on a batch of {_shapes(batch)}'
  (evaluation, _), _ = _guarded(_program, where, doing, lambda p, b: model.apply(
      {'params': p}, b, train=False), params, batch)
  # A softmax needs exp: only a model using it pays for a compiled call (a second
  # or more for a recurrent one).
  if re.search(r'\bexp\b', evaluation) and _guarded(
      looks_like_probabilities, where, doing + ' on the CPU', model, params, batch,
      vocab_size):
    lines.append(f'hint: {where}: its logits look like probabilities (each row '
                 'non-negative and summing to 1 on a test batch); the loss applies its '
                 'own softmax to the logits: return the scores before the softmax')
  return lines


def check(model, where: str, *, num_classes: int, vocab_size: int,
          stackable: Sequence[str] = (), stacked: Sequence[str] = (),
          table_for: Optional[str] = None) -> Tuple[Tuple[str, ...], dict]:
  """Checks ``model`` (a built linen module) against the contract on abstract shapes.

  Args:
    model: the module, as the run builds it.
    where: what names it in errors: ``config.model.name='my_file.py:MyModel'``.
    num_classes: the data's classes (the logits' last axis).
    vocab_size: the data's vocabulary (the word table's rows).
    stackable: the model's fields the engine may trace (dropout rates set above 0,
      loss weights).
    stacked: of those, the ones that differ between points of one program.
    table_for: what needs the word table ``embedding/embedding`` (pretrained
      vectors), None for nothing.

  Returns:
    ``(traced, params)``: the ``stackable`` fields the model takes traced (the
    others keep their Python value) and its abstract parameters.
  """
  check_signature(type(model), where)
  # Initialised on longer sentences than it is called on: a parameter whose shape
  # follows the length would fail in training, where every batch has its own.
  batch, longer = abstract_batch(num_classes), abstract_batch(num_classes, 2)
  key = jax.random.key(0)
  variables = _abstract(
      lambda b: model.init({'params': key}, b, train=False), where,
      f'initialised as model.init({{"params": key}}, batch, train=False) on a batch '
      f'of {_shapes(longer)}', longer)
  check_state(variables, where)
  params = variables.get('params', {})
  for train in (False, True):
    out = _abstract(
        lambda p, b, train=train: model.apply(
            {'params': p}, b, train=train,
            **({'rngs': {'dropout': key}} if train else {})),
        where, f'called as model.apply({{"params": p}}, batch, train={train}) on a '
        f'batch of {_shapes(batch)} (initialised on {longer["tokens"].shape[1]} '
        'tokens: no parameter may depend on the length)', params, batch)
    check_output(out, where, batch, num_classes, train)
  traced = traced_fields(model, params, where, batch, stackable, stacked)
  if table_for:
    check_table(params, where, vocab_size, table_for)
  return traced, params

"""The jitted seed-parallel steps: train, evaluate, select the best dev epoch.

One training step, through the modules (every array has a leading members axis):

1. ``train_steps`` (run/epoch.py) puts the epoch's
   :class:`EpochPlan` on the device and dispatches its steps a chunk at a time
   through ``Steps.train_chunk``, in the form :func:`host_free_programs` picks for
   the backend. Off the CPU each chunk is steps of one padded length (the host knows
   each step's length from inputs.pipeline.TrainPlan.schedule):
   :meth:`Steps._train_chunk` jitted for a static ``length`` and ``count``, its
   state donated, a ``fori_loop`` of ``count`` trips (a constant) whose body builds
   each step's :class:`StepAt` (orders, slot, epoch, position) and runs
   :meth:`Steps._train_step`; no conditional on a device value and no loop bound on
   the device, which XLA:GPU would copy to the host and wait for, once a step. On
   the CPU one program, :meth:`Steps._switched_chunk`, runs any steps, a
   ``lax.switch`` over the lengths picking each step's ``_train_step``.
2. ``_train_step`` gathers each member's batch from its own view,
   ``pipeline.gather_batch`` ``[members, batch, length]``, and draws its dropout key,
   ``rngs.dropout_key(seed, epoch, position)``.
3. The embedding rows policy (``Learner.embedding_update`` != 'dense'):
   ``embedding_rows.batch_rows`` and ``.gather`` cut the table and its optimiser
   state to the batch's rows (``.catch_up`` decays the rows that sat out).
4. :func:`seed_parallel` maps the members axis (``jax.vmap`` or ``jax.lax.map``) over
   :meth:`Steps._seed_update`: ``Learner.for_member`` (its hyperparameters),
   ``jax.grad`` of :meth:`Steps._loss_fn` (``model.apply``, ``objectives.loss`` plus
   ``optimizers.l2_penalty``; :meth:`Steps._row_grads` for the rows), then
   ``tx.update`` and ``optax.apply_updates``.
5. NaN freeze: a member whose loss is not finite keeps its parameters (a select
   in ``_seed_update``) and records ``nonfinite_step``; ``embedding_rows.scatter``
   puts the rows back into the table.

``config.train.seed_parallel`` picks the map (run/pieces.py, place): ``vmap``, one
batched program (GPUs, sharding; on a CPU a single member runs as a pair,
:func:`_single_member_as_pair`), also what ``lanes`` runs at its fixed width, padded
(the accelerators' default), or ``map``, each seed's step with a single-seed run's
shapes (the CPU default). Both give a seed
the same bits alone and in any group (``vmap`` on the CPU); see docs/design.md
(determinism policy).
"""
import dataclasses
import functools
from typing import Any, Callable, Dict, Optional, Sequence

import flax
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from seedsweep.engine import embedding_rows
from seedsweep.engine import objectives
from seedsweep.engine import optimizers
from seedsweep.engine import portable as portable_lib
from seedsweep.engine import rngs
from seedsweep.engine.state import TrainState
from seedsweep.inputs import pipeline
from seedsweep.models.output import as_output


def host_free_programs(backend: str) -> bool:
  """Whether the train chunks on ``backend`` (``jax.default_backend()``) are
  host-free: a program per (padded length, steps), both static, the host picking it
  (:meth:`Steps._train_chunk`), rather than one program whose ``lax.switch`` over
  the lengths and loop bound read device values (:meth:`Steps._switched_chunk`).

  Off the CPU, yes: XLA:GPU (and TPU) copies a conditional's index and a
  loop-carried trip count to the host and waits, once a step. XLA:CPU's runtime is
  driven by the host anyway, so there neither costs a copy, and one program holding
  every length takes 8 steps a dispatch whatever their lengths (runs of one length
  are short) and is compiled once: on a first Bi-LSTM SST-2 epoch 18 dispatches
  instead of 132-139, and fewer programs to compile (docs/log.md, 2026-12-04). Both
  forms run the same :meth:`Steps._train_step` per step: the same bits.
  """
  return backend != 'cpu'


def seed_parallel(fn: Callable, mode: str, in_axes: Sequence = None) -> Callable:
  """Maps ``fn`` over a leading members axis of the arguments whose ``in_axes`` is 0.

  Args:
    fn: one member's function (its arguments without the members axis).
    mode: ``'vmap'`` (``jax.vmap``) or ``'map'`` (``jax.lax.map``, one member at a
      time with a single member's shapes).
    in_axes: per argument, 0 (``[members, ...]``: each member its own) or None
      (shared by all members); None: every argument has the axis.

  Returns:
    ``fn`` over the members: every output leaf ``[members, ...]``.

  Raises:
    ValueError: ``mode`` is neither.
  """
  if mode == 'vmap':
    return jax.vmap(fn, in_axes=0 if in_axes is None else tuple(in_axes))
  if mode != 'map':
    raise ValueError(f'seed_parallel mode {mode!r}; expected vmap or map (lanes is '
                     'vmap at a fixed width: run/pieces.py, place)')

  def mapped(*args):
    axes = [0] * len(args) if in_axes is None else list(in_axes)
    per_seed = [a for a, ax in zip(args, axes) if ax == 0]

    def body(xs):
      it = iter(xs)
      return fn(*[next(it) if ax == 0 else a for a, ax in zip(args, axes)])

    return jax.lax.map(body, per_seed)

  return mapped


@dataclasses.dataclass(frozen=True)
class Learner:
  """The model and how it learns.

  A member's own hyperparameters (``DeviceData.hparams``: learning rate, clip norms,
  L2 coefficient, the model's dropout rates and loss weights) reach its step as
  traced scalars: ``make_tx(hparams)`` builds its optimiser from them, and the
  model's fields named ``model.<field>`` there are replaced by them. ``tx`` (the
  config's own values) fixes the optimiser state's structure.
  """
  model: nn.Module
  tx: optax.GradientTransformation
  l2_mask: Any                     # params-shaped bools: leaves L2 applies to
  l2_coef: float = 0.0
  embedding_update: str = 'dense'  # seedsweep/engine/embedding_rows.py
  # 'rows' with RMSprop or AdaDelta: the factor a zero gradient scales a row's state
  # by (embedding_rows.catch_up; ``tx`` is embedding_rows.clocked). None otherwise.
  row_decay: Optional[float] = None
  make_tx: Optional[Callable[[Dict[str, Any]], optax.GradientTransformation]] = None

  def for_member(self, hparams: Dict[str, Any]) -> 'Learner':
    """This learner with one member's ``hparams`` ({config key: scalar}) in place
    of the config's values."""
    fields = {k.split('.', 1)[1]: v for k, v in hparams.items()
              if k.startswith('model.')}
    return dataclasses.replace(
        self, model=self.model.clone(**fields) if fields else self.model,
        tx=self.make_tx(hparams) if self.make_tx else self.tx,
        l2_coef=hparams.get('l2.coef', self.l2_coef))


@flax.struct.dataclass
class DeviceData:
  """What every step reads on device.

  The field names (and ``Steps._train_step``'s argument names) name the compiled
  train step's parameters, which the determinism record's ``program`` fingerprint
  hashes: renaming one changes the fingerprint every run records.
  """
  arrays: Dict[str, jax.Array]  # inputs.pipeline.device_arrays: tokens [views, total], ...
  # [members, 3] int32: each member's seed of each random stream (rngs.INIT, DATA,
  # DROPOUT); the same seed thrice but in a factorial seed design.
  streams: jax.Array
  views: jax.Array              # [members] int32: each member's view (CV fold)
  hparams: Dict[str, jax.Array]  # {config key: [members] float32}: Learner.for_member


@flax.struct.dataclass
class StepAt:
  """Which batch a train step takes: slot ``slot`` of each member's ``orders``,
  visited at ``position`` of ``epoch`` (inputs.pipeline.TrainPlan.schedule)."""
  orders: jax.Array  # [members, slots, batch] int32: Steps.epoch_orders
  slot: Any          # () int
  epoch: Any         # () int
  position: Any      # () int


@flax.struct.dataclass
class EpochPlan:
  """An epoch's batches on the device, read by :meth:`Steps.train_chunk`: the step at
  ``position`` takes slot ``slots[position]`` of each member's ``orders``. Each
  step's padded length stays on the host, which picks the program; only the
  switched chunk (on a CPU) reads it here, as ``buckets[position]``."""
  orders: jax.Array   # [members, slots, batch] int32: Steps.epoch_orders
  slots: jax.Array    # [steps] int32: inputs.pipeline.TrainPlan.schedule's slots
  epoch: jax.Array    # () int32
  # [steps] int32: each slot's length as an index of Steps.lengths; None when the
  # programs are host-free (no argument then: their programs stay as they were).
  buckets: Optional[jax.Array] = None


class Steps:
  """The compiled functions of one experiment (learner, ``TrainPlan``, seed mapping).

  Every one takes the members axis first: ``state`` is a TrainState whose leaves are
  ``[members, ...]``, ``params`` its ``params`` (or ``best_params``).

  * ``epoch_orders(data, epoch)`` -> ``[members, slots, batch]`` int32 rows;
  * ``train_chunk(state, data, batches, position, loss_sum, length=, count=)`` ->
    ``(state, loss_sum, position)``: ``count`` steps from ``position`` as one
    program, the first of padded length ``length`` (what training runs):
    ``chunk_program`` in the backend's form (:func:`host_free_programs`);
  * ``eval_batch(params, data, idx [views, batch], split [views, batch], length=,
    n_splits=)`` -> ``{name: [members, n_splits]}`` sums of one chunk, a program
    per padded length (what evaluation runs; the host picks it, as for training);
  * ``predict_batch(params, data, tokens [views, batch, time], lengths [views,
    batch])`` -> ``{'probabilities': [members, batch, classes], ...}``;
  * ``select_best(state, score [members], epoch)`` -> state.
  """

  def __init__(self, learner: Learner, plan: pipeline.TrainPlan, mode: str,
               patience: int = 0, tag_tables: Optional[tuple] = None,
               single_member: bool = False, portable: bool = False):
    self.learner = learner
    self.plan, self.mode, self.patience = plan, mode, patience
    self.single_member, self.portable = single_member, portable
    self.host_free = host_free_programs(jax.default_backend())
    # The padded lengths an epoch visits: a host-free chunk program each, or a
    # branch each of the switched one.
    self.lengths = tuple(plan.boundaries[b]
                         for b in sorted(set(plan.slot_bucket.tolist())))
    self.tag_tables = tag_tables  # (prefix, kind) of each slot tag: slot F1 in eval
    self.epoch_orders = jax.jit(self._epoch_orders)
    # single_member: one member, which under vmap on a CPU runs as a pair
    # (_single_member_as_pair): the bits it buys are XLA:CPU's batched kernels'.
    self.paired = mode == 'vmap' and single_member and jax.default_backend() == 'cpu'
    paired = _single_member_as_pair if self.paired else lambda fn, *_, **__: fn
    # portable: the programs' dots and QRs in forms computed alike on every CPU.
    form = portable_lib.make_portable if portable else lambda fn: fn
    if self.host_free:
      chunk = jax.jit(form(self._train_chunk), static_argnames=('length', 'count'),
                      donate_argnums=(0, 4))
    else:
      chunk = jax.jit(form(self._switched_chunk), donate_argnums=(0, 4))
    self.chunk_program = paired(chunk, (0, 1, 2, 4), outputs=(0, 1))
    self._counts = {}  # the switched chunk's step counts, on the device once each
    self.eval_batch = paired(jax.jit(form(self._eval_batch),
                                     static_argnames=('length', 'n_splits')), (0, 1))
    self.predict_batch = paired(jax.jit(form(self._predict_batch)), (0, 1))
    self.select_best = paired(jax.jit(self._select_best, donate_argnums=(0,)), (0, 1))

  def for_members(self, members: int, mode: str) -> 'Steps':
    """These steps for ``members`` on device (padding included) stepping by
    ``mode`` (a group of a split run): themselves when that changes nothing they were
    compiled for, as for every lane group of a lanes run."""
    single_member = members == 1
    if mode == self.mode and single_member == self.single_member:
      return self
    return Steps(self.learner, self.plan, mode, self.patience, self.tag_tables,
                 single_member, self.portable)

  def epoch_plan(self, data: 'DeviceData', epoch: int, visits) -> EpochPlan:
    """The :class:`EpochPlan` of ``epoch`` whose steps visit ``visits`` ([(slot,
    length)], inputs.pipeline.TrainPlan.schedule's), put on the device explicitly."""
    slots, epoch = jax.device_put((np.asarray([s for s, _ in visits], np.int32),
                                   np.int32(epoch)))
    buckets = None
    if not self.host_free:
      index = {length: i for i, length in enumerate(self.lengths)}
      buckets = jax.device_put(np.asarray([index[l] for _, l in visits], np.int32))
    return EpochPlan(self.epoch_orders(data, epoch), slots, epoch, buckets)

  def train_chunk(self, state: TrainState, data: DeviceData, batches: EpochPlan,
                  position, loss_sum, *, length: int, count: int):
    """``count`` steps from ``position`` (() int32 on the device), the first of
    padded length ``length``, one dispatch of ``chunk_program``: ``(state, loss_sum +
    their [members] losses, position + count)``. Host-free, every one of the steps
    must have that length; switched, any lengths."""
    if self.host_free:
      return self.chunk_program(state, data, batches, position, loss_sum, length=length,
                                count=count)
    # The switched chunk's count is a device value: put there once per count.
    if count not in self._counts:
      self._counts[count] = jax.device_put(np.int32(count))
    return self.chunk_program(state, data, batches, position, loss_sum,
                              self._counts[count])

  def lower_chunks(self, state: TrainState, data: DeviceData, batches: EpochPlan,
                   position, loss_sum) -> list:
    """Every train program of a one-step chunk, lowered (``jax.stages.Lowered``):
    one per padded length, in order, when host-free; else the one switched program."""
    if self.host_free:
      return [self.chunk_program.lower(state, data, batches, position, loss_sum,
                                       length=length, count=1)
              for length in self.lengths]
    return [self.chunk_program.lower(state, data, batches, position, loss_sum,
                                     jax.device_put(np.int32(1)))]

  @staticmethod
  def _loss_fn(learner: Learner, batch, dropout_key):
    def loss_fn(p):
      out = as_output(learner.model.apply({'params': p}, batch, train=True,
                                          rngs={'dropout': dropout_key}))
      data_loss = objectives.loss(out, batch)
      return data_loss + optimizers.l2_penalty(
          p, learner.l2_mask, learner.l2_coef), data_loss
    return loss_fn

  def _seed_update(self, params, opt_state, batch, dropout_key, hparams, frozen,
                   inverse=None):
    """One optimiser step of one member: ``(params, opt_state, loss ())``.

    ``batch`` is the member's: ``tokens`` ``[batch, length]``, ``lengths``,
    ``labels`` and ``weights`` ``[batch]``; ``dropout_key`` its key, ``hparams``
    ``{config key: ()}``; ``frozen`` (() bool) whether a non-finite loss froze it
    before. With a row-sparse table update (``inverse`` [n] given) ``params`` and
    ``opt_state`` hold only the batch's table rows (embedding_rows.gather).

    NaN freeze: a member whose loss is not finite, now or before, keeps its
    parameters. The select is made here, on the member's own slice, so that it
    fuses with the update instead of a second pass over the stacked state; a
    select, not a conditional: a conditional on a device value makes a GPU wait
    for the host.
    """
    learner = self.learner.for_member(hparams)
    if inverse is None:
      grads, data_loss = jax.grad(self._loss_fn(learner, batch, dropout_key),
                                  has_aux=True)(params)
    else:
      grads, data_loss = self._row_grads(learner, params, batch, dropout_key, inverse)
    updates, new_opt_state = learner.tx.update(grads, opt_state, params)
    new_params = optax.apply_updates(params, updates)
    take = ~frozen & jnp.isfinite(data_loss)
    if self.plan.padded:  # a fold may have no example in a slot: no step for it
      take &= batch['weights'].sum() > 0
    new_params, new_opt_state = jax.tree.map(lambda a, b: jnp.where(take, a, b),
                                             (new_params, new_opt_state),
                                             (params, opt_state))
    return new_params, new_opt_state, data_loss

  def _row_grads(self, learner: Learner, params, batch, dropout_key, inverse):
    """``(gradients, data loss)`` of one member whose table is cut to the batch's
    rows ``[n, dim]``; ``inverse`` [n]: each token's row.

    The batch's word vectors are looked up from the rows and handed to the model
    (``batch['word_vectors']``, so it never reads the table); their gradient, summed
    per distinct row, is the table's gradient restricted to those rows.
    """
    rows = params['embedding']['embedding']
    rest = {k: v for k, v in params.items() if k != 'embedding'}

    def loss_fn(rest, vectors):
      loss = self._loss_fn(learner, {**batch, 'word_vectors': vectors}, dropout_key)
      return loss({**rest, 'embedding': params['embedding']})

    vectors = jnp.take(rows, inverse, axis=0).reshape(batch['tokens'].shape +
                                                      rows.shape[1:])
    (g_rest, g_vectors), data_loss = jax.grad(loss_fn, argnums=(0, 1), has_aux=True)(
        rest, vectors)
    g_rows = jax.ops.segment_sum(g_vectors.reshape(inverse.shape[0], -1), inverse,
                                 num_segments=rows.shape[0])
    return {**g_rest, 'embedding': {'embedding': g_rows}}, data_loss

  def _train_step(self, state: TrainState, data: DeviceData, at: StepAt, *,
                  length: int):
    """Advances every member (a seed, or a (fold, seed) pair) by the batch ``at``.

    The batch is ``[members, batch, length]`` tokens (rows padded to ``length``), each
    member's from its own view. Returns the new state and the ``[members]`` losses.
    """
    batch = pipeline.gather_batch(data.arrays, data.views, at.orders[:, at.slot], length)
    keys = jax.vmap(rngs.dropout_key, in_axes=(0, None, None))(
        data.streams[:, rngs.DROPOUT], at.epoch, at.position)
    old = (state.params, state.opt_state)
    inverse = None
    if self.learner.embedding_update != 'dense':  # each seed steps on its rows only
      vocab = state.params['embedding']['embedding'].shape[1]
      rows, inverse = jax.vmap(embedding_rows.batch_rows, in_axes=(0, None))(
          batch['tokens'], vocab)
      old = embedding_rows.gather(old, rows, vocab)
      if self.learner.row_decay is not None:  # rows that sat out updates catch up
        old = (old[0], embedding_rows.catch_up(old[1], self.learner.row_decay))
    # A seed whose loss is NaN or infinite, now or before, keeps its parameters from
    # here on (_seed_update); the others' numbers are untouched (the seeds never mix).
    params, opt_state, loss = seed_parallel(self._seed_update, self.mode)(
        *old, batch, keys, data.hparams, state.nonfinite_step > 0, inverse)
    bad = (state.nonfinite_step > 0) | ~jnp.isfinite(loss)
    if inverse is not None:  # the rows back into the whole table, in place
      params, opt_state = embedding_rows.scatter(
          (state.params, state.opt_state), (params, opt_state), rows, vocab)
    step = at.position + (at.epoch - 1) * self.plan.steps_per_epoch + 1
    first = (state.nonfinite_step == 0) & bad
    return state.replace(
        step=state.step + (~bad).astype(jnp.int32), params=params, opt_state=opt_state,
        nonfinite_step=jnp.where(first, step, state.nonfinite_step)), loss

  def _train_chunk(self, state: TrainState, data: DeviceData, batches: EpochPlan,
                   position, loss_sum, *, length: int, count: int):
    """``count`` steps from ``position`` (() int32), each :meth:`_train_step` at
    padded length ``length``, as one program: ``(state, loss_sum [members] + their
    losses, position + count)``.

    The host dispatches an epoch a chunk at a time, each chunk steps of one length
    (it knows every step's length), and reads nothing back. Both ``length`` and
    ``count`` are static: a branch on a device value or a loop bound carried on the
    device is copied to the host by XLA:GPU, which waits for it once a step; a
    ``fori_loop`` over constants lowers to a loop whose trip count is a constant.
    """
    def step(i, carry):
      state, loss_sum = carry
      p = position + i
      at = StepAt(orders=batches.orders, slot=batches.slots[p], epoch=batches.epoch,
                  position=p)
      state, loss = self._train_step(state, data, at, length=length)
      return state, loss_sum + loss

    state, loss_sum = jax.lax.fori_loop(0, count, step, (state, loss_sum))
    return state, loss_sum, position + count

  def _switched_chunk(self, state: TrainState, data: DeviceData, batches: EpochPlan,
                      position, loss_sum, count):
    """``count`` (() int32) steps from ``position`` (() int32) of any padded lengths
    as one program: ``(state, loss_sum [members] + their losses, position +
    count)``, each step :meth:`_train_step` at its length, a ``lax.switch`` on
    ``batches.buckets``; the CPU's form (:func:`host_free_programs`)."""
    branches = [functools.partial(self._train_step, length=length)
                for length in self.lengths]

    def step(p, carry):
      state, loss_sum = carry
      at = StepAt(orders=batches.orders, slot=batches.slots[p], epoch=batches.epoch,
                  position=p)
      state, loss = jax.lax.switch(
          batches.buckets[p], [lambda s, b=b: b(s, data, at) for b in branches], state)
      return state, loss_sum + loss

    end = position + count
    state, loss_sum = jax.lax.fori_loop(position, end, step, (state, loss_sum))
    return state, loss_sum, end

  def _eval_batch(self, params, data: DeviceData, idx, split, *, length: int,
                  n_splits: int):
    """Additive eval statistics ``{name: [members, n_splits]}`` of one chunk.

    ``idx`` is ``[views, batch]`` pooled rows, ``split`` ``[views, batch]`` each row's
    split (inputs.pipeline.EvalPlan): each member evaluates the rows of its own view,
    and each split's statistics are summed apart. With one view the batch is
    gathered once and shared by all members. One chunk shape per padded length, so
    every split and chunk of a length shares one compilation.
    """
    def seed_sums(p, batch, hparams):
      out = as_output(self.learner.for_member(hparams).model.apply(
          {'params': p}, batch, train=False))
      per_split = [objectives.eval_sums(
          out, {**batch, 'weights': batch['weights'] * (batch['split'] == s)},
          self.tag_tables) for s in range(n_splits)]
      return jax.tree.map(lambda *x: jnp.stack(x, -1), *per_split)

    if idx.shape[0] == 1:
      batch = {**pipeline.gather_batch(data.arrays, 0, idx[0], length),
               'split': split[0]}
      return seed_parallel(seed_sums, self.mode, in_axes=(0, None, 0))(
          params, batch, data.hparams)
    batch = {**pipeline.gather_batch(data.arrays, data.views, idx[data.views], length),
             'split': split[data.views]}
    return seed_parallel(seed_sums, self.mode)(params, batch, data.hparams)

  def _predict_batch(self, params, data: DeviceData, tokens, lengths):
    """Each member's answer for new texts: ``{'probabilities': [members, batch,
    classes]}``, and ``'tags' [members, batch, time]`` for a tagging model.

    ``tokens`` is ``[views, batch, time]`` (each view's vocabulary encodes the texts
    its own way; a member reads its view's), ``lengths`` ``[views, batch]``.
    """
    def seed_answer(p, batch, hparams):
      out = as_output(self.learner.for_member(hparams).model.apply(
          {'params': p}, batch, train=False))
      answer = {'probabilities': jax.nn.softmax(out.logits.astype(jnp.float32), -1)}
      if out.predicted_tags is not None:
        answer['tags'] = out.predicted_tags
      return answer

    if tokens.shape[0] == 1:
      batch = {'tokens': tokens[0], 'lengths': lengths[0]}
      return seed_parallel(seed_answer, self.mode, in_axes=(0, None, 0))(
          params, batch, data.hparams)
    batch = {'tokens': tokens[data.views], 'lengths': lengths[data.views]}
    return seed_parallel(seed_answer, self.mode)(params, batch, data.hparams)

  def _select_best(self, state: TrainState, score, epoch) -> TrainState:
    """Keeps each seed's parameters when its dev ``score`` [members] beats its best.

    Ties keep the earlier epoch. With ``patience`` a seed whose selection has stopped
    (see :func:`stopped`) keeps its best whatever comes later, so its numbers are
    those of the seed run alone with early stopping, whatever seeds run beside it.
    """
    better = score > state.best_score
    if self.patience:
      better &= ~stopped(state.best_epoch, epoch - 1, self.patience)

    return state.replace(
        # Member i of every [members, ...] leaf from params where better[i].
        best_params=jax.tree.map(
            lambda a, b: jnp.where(better.reshape((-1,) + (1,) * (a.ndim - 1)), a, b),
            state.params, state.best_params),
        best_score=jnp.where(better, score, state.best_score),
        best_epoch=jnp.where(better, epoch, state.best_epoch))

  def _epoch_orders(self, data: DeviceData, epoch):
    """``[members, slots, batch]``: each member's batches for ``epoch``, a pure
    function of (seed, view, epoch)."""
    return jax.vmap(lambda s, v: self.plan.seed_order(rngs.data_key(s, epoch), v))(
        data.streams[:, rngs.DATA], data.views)


def _single_member_as_pair(jitted: Callable, member_args: Sequence[int],
                           outputs: Optional[Sequence[int]] = None) -> Callable:
  """``jitted`` (a vmapped step) that runs a lone member as a pair, itself twice.

  XLA compiles a vmapped batch of one member to unbatched kernels, whose rounding
  differs from the batched kernels that every group of two or more shares; as a
  pair, a seed alone gets the bits it has in any group (docs/design.md,
  determinism policy), for twice a one-member step's arithmetic and memory (and a
  copy of the state in and out a call). The pair is made at the call, outside the
  compiled program: pairing inside it changes XLA's fusion around the step and with
  it the last bits. ``member_args``: the positions of the arguments with a members
  axis (:func:`_pair_members`); ``outputs``: the positions of the outputs with one
  (None: every output). ``.lower`` lowers the program that runs (provenance's
  program fingerprint).
  """
  def paired(args):
    return [_pair_members(a) if i in member_args else a for i, a in enumerate(args)]

  def call(*args, **kwargs):
    out = jitted(*paired(args), **kwargs)
    if outputs is None:
      return _first_member(out)
    return type(out)(_first_member(o) if i in outputs else o for i, o in enumerate(out))

  call.lower = lambda *args, **kwargs: jitted.lower(*paired(args), **kwargs)
  return call


# One dispatch for a whole state, not one a leaf (copies: no arithmetic, no rounding).
_twice = jax.jit(lambda t: jax.tree.map(lambda a: jnp.concatenate([a, a]), t))
_first_member = jax.jit(lambda t: jax.tree.map(lambda a: a[:1], t))


def _pair_members(x):
  """``x`` with each members axis repeated: ``[1, ...]`` -> ``[2, ...]``. A
  :class:`DeviceData`'s data arrays and a :class:`StepAt`'s position are shared."""
  if isinstance(x, DeviceData):
    streams, views, hparams = _twice((x.streams, x.views, x.hparams))
    return dataclasses.replace(x, streams=streams, views=views, hparams=hparams)
  if isinstance(x, (StepAt, EpochPlan)):
    return x.replace(orders=_twice(x.orders))
  return _twice(x)


def stopped(best_epoch, epoch, patience: int):
  """``[members]`` bool: after ``epoch`` (an int), has each member (``best_epoch``
  ``[members]``) gone ``patience`` epochs without a better dev score (and so would
  have stopped, trained alone)? False when off. NumPy in, NumPy out: the loop asks
  on the host (run/epoch.py ``patience_spent``), with no transfer to a device."""
  if not patience:  # no device array for a host question (in a trace: a constant)
    return np.zeros(np.shape(best_epoch), bool)
  return epoch - best_epoch >= patience

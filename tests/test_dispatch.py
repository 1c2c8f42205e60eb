"""The host in the training loop: an epoch is dispatched in chunks of steps, with no
implicit transfer between host and device, and neither the chunking nor the chunk's
form changes a number (engine/steps.py ``train_chunk``, run/epoch.py
``train_steps``). Host-free (off the CPU; forced here) a chunk's steps share a
padded length and its programs hold no conditional on a device value and no loop
bound on the device; on the CPU one switched program takes any steps
(engine.steps.host_free_programs)."""
import itertools
import math
import re
from unittest import mock

import jax
import numpy as np
import pytest

from seedsweep.engine import steps as steps_lib
from seedsweep.run import epoch as epoch_lib
from seedsweep.run import groups
from seedsweep.run import pieces
from tests.conftest import small_config

FORMS = {'switched': False, 'host_free': True}  # host_free_programs' two answers


def _build(steps_per_dispatch=8, seeds=(1, 2), buckets=2, host_free=None):
  """The demo's quick config, one epoch; ``host_free``: the chunk form whatever
  this backend's (None: its own, the switched one on a CPU)."""
  config = small_config(seeds=seeds, epochs=1, steps_per_dispatch=steps_per_dispatch)
  config.data.num_buckets = buckets
  if host_free is None:
    return pieces.build(config)
  with mock.patch.object(steps_lib, 'host_free_programs', lambda backend: host_free):
    return pieces.build(config)


def test_the_cpu_takes_the_switched_chunk_and_accelerators_the_host_free_one():
  assert [steps_lib.host_free_programs(b) for b in ('cpu', 'gpu', 'cuda', 'tpu')] == [
      False, True, True, True]


@pytest.mark.slow
@pytest.mark.parametrize('form', FORMS)
def test_an_epoch_trains_evaluates_and_logs_with_no_implicit_transfer(form):
  """Train, evaluate, keep the best and make the epoch's rows under
  ``jax.transfer_guard('disallow')``: every host-device copy in an epoch is one the
  code asks for (its inputs put once, its results fetched), none hidden in a call."""
  exp = _build(host_free=FORMS[form])
  state = exp.init_state()
  state, _, _ = epoch_lib.train_steps(exp, state, 1, max_steps=2)  # compiles, outside the guard
  state = epoch_lib.keep_best(exp, state, epoch_lib.evaluate(exp, state.params), 1)
  with jax.transfer_guard('disallow'):  # the epoch training and verify both run
    done = epoch_lib.run_epoch(exp, state, 2)
  assert done.position == exp.schedule.train_plan.steps_per_epoch and not done.stopped
  rows = done.rows
  assert len(rows) == 2 and all(np.isfinite(r['train_loss']) for r in rows)


def _dispatches(exp):
  """``[(position, length, count)]``: each ``train_chunk`` call of ``exp`` from now
  on, where it starts (counted from position 0 on) and its static arguments."""
  calls, chunk, position = [], exp.steps.train_chunk, [0]

  def counted(*args, length, count):
    calls.append((position[0], length, count))
    position[0] += count
    return chunk(*args, length=length, count=count)

  exp.steps.train_chunk = counted
  return calls


@pytest.mark.slow
def test_an_epoch_on_a_cpu_is_one_dispatch_per_eight_steps(monkeypatch):
  """The switched chunk takes ``steps_per_dispatch`` steps whatever their lengths."""
  monkeypatch.setattr(epoch_lib, 'CHUNK_SECONDS', 1e9)  # however loaded the machine
  exp = _build()
  assert not exp.steps.host_free and len(exp.steps.lengths) == 2
  calls = _dispatches(exp)
  _, _, position = epoch_lib.train_steps(exp, exp.init_state(), 1)
  steps = exp.schedule.train_plan.steps_per_epoch
  assert steps > 8 and position == steps
  assert len(calls) == math.ceil(steps / 8)


@pytest.mark.slow
def test_a_host_free_epoch_is_dispatched_in_chunks_of_one_length(monkeypatch):
  """Every chunk's steps share its padded length; a chunk takes
  ``steps_per_dispatch`` steps wherever that many of one length come in a row, else
  one (a program per length and size: two sizes only)."""
  monkeypatch.setattr(epoch_lib, 'CHUNK_SECONDS', 1e9)  # however loaded the machine
  exp = _build(steps_per_dispatch=3, host_free=True)
  calls = _dispatches(exp)
  _, _, position = epoch_lib.train_steps(exp, exp.init_state(), 1)
  lengths = [length for _, length in exp.schedule.train_plan.schedule(1)]
  assert position == len(lengths) == sum(count for _, _, count in calls)
  for start, length, count in calls:
    assert set(lengths[start:start + count]) == {length}
    assert count == (3 if lengths[start:start + 3] == [length] * 3 else 1), start
  assert {count for _, _, count in calls} == {1, 3}
  runs = [len(list(g)) for _, g in itertools.groupby(lengths)]
  assert len(calls) == sum(n // 3 + n % 3 for n in runs) < len(lengths)


@pytest.mark.slow
@pytest.mark.full  # programs shared: test_train.py's compiled-ahead and eval-length tests
@pytest.mark.parametrize('form', FORMS)
def test_a_few_steps_and_a_whole_epoch_share_their_compiled_programs(form):
  """``max_steps`` stops the loop early, it does not shorten the epoch's plan (whose
  length is a shape): benchmarks, tests and the loop share one program per length
  and chunk size (host-free), or the one switched program."""
  exp = _build(steps_per_dispatch=3, host_free=FORMS[form])
  calls = _dispatches(exp)
  state, _, position = epoch_lib.train_steps(exp, exp.init_state(), 1, max_steps=3)
  assert position == 3
  _, _, position = epoch_lib.train_steps(exp, state, 1, max_steps=5)
  assert position == 5
  programs = {(length, count) for _, length, count in calls}
  assert len(programs) > 1
  assert exp.steps.chunk_program._cache_size() == (  # pylint: disable=protected-access
      len(programs) if exp.steps.host_free else 1)


@pytest.mark.slow
@pytest.mark.full  # the chunk size: test_the_chunk_size_changes_no_bit...
@pytest.mark.parametrize('form', FORMS)
def test_chunks_shrink_to_a_step_when_steps_are_slow(monkeypatch, form):
  """A chunk is cut to one step when no step fits in CHUNK_SECONDS (here: always),
  timed from the third chunk on (the first one's end starts the clock), so that a
  stop signal waits for seconds, not for a whole epoch queued behind it."""
  monkeypatch.setattr(epoch_lib, 'CHUNK_SECONDS', 0.0)
  exp = _build(steps_per_dispatch=2, host_free=FORMS[form])
  calls = _dispatches(exp)
  _, _, position = epoch_lib.train_steps(exp, exp.init_state(), 1)
  assert [count for _, _, count in calls[:3]] == [2, 2, 2]  # the schedule's first runs
  assert {count for _, _, count in calls[3:]} == {1}
  assert len(calls) - 3 == position - 6 == exp.schedule.train_plan.steps_per_epoch - 6


@pytest.mark.slow
def test_neither_the_chunk_size_nor_its_form_changes_a_bit_and_a_stop_resumes():
  """Switched chunks of one step and of up to three, host-free ones of up to three,
  and switched ones of two stopped after the first chunk and resumed host-free (a
  run stopped on a CPU and resumed on a GPU): the same parameters and summed loss
  to the bit."""
  results = []
  for host_free, size in ((False, 1), (False, 3), (True, 3)):
    exp = _build(size, host_free=host_free)
    state, loss_sum, _ = epoch_lib.train_steps(exp, exp.init_state(), 1)
    results.append((epoch_lib.params_fingerprints(exp, state.params), np.asarray(loss_sum)))
  exp = _build(2, host_free=False)
  stops = iter([False, True])
  state, loss_sum, position = epoch_lib.train_steps(exp, exp.init_state(), 1,
                                              stop=lambda: next(stops))
  assert position == 2
  exp = _build(2, host_free=True)
  state, loss_sum, _ = epoch_lib.train_steps(exp, state, 1, start=position,
                                       loss_sum=np.asarray(loss_sum))
  results.append((epoch_lib.params_fingerprints(exp, state.params), np.asarray(loss_sum)))
  for fingerprints, losses in results[1:]:
    assert fingerprints == results[0][0]
    np.testing.assert_array_equal(losses, results[0][1])


def host_waits(text: str):
  """``(conditionals, loops)`` in StableHLO ``text`` that make XLA:GPU copy a device
  value to the host and wait: every ``stablehlo.case`` / ``stablehlo.if``, and every
  ``stablehlo.while`` whose trip count is not a compile-time constant.

  A ``fori_loop`` or ``scan`` over constants lowers to a while whose ``cond`` region
  compares a counter with a constant defined in that region, the counter's initial
  value a constant too::

    %w:3 = stablehlo.while(%iterArg = %c_0, ...) ...
     cond {
      %c_9 = stablehlo.constant dense<8> : tensor<i32>
      %1 = stablehlo.compare LT, %iterArg, %c_9, SIGNED ...

  Any other while counts (a ``fori_loop`` with traced bounds compares two loop-carried
  values). Constants are looked up by name in the enclosing ``func.func``, whose
  names are its own.
  """
  conditionals = len(re.findall(r'stablehlo\.(?:case|if)\b', text))
  loops = 0
  for loop in re.finditer(r'= stablehlo\.while\((.*?)\) :', text):
    inits = dict(re.findall(r'(%[\w#]+) = (%[\w#]+)', loop.group(1)))
    cond = text[loop.end():text.index('} do {', loop.end())]
    scope = text[text.rfind('func.func', 0, loop.start()):loop.start()]
    bound = re.search(r'stablehlo\.compare\s+LT,\s*(%[\w#]+),\s*(%[\w#]+)', cond)
    constant = lambda name, where: re.search(
        re.escape(name) + r' = stablehlo\.constant', where)
    static = (bound is not None and bound.group(1) in inits
              and constant(bound.group(2), cond)
              and constant(inits[bound.group(1)], scope))
    loops += not static
  return conditionals, loops


def test_host_waits_finds_a_switch_and_a_loop_bound_on_the_device():
  """The counter of the test below sees what it is to reject."""
  def f(x, n, i):
    x = jax.lax.fori_loop(0, n, lambda _, y: y * 2, x)  # trip count on the device
    x = jax.lax.fori_loop(0, 4, lambda _, y: y + 1, x)  # a constant one
    return jax.lax.switch(i, [lambda y: y, lambda y: -y], x)
  text = jax.jit(f).trace(1.0, 3, 0).lower(lowering_platforms=('cuda',)).as_text()
  assert text.count('stablehlo.while') == 2
  assert host_waits(text) == (1, 1)


def test_the_train_programs_lowered_for_a_gpu_never_wait_for_the_host():
  """Every chunk program of an epoch (each padded length, chunks of one step and of
  ``steps_per_dispatch``), lowered for cuda on this CPU: no conditional and no loop
  whose trip count is on the device, so XLA:GPU runs a chunk without copying a
  value to the host once a step (the NaN freeze is a select, the length a static
  argument, the chunk's trip count a constant)."""
  exp = _build(steps_per_dispatch=8, host_free=True)
  state = jax.eval_shape(exp.init_state)
  plan = exp.steps.epoch_plan(exp.device, 1, exp.schedule.train_plan.schedule(1))
  total, cursor = epoch_lib.chunk_carry(exp, None, 0)
  assert len(exp.steps.lengths) == 2
  for length in exp.steps.lengths:
    for count in (1, 8):
      text = exp.steps.chunk_program.trace(
          state, exp.device, plan, cursor, total, length=length,
          count=count).lower(lowering_platforms=('cuda',)).as_text()
      assert text.count('stablehlo.while') > 1  # the chunk's loop and the scans
      assert host_waits(text) == (0, 0), (length, count)


def test_the_cpus_switched_chunk_is_one_program_that_would_wait_on_a_gpu():
  """What the host-free form removes, kept where it costs no copy: the switched
  chunk holds the length switch and the loop bound on the device, once each."""
  exp = _build(steps_per_dispatch=8)
  state = jax.eval_shape(exp.init_state)
  plan = exp.steps.epoch_plan(exp.device, 1, exp.schedule.train_plan.schedule(1))
  total, cursor = epoch_lib.chunk_carry(exp, None, 0)
  [lowered] = exp.steps.lower_chunks(state, exp.device, plan, cursor, total)
  assert host_waits(lowered.as_text()) == (1, 1)


@pytest.mark.slow
@pytest.mark.parametrize('form, modules, conditionals',
                         [('host_free', 2, 0), ('switched', 1, 1)])
def test_the_compiled_step_programs_hold_a_conditional_only_switched(form, modules,
                                                                     conditionals):
  """XLA:CPU's compiled programs: one per length host-free, none holding a
  conditional (the NaN freeze is a select); switched, one, whose only conditional
  picks a step's length."""
  exp = _build(buckets=2, host_free=FORMS[form])
  text = epoch_lib.train_programs_hlo(exp, exp.init_state())
  assert text.count('HloModule') == modules
  assert text.count(' conditional(') == conditionals


def _lanes_chunk_text(seeds, lanes: int) -> str:
  """The first lane group's one-step chunk program of ``seeds`` under lanes, host-free,
  lowered for cuda, its source locations cut (they name this test's lines)."""
  config = small_config(seeds=seeds, epochs=1, seed_parallel='lanes', lanes=lanes)
  config.data.num_buckets = 1
  with mock.patch.object(steps_lib, 'host_free_programs', lambda backend: True):
    exp = pieces.build(config)
    bounds = groups.for_placement(len(seeds), 10 ** 6, exp.placement.group, lanes)
    if bounds:  # the first lane group, through the same programs as the others
      exp = exp.group(*bounds[0])
  state = jax.eval_shape(exp.init_state)
  plan = exp.steps.epoch_plan(exp.device, 1, exp.schedule.train_plan.schedule(1))
  total, cursor = epoch_lib.chunk_carry(exp, None, 0)
  text = exp.steps.chunk_program.trace(
      state, exp.device, plan, cursor, total, length=exp.steps.lengths[0],
      count=1).lower(lowering_platforms=('cuda',)).as_text()
  assert host_waits(text) == (0, 0)
  return re.sub(r'loc\(.*?\)', '', text)


@pytest.mark.slow
@pytest.mark.full  # lanes' shapes and groups: tests/test_lanes.py
def test_under_lanes_a_gpus_program_is_the_same_whatever_the_seed_count():
  """One seed, three, and five (two lane groups) at 4 lanes: the same program for
  cuda, text for text (so the same kernels), with no host wait; at another width
  other shapes."""
  texts = [_lanes_chunk_text(seeds, 4) for seeds in ((7,), (1, 2, 3), (1, 2, 3, 4, 5))]
  assert texts[0] == texts[1] == texts[2]
  assert 'tensor<4x' in texts[0]
  assert _lanes_chunk_text((1, 2, 3), 3) != texts[1]  # another width, other shapes

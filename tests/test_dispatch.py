"""The host in the training loop: an epoch is a few dispatches of one program that
runs several steps, with no implicit transfer between host and device, and the
chunking changes no number (engine/steps.py ``train_chunk``, run/experiment.py
``train_steps``)."""
import math

import jax
import numpy as np
import pytest

from seedsweep.run import epoch as epoch_lib
from seedsweep.run import experiment
from tests.conftest import small_config


def _build(steps_per_dispatch=8, seeds=(1, 2), buckets=2):
  config = small_config(seeds=seeds, epochs=1, steps_per_dispatch=steps_per_dispatch)
  config.data.num_buckets = buckets
  return experiment.build(config)


@pytest.mark.slow
def test_an_epoch_trains_evaluates_and_logs_with_no_implicit_transfer():
  """Train, evaluate, keep the best and make the epoch's rows under
  ``jax.transfer_guard('disallow')``: every host-device copy in an epoch is one the
  code asks for (its inputs put once, its results fetched), none hidden in a call."""
  exp = _build()
  state = exp.init_state()
  state, _, _ = exp.train_steps(state, 1, max_steps=2)  # compiles, outside the guard
  state = exp.keep_best(state, exp.evaluate_all(state.params), 1)
  with jax.transfer_guard('disallow'):  # the epoch training and verify both run
    done = epoch_lib.run_epoch(exp, state, 2)
    assert not exp.all_stopped(done.state, 2)
  assert done.position == exp.schedule.plan.steps_per_epoch and not done.stopped
  rows = done.rows
  assert len(rows) == 2 and all(np.isfinite(r['train_loss']) for r in rows)


@pytest.mark.slow
def test_an_epoch_is_one_dispatch_per_eight_steps(monkeypatch):
  monkeypatch.setattr(experiment, 'CHUNK_SECONDS', 1e9)  # however loaded the machine
  exp = _build()
  calls = []
  chunk = exp.steps.train_chunk
  exp.steps.train_chunk = lambda *a, **k: calls.append(1) or chunk(*a, **k)
  _, _, position = exp.train_steps(exp.init_state(), 1)
  steps = exp.schedule.plan.steps_per_epoch
  assert steps > 8 and position == steps
  assert len(calls) == math.ceil(steps / 8)


@pytest.mark.slow
@pytest.mark.full  # one program: test_train.py's compiled-ahead and eval-length tests
def test_a_few_steps_and_a_whole_epoch_are_one_compiled_program():
  """``max_steps`` stops the loop early, it does not shorten the epoch's plan (whose
  length is a shape): benchmarks, tests and the loop share one chunk program."""
  exp = _build()
  state, _, position = exp.train_steps(exp.init_state(), 1, max_steps=3)
  assert position == 3
  _, _, position = exp.train_steps(state, 1, max_steps=5)
  assert position == 5
  assert exp.steps.train_chunk._cache_size() == 1  # pylint: disable=protected-access


@pytest.mark.slow
@pytest.mark.full  # the chunk size: test_the_chunk_size_changes_no_bit...
def test_chunks_shrink_to_a_step_when_steps_are_slow(monkeypatch):
  """A chunk is cut to the steps that fit in CHUNK_SECONDS (here none: one step),
  timed from the third chunk on (the first one's end starts the clock), so that a
  stop signal waits for seconds, not for a whole epoch queued behind it."""
  monkeypatch.setattr(experiment, 'CHUNK_SECONDS', 0.0)
  exp = _build()
  sizes = []
  on_device = exp.chunk_sizes.on_device
  exp.chunk_sizes.on_device = lambda n: sizes.append(n) or on_device(n)
  _, _, position = exp.train_steps(exp.init_state(), 1)
  assert sizes[:3] == [8, 8, 8] and set(sizes[3:]) == {1}
  assert sum(sizes) == position == exp.schedule.plan.steps_per_epoch


@pytest.mark.slow
def test_the_chunk_size_changes_no_bit_and_a_stop_resumes_between_chunks():
  """One step a dispatch, eight, and three stopped after the first chunk and
  resumed: the same parameters and summed loss to the bit."""
  results = []
  for size in (1, 8):
    exp = _build(size)
    state, loss_sum, _ = exp.train_steps(exp.init_state(), 1)
    results.append((exp.params_fingerprints(state.params), np.asarray(loss_sum)))
  exp = _build(3)
  stops = iter([False, True])
  state, loss_sum, position = exp.train_steps(exp.init_state(), 1,
                                              stop=lambda: next(stops))
  assert position == 3
  state, loss_sum, _ = exp.train_steps(state, 1, start=position,
                                       loss_sum=np.asarray(loss_sum))
  results.append((exp.params_fingerprints(state.params), np.asarray(loss_sum)))
  for fingerprints, losses in results[1:]:
    assert fingerprints == results[0][0]
    np.testing.assert_array_equal(losses, results[0][1])


@pytest.mark.slow
def test_the_step_program_has_no_conditional_on_a_device_value():
  """The NaN guard is a select: one length bucket compiles to a loop with no
  conditional in it; several buckets add only the switch that picks a step's length."""
  for buckets, switches in ((1, 0), (2, 1)):
    exp = _build(buckets=buckets)
    text = exp.train_step_hlo(exp.init_state())
    assert text.count(' conditional(') == switches, buckets

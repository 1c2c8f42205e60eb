"""Lanes (``config.train.seed_parallel='lanes'``, run/pieces.py ``place``): members
vmapped at the fixed width ``config.train.lanes``, padded, groups of lanes one after
another, so every program of a run has the same shapes whatever its member count.

On a GPU that is what keeps a seed's bits its own (docs/gpu.md, "Lanes"); here, under
portable numerics, the tests hold the padding, the lane groups and their resume to the
bits of the seeds run otherwise. benchmarks/lanes_proxy.py compares the same under
XLA:CPU's native numerics (docs/reproducibility.md, "Lanes on the CPU").
"""
import json
import os

import pytest

from seedsweep.errors import UserError
from seedsweep.run import groups
from seedsweep.run import loop
from seedsweep.run import outputs
from seedsweep.run import pieces
from seedsweep.run import verify
from tests.conftest import run_launch
from tests.conftest import small_config


def _lanes(seeds, lanes, epochs=1):
  return small_config(seeds=seeds, epochs=epochs, seed_parallel='lanes', lanes=lanes)


def _by_seed(workdir):
  """``{seed: [its rows, epoch by epoch]}`` without the wall time."""
  out = {}
  for r in groups.rows(str(workdir)):
    out.setdefault(r['seed'], []).append(
        {k: v for k, v in r.items() if k not in ('wall_time', 'member')})
  return out


@pytest.mark.parametrize('members, lanes, size, bounds', [
    (1, 4, 4, None),                        # one member pads a lane group
    (3, 4, 4, None),
    (4, 4, 4, None),
    (5, 4, 8, [(0, 3), (3, 5)]),            # two groups, each padded to 4
    (20, 16, 32, [(0, 10), (10, 20)]),
    (100, 16, 112, 'seven groups'),
])
def test_a_run_pads_to_whole_lane_groups_and_splits_into_them(members, lanes, size,
                                                              bounds):
  config = _lanes((1,), lanes)
  placement = pieces.place(config, members)
  assert (placement.mode, placement.lanes, placement.size) == ('vmap', lanes, size)
  assert placement.group == lanes and placement.form == 'lanes'
  planned = groups.for_placement(members, 10 ** 6, placement.group, lanes)
  if members == 100:  # 7 groups of 14 or 15, each padded to 16
    assert [b - a for a, b in planned] == [15, 15] + [14] * 5
  else:
    assert planned == bounds
  # Every group, trained, has the lanes' shape: the same compiled program.
  for a, b in planned or [(0, members)]:
    assert pieces.place(config, b - a).size == lanes


def test_a_lane_group_over_the_memory_budget_is_refused_in_one_line():
  with pytest.raises(UserError) as e:
    groups.for_placement(10, 3, 16, 16)
  message = str(e.value)
  assert '\n' not in message
  assert message.startswith('config.train.lanes=16: one lane group (16 members on '
                            'device) needs more memory than the budget holds (3 members)')
  assert '--config.train.lanes=3' in message


@pytest.mark.parametrize('value', [0, -1, True])
def test_a_bad_lane_width_names_the_field(value):
  config = _lanes((1,), value)
  with pytest.raises(UserError, match=r'^config.train.lanes=.*; expected an int'):
    pieces.build(config)


def test_the_record_names_the_form_and_the_width():
  exp = pieces.build(_lanes((1, 2, 3), 4))
  assert exp.provenance['seed_parallel'] == 'lanes'
  assert exp.provenance['lanes'] == 4
  assert exp.placement.size == 4 and len(exp.members) == 3
  state = exp.init_state()
  assert state.step.shape == (4,)  # the padded lane holds a copy of the last member
  assert exp.real(state.step).shape == (3,)
  assert pieces.build(small_config(seeds=(1,))).provenance['lanes'] == 0


@pytest.mark.slow
@pytest.mark.full  # the padding and the plan: above
def test_a_seeds_bits_are_its_own_alone_among_others_reversed_and_in_lane_groups(
    tmp_path):
  """Seed 3 alone (one lane of 4 used), among three seeds (lane 2), in reversed order
  (lane 0), and at width 2, where three seeds train as two lane groups, one padded:
  every row of its metrics, its parameters' hash included, is the same."""
  runs = {'alone': _lanes((3,), 4), 'among': _lanes((1, 2, 3), 4),
          'reversed': _lanes((3, 2, 1), 4), 'groups': _lanes((1, 2, 3), 2)}
  said = {}
  for name, config in runs.items():
    printed = []
    loop.train(config, str(tmp_path / name), print_fn=printed.append)
    said[name] = '\n'.join(map(str, printed))
  assert groups.recorded(str(tmp_path / 'groups')) == [(0, 2), (2, 3)]
  assert '3 members in 2 lane groups of 2 (train.lanes=2)' in said['groups']
  rows = {name: _by_seed(tmp_path / name) for name in runs}
  for name in ('among', 'reversed', 'groups'):
    assert rows[name][3] == rows['alone'][3], name
  assert rows['among'][1] == rows['reversed'][1] == rows['groups'][1]
  results = outputs.read_json(str(tmp_path / 'groups' / outputs.RESULTS))
  assert results['provenance']['lanes'] == 2
  assert len(results['metrics']['test_accuracy']) == 3


@pytest.mark.slow
@pytest.mark.full  # a lane group's resume; the groups' own kill: test_groups.py
def test_lane_groups_killed_and_resumed_give_the_undisturbed_runs_bits(tmp_path):
  """Three seeds at width 2 killed once the first lane group is done: the rerun
  trains the second only, and every row, verify included, is the undisturbed run's."""
  config = _lanes((1, 2, 3), 2)
  whole = str(tmp_path / 'whole')
  loop.train(config, whole, print_fn=lambda *_: None)
  killed = str(tmp_path / 'killed')
  args = ['--config=experiments/demo.py:quick', f'--workdir={killed}',
          '--config.seeds=(1, 2, 3)', '--config.train.num_epochs=1',
          '--config.train.progress=False', '--config.train.seed_parallel=lanes',
          '--config.train.lanes=2']
  proc = run_launch(*args, env={'SEEDSWEEP_FAULT': 'group:1'})
  assert proc.returncode != 0 and 'fault: SIGKILL at group:1' in proc.stderr
  printed = []
  loop.train(config, killed, print_fn=printed.append)
  printed = '\n'.join(map(str, printed))
  assert 'group 1/2' not in printed and 'group 2/2' in printed
  assert _by_seed(killed) == _by_seed(whole)
  lines = []
  assert verify.verify(config, killed, epochs=1, print_fn=lines.append)['reproduced'], \
      lines
  with open(os.path.join(killed, groups.SPLIT)) as f:
    assert json.load(f)['bounds'] == [[0, 2], [2, 3]]


@pytest.mark.slow
@pytest.mark.full  # a benchmark's smoke: its figures are in docs/log.md
def test_the_native_numerics_proxy_compares_every_run_with_the_seed_alone(tmp_path):
  """benchmarks/lanes_proxy.py in a small form, in its own process (native numerics
  are pinned before JAX starts): a row per run, each against the seed alone."""
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  from tests.conftest import REPO, user_environment  # pylint: disable=g-import-not-at-top
  proc = subprocess.run(
      [sys.executable, os.path.join(REPO, 'benchmarks', 'lanes_proxy.py'),
       '--members=3', '--lanes=2', '--steps=2', f'--out={tmp_path}'],
      cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
      env=user_environment())
  assert proc.returncode == 0, proc.stderr[-3000:]
  record = json.loads([l for l in proc.stdout.splitlines() if l.startswith('{')][-1])
  assert record['numerics'] == 'native' and record['lanes'] == 2
  assert set(record['rows']) == {'among', 'reversed', 'groups',
                                 'vmap among (against vmap alone)'}
  assert all(r['arrays'] == 9 and 0 <= r['differ'] <= 9 for r in record['rows'].values())
  assert '| among | ' in proc.stdout and os.listdir(tmp_path)

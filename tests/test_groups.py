"""seedsweep/run/groups.py: members over the memory budget train in groups, one
after another inside the run, with every member's numbers those of one program."""
import json
import os

import pytest

from seedsweep.errors import UserError
from seedsweep.run import groups
from seedsweep.run import loop
from seedsweep.run import outputs
from seedsweep.run import pieces
from seedsweep.run import predict
from seedsweep.run import verify
from tests.conftest import run_launch
from tests.conftest import small_config

SEEDS = (1, 2, 3, 4, 5)


@pytest.mark.parametrize('members, fits, multiple, sizes', [
    (10, 10, 1, [10]),
    (10, 4, 1, [4, 3, 3]),       # 3 groups, not 4 + 4 + 2
    (300, 61, 1, [60] * 5),      # one size: one compile
    (5, 2, 1, [2, 2, 1]),
    (12, 5, 2, [4, 4, 4]),       # whole devices of a mesh
    (7, 1, 1, [1] * 7),
])
def test_the_plan_is_the_fewest_balanced_groups_that_fit(members, fits, multiple,
                                                         sizes):
  bounds = groups.plan(members, fits, multiple)
  assert [b - a for a, b in bounds] == sizes
  assert bounds[0][0] == 0 and bounds[-1][1] == members
  assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))


def _budget_for(config, members: int) -> int:
  """A memory budget within which ``members`` members of ``config`` fit, not more."""
  est = pieces.build(config).memory_estimate
  return int(est.shared_mib + (members + 0.5) * est.member_mib)


def _rows(workdir):
  return [{k: v for k, v in r.items() if k != 'wall_time'}
          for r in outputs.MetricsLog(workdir).rows()]


def _config(**train):
  return small_config(seeds=SEEDS, epochs=1, **train)


@pytest.mark.slow
@pytest.mark.full  # the plan and a damaged split file: below; a run's modes: test_package
def test_a_split_run_gives_every_member_the_numbers_of_one_program_under_vmap(tmp_path):
  """Five members in groups of 2, 2 and 1 under vmap (the lone member runs as a
  pair): the same metrics rows, parameter hashes and results as all five in one
  program. (Under map: the next test.)"""
  config = _config(seed_parallel='vmap')
  whole = loop.train(config, str(tmp_path / 'whole'), print_fn=lambda *_: None)
  config.runtime.memory_budget = _budget_for(config, 2)
  said = []
  split = loop.train(config, str(tmp_path / 'split'), print_fn=said.append)
  assert any('training them in 3 groups of 1 or 2 one after another' in s
             for s in said)
  assert groups.recorded(str(tmp_path / 'split')) == [(0, 2), (2, 4), (4, 5)]
  assert _rows(tmp_path / 'split') == _rows(tmp_path / 'whole')
  assert split['metrics'] == whole['metrics']
  assert split['summary'] == whole['summary']
  assert not os.path.exists(tmp_path / 'split' / 'checkpoints')  # the groups' own


@pytest.mark.slow
@pytest.mark.full  # a split run also: the vmap test above; the modes: test_package.py
def test_a_split_run_evaluates_predicts_verifies_and_resumes_as_one(tmp_path):
  config = _config()
  whole_dir, split_dir = str(tmp_path / 'whole'), str(tmp_path / 'split')
  whole = loop.train(config, whole_dir, print_fn=lambda *_: None)
  budget = _budget_for(config, 2)
  # Killed once its first group is done: the rerun trains the other two only.
  args = ['--config=experiments/demo.py:quick', f'--workdir={split_dir}',
          f'--config.seeds={SEEDS}', '--config.train.num_epochs=1',
          '--config.train.progress=False', f'--config.runtime.memory_budget={budget}']
  proc = run_launch(*args, env={'SEEDSWEEP_FAULT': 'group:1'})
  assert proc.returncode != 0 and 'fault: SIGKILL at group:1' in proc.stderr
  config.runtime.memory_budget = budget
  printed = []  # the rerun in this process: the same config as those flags
  loop.train(config, split_dir, print_fn=printed.append)
  printed = '\n'.join(map(str, printed))
  assert 'group 1/3' not in printed and 'group 2/3: members 2..3' in printed
  assert _rows(split_dir) == _rows(whole_dir)
  os.remove(os.path.join(split_dir, outputs.RESULTS))
  evaluated = loop.evaluate(config, split_dir, print_fn=lambda *_: None)
  assert evaluated['metrics'] == whole['metrics']
  texts = ['a fine film', 'dull and long']
  said = predict.predict(config, split_dir, texts, print_fn=lambda *_: None)
  alone = predict.predict(config, whole_dir, texts, print_fn=lambda *_: None)
  assert said['members'] == alone['members']
  assert said['per_seed_probabilities'] == alone['per_seed_probabilities']
  lines = []
  checked = verify.verify(config, split_dir, epochs=1, print_fn=lines.append)
  assert checked['reproduced'], lines
  assert '3 checkpoint(s) intact' in lines[0]  # one a group


def test_a_damaged_split_file_is_refused_in_one_line(tmp_path):
  workdir = tmp_path / 'r'
  workdir.mkdir()
  (workdir / groups.SPLIT).write_text('{"bounds": "all"}')
  with pytest.raises(UserError, match=r'groups.json is not a split of members'):
    groups.recorded(str(workdir))
  (workdir / groups.SPLIT).write_text(json.dumps({'bounds': [[0, 2], [2, 4]]}))
  with pytest.raises(UserError, match=r'splits members 0..3, but the run has 5'):
    groups.split(str(workdir), 5, 2)

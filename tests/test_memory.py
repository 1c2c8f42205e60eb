"""seedsweep/run/memory.py: a run's peak memory from its shapes, and the budget."""
import json
import os

import jax
import numpy as np
import pytest

from seedsweep.errors import UserError
from seedsweep.run import memory
from seedsweep.run import pieces
from tests.conftest import REPO
from tests.conftest import run_launch
from tests.conftest import small_config


def _mib(tree):
  return sum(np.asarray(x).nbytes for x in jax.tree.leaves(tree)) / memory.MIB


def test_the_state_part_is_the_bytes_of_a_real_members_state():
  """What the estimate counts a member's state at, from shapes alone, is what
  initialising one member holds."""
  exp = pieces.build(small_config(seeds=(1,)))
  state = exp.init_state()
  assert exp.memory_estimate.state_mib == pytest.approx(_mib(state), rel=1e-6)
  params = _mib(state.params)
  assert exp.memory_estimate.step_mib == pytest.approx(
      2 * params + _mib(state.opt_state), rel=1e-6)


def test_members_add_their_state_and_under_vmap_their_activations():
  config = small_config(seeds=(1, 2, 3))
  by_mode = {}
  for mode in ('map', 'vmap'):
    config.train.seed_parallel = mode
    by_mode[mode] = pieces.build(config).memory_estimate
  m, v = by_mode['map'], by_mode['vmap']
  assert m.activations_mib == v.activations_mib > 0
  assert v.member_mib - m.member_mib == pytest.approx(
      memory.constants('cpu').activations * m.activations_mib)
  assert m.peak_mib(10) == pytest.approx(m.shared_mib + 10 * m.member_mib)
  assert m.members_within(m.peak_mib(7) + 1e-6) == 7


def test_a_budget_below_one_member_is_refused_in_one_line_before_compiling():
  config = small_config()
  config.runtime.memory_budget = 1
  with pytest.raises(UserError) as e:
    pieces.build(config)
  message = str(e.value)
  assert '\n' not in message
  assert message.startswith('config.runtime.memory_budget: one member of this run '
                            'needs ~')
  assert 'over the budget of 1 MiB' in message


@pytest.mark.slow
def test_describe_shows_the_estimate_and_the_groups_a_run_would_train_in():
  proc = run_launch('--config=experiments/demo.py:quick', '--mode=describe', '--json')
  assert proc.returncode == 0, proc.stderr[-3000:]
  m = json.loads(proc.stdout)['memory_mib']
  assert m['peak_mib'] == pytest.approx(m['shared_mib'] + 10 * m['member_mib'], abs=1)
  assert m['budget_mib'] > 0 and m['members_within_budget'] > 10
  budget = int(m['shared_mib'] + 3.5 * m['member_mib'])  # three members fit
  proc = run_launch('--config=experiments/demo.py:quick', '--mode=describe',
                    f'--config.runtime.memory_budget={budget}')
  assert (f'budget {budget:,} MiB, within it 3 members: a run trains them in 4 '
          'groups one after another' in proc.stdout)


def _h200_runs():
  """Every run of the H200 check that finished: (mode, members, its estimate's
  parts, its measured peak device MiB)."""
  runs = []
  for form in ('vmap', 'map'):
    with open(os.path.join(REPO, 'benchmarks', 'results',
                           f'device_check_2026-12-04_h200_{form}.json')) as f:
      record = json.load(f)
    runs += [(r['estimate']['mode'], r['members'], r['estimate'], r['peak_device_mib'])
             for r in record['runs'] if r.get('status') == 'ok']
  return runs


def test_a_gpus_estimate_is_within_one_and_a_half_times_the_h200s_peaks():
  """The GPU constants, on the parts each run of the H200 check counted, estimate its
  measured peak within 1.5x and never under (Bi-LSTM and DLSTM SST-2, 1 to 100
  members, vmap and map; docs/gpu.md, "Measured"), so a budget splits no group that
  one program holds; the CPU's constants (its process's RSS) were 2.2-5.3x those peaks."""
  runs = _h200_runs()
  assert len(runs) >= 10
  for mode, members, parts, peak in runs:
    args = (mode, parts['state_mib'], parts['step_mib'], parts['activations_mib'],
            parts['data_mib'])
    ratio = memory.from_parts(*args, 'gpu').peak_mib(members) / peak
    assert 1.0 <= ratio <= 1.5, (mode, members, ratio)
    assert memory.from_parts(*args, 'cpu').peak_mib(members) / peak > 1.5
  # A lone member on a GPU is not paired (only XLA:CPU's batched kernels ask it).
  assert not memory.from_parts('vmap', 1, 1, 1, 1, 'gpu').paired
  assert memory.from_parts('vmap', 1, 1, 1, 1, 'cpu').paired


@pytest.mark.parametrize('value', [-1, True])
def test_a_bad_budget_names_the_field(value):
  config = small_config()
  config.runtime.memory_budget = value
  with pytest.raises(UserError, match=r'^config.runtime.memory_budget=.*; expected MiB'):
    pieces.build(config)

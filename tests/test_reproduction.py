"""``--mode=verify --statistical``: a run reproduced as a distribution where bits
cannot match, and the equivalence statistics behind the verdict."""
import os
import shutil

import numpy as np
import pytest
from scipy import stats

from seedsweep.errors import UserError
from seedsweep.reports import reproduction
from seedsweep.reports import statistics
from tests.conftest import run_launch

# One train-step compilation a numerics. Four seeds a side: both verdicts stand
# clear of the threshold (2026-12-02: equal scores, TOST p 0.007; ten times the
# learning rate, p 0.88 and dominated), at 2/5 of ten seeds' training time.
QUICK = ('--config=experiments/demo.py:quick', '--config.train.progress=False',
         '--config.data.num_buckets=1', '--config.seeds=(1,2,3,4)')


def test_tost_is_the_larger_of_two_shifted_welch_tests():
  rng = np.random.default_rng(0)
  a, b = rng.normal(80, 2, 10), rng.normal(80.5, 1.5, 8)
  for margin in (0.5, 2.0, 4.0):
    lower = stats.ttest_ind(a + margin, b, equal_var=False, alternative='greater').pvalue
    upper = stats.ttest_ind(a - margin, b, equal_var=False, alternative='less').pvalue
    assert statistics.tost_p(a, b, margin) == pytest.approx(max(lower, upper), rel=1e-9)
  assert statistics.tost_p([1.0], [1.0, 2.0], 1.0) is None


def test_the_default_margin_gives_equal_distributions_the_stated_power():
  """The margin the seed counts resolve: at it, two samples of one distribution pass
  the equivalence test 80 % of the time, by simulation too."""
  margin = statistics.resolvable_margin(1.0, 10, 10)
  assert statistics.tost_power(1.0, 10, 10, margin) == pytest.approx(0.8)
  assert 1.3 < margin < 1.5  # about 1.4 standard deviations for ten seeds a side
  rng = np.random.default_rng(1)
  passed = np.mean([statistics.tost_p(rng.normal(0, 1, 10), rng.normal(0, 1, 10),
                                      margin) < 0.05 for _ in range(2000)])
  assert passed == pytest.approx(0.8, abs=0.03)


def test_verdict_reproduced_within_the_spread_and_differs_beyond_it():
  rng = np.random.default_rng(2)
  record = rng.normal(86.7, 1.45, 10)
  same = reproduction.verdict(record, rng.normal(86.7, 1.45, 10) + 0.1)
  assert same['reproduced'] and same['tost_p'] < 0.05
  shifted = reproduction.verdict(record, record - 3.0)
  assert not shifted['reproduced']
  assert shifted['aso_epsilon']['record_over_reproduction'] < reproduction.ASO_THRESHOLD
  text = reproduction.describe(shifted, 'test_accuracy')
  assert text.startswith('differs: test_accuracy 86.') and 'difference -3.00' in text
  with pytest.raises(UserError, match='two seeds a side'):
    reproduction.verdict([80.0], [80.0, 81.0])


@pytest.mark.slow
@pytest.mark.full  # its verdicts: the tests above; verify: test_determinism.py
def test_statistical_verify_across_numerics_and_against_another_learning_rate(tmp_path):
  """A record of native numerics, retrained under portable ones: reproduced as a
  distribution (exit 0). A record whose scores came from ten times the learning
  rate its config states: differs (exit 1)."""
  native = str(tmp_path / 'native')
  proc = run_launch(*QUICK, f'--workdir={native}', '--config.runtime.numerics=native')
  assert proc.returncode == 0, proc.stderr
  proc = run_launch(*QUICK, f'--workdir={native}', '--mode=verify', '--statistical')
  assert proc.returncode == 0, proc.stdout + proc.stderr
  assert f'{native}: reproduced as a distribution: test_accuracy' in proc.stdout
  assert 'native numerics' in proc.stdout and 'portable numerics' in proc.stdout
  assert os.path.exists(os.path.join(native + '.reproduction', 'results.json'))

  import seedsweep  # pylint: disable=g-import-not-at-top
  faster = str(tmp_path / 'faster')  # trained in this process: only its scores count
  seedsweep.train(seedsweep.load_config(
      'experiments/demo.py:quick', train__progress=False, data__num_buckets=1,
      seeds=(1, 2, 3, 4), optimizer__learning_rate=0.05), faster, print_fn=lambda *a: None)
  claimed = str(tmp_path / 'claimed')
  shutil.copytree(native, claimed)
  shutil.copy(os.path.join(faster, 'results.json'), os.path.join(claimed, 'results.json'))
  proc = run_launch(*QUICK, f'--workdir={claimed}', '--mode=verify', '--statistical',
                    f'--reproduce_into={native}.reproduction')
  assert proc.returncode == 1, proc.stdout + proc.stderr
  assert f'{claimed}: differs: test_accuracy' in proc.stdout


def test_a_reproduction_may_change_the_runtime_only(tmp_path):
  from tests.conftest import small_config  # pylint: disable=g-import-not-at-top
  from seedsweep.config import checks  # pylint: disable=g-import-not-at-top
  from seedsweep.run import outputs  # pylint: disable=g-import-not-at-top
  workdir = str(tmp_path / 'run')
  os.makedirs(workdir)
  config = small_config()
  outputs.write_json(os.path.join(workdir, outputs.CONFIG), checks.to_dict(config))
  outputs.write_json(os.path.join(workdir, outputs.RESULTS), {'metrics': {}})
  config.optimizer.learning_rate = 0.5
  with pytest.raises(UserError, match=r'differs from the config .* in '
                                      r'optimizer.learning_rate: 0.005 != 0.5'):
    reproduction.reproduce(config, workdir)

"""The files a run writes (seedsweep/run/outputs.py)."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from seedsweep.run import outputs
from tests.conftest import REPO


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path):
  path = str(tmp_path / 'results.json')
  outputs.write_json(path, {'a': 1})
  with pytest.raises(TypeError):
    outputs.write_json(path, {'a': object()})  # not JSON: fails half-way
  assert json.load(open(path)) == {'a': 1}
  assert os.listdir(tmp_path) == ['results.json']


def test_metrics_rows_of_later_epochs_are_dropped_on_resume(tmp_path):
  log = outputs.MetricsLog(str(tmp_path))
  log.append([{'epoch': e, 'seed': 1, 'train_loss': 1.0 / e} for e in (1, 2, 3)])
  log.keep_epochs_up_to(2)
  assert [r['epoch'] for r in log.rows()] == [1, 2]
  assert sorted(os.listdir(tmp_path)) == [outputs.METRICS]


def test_the_final_table_counts_one_seed_as_one_seed():
  one = outputs.build_results([7], {'test_accuracy': [81.5]})
  assert outputs.format_table(one).splitlines()[0].endswith('(1 seed)')
  assert '81.50 ± 0.00' in outputs.format_table(one)
  two = outputs.build_results([1, 2], {'test_accuracy': [80.0, 82.0]})
  assert outputs.format_table(two).splitlines()[0].endswith('(2 seeds)')
  cv = outputs.build_results([1, 1], {'test_accuracy': [80.0, 82.0]}, folds=[0, 1])
  assert '(1 seed, each the mean over 2 cross-validation folds)' in (
      outputs.format_table(cv))


@pytest.mark.parametrize('first', ['', 'torch'])
def test_tensorboard_logs_are_written_without_importing_pytorch(tmp_path, first):
  """Where torch is installed, tensorboardX would import it (about 2 s a run's start);
  a process that imported torch itself (``first``) writes its logs all the same."""
  if first and importlib.util.find_spec(first) is None:
    pytest.skip(f'{first} is not installed here')
  code = (f'import sys{", " + first if first else ""}; '
          'from seedsweep.run import outputs; '
          f'board = outputs.TensorBoard({str(tmp_path)!r}, ["seed_1"]); '
          'board.write([{"epoch": 1, "seed": 1, "dev_accuracy": 50.0}]); board.close(); '
          'print("torch" in sys.modules)')
  proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                        check=False, cwd=REPO)
  assert proc.returncode == 0, proc.stderr[-2000:]
  assert proc.stdout.split() == [str(bool(first))]
  assert sorted(os.listdir(tmp_path / 'tensorboard')) == ['aggregate', 'seed_1']


def test_the_mean_interval_has_the_bits_of_scipys_t_interval():
  from scipy import stats  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(0)
  for n, level in ((2, 0.95), (3, 0.95), (10, 0.95), (10, 0.99), (37, 0.9)):
    values = rng.normal(80, 3, n)
    mean, std = values.mean(), values.std(ddof=1)
    assert outputs.mean_interval(values, level) == stats.t.interval(
        level, n - 1, loc=mean, scale=std / np.sqrt(n))
  assert outputs.mean_interval([1.5]) is None
  assert outputs.mean_interval([2.0, 2.0]) == (2.0, 2.0)

"""The files a run writes (seedsweep/run/outputs.py)."""
import json
import os

import pytest

from seedsweep.run import outputs


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

"""benchmarks/compare.py runs end to end (its numbers are for people, not tests)."""
import json
import os
import subprocess
import sys

import pytest

from benchmarks import compare
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # end-to-end: `pytest -m "not slow"` skips it


def test_compare_quick_writes_its_tables(tmp_path):
  proc = subprocess.run([sys.executable, os.path.join(REPO, 'benchmarks', 'compare.py'),
                         '--quick', '--cores=1', f'--out={tmp_path}'],
                        cwd=REPO, capture_output=True, text=True, timeout=900,
                        check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  [name] = [n for n in os.listdir(tmp_path) if n.endswith('.json')]
  report = json.load(open(tmp_path / name))
  part = report['parts']['1']
  names = [r['contestant'] for r in part['whole']]
  assert names[0] == 'seedsweep, all seeds in one program'
  assert names[-1] == 'seedsweep, one run per seed'
  for row in part['whole']:
    assert row['wall_s'] > 0 and row['processes'] >= 1
    assert 0 <= row['test_accuracy_mean'] <= 100
  probes = part['models']['bilstm']
  assert probes['all seeds']['members'] == 2 and probes['1 seed']['members'] == 1
  assert 0 < probes['all seeds']['fraction_of_peak'] < 1.5
  assert (tmp_path / name.replace('.json', '.md')).read_text().count('|') > 20


def test_compare_ab_parts_and_members_probe_what_they_name(tmp_path):
  """Both A/B parts and the members part in one command (one process start)."""
  parts = {'updates': 'embedding_update', 'numerics': 'numerics'}
  proc = subprocess.run([sys.executable, os.path.join(REPO, 'benchmarks', 'compare.py'),
                         '--quick', '--cores=1', f'--parts={",".join(parts)},members',
                         f'--out={tmp_path}'],
                        cwd=REPO, capture_output=True, text=True, timeout=900,
                        check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  [name] = [n for n in os.listdir(tmp_path) if n.endswith('.json')]
  table = (tmp_path / name.replace('.json', '.md')).read_text()
  for part, field in parts.items():
    probes = json.load(open(tmp_path / name))['parts']['1'][part]['bilstm']
    values = compare.AB_PARTS[part][1]
    assert {v: p[field] for v, p in probes.items()} == {v: v for v in values}
    assert all(p['train_step_s'] > 0 and p['members'] == 2 for p in probes.values())
    assert f'{values[0]} / {values[1]}' in table
  # members: 1 and 2 members of the quick config, each with the run's own estimate.
  members = json.load(open(tmp_path / name))['parts']['1']['members']['bilstm']
  assert [p['members'] for p in members.values()] == [1, 2]
  assert all(p['estimated_peak_mib'] > 0 and p['peak_device_mib'] is None
             for p in members.values())
  assert '| bilstm | 2 |' in table and 'estimated MiB' in table


def test_compile_profile_sums_each_programs_phases_from_jax_log_lines():
  from benchmarks import compile_profile  # pylint: disable=g-import-not-at-top
  log = '\n'.join([
      'WARNING ... Finished tracing train_step for jit in 0.5 sec',
      'WARNING ... Finished jaxpr to MLIR module conversion jit(train_step) in 0.25 sec',
      'WARNING ... Finished XLA compilation of jit(train_step) in 3.0 sec',
      'WARNING ... Finished XLA compilation of jit(train_step) in 2.0 sec',
      'WARNING ... Finished XLA compilation of jit(eval_batch) in 1.5 sec',
      'something else entirely'])
  assert compile_profile.parse(log) == {
      'train_step': {'trace': 0.5, 'lower': 0.25, 'compile': 5.0, 'count': 2},
      'eval_batch': {'compile': 1.5, 'count': 1}}

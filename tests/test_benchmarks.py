"""benchmarks/compare.py runs end to end (its numbers are for people, not tests)."""
import json
import os
import subprocess
import sys

import pytest

from benchmarks import compare
from tests.conftest import REPO, on_cores, own_core

pytestmark = pytest.mark.slow  # end-to-end: `pytest -m "not slow"` skips it


def compare_on_own_core(*flags):
  """``python benchmarks/compare.py FLAGS`` on this worker's core: ``--cores=1``
  takes the first core the process may use."""
  return on_cores([own_core()], os.path.join(REPO, 'benchmarks', 'compare.py'), *flags)


@pytest.mark.full  # a benchmark run (the README tier checks their parsing and tables)
def test_compare_quick_writes_its_tables(tmp_path):
  proc = subprocess.run(compare_on_own_core('--quick', '--cores=1', f'--out={tmp_path}'),
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


@pytest.mark.full  # a benchmark run (the README tier checks their parsing and tables)
def test_compare_ab_parts_and_members_probe_what_they_name(tmp_path):
  """Both A/B parts and the members part in one command (one process start)."""
  parts = {'updates': 'embedding_update', 'numerics': 'numerics'}
  proc = subprocess.run(compare_on_own_core('--quick', '--cores=1',
                                            f'--parts={",".join(parts)},members',
                                            f'--out={tmp_path}'),
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


def test_first_seconds_draws_each_threads_compiles_in_a_lane_of_its_own():
  """benchmarks/first_seconds.py: the compile table counts each program's XLA
  compiles and names their threads; the timeline has a lane per compiling thread."""
  from benchmarks import first_seconds  # pylint: disable=g-import-not-at-top
  def event(name, kind, start, end, thread='MainThread'):
    return {'name': name, 'kind': kind, 'start': start, 'end': end, 'thread': thread}
  events = [event('imports (cli + run.loop)', 'import', 0.1, 3.0),
            event('init_state', 'init', 4.0, 6.0),
            event('compile create', 'compile', 4.1, 5.9),
            event('compile _train_chunk', 'compile', 4.0, 9.0, 'compile-ahead-0'),
            event('compile _train_chunk', 'compile', 4.0, 8.0, 'compile-ahead-1'),
            event('first chunk ended', 'mark', 10.0, 10.0)]
  text = first_seconds.markdown({'events': events, 'date': '2026-12-04',
                                 'label': 'test', 'command': 'c', 'machine': 'm'})
  assert '| _train_chunk | 2 | 9.0 | compile-ahead-0, compile-ahead-1 |' in text
  assert 'first chunk of steps ended 10.0 s' in text
  lanes = [label for label, _ in first_seconds.lanes(events)]
  assert lanes == ['imports', 'MainThread: run', 'MainThread: compiling',
                   'compile-ahead-0: compiling', 'compile-ahead-1: compiling']


def test_first_run_puts_checkouts_side_by_side_with_dispatches_per_epoch():
  from benchmarks import first_run  # pylint: disable=g-import-not-at-top
  row = {'wall_s': 90.0, 'xla_compile_s': 20.0, 'programs': 6,
         'timing': {'compile': 17.0, 'train': 70.0}}
  rows = [dict(row, checkout='/tmp/before', xla_compile_cpu_s=16.5,
               calls={'train_chunk': 36, 'eval_chunk': 16}),
          dict(row, checkout='/tmp/after', xla_compile_cpu_s=None,
               calls={'train_chunk': 278, 'eval_batch': 16})]
  lines = first_run.table(rows, epochs=2).splitlines()
  assert lines[2] == '| /tmp/before | 90.0 | 17.0 | 70.0 | 20.0 | 16.5 | 6 | 18 | 16 |'
  assert lines[3] == '| /tmp/after | 90.0 | 17.0 | 70.0 | 20.0 | - | 6 | 139 | 16 |'


@pytest.mark.full  # a benchmark run (the README tier checks their parsing and tables)
def test_compare_whole_part_says_where_pytorch_ran_and_survives_its_failure(
    monkeypatch, tmp_path):
  """Beside a framework on a GPU the PyTorch baseline (CPU only) is said to run on
  the CPU; a baseline that fails is left out with its reason, the rest stays."""
  def framework_run(config_name, seeds, *_, **__):
    return {'wall_s': 10.0, 'timing': {'train': 8.0}, 'backend': 'gpu',
            'train_sentences': 100, 'peak_rss_mib': 1.0,
            'test_accuracy': [80.0] * len(seeds)}

  def torch_fails(argv, *_, **__):
    raise RuntimeError(f'{" ".join(argv)} failed (1):\nImportError: no torch here')

  monkeypatch.setattr(compare, 'framework_run', framework_run)
  monkeypatch.setattr(compare, 'run_process', torch_fails)
  notes = []
  contestants = compare.whole_part('demo', {0}, 1, (1, 2), str(tmp_path), 'data.npz',
                                   caches=str(tmp_path), notes=notes)
  assert compare.TORCH not in contestants and compare.ALL in contestants
  assert notes[0] == compare.torch_note('gpu') and 'runs on the CPU' in notes[0]
  assert notes[1].startswith('PyTorch baseline left out: failed (1)')
  assert 'no torch here' in notes[1]
  rows = compare.summarize_whole(contestants, 100, 1)
  report = {'date': 'd', 'machine': 'm', 'command': 'c', 'notes': notes + notes,
            'n_seeds': 2, 'whole_config': 'demo', 'epochs': 1, 'steps': 2,
            'quick': True, 'parts': {'1': {'whole': rows}}}
  text = compare.markdown(report)
  assert text.count('runs on the CPU') == 1 and 'PyTorch baseline left out' in text


def test_the_function_trace_counts_named_functions_of_the_checkout_once():
  """benchmarks/trace_functions.py (issue 80's figure): a named function of the
  checkout counts once however often it runs; lambdas and other files do not."""
  from benchmarks import trace_functions  # pylint: disable=g-import-not-at-top
  from seedsweep.run import outputs  # pylint: disable=g-import-not-at-top
  twice = lambda: [outputs.summarize([1.0, 2.0]) for _ in range(2)]  # pylint: disable=unnecessary-lambda-assignment
  result, by_file = trace_functions.trace(twice)
  assert len(result) == 2
  assert by_file['seedsweep/run/outputs.py'] >= {'summarize'}
  assert not any('<lambda>' in names for names in by_file.values())
  assert all(path.split('/')[0] in trace_functions.FOLDERS for path in by_file)

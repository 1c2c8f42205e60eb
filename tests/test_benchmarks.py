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

@pytest.mark.slow
@pytest.mark.full  # a benchmark run (the README tier checks their parsing and tables)
def test_device_check_smoke_measures_members_and_a_lone_seeds_bits(tmp_path):
  """benchmarks/device_check.py --smoke: the demo's 1 and 3 members and 3 with the
  scans unrolled, each in its own process; on a CPU no deterministic-ops column, no
  device memory, seed 1 alone equal to the bit to seed 1 among 3, the versions
  named."""
  from tests.conftest import user_environment  # pylint: disable=g-import-not-at-top
  proc = subprocess.run([sys.executable,
                         os.path.join(REPO, 'benchmarks', 'device_check.py'), '--smoke',
                         f'--out={tmp_path}'],
                        cwd=REPO, capture_output=True, text=True, timeout=600,
                        env=user_environment(), check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  [name] = [n for n in os.listdir(tmp_path) if n.endswith('.json')]
  assert name.startswith('device_check_') and name.endswith('_smoke.json')
  report = json.load(open(tmp_path / name))
  assert report['device']['backend'] == 'cpu' and report['device']['jax']
  runs = report['runs']
  assert [(r['model'], r['members'], r['det'], r['variant'], r['status'])
          for r in runs] == [('demo', 1, None, None, 'ok'), ('demo', 3, None, None, 'ok'),
                             ('demo', 3, None, 'unroll4', 'ok')]
  assert report['device']['packages']['jax'] == report['device']['jax']
  assert 'flax' in report['device']['packages'] and runs[0]['xla_flags']
  for r in runs:
    assert r['train_step_s'] > 0 and r['compile_s'] > 0 and r['loss_finite']
    assert r['peak_device_mib'] is None and r['estimated_peak_mib'] > 0
  assert abs(runs[1]['member_step_s'] * 3 - runs[1]['train_step_s']) < 1e-9
  [check] = report['bit_checks']
  assert (check['lone'], check['group'], check['equal'], check['max_abs_diff']) == (
      1, 3, True, 0.0)
  table = (tmp_path / name.replace('.json', '.md')).read_text()
  assert table.strip() in proc.stdout  # printed as written
  rows = [l for l in table.splitlines() if l.startswith('| demo Bi-LSTM (quick) |')]
  assert len(rows) == 3  # members 1 and 3, and the bit check
  assert rows[0].startswith('| demo Bi-LSTM (quick) | 1 |')
  assert rows[1].startswith('| demo Bi-LSTM (quick) | 3 |')
  assert rows[0].endswith('| n/a (CPU) | n/a (CPU) |')
  assert '| n/a (CPU) | equal | 0 | 0 of ' in rows[2]
  assert '| time-step scans unrolled 4 | demo Bi-LSTM (quick) | 3 |' in table
  assert f"jax {report['device']['jax']}" in table and report['command'] in table


def test_device_check_plans_a_gpu_check_and_renders_its_columns(tmp_path):
  """The GPU path, without a GPU: the runs' order (the bit check's pairs first, the
  100 members next, the settings before the slow pairs without deterministic ops),
  the table's columns and the bit comparison of two parameter dumps."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  from benchmarks import device_check  # pylint: disable=g-import-not-at-top
  runs, lone, group = device_check.plan_runs(['bilstm', 'dlstm'], (1, 10, 100), True)
  assert (lone, group) == (1, 10)
  assert runs == [('bilstm', 1, True, None), ('bilstm', 10, True, None),
                  ('dlstm', 1, True, None), ('dlstm', 10, True, None),
                  ('bilstm', 100, True, None), ('dlstm', 100, True, None),
                  ('bilstm', 10, False, None),
                  ('bilstm', 10, True, 'tf32'), ('bilstm', 10, True, 'unroll4'),
                  ('bilstm', 10, True, 'malloc'), ('bilstm', 1, False, None),
                  ('dlstm', 10, False, None), ('dlstm', 1, False, None)]
  # A setting goes to the first model that has its field (DLSTM has no unroll).
  reordered = device_check.plan_runs(['dlstm', 'bilstm'], (1, 10), True)[0]
  assert [r for r in reordered if r[3] == 'unroll4'] == [('bilstm', 10, True, 'unroll4')]
  assert device_check.plan_runs(['demo'], (1, 3), False)[0] == [
      ('demo', 1, None, None), ('demo', 3, None, None)]
  done = [{'model': 'bilstm', 'members': 10, 'status': 'ok', 'wall_s': 40.0}]
  assert device_check.estimate_s('bilstm', 1, done) == 40.0
  assert device_check.estimate_s('bilstm', 100, done) == 40.0 * 1.3 + 90
  assert device_check.estimate_s('dlstm', 1, done) == device_check.MIN_RUN_S
  # Without deterministic ops a GPU compile autotunes: longer, until one is measured.
  on = [dict(done[0], det=True)]
  assert device_check.estimate_s('bilstm', 10, on, False) == 40.0 * 2.5
  assert device_check.estimate_s('bilstm', 10, on + [dict(on[0], det=False, wall_s=50.0)],
                                 False) == 50.0
  np.savez(tmp_path / 'a.npz', w=np.float32([1, 2]), b=np.float32([0]))
  np.savez(tmp_path / 'b.npz', w=np.float32([1, 2.5]), b=np.float32([0]))
  assert device_check.compare_dumps(tmp_path / 'a.npz', tmp_path / 'a.npz')['equal']
  diff = device_check.compare_dumps(tmp_path / 'a.npz', tmp_path / 'b.npz')
  assert (diff['equal'], diff['max_abs_diff'], diff['differing_arrays']) == (
      False, 0.5, 1)

  def run(members, det, step, status='ok'):
    return {'model': 'bilstm', 'members': members, 'det': det, 'status': status,
            'train_step_s': step, 'member_step_s': step / members,
            'compile_wall_s': 9.0, 'compile_s': 8.0, 'peak_device_mib': 2048.0,
            'estimated_peak_mib': 1900.0, 'peak_rss_mib': 3000.0}
  report = {'date': '2026-12-02', 'command': 'python benchmarks/device_check.py',
            'device': {'backend': 'gpu', 'device_kind': 'NVIDIA H200', 'jax': '0.10.2'},
            'models': {'bilstm': device_check.MODELS['bilstm']}, 'steps': 50,
            'lone': 1, 'group': 10, 'budget_s': 450, 'elapsed_s': 400,
            'runs': [run(1, True, 0.01), run(10, True, 0.02), run(10, False, 0.01),
                     dict(run(10, True, 0.03), variant='unroll4'),
                     {'model': 'bilstm', 'members': 100, 'det': True,
                      'status': 'skipped: needs ~60 s, 30 s of the budget left'}],
            'bit_checks': [{'model': 'bilstm', 'det': True, 'lone': 1, 'group': 10,
                            **diff}]}
  table = device_check.markdown(report)
  assert '| Bi-LSTM, SST-2 | 10 | 0.0200 | 0.00200 | 0.200x | 9.0 / 8.0 | 2,048 | ' \
      '1,900 | 3,000 | 0.0100 | 2.00x |' in table
  assert '| Bi-LSTM, SST-2 | 1 | 0.0100 | 0.01000 | 1.000x |' in table
  assert '| Bi-LSTM, SST-2 | on | DIFFER | 0.5 | 1 of 2 |' in table
  assert '| time-step scans unrolled 4 | Bi-LSTM, SST-2 | 10 | 0.0300 | 0.0200 | 1.50x |' \
      in table
  assert 'skipped: needs ~60 s, 30 s of the budget left' in table
  assert '--xla_gpu_deterministic_ops=true' in table


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

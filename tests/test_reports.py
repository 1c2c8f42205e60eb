"""The report (seedsweep/reports/: collect, statistics, render, plots), on fake run
folders written the way seedsweep/run/loop.py writes them, plus one real run."""
import csv
import io
import json
import os
import re
import warnings

import numpy as np
import pytest
from scipy import stats

from seedsweep.config import base
from seedsweep.config import checks as config_checks
from seedsweep import reports
from seedsweep.reports import collect
from seedsweep.reports import plots
from seedsweep.reports import render
from seedsweep.reports import statistics
from seedsweep.errors import UserError
from seedsweep.run import outputs

PNG_MAGIC = b'\x89PNG\r\n\x1a\n'


def make_run(root, name, metrics, seeds=None, folds=None, source='', value=None,
             metric='test_accuracy', other=None, dataset='demo', model='bilstm',
             point=None, log=True):
  """A run folder as training writes it: config.json, results.json, metrics.jsonl
  (three epochs whose last has the results' numbers) and point.json."""
  run_dir = os.path.join(root, name)
  os.makedirs(run_dir, exist_ok=True)
  n = len(next(iter(metrics.values())))
  seeds = list(seeds or range(1, n + 1))
  config = base.get_base_config()
  config.seeds = tuple(dict.fromkeys(seeds))
  config.data.name, config.model.name = dataset, model
  config.train.num_epochs = 3  # trained to its end: epochs_completed below
  base.set_paper(config, source, value, metric)
  config.paper.other = other or {}
  outputs.write_json(os.path.join(run_dir, outputs.CONFIG),
                     config_checks.to_dict(config))
  results = outputs.build_results(seeds, metrics, folds=folds, selection='best_dev',
                                  epochs_completed=3,
                                  paper=config.paper.to_dict(), wall_time=12.5)
  outputs.write_json(os.path.join(run_dir, outputs.RESULTS), results)
  if log:
    with open(os.path.join(run_dir, outputs.METRICS), 'w') as f:
      for epoch in (1, 2, 3):
        for i, seed in enumerate(seeds):
          row = {'epoch': epoch, 'seed': seed}
          if folds is not None:
            row['fold'] = folds[i]
          row['train_loss'] = 1.0 / epoch + 0.01 * i
          row.update({k: v[i] - 3 + epoch for k, v in metrics.items()})
          row['wall_time'] = float(epoch)
          f.write(json.dumps(row) + '\n')
  if point is not None:
    outputs.write_json(os.path.join(run_dir, collect.POINT), point)
  return run_dir


def quiet(*_):
  pass


def test_find_runs_at_any_depth_sorted(tmp_path):
  for name in ('b', 'a/x', 'a/y/deep', 'a-b'):
    make_run(tmp_path, name, {'test_accuracy': [1.0]})
  os.makedirs(tmp_path / 'empty' / 'nothing')
  assert [collect.run_name(r, str(tmp_path)) for r in collect.find_runs(str(tmp_path))
          ] == ['a/x', 'a/y/deep', 'a-b', 'b']


def test_row_statistics_and_the_best_dev_seeds_test_value(tmp_path):
  test, dev = [80.0, 82.0, 87.0], [70.0, 75.0, 72.0]
  make_run(tmp_path, 'run', {'test_accuracy': test, 'dev_accuracy': dev},
           seeds=[4, 5, 6], source='Paper 2017', value=85.0)
  (row,) = collect.build_rows(str(tmp_path), print_fn=quiet)
  assert (row['run'], row['model'], row['dataset'], row['point']) == (
      'run', 'bilstm', 'demo', '')
  assert row['group'] == ('Paper 2017', 'demo') and row['seeds'] == [4, 5, 6]
  e = row['metrics']['test_accuracy']
  assert e['mean'] == pytest.approx(np.mean(test))
  assert e['std'] == pytest.approx(np.std(test, ddof=1))
  assert (e['min'], e['max'], e['n'], e['paper']) == (80.0, 87.0, 3, 85.0)
  assert e['diff'] == pytest.approx(np.mean(test) - 85.0)
  assert e['best_dev_test'] == 82.0  # seed 5 has the best dev score
  assert row['wall_time'] == 12.5 and row['epochs_completed'] == 3


def test_each_table_says_what_produced_its_runs(tmp_path):
  """Under each table: a run's word vectors (random, or the file with static or
  fine-tuned), epochs, machine (from its determinism record) and wall time."""
  make_run(tmp_path, 'random', {'test_accuracy': [80.0, 81.0]})
  run_dir = make_run(tmp_path, 'vectors', {'test_accuracy': [84.0, 85.0]})
  config_path = os.path.join(run_dir, outputs.CONFIG)
  config = json.load(open(config_path))
  config['data']['vectors'].update(path='/data/vectors/imdb_w2v_300d.txt', static=False)
  outputs.write_json(config_path, config)
  results_path = os.path.join(run_dir, outputs.RESULTS)
  results = json.load(open(results_path))
  results['provenance'] = {'determinism': {'backend': 'cpu', 'cpu_model': 'AMD EPYC',
                                           'usable_cores': 2}}
  results['wall_time'] = 3 * 3600 + 5 * 60 + 20.4
  outputs.write_json(results_path, results)
  reports.write_report(str(tmp_path), plots=False, print_fn=quiet)
  md = (tmp_path / reports.REPORT_MD).read_text()
  assert '| random | random | 3 |  |  | 12 s |' in md
  assert ('| vectors | imdb_w2v_300d.txt, fine-tuned | 3 | cpu: AMD EPYC, 2 cores | '
          'AMD EPYC (family not recorded), 2 cores only | 3 h 05 min |') in md
  table = list(csv.DictReader(io.StringIO((tmp_path / reports.REPORT_CSV).read_text())))
  assert [(r['embeddings'], r['hardware'], float(r['wall_time'])) for r in table] == [
      ('random', '', 12.5),
      ('imdb_w2v_300d.txt, fine-tuned', 'cpu: AMD EPYC, 2 cores', 11120.4)]
  assert collect.hardware_text({'backend': 'gpu', 'device_kind': 'NVIDIA H100'}) == (
      'gpu: NVIDIA H100')
  # Two CPU generations under one model name differ in the column too.
  zen5 = {'backend': 'cpu', 'cpu_model': 'AMD EPYC', 'usable_cores': 2,
          'cpu_arch': 'AuthenticAMD cpu family 26 model 2'}
  assert collect.hardware_text(zen5) == (
      'cpu: AMD EPYC (AuthenticAMD cpu family 26 model 2), 2 cores')
  assert render.wall_text(754) == '12 min 34 s'
  # Where the bits verify: the CPU family and cores under native numerics, any CPU
  # of the instruction-set class under portable ones, each machine of a continued run.
  assert collect.bits_text(zen5) == 'AuthenticAMD cpu family 26 model 2, 2 cores only'
  portable = dict(zen5, numerics='portable', cpu_isa='x86-64 AVX2 FMA')
  assert collect.bits_text(portable) == 'any x86-64 AVX2 FMA CPU'
  assert collect.bits_text(portable, [{'determinism': zen5},
                                      {'determinism': portable}]) == (
      'AuthenticAMD cpu family 26 model 2, 2 cores only + any x86-64 AVX2 FMA CPU')
  assert collect.bits_text({'backend': 'gpu', 'device_kind': 'NVIDIA H100'}) == (
      'NVIDIA H100 only')


def test_the_report_can_go_to_a_folder_of_its_own(tmp_path):
  """``--output=results``: report.md, report.csv and plots/ there (links relative to
  it), nothing added beside the runs; a file in the way is a one-line error."""
  runs = tmp_path / 'runs'
  make_run(runs, 'a', {'test_accuracy': [80.0, 81.0, 83.0]})
  out = tmp_path / 'results' / 'paper'
  written = reports.write_report(str(runs), print_fn=quiet, out=str(out))
  assert all(f.startswith(str(out)) for f in written['files'])
  assert sorted(os.listdir(runs)) == ['a']
  md = (out / reports.REPORT_MD).read_text()
  assert '(plots/a.curves.png)' in md and (out / 'plots' / 'a.curves.png').exists()
  (tmp_path / 'file').write_text('')
  with pytest.raises(UserError, match='is a file; expected a folder'):
    reports.write_report(str(runs), plots=False, print_fn=quiet,
                         out=str(tmp_path / 'file'))


def test_a_folder_without_a_readable_run_is_refused_and_nothing_written(tmp_path):
  run = tmp_path / 'runs' / 'a'
  run.mkdir(parents=True)
  (run / 'config.json').write_bytes(bytes(range(256)))  # not JSON
  with pytest.raises(UserError, match=r'holds no readable run \(a: .*\); nothing was '
                                      r'written'):
    reports.write_report(str(tmp_path / 'runs'), plots=False, print_fn=quiet)
  assert sorted(os.listdir(tmp_path / 'runs')) == ['a']
  assert sorted(os.listdir(run)) == ['config.json']


def test_other_paper_metrics_and_lower_is_better_dev_selection(tmp_path):
  make_run(tmp_path, 'joint', {
      'test_slot_f1': [90.0, 92.0], 'dev_slot_f1': [91.0, 89.0],
      'test_intent_error': [5.0, 7.0], 'dev_intent_error': [6.0, 4.0]},
           source='Ma 2017', value=96.98, metric='test_slot_f1',
           other={'test_intent_error': 5.12}, dataset='atis')
  (row,) = collect.build_rows(str(tmp_path), print_fn=quiet)
  assert list(row['metrics']) == ['test_slot_f1', 'test_intent_error']
  assert row['metrics']['test_slot_f1']['best_dev_test'] == 90.0
  error = row['metrics']['test_intent_error']
  assert error['best_dev_test'] == 7.0  # lowest dev error: the second seed
  assert error['paper'] == 5.12 and error['diff'] == pytest.approx(6.0 - 5.12)


def test_cross_validated_runs_report_each_seeds_mean_over_folds(tmp_path):
  # Members fold-major: (fold 0, seeds 1, 2), (fold 1, seeds 1, 2).
  make_run(tmp_path, 'mr', {'test_accuracy': [70.0, 80.0, 72.0, 84.0],
                            'dev_accuracy': [60.0, 50.0, 62.0, 54.0]},
           seeds=[1, 2, 1, 2], folds=[0, 0, 1, 1], dataset='mr')
  (row,) = collect.build_rows(str(tmp_path), print_fn=quiet)
  e = row['metrics']['test_accuracy']
  assert row['seeds'] == [1, 2] and e['values'] == [71.0, 82.0] and e['n'] == 2
  assert e['best_dev_test'] == 71.0  # seed 1: CV dev mean 61 > 52


def test_welch_p_values_against_the_groups_best_row(tmp_path):
  values = {'a': [80.0, 81.0, 83.0], 'b': [85.0, 86.5, 84.0, 88.0],
            'c': [70.0, 79.0], 'd': [90.0]}
  for name, test in values.items():
    make_run(tmp_path, name, {'test_accuracy': test}, source='S')
  rows = {r['run']: r['metrics']['test_accuracy']
          for r in collect.build_rows(str(tmp_path), print_fn=quiet)}
  # d has the highest mean but one seed: it is the reference, no test is possible.
  assert rows['d']['p_value'] == 'ref'
  assert [rows[k]['p_value'] for k in 'abc'] == [None, None, None]
  os.remove(tmp_path / 'd' / outputs.RESULTS)  # d is skipped now: b is the best
  rows = {r['run']: r['metrics']['test_accuracy']
          for r in collect.build_rows(str(tmp_path), print_fn=quiet)}
  assert rows['b']['p_value'] == 'ref'
  for name in 'ac':
    expected = stats.ttest_ind(values[name], values['b'], equal_var=False).pvalue
    assert rows[name]['p_value'] == pytest.approx(expected, rel=1e-12)
  assert statistics.welch_p([1.0, 2.0], [3.0]) is None


def test_welch_p_with_one_constant_side_is_the_closed_form_and_quiet():
  # Two seeds with the same accuracy (DLSTM ATIS random, published) against two
  # that differ: the variance is the other side's alone and Welch's df is 1.
  constant, other = [95.30, 95.30], [95.74, 96.42]
  t = (np.mean(constant) - np.mean(other)) / np.sqrt(np.var(other, ddof=1) / 2)
  with warnings.catch_warnings():
    warnings.simplefilter('error')
    p = statistics.welch_p(constant, other)
  assert p == pytest.approx(2 * stats.t.sf(abs(t), df=1), rel=1e-9)


def test_lower_is_better_metrics_take_the_lowest_mean_as_reference(tmp_path):
  make_run(tmp_path, 'low', {'test_intent_error': [4.0, 5.0]},
           metric='test_intent_error')
  make_run(tmp_path, 'high', {'test_intent_error': [8.0, 9.0]},
           metric='test_intent_error')
  rows = {r['run']: r for r in collect.build_rows(str(tmp_path), print_fn=quiet)}
  assert rows['low']['metrics']['test_intent_error']['p_value'] == 'ref'
  assert isinstance(rows['high']['metrics']['test_intent_error']['p_value'], float)


def _sweep_point(sweep, index, overrides):
  return {'sweep': sweep, 'index': index, 'overrides': overrides}


def test_groups_and_order_follow_the_papers_tables(tmp_path):
  make_run(tmp_path, 'zz_plain', {'test_accuracy': [1.0]}, source='B', dataset='sst')
  make_run(tmp_path, 'aa_plain', {'test_accuracy': [1.0]}, source='B', dataset='sst')
  # Index order (32, 128) differs from name order ('h=128' < 'h=32').
  for index, hidden in enumerate((32, 128)):
    make_run(tmp_path, f'sweep/h={hidden}', {'test_accuracy': [1.0]}, source='B',
             dataset='sst', point=_sweep_point('sweeps/x.py', index,
                                               {'model.hidden': hidden,
                                                'model.th': 100,
                                                'paper.value': 80.0 + index}))
  make_run(tmp_path, 'other', {'test_accuracy': [1.0]}, source='A', dataset='trec')
  make_run(tmp_path, 'nosource', {'test_accuracy': [1.0]})
  rows = collect.build_rows(str(tmp_path), print_fn=quiet)
  assert [(r['group'], r['run']) for r in rows] == [
      (('A', 'trec'), 'other'), (('B', 'sst'), 'aa_plain'),
      (('B', 'sst'), 'zz_plain'), (('B', 'sst'), 'sweep/h=32'),
      (('B', 'sst'), 'sweep/h=128'), (('', 'demo'), 'nosource')]
  assert [r['point'] for r in rows[3:5]] == ['hidden=32', 'hidden=128']
  md = reports.write_report(str(tmp_path), plots=False, print_fn=quiet)
  text = (tmp_path / reports.REPORT_MD).read_text()
  headings = [line for line in text.splitlines() if line.startswith('## ')]
  assert headings == ['## A: trec', '## B: sst', '## demo (no paper source)']
  # Folders named otherwise than their points keep the `point` column, in their
  # group only.
  assert '| sweep/h=32 | bilstm | hidden=32 | test_accuracy |' in text
  assert '| other | bilstm | test_accuracy |' in text
  assert md['files'] == [str(tmp_path / reports.REPORT_MD),
                         str(tmp_path / reports.REPORT_CSV)]


def _demo_root(tmp_path):
  make_run(tmp_path, 'base', {'test_accuracy': [88.123, 90.0, 91.5],
                              'dev_accuracy': [89.0, 91.0, 90.0]},
           source='Demo paper', value=90.0)
  for index, (hidden, dropout) in enumerate([(32, 0.0), (32, 0.2), (64, 0.0),
                                             (64, 0.2)]):
    make_run(tmp_path, f'sweep/hidden={hidden},dropout={dropout}', {
        'test_accuracy': [80.0 + index + s for s in (0.0, 1.0, 2.5)],
        'dev_accuracy': [79.0 + index + s for s in (0.5, 0.0, 2.0)]},
             source='Demo paper', value=90.0,
             point=_sweep_point('sweeps/demo.py', index,
                                {'model.hidden': hidden, 'model.dropout': dropout}))
  return str(tmp_path)


def test_report_files_are_deterministic_and_formatted(tmp_path):
  root = _demo_root(tmp_path)
  first = reports.write_report(root, plots=False, print_fn=quiet)
  md, table = (open(os.path.join(root, n), 'rb').read()
               for n in (reports.REPORT_MD, reports.REPORT_CSV))
  os.utime(os.path.join(root, 'base', outputs.RESULTS))
  second = reports.write_report(root, plots=False, print_fn=quiet)
  assert open(os.path.join(root, reports.REPORT_MD), 'rb').read() == md
  assert open(os.path.join(root, reports.REPORT_CSV), 'rb').read() == table
  assert first['rows'] == second['rows']
  text = md.decode()
  # The sweep points' folders are named by their overrides: no `point` column.
  assert ('| run | model | metric | mean ± std | 95 % CI | min | max | n | best-dev test '
          '| paper | diff | p (Welch) | p (Holm) | p (rank) | ASO ε | MDD |') in text
  assert '| base | bilstm | test_accuracy | 89.87 ± 1.69 | [85.67, 94.08] | 88.12 | ' \
         '91.50 | 3 | 90.00 | 90.00 | -0.13 | ref | ref | ref | ref | 5.20 |' in text
  # Four rows against the best: Welch's p times 4 (the smallest, Holm's first step).
  assert '| 81.17 ± 1.26 | [78.04, 84.29] | 80.00 | 82.50 | 3 | 82.50 | 90.00 | ' \
         '-8.83 | <0.01 | 0.01 | 0.10 | 0.00 | 3.86 |' in text  # ASO: base wins at every quantile
  assert 'with fewer than 5 seeds a p-value says little' in text
  assert '| sweep/hidden=64,dropout=0.2 | bilstm | test_accuracy |' in text
  assert str(tmp_path) not in text
  assert not os.path.exists(os.path.join(root, reports.REPORT_TEX))
  lines = list(csv.DictReader(io.StringIO(table.decode())))
  assert len(lines) == 5 and list(lines[0]) == list(render.CSV_COLUMNS)
  assert float(lines[0]['mean']) == pytest.approx(np.mean([88.123, 90.0, 91.5]))
  assert float(lines[1]['p_holm']) == pytest.approx(4 * float(lines[1]['p_value']))
  assert [line['p_value'] for line in lines].count('ref') == 1
  assert [line['index'] for line in lines] == ['', '0', '1', '2', '3']


def test_a_one_seed_run_shows_its_mean_without_a_spread(tmp_path):
  make_run(tmp_path, 'single', {'test_accuracy': [75.714], 'dev_accuracy': [76.7]})
  reports.write_report(str(tmp_path), latex=True, plots=False, print_fn=quiet)
  text = (tmp_path / reports.REPORT_MD).read_text()
  assert '| single | bilstm | test_accuracy | 75.71 |  | 75.71 | 75.71 | 1 |' in text
  tex = (tmp_path / reports.REPORT_TEX).read_text()
  assert r'single & test\_accuracy & 75.71 & 75.71 &' in tex


def test_latex_is_written_on_request(tmp_path):
  root = _demo_root(tmp_path)
  files = reports.write_report(root, latex=True, plots=False, print_fn=quiet)['files']
  assert os.path.join(root, reports.REPORT_TEX) in files
  tex = open(os.path.join(root, reports.REPORT_TEX)).read()
  for part in (r'\toprule', r'\midrule', r'\bottomrule', r'89.87 $\pm$ 1.69',
               r'test\_accuracy', r'\textit{Demo paper: demo}'):
    assert part in tex
  # Points named as their folders: no Point column; the spec matches the header.
  assert r'\begin{tabular}{llrrrrr}' in tex
  assert 'Run & Metric & Mean' in tex


@pytest.mark.slow
@pytest.mark.full  # plots: the axes and series tests; a real report: test_package.py
def test_plots_are_written_and_linked(tmp_path):
  root = _demo_root(tmp_path)
  make_run(tmp_path, 'nolog', {'test_accuracy': [1.0, 2.0]}, log=False)
  written = reports.write_report(root, plots=True, print_fn=quiet)['files']
  pngs = sorted(os.path.relpath(p, root) for p in written if p.endswith('.png'))
  assert 'plots/base.curves.png' in pngs and 'plots/base.dev_test.png' in pngs
  assert 'plots/sweep.sweep__sweeps__demo.py.png' in pngs
  assert 'plots/sweep.sweep__sweeps__demo.py.dev_test.png' in pngs  # every point
  assert not any(p.startswith('plots/nolog.curves') for p in pngs)
  assert 'plots/sweep.sweep__sweeps__demo.py.expected_max.png' in pngs  # Dodge et al.
  assert len(pngs) == 2 * 5 + 3
  from PIL import Image  # pylint: disable=g-import-not-at-top  (matplotlib's)
  for p in pngs:
    with open(os.path.join(root, p), 'rb') as f:
      assert f.read(8) == PNG_MAGIC and os.path.getsize(os.path.join(root, p)) > 1000
    with Image.open(os.path.join(root, p)) as image:
      assert image.info['dpi'] == pytest.approx((200, 200), abs=0.1)
    for fmt, magic in (('pdf', b'%PDF'), ('svg', b'<?xml')):  # for papers, beside it
      other = os.path.join(root, p[:-len('png')] + fmt)
      assert other in written
      with open(other, 'rb') as f:
        assert f.read(len(magic)) == magic
  first = {p: open(p, 'rb').read() for p in written}
  reports.write_report(root, plots=True, print_fn=quiet)  # the same runs: the same bytes
  assert {p: open(p, 'rb').read() for p in written} == first
  text = open(os.path.join(root, reports.REPORT_MD)).read()
  assert '[learning curves](plots/base.curves.png)' in text
  assert ('- sweep sweeps/demo.py (in sweep): [test_accuracy vs model.hidden]'
          '(plots/sweep.sweep__sweeps__demo.py.png)') in text


def test_sweep_series_one_line_per_other_key():
  points = [plots.SweepPoint({'model.hidden': h, 'model.dropout': d, 'paper.value': 1},
                             1.0, 0.1, None)
            for h, d in [(64, 0.0), (32, 0.0), (64, 0.2), (32, 0.2), (16, 0.2)]]
  x, lines = plots.sweep_series(points)
  assert x == 'model.hidden'
  assert [(label, [p.overrides[x] for p in members]) for label, members in lines] == [
      ('dropout=0.0', [32, 64]), ('dropout=0.2', [16, 32, 64])]
  names = [plots.SweepPoint({'model.pooling': p}, 1.0, 0.0, None) for p in 'ab']
  assert plots.sweep_series(names) is None


def test_axes_are_labelled_in_words_and_sizes_and_rates_get_log_axes():
  assert plots.axis_label('optimizer.learning_rate') == (
      'learning rate (optimizer.learning_rate)')
  assert plots.axis_label('model.hidden') == 'hidden size (model.hidden)'
  assert plots.axis_label('test_accuracy') == 'test accuracy (%)'
  assert plots.axis_label('dev_slot_f1') == 'dev slot F1 (%)'
  assert plots.log_axis('model.hidden', [50, 100, 200, 400])
  assert plots.log_axis('optimizer.learning_rate', [1e-4, 1e-3, 1e-2])
  assert not plots.log_axis('model.hidden', [100, 150])  # less than a factor of 4
  assert not plots.log_axis('model.dropout', [0.1, 0.5])  # not a scale
  assert not plots.log_axis('l2.coef', [0.0, 1e-4])  # zero has no place on it


def test_the_mean_ci_is_students_t_over_seeds():
  low, high = statistics.mean_ci([1.0, 2.0, 3.0])
  assert (low + high) / 2 == pytest.approx(2.0)
  assert high - 2.0 == pytest.approx(4.302653 * 1.0 / np.sqrt(3), rel=1e-6)
  assert statistics.mean_ci([5.0]) is None  # one seed: no interval
  assert statistics.mean_ci([3.0, 3.0, 3.0]) == (3.0, 3.0)
  # Three seeds: the t interval reaches well past their min and max, where a
  # bootstrap percentile interval stays inside them (the issue's [51.60, 56.13]).
  low, high = statistics.mean_ci([51.6, 54.0, 56.13])
  assert low < 49 and high > 59


def test_curve_stats_average_folds_then_seeds():
  rows = [{'epoch': 1, 'seed': 1, 'fold': 0, 'x': 1.0},
          {'epoch': 1, 'seed': 1, 'fold': 1, 'x': 3.0},
          {'epoch': 1, 'seed': 2, 'fold': 0, 'x': 6.0},
          {'epoch': 1, 'seed': 2, 'fold': 1, 'x': 6.0}]
  epochs, mean, std = plots.curve_stats(rows, 'x')
  assert list(epochs) == [1] and mean[0] == 4.0
  assert std[0] == pytest.approx(np.std([2.0, 6.0], ddof=1))


def test_invalid_json_runs_are_skipped_and_named(tmp_path):
  root = _demo_root(tmp_path)
  make_run(tmp_path, 'broken', {'test_accuracy': [1.0]})
  with open(tmp_path / 'broken' / outputs.RESULTS, 'w') as f:
    f.write('{"seeds": [1')
  os.makedirs(tmp_path / 'bad_config')
  (tmp_path / 'bad_config' / outputs.CONFIG).write_text('not json')
  os.makedirs(tmp_path / 'unfinished')
  make_run(tmp_path, 'unfinished', {'test_accuracy': [1.0]})
  os.remove(tmp_path / 'unfinished' / outputs.RESULTS)
  messages = []
  result = reports.write_report(root, plots=False, print_fn=messages.append)
  assert [name for name, _ in result['skipped']] == ['bad_config', 'broken',
                                                      'unfinished']
  assert len(result['rows']) == 5
  assert any('bad_config/config.json is not valid JSON' in m for m in messages)
  text = open(os.path.join(root, reports.REPORT_MD)).read()
  skipped = text[text.index('## Skipped runs'):]
  assert '- broken: broken/results.json is not valid JSON' in skipped
  assert '- unfinished: no results.json and no checkpoint' in skipped
  assert str(tmp_path) not in text


def test_stale_reason():
  fresh = {'epochs_completed': 3}
  assert collect.stale_reason(fresh, None) is None
  assert collect.stale_reason(fresh, 3) is None
  assert 'covers 2 epochs' in collect.stale_reason({'epochs_completed': 2}, 3)
  assert collect.stale_reason({}, 3) is not None


@pytest.mark.slow
def test_report_from_checkpoints_equals_the_report_from_training(tmp_path):
  """A real run (2 seeds, 1 epoch): with results.json and metrics.jsonl deleted, or
  results.json behind the checkpoint, the checkpoint is re-evaluated and gives
  the same rows and the same report files."""
  from tests.conftest import small_config  # pylint: disable=g-import-not-at-top
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  run_dir = tmp_path / 'runs' / 'demo'
  config = small_config(seeds=(1, 2), epochs=1)
  trained = loop.train(config, str(run_dir), print_fn=quiet)
  root = str(tmp_path / 'runs')

  def snapshot():
    result = reports.write_report(root, plots=False, print_fn=messages.append)
    files = [open(p, 'rb').read() for p in result['files']]
    return [{k: v for k, v in r.items() if k != 'wall_time'}
            for r in result['rows']], files

  messages = []
  from_logs = snapshot()
  assert not any('evaluat' in m for m in messages)
  assert from_logs[0][0]['metrics']['test_accuracy']['values'] == (
      trained['metrics']['test_accuracy'])
  os.remove(run_dir / outputs.RESULTS)
  os.remove(run_dir / outputs.METRICS)
  assert snapshot() == from_logs
  assert any('no results.json; evaluating the checkpoint of epoch 1' in m
             for m in messages)
  messages.clear()
  stale = json.loads((run_dir / outputs.RESULTS).read_text())
  stale['epochs_completed'] = 0  # as if written before the newest checkpoint
  (run_dir / outputs.RESULTS).write_text(json.dumps(stale))
  assert snapshot() == from_logs
  assert any('covers 0 epochs, the newest checkpoint 1' in m for m in messages)


def test_seeds_trained_in_parts_make_one_row(tmp_path):
  """Parts (``seeds_*`` folders) of one run: one row with every seed in seed order,
  statistics over all of them, the most epochs, the summed wall time, a line a part
  under the table, and learning curves over every part's seeds."""
  make_run(tmp_path, 'w2v/seeds_4-5', {'test_accuracy': [84.0, 88.0],
                                       'dev_accuracy': [80.0, 79.0]}, seeds=[4, 5])
  make_run(tmp_path, 'w2v/seeds_1-3', {'test_accuracy': [85.0, 86.0, 87.0],
                                       'dev_accuracy': [70.0, 71.0, 72.0]})
  make_run(tmp_path, 'random', {'test_accuracy': [80.0, 81.0, 79.0]})
  result = reports.write_report(str(tmp_path), print_fn=quiet)
  random, w2v = result['rows']
  assert (w2v['run'], w2v['seeds'], random['parts']) == ('w2v', [1, 2, 3, 4, 5], [])
  assert w2v['values']['test_accuracy'] == [85.0, 86.0, 87.0, 84.0, 88.0]
  e = w2v['metrics']['test_accuracy']
  assert (e['n'], e['best_dev_test']) == (5, 84.0)  # seed 4: the best dev score
  assert e['mean'] == pytest.approx(86.0) and e['p_value'] == 'ref'
  assert random['metrics']['test_accuracy']['p_value'] == pytest.approx(
      stats.ttest_ind([80.0, 81.0, 79.0], e['values'], equal_var=False).pvalue)
  assert (w2v['wall_time'], w2v['epochs_completed']) == (25.0, 3)
  assert [p['run'] for p in w2v['parts']] == ['w2v/seeds_1-3', 'w2v/seeds_4-5']
  md = (tmp_path / reports.REPORT_MD).read_text()
  assert '| w2v/seeds_1-3 | random | 3 |  |  | 12 s |' in md
  assert '| w2v/seeds_4-5 | random | 3 |  |  | 12 s |' in md
  table = list(csv.DictReader(io.StringIO((tmp_path / reports.REPORT_CSV).read_text())))
  assert [(r['run'], r['n']) for r in table] == [('random', '3'), ('w2v', '5')]
  rows = [r for d in (tmp_path / 'w2v' / 'seeds_1-3', tmp_path / 'w2v' / 'seeds_4-5')
          for r in outputs.MetricsLog(str(d)).rows()]
  assert len({r['seed'] for r in rows}) == 5
  assert (tmp_path / 'plots' / f'{plots.slug("w2v")}.curves.png').exists()


def test_seed_parts_that_read_different_vectors_are_named_in_a_warning(tmp_path):
  """Parts of one run whose records name different vector bytes (one path, written
  again on another CPU) still make one row, and the report says which part read
  which file; other rows (random: no vectors) are not compared with them."""
  def set_vectors(name, digest):
    path = tmp_path / name / outputs.RESULTS
    results = json.loads(path.read_text())
    results['provenance'] = {'data': {'checksums': {'train': 'ab' * 32},
                                      'vectors': {'sha256': digest}}}
    path.write_text(json.dumps(results))
  make_run(tmp_path, 'w2v/seeds_1-3', {'test_accuracy': [85.0, 86.0, 87.0]})
  make_run(tmp_path, 'w2v/seeds_4-5', {'test_accuracy': [84.0, 88.0]}, seeds=[4, 5])
  make_run(tmp_path, 'random', {'test_accuracy': [80.0, 81.0]})
  set_vectors('w2v/seeds_1-3', '41f6a163' * 8)
  set_vectors('w2v/seeds_4-5', '41f6a163' * 8)
  messages = []
  reports.write_report(str(tmp_path), plots=False, print_fn=messages.append)
  assert 'different vectors' not in (tmp_path / reports.REPORT_MD).read_text()
  set_vectors('w2v/seeds_4-5', 'a7ff9f1e' * 8)
  result = reports.write_report(str(tmp_path), plots=False, print_fn=messages.append)
  assert [r['run'] for r in result['rows']] == ['random', 'w2v']
  line = ('w2v: its seed parts read different vectors files: w2v/seeds_1-3 sha256 '
          '41f6a16341f6, w2v/seeds_4-5 sha256 a7ff9f1ea7ff')
  assert f'- {line}' in (tmp_path / reports.REPORT_MD).read_text()
  assert any(m.endswith(line) for m in messages)
  assert not any('data train' in m for m in messages)


def test_seed_parts_trained_with_different_model_files_are_named_in_a_warning(tmp_path):
  """A user's model file edited between two seed parts: one row, and the report
  names the file and each part's bytes, as it does for vectors."""
  for name, digest, seeds in (('own/seeds_1-2', 'c0de' * 16, [1, 2]),
                              ('own/seeds_3-4', 'beef' * 16, [3, 4])):
    make_run(tmp_path, name, {'test_accuracy': [85.0, 86.0]}, seeds=seeds)
    path = tmp_path / name / outputs.RESULTS
    results = json.loads(path.read_text())
    results['provenance'] = {'data': {'checksums': {'train': 'ab' * 32}},
                             'user_code': {'my_code/cnn.py:CNN': digest}}
    path.write_text(json.dumps(results))
  reports.write_report(str(tmp_path), plots=False, print_fn=quiet)
  assert ('- own: its seed parts read different file my_code/cnn.py files: '
          'own/seeds_1-2 sha256 c0dec0dec0de, own/seeds_3-4 sha256 beefbeefbeef'
          ) in (tmp_path / reports.REPORT_MD).read_text()


@pytest.mark.parametrize('second, reason', [
    (dict(seeds=[3, 4]), r'seed 3 is in two of its seed parts \(w2v/seeds_1-3, '
                         r'w2v/seeds_3-4\)'),
    (dict(seeds=[4, 5], model='cnn'), r"differ in config model.name: 'bilstm' != 'cnn'; "
                                      r'expected the '
                                      r'same config apart from seeds'),
])
def test_seed_parts_that_do_not_fit_together_are_skipped_and_named(
    tmp_path, second, reason):
  make_run(tmp_path, 'w2v/seeds_1-3', {'test_accuracy': [85.0, 86.0, 87.0]})
  seeds = second['seeds']
  make_run(tmp_path, f'w2v/seeds_{seeds[0]}-{seeds[-1]}',
           {'test_accuracy': [84.0, 88.0]}, **second)
  make_run(tmp_path, 'random', {'test_accuracy': [80.0, 81.0]})
  messages = []
  rows, skipped = collect.collect(str(tmp_path), print_fn=messages.append)
  assert [r['run'] for r in rows] == ['random']
  (name, why), = skipped
  assert name == 'w2v' and re.search(reason, why), why
  assert any(m.startswith('warning: skipping run w2v: ') for m in messages)


@pytest.mark.slow
@pytest.mark.full  # parts made up: test_seeds_trained_in_parts_make_one_row
def test_real_seed_parts_give_the_numbers_of_one_run_of_all_seeds(tmp_path):
  """Seeds 1-2 trained apart (two programs) report what one program of both seeds
  reports, to the bit: what lets a long run span sessions."""
  from tests.conftest import small_config  # pylint: disable=g-import-not-at-top
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  loop.train(small_config(seeds=(1, 2), epochs=1), str(tmp_path / 'whole' / 'run'),
             print_fn=quiet)
  for seed in (1, 2):
    loop.train(small_config(seeds=(seed,), epochs=1),
               str(tmp_path / 'parts' / 'run' / f'seeds_{seed}'), print_fn=quiet)
  (whole,), _ = collect.collect(str(tmp_path / 'whole'), print_fn=quiet)
  (parted,), _ = collect.collect(str(tmp_path / 'parts'), print_fn=quiet)
  assert parted['run'] == whole['run'] == 'run' and parted['seeds'] == [1, 2]
  assert parted['values'] == whole['values']
  assert parted['metrics'] == whole['metrics']


def test_a_folder_without_runs_is_refused_and_nothing_is_written(tmp_path):
  (tmp_path / 'notes.txt').write_text('not a run')
  (tmp_path / 'sub').mkdir()
  (tmp_path / 'sub' / 'results.json').write_text('{}')  # no config.json: not a run
  before = sorted(p.name for p in tmp_path.rglob('*'))
  with pytest.raises(UserError, match=r'holds no run \(no folder with a config.json\)'):
    reports.write_report(str(tmp_path), print_fn=lambda *a: None)
  assert sorted(p.name for p in tmp_path.rglob('*')) == before


def test_holm_matches_the_worked_example_and_keeps_missing_values():
  # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04, then
  # made non-decreasing: 0.02, 0.03, 0.06, 0.06.
  assert statistics.holm([0.01, 0.04, None, 0.03, 0.005]) == pytest.approx(
      [0.03, 0.06, None, 0.06, 0.02])
  assert statistics.holm([0.5, 0.9]) == [1.0, 1.0]


def test_minimum_detectable_difference_matches_power_tables():
  # Cohen's tables (and G*Power): 64 per group detect d = 0.5 with power 0.80; 10 per
  # group need d = 1.3249.
  assert statistics.min_detectable_difference(1.0, 64) == pytest.approx(0.4991, abs=2e-3)
  assert statistics.min_detectable_difference(1.0, 10) == pytest.approx(1.3249, abs=1e-3)
  assert statistics.min_detectable_difference(2.0, 10) == pytest.approx(2 * 1.3249,
                                                                        abs=2e-3)
  assert statistics.min_detectable_difference(1.0, 1) is None


def test_rank_test_is_mann_whitney():
  a, b = [1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]
  assert statistics.rank_p(a, b) == pytest.approx(0.00794, abs=1e-4)  # exact, 2/252
  assert statistics.rank_p(a, [1.0]) is None


def test_expected_max_over_points_follows_dodge_et_al():
  scores = [1.0, 2.0, 3.0]
  assert statistics.expected_max(scores, 1) == pytest.approx(2.0)
  assert statistics.expected_max(scores, 2) == pytest.approx(22 / 9)
  assert statistics.expected_max(scores, 200) == pytest.approx(3.0, abs=1e-9)
  # The test value of the point best by dev: here dev and test disagree.
  assert statistics.expected_max([1.0, 2.0, 3.0], 2, follow=[30.0, 20.0, 10.0]) == (
      pytest.approx((1 * 30 + 3 * 20 + 5 * 10) / 9))


def test_the_unbiased_expected_max_is_the_mean_best_of_every_subset():
  """Tang et al. (2020), worked by hand on four points: the six pairs of
  [1, 2, 3, 4] have the bests 2, 3, 4, 3, 4, 4 (mean 20/6), where Dodge et al.'s
  draws with replacement give 50/16."""
  scores = [3.0, 1.0, 4.0, 2.0]
  assert statistics.expected_max_unbiased(scores, 2) == pytest.approx(20 / 6)
  assert statistics.expected_max(scores, 2) == pytest.approx(50 / 16)
  assert statistics.expected_max_unbiased(scores, 1) == pytest.approx(2.5)
  assert statistics.expected_max_unbiased(scores, 4) == pytest.approx(4.0)
  assert statistics.expected_max_unbiased(scores, 5) is None
  # The test value of the point dev picks: pairs' picks 20, 30, 40, 30, 40, 40.
  assert statistics.expected_max_unbiased(scores, 2, follow=[30.0, 10.0, 40.0, 20.0]) == (
      pytest.approx(200 / 6))
  many = np.linspace(0.0, 1.0, 400)  # no overflow at hundreds of points
  assert statistics.expected_max_unbiased(many, 399) == pytest.approx(
      (399 * 1.0 + 1 * (398 / 399)) / 400)
  low, high = statistics.expected_max_band(scores, 2)
  assert low <= 20 / 6 <= high and low < high


def test_aso_power_says_how_likely_a_verdict_is_to_repeat():
  """Far apart samples: epsilon near 0 and power near 1; overlapping ones: no
  verdict at 0.2, and low power (more seeds would decide it)."""
  rng = np.random.default_rng(3)
  high, low = rng.normal(90, 1, 10), rng.normal(80, 1, 10)
  assert statistics.aso_epsilon(high, low) < statistics.ASO_THRESHOLD
  assert statistics.aso_power(high, low) > 0.95
  near = rng.normal(89.5, 1, 10)
  assert statistics.aso_epsilon(high, near) >= statistics.ASO_THRESHOLD
  assert statistics.aso_power(high, near) < 0.5
  assert statistics.aso_power(high, [1.0]) is None


def test_almost_stochastic_order_follows_dror_et_al():
  # [1, 2, 3] against [2, 2, 2]: quantile differences -1, 0, +1 over equal thirds,
  # so half of the squared distance is a violation.
  assert statistics.violation_ratio([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]) == pytest.approx(0.5)
  assert statistics.violation_ratio([1.0, 2.0], [1.0, 2.0]) is None
  rng = np.random.default_rng(3)
  a, b = rng.normal(1.0, 1.0, 10), rng.normal(0.0, 1.0, 10)
  forward, backward = statistics.violation_ratio(a, b), statistics.violation_ratio(b, a)
  assert forward + backward == pytest.approx(1.0)
  # Complete dominance either way; a clearly better A gets far under 0.5.
  assert statistics.aso_epsilon(a + 10, b) == 0.0
  assert statistics.aso_epsilon(b, a + 10) == 1.0
  assert statistics.aso_epsilon(a, b) < 0.5 < statistics.aso_epsilon(b, a)
  # The bound lies above the estimate (a one-sided upper confidence bound), and the
  # fixed bootstrap seed gives the same number every time.
  assert statistics.aso_epsilon(a, b) >= forward
  assert statistics.aso_epsilon(a, b) == statistics.aso_epsilon(a, b)
  assert statistics.aso_epsilon([1.0], b) is None


def test_a_factorial_seed_design_gets_a_variance_table_by_source(tmp_path):
  # 3 x 3 x 3 members where the data-order seed moves the accuracy most.
  seed_triples = [[i, d, r] for i in (1, 2, 3) for d in (1, 2, 3) for r in (1, 2, 3)]
  rng = np.random.default_rng(0)
  test = [80 + 2.0 * d + 0.3 * i + 0.1 * rng.standard_normal()
          for i, d, _ in seed_triples]
  run_dir = make_run(str(tmp_path), 'var', {'test_accuracy': test,
                                            'dev_accuracy': test},
                     seeds=[s[0] for s in seed_triples], log=False)
  path = os.path.join(run_dir, outputs.RESULTS)
  results = outputs.read_json(path)
  outputs.write_json(path, {**results, 'streams': seed_triples})
  (row,) = reports.write_report(str(tmp_path), plots=False, print_fn=quiet)['rows']
  expected = statistics.variance_components(test, [tuple(s) for s in seed_triples],
                                            ('init', 'data', 'dropout'))
  assert row['variance'] == expected and expected['dominant'] == 'data'
  text = open(os.path.join(tmp_path, reports.REPORT_MD)).read()
  assert 'Seed variance of test_accuracy in var, by source' in text
  assert '| source | df | variance | std | share | 95 % CI |' in text
  share = next(r['share'] for r in expected['rows'] if r['source'] == 'data')
  assert f'**data** dominates: {100 * share:.0f} % of the seed variance' in text
  # A design with a member missing is named, not decomposed.
  outputs.write_json(path, {**results, 'streams': seed_triples[:-1] + [[1, 1, 1]]})
  reports.write_report(str(tmp_path), plots=False, print_fn=quiet)
  assert 'not decomposed' in open(os.path.join(tmp_path, reports.REPORT_MD)).read()


def test_aso_against_the_best_row_is_bonferroni_corrected_for_the_rows_compared():
  """Three rows: the best against two others, each at confidence 1 - 0.05/2 (Dror et
  al.; deep-significance's multi_aso), and the note says so."""
  from seedsweep.reports import collect  # pylint: disable=g-import-not-at-top
  from seedsweep.reports import render  # pylint: disable=g-import-not-at-top
  from seedsweep.reports import statistics  # pylint: disable=g-import-not-at-top
  values = {'best': [90.0, 91.0, 92.0, 93.0, 91.5], 'b': [89.0, 90.5, 91.0, 92.5, 90.0],
            'c': [88.0, 89.5, 90.5, 91.0, 89.0]}
  rows = [{'run': name, 'section': ('', 'g', 'sha'), 'unfinished': '',
           'metrics': {'test_accuracy': {'n': 5, 'mean': sum(v) / 5, 'values': v}}}
          for name, v in values.items()]
  collect._set_p_values(rows)  # pylint: disable=protected-access
  for row in rows[1:]:
    want = statistics.aso(values['best'], values[row['run']], statistics.ASO_ALPHA / 2)
    assert row['metrics']['test_accuracy']['aso'] == want[0]
    assert want[0] != statistics.aso(values['best'], values[row['run']])[0]
  assert 'confidence 1 - 0.05/2, Bonferroni for the 2 rows compared' in '\n'.join(
      render.aso_lines(rows))


def test_an_unfinished_run_is_never_the_reference_and_says_so(tmp_path):
  """The best mean of a run stopped at epoch 2 of 3 (and not early-stopped): marked in
  each table, tested against the best finished row, never its reference."""
  make_run(tmp_path, 'a_stopped', {'test_accuracy': [95.0, 96.0, 97.0]})
  make_run(tmp_path, 'b_done', {'test_accuracy': [90.0, 91.0, 92.0]})
  make_run(tmp_path, 'c_early', {'test_accuracy': [88.0, 89.0, 89.5],
                                 'dev_accuracy': [88.0, 89.0, 89.5],
                                 'best_epoch': [1, 1, 1]})
  for name, patience in (('a_stopped', 0), ('c_early', 1)):
    path = os.path.join(tmp_path, name, outputs.RESULTS)
    results = json.load(open(path))
    results['epochs_completed'] = 2  # of 3; c_early: every seed stopped after epoch 1
    outputs.write_json(path, results)
    config_path = os.path.join(tmp_path, name, outputs.CONFIG)
    config = json.load(open(config_path))
    config['train']['patience'] = patience
    outputs.write_json(config_path, config)
  written = reports.write_report(str(tmp_path), latex=True, plots=False, print_fn=quiet)
  by_run = {r['run']: r for r in written['rows']}
  assert by_run['a_stopped']['unfinished'] == 'unfinished: 2 of 3 epochs'
  assert by_run['c_early']['unfinished'] == ''  # early-stopped: finished
  assert by_run['b_done']['metrics']['test_accuracy']['p_value'] == 'ref'
  assert isinstance(by_run['a_stopped']['metrics']['test_accuracy']['p_value'], float)
  md = (tmp_path / reports.REPORT_MD).read_text()
  assert '| a_stopped (unfinished: 2 of 3 epochs) | bilstm |' in md
  assert '- test_accuracy: best b_done ' in md and 'against a_stopped (unfinished) ' in md
  assert 'not recorded (a run made before data records)' in md  # fake runs: no record
  only = tmp_path / 'only'
  make_run(only, 'stopped', {'test_accuracy': [95.0, 96.0]})
  make_run(only, 'stopped_too', {'test_accuracy': [90.0, 91.0]})
  for name in ('stopped', 'stopped_too'):
    path = os.path.join(only, name, outputs.RESULTS)
    outputs.write_json(path, {**json.load(open(path)), 'epochs_completed': 1})
  written = reports.write_report(str(only), plots=False, print_fn=quiet)
  assert all(r['metrics']['test_accuracy']['p_value'] is None for r in written['rows'])
  assert 'every run of this table is unfinished' in (only / reports.REPORT_MD).read_text()


def _tested_on(run_dir, test_digest):
  """Gives the run in ``run_dir`` a data record whose test split has ``test_digest``."""
  path = os.path.join(run_dir, outputs.RESULTS)
  results = json.load(open(path))
  results['provenance'] = {'data': {'checksums': {'train': 'ab' * 32,
                                                  'test': test_digest},
                                    'sizes': {'train': 100, 'test': 20}}}
  outputs.write_json(path, results)


def test_rows_on_other_test_data_stand_in_sections_of_their_own(tmp_path):
  """Two runs of one dataset on different test files: two sections, no test between
  them; seed parts tested on different examples are not merged."""
  for name, digest, values in (('a', 'cd' * 32, [80.0, 81.0, 82.0]),
                               ('b', 'ef' * 32, [70.0, 71.0, 72.0]),
                               ('c', 'cd' * 32, [75.0, 76.0, 77.0])):
    _tested_on(make_run(tmp_path, name, {'test_accuracy': values}), digest)
  result = reports.write_report(str(tmp_path), plots=False, print_fn=quiet)
  by_run = {r['run']: r['metrics']['test_accuracy'] for r in result['rows']}
  assert by_run['a']['p_value'] == 'ref' and isinstance(by_run['c']['p_value'], float)
  assert by_run['b']['p_value'] is None  # alone with its test data
  md = (tmp_path / reports.REPORT_MD).read_text()
  assert '## demo (no paper source), test cdcdcdcdcdcd' in md
  assert '## demo (no paper source), test efefefefefef' in md
  assert 'Tested on: the test split, 20 examples (sha256 efefefefefef).' in md
  table = list(csv.DictReader(io.StringIO((tmp_path / reports.REPORT_CSV).read_text())))
  assert [l['test_data'] for l in table] == ['cd' * 32, 'cd' * 32, 'ef' * 32]
  parts = tmp_path / 'parts'
  _tested_on(make_run(parts, 'w2v/seeds_1-3', {'test_accuracy': [85.0, 86.0, 87.0]}),
             'cd' * 32)
  _tested_on(make_run(parts, 'w2v/seeds_4-5', {'test_accuracy': [84.0, 88.0]},
                      seeds=[4, 5]), 'ef' * 32)
  rows, skipped = collect.collect(str(parts), print_fn=quiet)
  assert rows == [] and skipped[0][0] == 'w2v'
  assert 'its seed parts were tested on different examples' in skipped[0][1]

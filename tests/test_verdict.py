"""The report's verdict (seedsweep/reports/verdict.py): the best row, each row's tests
and effect size against it, printed and in report.md; and a comparison of two models
end to end, the two ways docs/compare.md shows."""
import json
import os
import re
import shutil

import numpy as np
import pytest

import seedsweep
from seedsweep import reports
from seedsweep.reports import collect
from seedsweep.reports import verdict
from tests import test_model_contract as model_contract
from tests import test_own_code as own_code
from tests.conftest import REPO
from tests.conftest import run_launch
from tests.test_reports import make_run

BETTER = [91.0, 92.5, 90.2, 93.1, 91.7, 92.0]
WORSE = [85.2, 86.9, 84.1, 87.3, 85.8, 86.0]


def test_the_verdict_names_the_best_row_its_tests_and_its_effect_size(tmp_path):
  make_run(str(tmp_path), 'cmp/bilstm', {'test_accuracy': BETTER})
  make_run(str(tmp_path), 'cmp/lstm', {'test_accuracy': WORSE}, model='lstm')
  printed = []
  out = reports.write_report(str(tmp_path), plots=False, print_fn=printed.append)
  assert printed[-2:] == out['verdict']
  best, against = out['verdict']
  (b_mean, b_std), (w_mean, w_std) = [(np.mean(v), np.std(v, ddof=1))
                                      for v in (BETTER, WORSE)]
  assert best == ('verdict, demo (no paper source), test_accuracy: best cmp/bilstm '
                  f'{b_mean:.2f} ± {b_std:.2f} over 6 seeds')
  d = (b_mean - w_mean) / np.sqrt((b_std ** 2 + w_std ** 2) / 2)  # equal n: pooled
  assert against.startswith(f'  against cmp/lstm {w_mean:.2f} ± {w_std:.2f} (6 seeds): '
                            f"difference +{b_mean - w_mean:.2f}, Cohen's d {d:.2f}, ")
  assert 'p (Holm) <0.001' in against and against.endswith(
      'ASO ε 0.00: better: every test agrees')
  markdown = (tmp_path / 'report.md').read_text()
  assert '**Verdict:**' in markdown
  assert f'- test_accuracy: best cmp/bilstm {b_mean:.2f}' in markdown
  assert against.replace('  against', '  - against') in markdown


def test_a_difference_the_seeds_cannot_resolve_is_not_called_better(tmp_path):
  make_run(str(tmp_path), 'a', {'test_accuracy': [90.0, 93.0, 88.0]})
  make_run(str(tmp_path), 'b', {'test_accuracy': [89.0, 92.0, 88.5]})
  out = reports.write_report(str(tmp_path), plots=False, print_fn=lambda *_: None)
  lines, rows = out['verdict'], out['rows']
  assert lines[0].endswith('best a 90.33 ± 2.52 over 3 seeds')
  mdd = next(r for r in rows if r['run'] == 'b')['metrics']['test_accuracy']['mdd']
  assert lines[1].endswith(f'not shown better; the difference is under the MDD '
                           f'{mdd:.2f} (more seeds would decide); fewer than 5 seeds: '
                           'read no p-value yet')


def test_a_table_of_many_rows_names_the_closest_and_counts_the_rest(tmp_path):
  for i, shift in enumerate((0.0, -0.5, -6.0, -7.0, -8.0, -9.0)):
    make_run(str(tmp_path), f'run{i}', {'test_accuracy': [v + shift for v in BETTER]})
  rows, _ = collect.collect(str(tmp_path), lambda *_: None)
  lines = verdict.verdict_lines('t', rows)
  assert len(lines) == 1 + verdict.SHOWN + 1
  assert [l.split()[1] for l in lines[1:1 + verdict.SHOWN]] == ['run1', 'run2', 'run3']
  assert lines[-1] == ('  and 2 more rows, 2 of them below it at p (Holm) < 0.05 '
                       '(report.md has each)')


def test_one_row_has_no_verdict(tmp_path):
  make_run(str(tmp_path), 'alone', {'test_accuracy': BETTER})
  assert reports.write_report(str(tmp_path), plots=False,
                              print_fn=lambda *_: None)['verdict'] == []


QUICK = ('--config=demo:quick', '--config.seeds=(1,2,3)', '--config.train.num_epochs=1',
         '--config.train.progress=false')


def _check_terminal_verdict(root, names):
  """The report over ``root`` prints the verdict: the better of ``names`` (by the
  means results.json holds) as best, the other against it, and report.md has it."""
  means, seeds = {}, set()
  for name in names:
    with open(os.path.join(root, name, 'results.json')) as f:
      values = json.load(f)['metrics']['test_accuracy']
    means[name] = sum(values) / len(values)
    seeds.add(len(values))
  (n_seeds,) = seeds
  proc = run_launch('--mode=report', f'--workdir={root}')
  assert proc.returncode == 0, proc.stderr[-3000:]
  lines = proc.stdout.strip().splitlines()
  best, other = sorted(names, key=lambda n: -means[n])
  assert lines[-3].startswith('report of 2 runs')
  assert lines[-2].startswith('verdict, demo (no paper source), test_accuracy: best '
                              f'{best} {means[best]:.2f} ± '), proc.stdout
  assert re.match(rf"  against {re.escape(other)} {means[other]:.2f} ± [\d.]+ "
                  rf"\({n_seeds} seeds\): difference \+[\d.]+, Cohen's d [\d.]+, "
                  r"p \(Welch\) ", lines[-1]), proc.stdout
  assert lines[-1].endswith('fewer than 5 seeds: read no p-value yet')
  with open(os.path.join(root, 'report.md')) as f:
    assert lines[-1].strip().replace('  ', ' ') in f.read()


@pytest.mark.slow
def test_two_runs_under_one_root_are_compared_in_the_terminal(tmp_path,
                                                              tmp_path_factory):
  """Two runs the command trained (docs/data.md's own CNN and its NNX example: the
  manual's runs of tests/test_own_code.py and tests/test_model_contract.py, made once
  for the suite) copied under one root: the report command compares them."""
  root = tmp_path / 'cmp'
  shutil.copytree(os.path.join(own_code.manual_run(tmp_path_factory), 'run'),
                  root / 'own_cnn')
  shutil.copytree(os.path.join(model_contract.manual_run(tmp_path_factory, 'nnx_cnn'),
                               'run'), root / 'nnx_cnn')
  _check_terminal_verdict(str(root), ['own_cnn', 'nnx_cnn'])


@pytest.mark.slow
@pytest.mark.full  # the verdict through the command: the two-runs test above
def test_a_sweep_over_the_model_name_is_compared_in_the_terminal(tmp_path):
  root = tmp_path / 'cmp_sweep'
  proc = run_launch(*QUICK, '--sweep=demo_models', f'--workdir={root}')
  assert proc.returncode == 0, proc.stderr[-3000:]
  _check_terminal_verdict(str(root), ['name=bilstm', 'name=lstm'])


@pytest.mark.slow
@pytest.mark.full  # the tier keeps the own-model point (test_sweep) and the verdict
def test_a_sweep_over_a_packaged_and_an_own_model_is_compared(tmp_path, monkeypatch):
  """docs/compare.md's sweep with an own model file (examples/linen_cnn.py) beside the
  Bi-LSTM: the CNN point trains with its class's fields, the report's verdict tests
  the two rows."""
  monkeypatch.chdir(REPO)  # the model file is named from the checkout, as the page does
  spec = tmp_path / 'own_models.py'
  spec.write_text('from seedsweep.sweep import grid\n\n\ndef sweep(arg=""):\n'
                  '  return grid.product(**{"model.name": '
                  '("bilstm", "examples/linen_cnn.py:CNNClassifier")})\n')
  config = seedsweep.load_config('demo:quick', seeds=(1, 2, 3), train__num_epochs=1,
                                 train__progress=False, data__num_buckets=1)
  root = str(tmp_path / 'cmp_sweep')
  names = ['name=bilstm', 'name=examples_linen_cnn.py_CNNClassifier']
  done = seedsweep.run_sweep(config, str(spec), root, print_fn=lambda *_: None)
  assert sorted(done) == names
  with open(os.path.join(root, names[1], 'config.json')) as f:
    model = json.load(f)['model']
  assert model == {'name': 'examples/linen_cnn.py:CNNClassifier', 'embed_dim': 32,
                   'filters': 16, 'widths': [3, 4, 5], 'dropout': 0.2}
  printed = []
  out = seedsweep.report(root, plots=False, print_fn=printed.append)
  best, against = out['verdict']
  assert printed[-2:] == out['verdict']
  means = {n: float(np.mean(done[n]['metrics']['test_accuracy'])) for n in names}
  first, second = sorted(names, key=lambda n: -means[n])
  label = {n: n + (' [name=examples/linen_cnn.py:CNNClassifier]' if 'cnn' in n else '')
           for n in names}  # the folder, and the model it names where they differ
  assert best.startswith(f'verdict, demo (no paper source), test_accuracy: best '
                         f'{label[first]} {means[first]:.2f} ± '), best
  assert against.startswith(f'  against {label[second]} {means[second]:.2f} ± '), against

"""Reports compare like with like (issue 78, items 5 and 7), on real runs of the
demo's examples written as the user's own files: rows share a significance table
only when they were tested on the same examples, an unfinished run is marked and
never the reference, a run without a test split says so, and the one 95 % interval
of a mean is the same in the table, the CSV, the plots and the terminal."""
import csv
import io
import json
import os

import numpy as np
import pytest

from seedsweep import data
from seedsweep import reports
from seedsweep.errors import Stopped
from seedsweep.reports import collect
from seedsweep.reports import plots
from seedsweep.reports import statistics
from seedsweep.reports import verdict
from seedsweep.run import faults
from seedsweep.run import loop
from seedsweep.run import outputs
from seedsweep.run import provenance
from tests.conftest import small_config

SEEDS = (1, 2, 3)


def _write_split(path, texts, labels):
  with open(path, 'w', encoding='utf-8') as f:
    f.writelines(f'{label}\t{text}\n' for text, label in zip(texts, labels))


def _files_config(folder, test, epochs=1, **files):
  """The demo's quick model on the demo's examples as TSV files: train, dev and
  ``test`` ('' for none); one epoch and one length bucket (one train and one eval
  program for the five runs but b's learning rate: the rules read the numbers, not
  their size)."""
  config = small_config(seeds=SEEDS, epochs=epochs)
  config.data.num_buckets = 1
  config.data.name = 'files'
  config.data.files.train = os.path.join(folder, 'train.tsv')
  config.data.files.dev = os.path.join(folder, 'dev.tsv')
  config.data.files.test = os.path.join(folder, test) if test else ''
  for k, v in files.items():
    config[k] = v
  return config


def _quiet(*_):
  pass


@pytest.fixture(scope='module')
def environ():
  """The module's environment changes, undone after its last test."""
  with pytest.MonkeyPatch.context() as patch:
    yield patch


@pytest.fixture(scope='module')
def root(tmp_path_factory, environ):
  """Five real runs: ``a`` and ``b`` (another learning rate) on the demo's test split,
  ``c`` on its first half, ``d`` without a test split, and ``0_stopped`` (a's config
  for 4 epochs, stopped by SIGTERM after epoch 2: what a killed run leaves)."""
  folder = str(tmp_path_factory.mktemp('sections'))
  environ.setenv('SEEDSWEEP_TFDS_DIR', os.path.join(folder, 'tfds'))
  demo = small_config().data
  for split in ('train', 'dev', 'test'):
    texts, labels = data.read_split(demo, split)
    _write_split(os.path.join(folder, f'{split}.tsv'), texts, labels)
    if split == 'test':
      _write_split(os.path.join(folder, 'half.tsv'), texts[:500], labels[:500])
  runs = os.path.join(folder, 'runs')
  loop.train(_files_config(folder, 'test.tsv'), os.path.join(runs, 'a'), _quiet)
  other = _files_config(folder, 'test.tsv')
  other.optimizer.learning_rate = 2e-3
  loop.train(other, os.path.join(runs, 'b'), _quiet)
  loop.train(_files_config(folder, 'half.tsv'), os.path.join(runs, 'c'), _quiet)
  loop.train(_files_config(folder, ''), os.path.join(runs, 'd'), _quiet)
  stopped = _files_config(folder, 'test.tsv', epochs=4)
  environ.setenv(faults.ENV, f'metrics_row:{len(SEEDS) + 1}@TERM')  # in epoch 2's rows
  with pytest.raises(Stopped, match='after epoch 2'):
    loop.train(stopped, os.path.join(runs, '0_stopped'), _quiet)
  environ.delenv(faults.ENV)
  return runs


@pytest.fixture(scope='module')
def report(root, tmp_path_factory):
  """The report of ``root`` (plots too), its rows and its files' text."""
  out = str(tmp_path_factory.mktemp('report'))
  written = reports.write_report(root, latex=True, print_fn=_quiet, out=out)
  text = {name: open(os.path.join(out, name), encoding='utf-8').read()
          for name in (reports.REPORT_MD, reports.REPORT_CSV, reports.REPORT_TEX)}
  return written['rows'], text


def _section(md: str, heading: str) -> str:
  start = md.index(f'## {heading}\n')
  end = md.find('\n## ', start + 1)
  return md[start:end if end >= 0 else len(md)]


@pytest.mark.slow
@pytest.mark.full  # five real runs (70 s); test_reports.py checks the rules
def test_runs_share_a_table_only_when_tested_on_the_same_examples(root, report):
  rows, text = report
  by_run = {r['run']: r for r in rows}
  assert set(by_run) == {'0_stopped', 'a', 'b', 'c', 'd'}
  full = by_run['a']['test']
  assert full['sha256'] == by_run['b']['test']['sha256'] == by_run['0_stopped'][
      'test']['sha256']
  assert full['examples'] == 1000 and by_run['c']['test']['examples'] == 500
  assert by_run['c']['test']['sha256'] != full['sha256']
  # The recorded identity is the test file's examples: the sha256 its pool records.
  results = json.load(open(os.path.join(root, 'a', outputs.RESULTS)))
  assert results['provenance']['data']['test']['sha256'] == results['provenance'][
      'data']['checksums']['test']
  sections = collect.grouped(rows)
  assert [[r['run'] for r in members] for _, members in sections] == [
      ['0_stopped', 'a', 'b'], ['c'], ['d']]
  md = text[reports.REPORT_MD]
  same = _section(md, f'files (no paper source), test {full["sha256"][:12]}')
  assert f'Tested on: the test split, 1,000 examples (sha256 {full["sha256"][:12]})' in same
  assert '| ref |' in same and '| c |' not in same
  half = _section(md, f'files (no paper source), test {by_run["c"]["test"]["sha256"][:12]}')
  assert 'ref' not in half  # alone: nothing to test against
  assert by_run['c']['metrics']['test_accuracy']['p_value'] is None


@pytest.mark.slow
@pytest.mark.full  # five real runs (70 s); test_reports.py checks the rules
def test_an_unfinished_run_is_marked_everywhere_and_never_the_reference(report):
  rows, text = report
  by_run = {r['run']: r for r in rows}
  assert by_run['0_stopped']['unfinished'] == 'unfinished: 2 of 4 epochs'
  assert by_run['a']['unfinished'] == by_run['b']['unfinished'] == ''
  stopped, ref = by_run['0_stopped']['metrics']['test_accuracy'], [
      r for r in ('a', 'b') if by_run[r]['metrics']['test_accuracy']['p_value'] == 'ref']
  assert len(ref) == 1 and stopped['p_value'] != 'ref'
  assert isinstance(stopped['p_value'], float)  # still tested against the reference
  md, table, tex = (text[n] for n in (reports.REPORT_MD, reports.REPORT_CSV,
                                      reports.REPORT_TEX))
  assert '| 0_stopped (unfinished: 2 of 4 epochs) | bilstm | test_accuracy |' in md
  assert '| 0_stopped | random | 2 of 4, unfinished |' in md
  assert r'0\_stopped (unfinished: 2 of 4 epochs)' in tex
  lines = list(csv.DictReader(io.StringIO(table)))
  finished = {(l['run'], l['metric']): l['finished'] for l in lines}
  assert finished[('0_stopped', 'test_accuracy')] == 'no'
  assert finished[('a', 'test_accuracy')] == 'yes'
  lines = verdict.verdict_lines('', [r for r in rows
                                     if r['section'] == by_run['a']['section']])
  head = next(l for l in lines if l.startswith('test_accuracy: best '))
  assert head.startswith(f'test_accuracy: best {ref[0]} ')  # never the unfinished run
  against = {l.split()[1]: l for l in lines[lines.index(head) + 1:]
             if l.startswith('  against ')}
  loser = ({'a', 'b'} - {ref[0]}).pop()
  assert set(against) == {'0_stopped', loser}
  assert against['0_stopped'].startswith('  against 0_stopped (unfinished) ')
  best, worse = (by_run[r]['metrics']['test_accuracy'] for r in (ref[0], loser))
  d = statistics.cohens_d(best['values'], worse['values'])
  assert (f"difference {best['mean'] - worse['mean']:+.2f}, Cohen's d {d:.2f}, "
          in against[loser])
  assert '**Verdict:**' in md and f'- test_accuracy: best {ref[0]} ' in md


@pytest.mark.slow
@pytest.mark.full  # five real runs (70 s); test_reports.py checks the rules
def test_a_run_without_a_test_split_says_so_and_shows_its_dev_scores(report):
  rows, text = report
  row = next(r for r in rows if r['run'] == 'd')
  assert row['test'] == {'sha256': None, 'examples': 0, 'what': 'no test split'}
  assert row['metrics']['test_accuracy']['n'] == 0
  assert row['metrics']['dev_accuracy']['n'] == len(SEEDS)
  section = _section(text[reports.REPORT_MD], 'files (no paper source), no test split')
  assert 'Tested on: no test split.' in section
  assert '| d | bilstm | test_accuracy | no test split |' in section
  assert '| d | bilstm | dev_accuracy | ' in section


@pytest.mark.slow
@pytest.mark.full  # five real runs (70 s); test_reports.py checks the rules
def test_one_interval_in_the_table_the_csv_the_plots_and_the_terminal(root, report,
                                                                      monkeypatch):
  """Three seeds: the t interval, wider than the seeds' range, in every place."""
  rows, text = report
  row = next(r for r in rows if r['run'] == 'a')
  values = row['metrics']['test_accuracy']['values']
  low, high = outputs.mean_interval(values)
  from scipy import stats  # pylint: disable=g-import-not-at-top
  half = stats.t.ppf(0.975, 2) * np.std(values, ddof=1) / np.sqrt(3)
  assert (low, high) == pytest.approx((np.mean(values) - half, np.mean(values) + half))
  assert row['metrics']['test_accuracy']['ci95'] == (low, high)
  cell = f'[{low:.2f}, {high:.2f}]'
  assert f'| a | bilstm | test_accuracy | ' in text[reports.REPORT_MD]
  md_row = next(l for l in text[reports.REPORT_MD].splitlines()
                if l.startswith('| a | bilstm | test_accuracy |'))
  assert cell in md_row
  assert statistics.CI_METHOD in text[reports.REPORT_MD]
  line = next(l for l in csv.DictReader(io.StringIO(text[reports.REPORT_CSV]))
              if (l['run'], l['metric']) == ('a', 'test_accuracy'))
  assert (float(line['ci95_low']), float(line['ci95_high'])) == (low, high)
  results = json.load(open(os.path.join(root, 'a', outputs.RESULTS)))
  terminal = next(l for l in outputs.format_table(results).splitlines()
                  if l.startswith('test_accuracy'))
  assert cell in terminal
  drawn = []  # the sweep plot's error bars: the same ends
  import matplotlib.axes  # pylint: disable=g-import-not-at-top
  original = matplotlib.axes.Axes.errorbar

  def errorbar(self, x, y, yerr=None, **kw):
    drawn.append((list(y), yerr))
    return original(self, x, y, yerr=yerr, **kw)

  monkeypatch.setattr(matplotlib.axes.Axes, 'errorbar', errorbar)
  other = next(r for r in rows if r['run'] == 'b')
  points = [plots.SweepPoint({'optimizer.learning_rate': lr}, e['mean'], e['std'],
                             None, e['values'])
            for lr, r in ((5e-3, row), (2e-3, other))
            for e in [r['metrics']['test_accuracy']]]
  plots.sweep_plot(points, 'test_accuracy', os.path.join(root, '..', 'lr.png'))
  (means, (below, above)), = drawn  # sorted by rate: a (5e-3) second
  assert means[1] - below[1] == pytest.approx(low)
  assert means[1] + above[1] == pytest.approx(high)


def test_the_test_identity_of_cross_validated_runs_names_the_folds_tested():
  data_record = {'checksums': {'train': 'ab' * 32},
                 'protocol': {'folds': {'num_folds': 10, 'seed': 0, 'stratified': True,
                                        'sizes': [107] * 5 + [106] * 5}}}
  every = provenance.test_identity(data_record, list(range(10)) * 2)
  assert every['examples'] == 1065 and every['what'] == 'every fold of 10-fold cross-validation'
  assert provenance.test_identity(data_record, ()) == every  # () = every fold
  first = provenance.test_identity(data_record, [0, 0])
  assert first['sha256'] != every['sha256'] and first['examples'] == 107
  assert first['what'] == 'fold 0 of 10-fold cross-validation'
  other_data = {**data_record, 'checksums': {'train': 'cd' * 32}}
  assert provenance.test_identity(other_data, [0])['sha256'] != first['sha256']
  assert provenance.test_identity({}, [0]) is None

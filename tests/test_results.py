"""The published results (results/campaign.py, results/<paper>/): every figure of the
manual's results section (docs/papers.md) comes from a report under results/, each
report rebuilds from the run records beside it, and each record is the run the
campaign defines."""
import dataclasses
import glob
import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest

from seedsweep import reports
from seedsweep.config import checks as config_checks
from seedsweep.run import verify
from tests.conftest import REPO


def _campaign():
  spec = importlib.util.spec_from_file_location(
      'campaign', os.path.join(REPO, 'results', 'campaign.py'))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


campaign = _campaign()
MEAN_STD = re.compile(r'\d+\.\d+ ± \d+\.\d+')
CI = re.compile(r'\[\d+\.\d+, \d+\.\d+\]')
PAPER_DIRS = sorted(d for d in glob.glob(os.path.join(REPO, 'results', '*', ''))
                    if os.path.isdir(os.path.join(d, 'runs')))


def _readme_section() -> str:
  with open(os.path.join(REPO, campaign.RESULTS_PAGE)) as f:
    text = f.read()
  start, end = text.index(campaign.BEGIN), text.index(campaign.END)
  return text[start + len(campaign.BEGIN):end].strip('\n') + '\n'


def test_the_readme_section_is_what_the_reports_give():
  assert _readme_section() == campaign.readme_section(), (
      f'{campaign.RESULTS_PAGE} is out of date with results/: run '
      '`python results/campaign.py readme`')


def test_every_readme_figure_is_in_the_report_it_links():
  section = _readme_section()
  for block in section.split('\n### ')[1:]:
    link = re.search(r'\[`(results/\w+)/`\]', block).group(1)
    path = os.path.join(REPO, link, 'report.md')
    rows = [line for line in block.splitlines()
            if line.startswith('| ') and MEAN_STD.search(line)]
    if not rows:
      continue
    with open(path) as f:
      report = f.read()
    for row in rows:
      for figure in MEAN_STD.findall(row) + CI.findall(row):
        assert figure in report, f'{figure} of\n{row}\nis not in {link}/report.md'


@pytest.mark.parametrize('paper_dir', PAPER_DIRS,
                         ids=[os.path.basename(d.rstrip('/')) for d in PAPER_DIRS])
def test_each_report_rebuilds_from_its_records(paper_dir, tmp_path):
  reports.write_report(os.path.join(paper_dir, 'runs'), plots=False,
                       print_fn=lambda _: None, out=str(tmp_path))
  for name in ('report.csv', 'report.md'):
    with open(os.path.join(paper_dir, name)) as f:
      published = f.read()
    rebuilt = (tmp_path / name).read_text()
    if name == 'report.md':  # tables only: the rebuild draws no plots to link
      published, rebuilt = (
          [l for l in text.splitlines() if l.startswith('|')]
          for text in (published, rebuilt))
    assert rebuilt == published, f'{paper_dir}{name} differs from its records'


def test_every_record_is_a_campaign_run_with_its_config():
  runs = {run.record_dir: run for run in campaign.all_parts()}
  records = sorted(os.path.relpath(os.path.dirname(p), REPO) for p in glob.glob(
      os.path.join(REPO, 'results', '*', 'runs', '*', '*', 'config.json')) + glob.glob(
          os.path.join(REPO, 'results', '*', 'runs', '*', '*', 'seeds_*', 'config.json')))
  for record in records:
    assert record in runs, f'{record} is no run of results/campaign.py'
    with open(os.path.join(REPO, record, 'config.json')) as f:
      stored = json.load(f)
    expected = config_checks.to_dict(runs[record].config())
    assert config_checks.differences(stored, expected) == [], record
    for name in campaign.RECORD_FILES:
      assert os.path.isfile(os.path.join(REPO, record, name)), f'{record}/{name}'


def test_every_campaign_run_is_a_valid_config_with_its_vectors_and_seeds():
  for run in campaign.all_runs() + campaign.all_parts():
    config = run.config()
    config_checks.validate(config)
    assert len(config.seeds) == run.seeds
    if run.setting == 'random':
      assert config.data.vectors.path == ''
    else:
      assert config.data.vectors.path == campaign.VECTORS[run.row.vectors].path
      assert config.data.vectors.static == (run.setting == 'w2v_static')
  # An IMDB row's vectors never saw its test reviews.
  for row in campaign.ROWS:
    if row.vectors and 'imdb' in row.config:
      assert campaign.VECTORS[row.vectors].corpus == 'imdb_train', row.key


def test_a_run_command_gives_its_overrides_as_flags():
  run = campaign.find_run('dlstm/sst2/w2v_static/seeds_4-6')
  flags = run.command()[3:]
  assert flags[:2] == [f'--config={run.row.config}',
                       '--workdir=runs/campaign/dlstm/sst2/w2v_static/seeds_4-6']
  assert '--config.seeds=(4,5,6)' in flags
  assert '--config.data.vectors.static=True' in flags
  assert '--config.data.vectors.lowercase=True' in flags
  clstm = campaign.find_run('clstm/sst2/random').command()
  assert not any(flag.startswith('--config.seeds=') for flag in clstm)  # ten: default
  imdb = campaign.find_run('mtlstm/imdb/random')  # a whole run of 3 seeds names them
  whole = campaign.Run(dataclasses.replace(imdb.row, seeds=3, part_seeds=0), 'random')
  assert '--config.seeds=(1,2,3)' in whole.command()
  assert '--config.optimizer.embedding_update=rows' in clstm
  with pytest.raises(SystemExit, match="no run 'dlstm/sst2/w2v'"):
    campaign.find_run('dlstm/sst2/w2v')


def test_list_shows_how_far_a_started_run_is(tmp_path, monkeypatch, capsys):
  run = campaign.find_run('clstm/trec/random')
  workdir = tmp_path / run.workdir
  workdir.mkdir(parents=True)
  (workdir / 'config.json').write_text(json.dumps({'train': {'num_epochs': 50}}))
  (workdir / 'metrics.jsonl').write_text(''.join(
      json.dumps({'epoch': e, 'seed': s, 'wall_time': 120.0 * e}) + '\n'
      for e in (1, 2, 3) for s in (1, 2)))
  monkeypatch.setattr(campaign, 'ROOT', str(tmp_path))
  assert campaign.progress(run) == 'epoch 3/50, 2.0 min an epoch so far'
  assert campaign.list_runs() == 0
  assert '[epoch 3/50, 2.0 min an epoch so far]' in capsys.readouterr().out


def test_a_published_run_says_published_while_its_checkpoints_are_here(tmp_path,
                                                                      monkeypatch):
  run = campaign.find_run('clstm/trec/random')
  monkeypatch.setattr(campaign, 'ROOT', str(tmp_path))
  assert campaign.state(run) == 'not run'
  workdir = tmp_path / run.workdir
  workdir.mkdir(parents=True)
  (workdir / 'config.json').write_text('{}')
  assert campaign.state(run) == 'started'
  (workdir / 'results.json').write_text('{}')
  assert campaign.state(run) == 'finished'
  (tmp_path / run.record_dir).mkdir(parents=True)
  (tmp_path / run.record_dir / 'results.json').write_text('{}')
  assert campaign.state(run) == 'published'


def test_a_long_run_trains_in_seed_parts_that_cover_its_seeds_once():
  for run in campaign.all_runs():
    parts = run.parts()
    seeds = [s for part in parts for s in part.config().seeds]
    assert seeds == list(range(1, run.seeds + 1)), run.key
    if len(parts) > 1:
      assert all(part.workdir.startswith(run.workdir + os.sep)
                 and part.record_dir.startswith(run.record_dir + os.sep)
                 for part in parts), run.key
  assert [p.key for p in campaign.find_run('dlstm/sst2/w2v_static').parts()] == [
      'dlstm/sst2/w2v_static/seeds_1-3', 'dlstm/sst2/w2v_static/seeds_4-6',
      'dlstm/sst2/w2v_static/seeds_7-9', 'dlstm/sst2/w2v_static/seeds_10']
  assert campaign.find_run('dlstm/sst2/random').parts()[1].seeds == 2


def test_train_goes_through_the_parts_and_skips_what_is_published(tmp_path,
                                                                  monkeypatch, capsys):
  """A published part is not trained again (its checkpoints went with an earlier
  machine; its record stands); a run is published once all its parts are."""
  monkeypatch.setattr(campaign, 'ROOT', str(tmp_path))
  called = []
  monkeypatch.setattr(campaign, '_call', lambda command: called.append(command) or 0)
  run = campaign.find_run('dlstm/sst2/random')
  first, second = run.parts()
  (tmp_path / first.record_dir).mkdir(parents=True)
  (tmp_path / first.record_dir / 'results.json').write_text('{}')
  assert campaign.state(run) == 'started'
  assert campaign.train([run.key], keep_going=False) == 0
  assert [c[4] for c in called] == [f'--workdir={second.workdir}']
  assert f'{first.key}: published in {first.record_dir}' in capsys.readouterr().out
  (tmp_path / second.record_dir).mkdir(parents=True)
  (tmp_path / second.record_dir / 'results.json').write_text('{}')
  assert campaign.state(run) == 'published'
  assert campaign.train([second.key], keep_going=False) == 0 and len(called) == 1


def test_again_trains_a_published_run_afresh_and_its_record_stands_until_publish(
    tmp_path, monkeypatch, capsys):
  """``train --again``: the published run's folder is set aside (renamed, not
  deleted) and the command trains afresh; a rerun under way resumes rather than being
  set aside; a finished rerun waits for ``publish``, which replaces the record."""
  monkeypatch.setattr(campaign, 'ROOT', str(tmp_path))
  called = []
  monkeypatch.setattr(campaign, '_call', lambda command: called.append(command) or 0)
  run = campaign.find_run('clstm/trec/random')
  workdir, record = tmp_path / run.workdir, tmp_path / run.record_dir
  for folder, name in ((workdir, 'old'), (record, 'old')):
    folder.mkdir(parents=True)
    for file in campaign.RECORD_FILES:
      (folder / file).write_text(name)
  (workdir / 'checkpoints').mkdir()
  assert campaign.train([run.key], keep_going=False) == 0 and not called
  assert f'train --again {run.key}` trains it afresh' in capsys.readouterr().out

  assert campaign.train([run.key], keep_going=False, again=True) == 0
  assert [c[4] for c in called] == [f'--workdir={run.workdir}']
  [aside] = (tmp_path / campaign.DISCARDED).iterdir()
  assert aside.name.startswith('clstm__trec__random.')
  assert (aside / 'checkpoints').is_dir() and not workdir.exists()
  assert (record / 'results.json').read_text() == 'old'

  workdir.mkdir()  # the new run, stopped before its end: resumed, not set aside
  (workdir / 'config.json').write_text('new')
  assert campaign.train([run.key], keep_going=False, again=True) == 0
  assert len(called) == 2 and len(list((tmp_path / campaign.DISCARDED).iterdir())) == 1

  for file in campaign.RECORD_FILES:  # the new run finished
    (workdir / file).write_text('new')
  capsys.readouterr()
  assert campaign.train([run.key], keep_going=False, again=True) == 0
  assert len(called) == 2 and 'publish` replaces its record' in capsys.readouterr().out
  assert campaign.copy_records(run)
  assert (record / 'results.json').read_text() == 'new'


def test_a_stopped_rerun_says_to_resume_it_with_again(tmp_path, monkeypatch, capsys):
  monkeypatch.setattr(campaign, 'ROOT', str(tmp_path))
  monkeypatch.setattr(campaign, '_call', lambda command: 143)
  run = campaign.find_run('clstm/trec/random')
  (tmp_path / run.record_dir).mkdir(parents=True)
  (tmp_path / run.record_dir / 'results.json').write_text('{}')
  assert campaign.train([run.key], keep_going=False, again=True) == 143
  assert f'train --again {run.key}` resumes it' in capsys.readouterr().out


def test_a_stopped_run_ends_the_campaign_as_stopped_not_failed(tmp_path, monkeypatch,
                                                                capsys):
  """SIGTERM to a run saves its checkpoint (exit 128 + 15): the campaign stops there,
  even with --keep_going, and says how to resume instead of calling it failed."""
  monkeypatch.setattr(campaign, 'ROOT', str(tmp_path))
  called = []
  monkeypatch.setattr(campaign, '_call', lambda command: called.append(command) or 143)
  first = campaign.find_run('dlstm/sst2/random').parts()[0]
  assert campaign.train(['dlstm/sst2/random', 'dlstm/trec/random'],
                        keep_going=True) == 143
  out = capsys.readouterr().out
  assert len(called) == 1 and 'failed' not in out
  assert f'{first.key} stopped (signal 15)' in out
  assert f'train {first.key}` resumes it' in out


def test_a_row_without_a_ci_shows_an_empty_cell_not_brackets():
  """The report gives no bootstrap CI under 3 seeds (DLSTM ATIS, seeds 4-5 so far)."""
  assert campaign._ci_text({'ci95_low': '', 'ci95_high': ''}) == ''
  assert campaign._ci_text({'ci95_low': '82.131', 'ci95_high': '83.14'}) == (
      '[82.13, 83.14]')
  assert '[, ]' not in _readme_section()


def test_a_one_seed_row_shows_its_mean_without_a_spread():
  """One seed has no std; '± 0.00' would read as no variance (DC-Bi-LSTM MR, seed 1)."""
  assert campaign._spread_text({'n': '1', 'mean': '75.714', 'std': '0.0'}) == '75.71'
  assert campaign._spread_text({'n': '5', 'mean': '49.52', 'std': '0.751'}) == (
      '49.52 ± 0.75')
  assert '± 0.00 |' not in _readme_section()


def test_a_parted_run_shows_how_many_of_its_seeds_are_in(monkeypatch, tmp_path):
  monkeypatch.setattr(campaign, 'ROOT', str(tmp_path))
  run = campaign.find_run('dlstm/sst2/w2v_static')  # parts 1-3, 4-6, 7-9, 10
  for part in ('seeds_1-3', 'seeds_10'):
    os.makedirs(tmp_path / run.record_dir / part)
    (tmp_path / run.record_dir / part / 'results.json').write_text('{}')
  assert campaign._n_text(run, '4') == '4 of 10'
  for part in ('seeds_4-6', 'seeds_7-9'):
    os.makedirs(tmp_path / run.record_dir / part)
    (tmp_path / run.record_dir / part / 'results.json').write_text('{}')
  assert campaign._n_text(run, '10') == '10'
  whole = campaign.find_run('clstm/sst2/random')  # one program: n as reported
  assert campaign._n_text(whole, '10') == '10'


def test_an_ablation_row_without_random_embeddings_has_no_random_run():
  """docs/models.md §3.2's phrases ablation for DC-Bi-LSTM runs with the vectors only."""
  row = campaign.ROWS_BY_KEY['dclstm/sst1_phrases']
  assert row.settings() == ('w2v_static',)
  with pytest.raises(SystemExit, match="no run 'dclstm/sst1_phrases/random'"):
    campaign.find_run('dclstm/sst1_phrases/random')
  dclstm = campaign.readme_section().split('\n### ')[0]  # the paper's own table
  assert dclstm.startswith('### DC-Bi-LSTM') and '| SST-1 (+phrases) |' in dclstm
  assert '| SST-1 (+phrases) | random |' not in dclstm
  assert campaign.ROWS_BY_KEY['dclstm/sst1'].settings() == ('random', 'w2v_static')


def _records():
  return sorted(os.path.dirname(p) for p in glob.glob(
      os.path.join(REPO, 'results', '*', 'runs', '**', 'results.json'), recursive=True))


def test_every_published_record_reads_as_verify_reads_it():
  """What `--mode=verify --workdir=results/...` reads first: each record's config,
  its metrics rows of epoch 1 and its provenance (issue 91)."""
  records = _records()
  assert len(records) >= 9
  for record in records:
    with open(os.path.join(record, 'config.json')) as f:
      config_checks.validate(config_checks.from_dict(json.load(f)))
    rows = verify.recorded_rows(record, 1)
    provenance = verify.recorded_provenance(record, None)
    assert rows[1] and provenance['git_commit'] and provenance['determinism'], record


def _portable(record):
  return verify.recorded_provenance(record, None)['determinism'].get(
      'numerics') == 'portable'


PORTABLE_ROWS = ('mtlstm/runs/sst2/', 'mtlstm/runs/sst1/', 'mtlstm/runs/trec/')


def test_the_portable_rows_are_the_ones_the_papers_page_says_verify_from_main():
  portable = [os.path.relpath(r, os.path.join(REPO, 'results')) for r in _records()
              if _portable(r)]
  assert sorted(portable) == sorted(f'{p}{s}' for p in PORTABLE_ROWS for s in (
      'random', 'w2v_fine-tuned', 'w2v_static')), portable


@pytest.mark.full
def test_a_published_row_verifies_bit_for_bit_from_this_checkout(tmp_path):
  """docs/papers.md's promise, on today's code: the MT-LSTM TREC row with random
  embeddings (no vectors file to build), its first epoch re-trained (issue 91)."""
  env = dict(os.environ, SEEDSWEEP_CACHE=str(tmp_path / 'cache'))
  done = subprocess.run(
      [sys.executable, '-m', 'seedsweep', '--mode=verify',
       '--workdir=results/mtlstm/runs/trec/random'], cwd=REPO, env=env,
      capture_output=True, text=True, timeout=900, check=False)
  assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
  assert ('reproduced: epochs 1..1 of 10 members bitwise' in done.stdout), done.stdout

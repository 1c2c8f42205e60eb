"""seedsweep/sweep/search.py and space.py: a search scores every point on all its
seeds, stacks a round's points in one program, resumes after kill -9 with the same
points (choices of strings and tuples too), draws each model class's own fields when
it draws model.name, and the report names the point dev chose with its seeds' test
spread."""
import dataclasses
import json
import os

import numpy as np
import pytest

from seedsweep import api
from seedsweep.errors import UserError
from seedsweep.run import workdir as workdir_lib
from seedsweep.sweep import search
from seedsweep.sweep import space
from tests.conftest import REPO
from tests.conftest import run_launch

TINY = ('--config=experiments/demo.py:quick', '--config.train.num_epochs=1',
        '--config.train.progress=False', '--config.data.num_buckets=1',
        '--config.model.embed_dim=8', '--config.model.hidden=8')
QUICK = TINY + ('--search=demo_search:quick',)


def _write(tmp_path, body: str) -> str:
  path = tmp_path / 'my_search.py'
  path.write_text('from seedsweep.sweep import space\n\ndef search(arg):\n  ' + body
                  + '\n')
  return str(path)


@pytest.mark.parametrize('body, expected', [
    ('return {"model.dropout": (0.1, 0.2)}', 'expected seedsweep.sweep.space.Search'),
    ('return space.Search({}, trials=3)', 'params is {}'),
    ('return space.Search({"model.dropout": space.uniform(0.5, 0.1)}, trials=3)',
     'model.dropout: range [0.5, 0.1]; expected finite low < high'),
    ('return space.Search({"l2.coef": space.log_uniform(0, 1)}, trials=3)',
     'l2.coef: a log scale from 0.0; expected low > 0'),
    ('return space.Search({"model.dropout": space.uniform(0, .5)}, trials=0)',
     'trials=0; expected an int >= 1'),
    ('return space.Search({"model.dropout": space.uniform(0, .5)}, trials=3, '
     'metric="test_accuracy")', 'a search never sees test scores'),
    ('return space.Search({"model.dropout": space.uniform(0, .5)}, trials=3, '
     'score="median")', "score='median'; expected one of ('mean', 'lcb')"),
    ('return space.Search({"seeds": space.integer(1, 9)}, trials=3)',
     'seeds are every point'),
    ('return space.Search({"model.widths": space.choice([3, 4], [5])}, trials=3)',
     'model.widths: choice of [3, 4] (list); expected numbers, strings, bools, None or '
     'tuples of them'),
    ('return space.Search({"optimizer.name": space.choice("adam", "adam")}, trials=3)',
     "choice('adam', 'adam') repeats a value"),
    ('return space.Search({"model.hidden": space.integer(8, 64, step=8, log=True)}, '
     'trials=3)', 'model.hidden: a log scale with a step; expected one of them'),
])
def test_a_bad_search_file_is_one_line_naming_file_and_field(tmp_path, body, expected):
  spec = _write(tmp_path, body)
  with pytest.raises(UserError) as e:
    search.load_search(spec)
  assert expected in str(e.value) and f'--search={spec}' in str(e.value)


def test_a_search_key_that_is_no_config_field_is_named_before_anything_trains(
    tmp_path):
  spec = _write(tmp_path, 'return space.Search({"model.dropuot": space.uniform(0, .5)}, '
                'trials=2, seeds=(1,))')
  root = tmp_path / 'w'
  with pytest.raises(UserError, match='dropuot'):
    api.run_search(api.load_config('demo:quick'), spec, str(root))
  assert not list(root.glob('trials_*'))


def test_score_is_the_seeds_mean_or_the_pessimistic_end_of_its_interval():
  # t(0.95, 2 df) = 2.919986; values 1, 2, 3: mean 2, sd 1.
  assert search.score([1.0, 2.0, 3.0], 'mean', False) == 2.0
  assert search.score([1.0, 2.0, 3.0], 'lcb', False) == pytest.approx(
      2.0 - 2.919986 / np.sqrt(3), abs=1e-6)
  assert search.score([1.0, 2.0, 3.0], 'lcb', True) == pytest.approx(
      2.0 + 2.919986 / np.sqrt(3), abs=1e-6)
  assert search.score([1.0, float('nan')], 'mean', False) is None


def test_a_value_is_its_grid_decimal_or_four_significant_digits():
  assert search.readable(0.35000000000000003, space.uniform(0.0, 0.5, step=0.05)) == 0.35
  assert search.readable(0.009104804578291803, space.log_uniform(1e-3, 1e-2)) == 0.009105
  assert search.readable(7, space.integer(1, 9)) == 7


def _trials(root):
  with open(os.path.join(root, search.SEARCH)) as f:
    info = json.load(f)
  return [(t['number'], t['params'], t['value'], t['dev_values'], t['run'])
          for t in info['trials']], info


def _metric_rows(root):
  rows = {}
  for folder in sorted(os.listdir(root)):
    path = os.path.join(root, folder, 'metrics.jsonl')
    if os.path.exists(path):
      with open(path) as f:
        rows[folder] = [json.loads(line) for line in f]
  for lines in rows.values():
    for r in lines:
      r.pop('wall_time', None)
  return rows


@pytest.mark.slow
@pytest.mark.full  # kills: test_chaos.py, test_faults.py; a search: the test below
def test_a_search_killed_while_asking_and_while_training_ends_as_an_undisturbed_one(
    tmp_path):
  """4 points, 2 a round, 2 seeds: an undisturbed search against one killed (-9)
  while asking round 2's points and again while training round 2. Each rerun keeps
  the finished points; the end is the same trials, the same params (the round's
  sampler is seeded by its number), the same scores and every metrics row equal."""
  calm, hit = str(tmp_path / 'calm'), str(tmp_path / 'hit')
  # The undisturbed search and the last rerun in this process (QUICK's config and
  # search through the API); the killed ones are launch.py processes.
  config = api.load_config('demo:quick', train__num_epochs=1, train__progress=False,
                           data__num_buckets=1, model__embed_dim=8, model__hidden=8)
  printed = []
  api.run_search(config, 'demo_search:quick', calm, print_fn=printed.append)
  assert 'search round 1: trials 0, 1 of 4 in 1 program(s), 2 seeds each' in printed
  killed = run_launch(*QUICK, f'--workdir={hit}', env={'SEEDSWEEP_FAULT': 'search_ask:3'})
  assert killed.returncode == -9 and 'fault: SIGKILL at search_ask:3' in killed.stderr
  first, _ = _trials(hit)
  killed = run_launch(*QUICK, f'--workdir={hit}', env={'SEEDSWEEP_FAULT': 'metrics_row:2'})
  assert killed.returncode == -9, killed.stderr[-2000:]
  # Round 1 was told: kept, not trained again; trial 2 (cut short) was asked again.
  assert killed.stdout.startswith('search round 2: trials 3, 4 of 4')
  api.run_search(config, 'demo_search:quick', hit, print_fn=lambda *a: None)
  calm_trials, info = _trials(calm)
  hit_trials, hit_info = _trials(hit)
  # The cut-short ask left one trial, failed and asked again: numbers move by one.
  assert [t[1:4] for t in hit_trials] == [t[1:4] for t in calm_trials]
  assert [t[:4] for t in first] == [t[:4] for t in calm_trials[:2]]
  best = lambda trials, i: next(t[1] for t in trials if t[0] == i['best'])
  assert best(hit_trials, hit_info) == best(calm_trials, info)
  assert hit_info['importance'] == info['importance']
  calm_rows, hit_rows = _metric_rows(calm), _metric_rows(hit)
  assert list(calm_rows.values()) == list(hit_rows.values())
  assert sum(len(v) for v in calm_rows.values()) == 4 * 2  # 4 points x 2 seeds x 1 epoch
  # The report: the point dev chose, with its seeds' test scores.
  report = api.report(hit, plots=False)
  text = open(os.path.join(hit, 'report.md')).read()
  assert '## Search searches/demo_search.py:quick' in text
  assert f'**Chosen on dev:** trial {hit_info["best"]} (' in text
  assert 'mean ± std over 2 seeds' in text and '| parameter | importance (fANOVA) |' in text
  assert len(report['rows']) == 4


@pytest.mark.slow
def test_a_rerun_with_another_space_is_refused(tmp_path):
  root = str(tmp_path / 'w')
  config = api.load_config('demo:quick', train__progress=False, train__num_epochs=1,
                           data__num_buckets=1, model__embed_dim=8, model__hidden=8)
  # A choice: its values come back from the study's storage a list, not the tuple
  # asked, which the rerun compares as equal.
  first = _write(tmp_path, 'return space.Search({"model.dropout": space.uniform(0, .5), '
                 '"model.pooling": space.choice("last", "mean")}, trials=1, seeds=(1,))')
  info = api.run_search(config, first, root, print_fn=lambda *a: None)
  assert [t['state'] for t in info['trials']] == ['complete']
  api.report(root, plots=False, print_fn=lambda *a: None)  # its section names the point
  assert f'**Chosen on dev:** trial {info["best"]} (' in open(
      os.path.join(root, 'report.md')).read()
  printed = []
  again = api.run_search(config, first, root, print_fn=printed.append)  # finished: kept
  assert again['trials'] == info['trials']
  assert not any(line.startswith('search round') for line in printed)
  other = tmp_path / 'other.py'
  other.write_text('from seedsweep.sweep import space\n\ndef search(arg):\n  return '
                   'space.Search({"model.dropout": space.uniform(0, .4)}, trials=1, '
                   'seeds=(1,))\n')
  with pytest.raises(UserError, match='made by another search or config'):
    api.run_search(config, str(other), root, print_fn=lambda *a: None)


def test_a_round_stacks_shape_free_points_and_gives_shapes_programs_of_their_own():
  """Trials 4..7: two hidden sizes x two learning rates -> one program per hidden
  size, each stacking its two learning rates, named by the trials it trains."""
  import types  # pylint: disable=g-import-not-at-top
  found = space.Search({'model.hidden': space.choice(8, 16),
                        'optimizer.learning_rate': space.log_uniform(1e-3, 1e-2)},
                       trials=4)
  trials = [types.SimpleNamespace(number=n, params={'model.hidden': h,
                                                    'optimizer.learning_rate': lr})
            for n, (h, lr) in zip(range(4, 8), [(8, 1e-3), (16, 1e-3), (8, 2e-3),
                                                (16, 2e-3)])]
  runs = search.round_runs(api.load_config('demo:quick'), found, trials, 'test')
  assert [(r.name, r.indices) for r in runs] == [('trials_4+6', (4, 6)),
                                                 ('trials_5+7', (5, 7))]
  assert [r.config.model.hidden for r in runs] == [8, 16]
  assert [tuple(r.config.stack.points) for r in runs] == [((1e-3,), (2e-3,))] * 2


def test_a_search_over_an_own_model_file_may_set_its_classs_fields(tmp_path,
                                                                  monkeypatch):
  """As a sweep's point does: the class's fields exist beside its name; a field the
  class lacks is named in one line before anything trains."""
  monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  own = '"model.name": space.choice("examples/linen_cnn.py:CNNClassifier"), '
  config = api.load_config('demo:quick')
  fine = search.load_search(_write(
      tmp_path, f'return space.Search({{{own}"model.filters": space.choice(8, 16)}}, '
      'trials=2, seeds=(1,))'))
  search.check_space(config, fine, '--search=mine')
  (tmp_path / 'my_search.py').unlink()
  wrong = search.load_search(_write(
      tmp_path, f'return space.Search({{{own}"model.hidden": space.choice(8, 16)}}, '
      'trials=2, seeds=(1,))'))
  with pytest.raises(UserError, match=r"--search=mine: params\['model.hidden'\].*hidden"):
    search.check_space(config, wrong, '--search=mine')


CNN = os.path.join(REPO, 'examples', 'linen_cnn.py') + ':CNNClassifier'
# Two classes with fields of their own (the CNN's widths, the Bi-LSTM's hidden); a
# choice of tuples (the widths) and of strings (the names).
TWO_CLASSES = (f'return space.Search({{"model.name": space.choice({CNN!r}, "bilstm"), '
               '"model.widths": space.choice((2,), (2, 3)), '
               '"model.hidden": space.choice(8, 12), '
               '"optimizer.learning_rate": space.log_uniform(1e-3, 1e-2)}, '
               'trials=2, points_per_round=2, seeds=(1,), sampler="random")')


def test_a_study_of_choices_opens_again_as_it_was_stored(tmp_path):
  """The space is compared as the storage gives it back (a tuple comes back a
  list), and a choice of tuples is drawn, stored and read back as the tuple."""
  found = dataclasses.replace(search.load_search(_write(tmp_path, TWO_CLASSES)),
                              trials=8)
  optuna = search.import_optuna()
  config = api.load_config('demo:quick')
  storage = f'sqlite:///{tmp_path / "study.db"}'
  identity = search.study_identity(config, found, 'dev_accuracy', 'mine')
  study = search.open_study(optuna, storage, 'w', 'maximize', identity)
  asked = search.ask_round(optuna, study, found, 0, 8, search.conditions(config, found))
  again = search.open_study(optuna, storage, 'w', 'maximize', identity)  # no refusal
  pending = search.pending_round(optuna, again, 0)
  points = [search.trial_point(found, t) for t in pending]
  assert points == [search.trial_point(found, t) for t in asked]
  widths = [p['model.widths'] for p in points if 'model.widths' in p]
  assert widths and set(widths) <= {(2,), (2, 3)}


def test_a_search_over_classes_draws_each_classs_own_fields(tmp_path):
  """A conditional space: a model key is drawn, checked and set only for the trials
  whose class has the field; a key no drawn class has is refused before the study."""
  found = search.load_search(_write(tmp_path, TWO_CLASSES))
  config = api.load_config('demo:quick')
  assert search.conditions(config, found) == {CNN: ('model.widths',),
                                              'bilstm': ('model.hidden',)}
  search.check_space(config, found, '--search=mine')
  optuna = search.import_optuna()
  study = optuna.create_study(direction='maximize')  # in memory
  trials = search.ask_round(optuna, study, found, 0, 2, search.conditions(config, found))
  trials += search.ask_round(optuna, study, dataclasses.replace(found, trials=12), 0,
                             10, search.conditions(config, found))
  points = [search.trial_point(found, t) for t in trials]
  for point in points:
    own = 'model.widths' if point['model.name'] == CNN else 'model.hidden'
    assert set(point) == {'model.name', own, 'optimizer.learning_rate'}, point
  assert {p['model.name'] for p in points} == {CNN, 'bilstm'}
  by_number = {t.number: p for t, p in zip(trials, points)}
  for r in search.round_runs(config, found, trials, 'test'):
    for number in r.indices:
      point = by_number[number]
      assert r.config.model.name == point['model.name']
      if point['model.name'] == CNN:  # the CNN's own fields, no Bi-LSTM's
        assert r.config.model.widths == point['model.widths']
        assert 'hidden' not in r.config.model
      else:
        assert r.config.model.hidden == point['model.hidden']
  (tmp_path / 'my_search.py').unlink()
  typo = search.load_search(_write(tmp_path, TWO_CLASSES.replace(
      '"model.hidden"', '"model.hiden"')))
  with pytest.raises(UserError, match=r"params\['model.hiden'\].*has no field 'hiden'; "
                     r"the closest it has is '\w+'"):
    search.check_space(config, typo, '--search=mine')


@pytest.mark.slow
@pytest.mark.full  # kills: the demo search's test; a rerun of choices: the README tier's
def test_a_search_over_two_classes_killed_while_training_resumes_its_points(tmp_path):
  """The conditional space of two classes, with a choice of tuples, killed (-9)
  while training its second program: the rerun trains the points asked before the
  kill, each with its class's own fields, and a third run keeps them all."""
  spec, root = _write(tmp_path, TWO_CLASSES), str(tmp_path / 'w')
  killed = run_launch(*TINY, f'--search={spec}', f'--workdir={root}',
                      env={'SEEDSWEEP_FAULT': 'metrics_row:2'})
  assert killed.returncode == -9, killed.stderr[-2000:]
  asked, _ = _trials(root)
  config = api.load_config('demo:quick', train__num_epochs=1, train__progress=False,
                           data__num_buckets=1, model__embed_dim=8, model__hidden=8)
  api.run_search(config, spec, root, print_fn=lambda *a: None)
  done, info = _trials(root)
  assert [t[:2] for t in done] == [t[:2] for t in asked]
  assert [t['state'] for t in info['trials']] == ['complete'] * 2
  # The sampler's seed 0 draws one trial of each class (another Optuna may need
  # another seed).
  assert {t[1]['model.name'] for t in done} == {CNN, 'bilstm'}
  for _, params, _, _, run in done:
    model = workdir_lib.stored_config(os.path.join(root, run))['model']
    own = 'widths' if params['model.name'] == CNN else 'hidden'
    assert model[own] == params[f'model.{own}']
    assert ('hidden' in model) == (own == 'hidden')
  printed = []
  api.run_search(config, spec, root, print_fn=printed.append)
  assert _trials(root)[0] == done
  assert not any(line.startswith('search round') for line in printed)

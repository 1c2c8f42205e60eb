"""A hyperparameter search that scores every point on all of its seeds:
``seedsweep --config=E --search=searches/X.py[:arg] --workdir=ROOT``.

Optuna (the ``[search]`` extra) through ask-and-tell; :func:`run` is the entry point.
Each round asks ``k`` points (:func:`round_size`: as many as the search allows whose
members fit one program), trains the points that differ only in shape-free values as
ONE stacked program with all their seeds (:func:`seedsweep.sweep.runner.plan_points`,
as a sweep does), and tells Optuna each point's score over its seeds (:func:`score`):
their mean dev score, or the pessimistic end of its 95 % t interval. The rule: test
scores are never read here. A search drawing ``model.name`` draws a model key only
for the trials whose class has that field (:func:`conditions`: a conditional space).

Under ROOT: ``study.db`` (Optuna's storage unless ``--study`` names another),
``trials_<numbers>/`` (a run per program of a round), ``sweep.json`` and
``search.json`` (the trials, the best, parameter importances). A rerun resumes the
same study; with one worker the points tried are a pure function of the config, the
search file and the scores told (``--sweep_shard=i/n`` adds workers, valid but not
reproducible).
"""
import json
import os
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from seedsweep.config import checks as config_checks
from seedsweep.config import keys
from seedsweep.config import python_files
from seedsweep.engine import hosts
from seedsweep.errors import UserError
from seedsweep.run import faults
from seedsweep.run import workdir as workdir_lib
from seedsweep.run import outputs
from seedsweep.run import runtime
from seedsweep.sweep import runner
from seedsweep.sweep import space as space_lib

STUDY_DB, SEARCH = 'study.db', 'search.json'
ROUND, WORKER = 'round', 'worker'  # each trial's user attributes
IMPORTANCE_SEED = 0  # fANOVA's forest: the same table for the same trials


def import_optuna():
  """Optuna, quiet; UserError naming the extra when it is missing."""
  try:
    import optuna  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    raise UserError("--search needs Optuna: pip install 'seedsweep[search]'") from e
  optuna.logging.set_verbosity(optuna.logging.WARNING)
  return optuna


def load_search(spec: str) -> space_lib.Search:
  """The checked :class:`~seedsweep.sweep.space.Search` of ``searches/X.py[:arg]``."""
  found = python_files.call(spec, 'search', '--search', always_arg=True)
  return space_lib.check(found, f'--search={spec}')


def distributions(optuna, search: space_lib.Search) -> dict:
  """``{config key: optuna distribution}`` of the search's params."""
  out = {}
  for key, p in search.params.items():
    if isinstance(p, space_lib.Choice):
      out[key] = optuna.distributions.CategoricalDistribution(stored_choices(p))
    elif isinstance(p, space_lib.Integer):
      out[key] = optuna.distributions.IntDistribution(p.low, p.high, log=p.log,
                                                      step=p.step)
    else:
      out[key] = optuna.distributions.FloatDistribution(p.low, p.high, log=p.log,
                                                        step=p.step or None)
  return out


def stored_choices(p: space_lib.Choice) -> tuple:
  """A choice's values as Optuna keeps them: each as it is, a tuple as its JSON text
  (Optuna's storage keeps numbers, strings, bools and None only; a tuple would come
  back a list, another distribution than the one asked, and the study could not
  resume)."""
  return tuple(v if space_lib.is_plain(v) else json.dumps(v) for v in p.values)


def conditions(config, search: space_lib.Search) -> Dict[Any, Tuple[str, ...]]:
  """``{each model.name the search draws: the model keys a trial drawing it sets}``:
  a ``model.X`` key applies only to the classes that have the field ``X`` (a
  conditional space, as Optuna's define-by-run one); {} when the search draws no
  ``model.name``, so that every key applies to every trial."""
  name = search.params.get('model.name')
  if name is None:
    return {}
  from seedsweep import models  # pylint: disable=g-import-not-at-top
  out = {}
  for value in name.values:
    try:
      takes = models.config_fields(*models.model_class(value))
    except UserError:
      takes = {}  # check_space names what is wrong with the name itself
    out[value] = tuple(k for k in search.params if k != 'model.name'
                       and k.startswith('model.') and k.split('.', 1)[1] in takes)
  return out


def conditional(key: str, applies: dict) -> bool:
  """Whether ``key`` is set only by the trials whose class has it
  (:func:`conditions`)."""
  return bool(applies) and key != 'model.name' and key.startswith('model.')


def score_metric(config, search: space_lib.Search) -> str:
  """The metric a point is scored on: ``search.metric``, else the dev side of
  ``config.paper.metric``."""
  return search.metric or outputs.dev_metric(config.paper.metric)


def score(values: Sequence[float], how: str, lower_better: bool):
  """A point's score from its seeds' dev ``values``: their mean (``'mean'``), or the
  end of its one-sided 95 % t interval on the losing side (``'lcb'``); None when a
  seed's value is not finite (the trial fails)."""
  values = np.asarray(values, dtype=float)
  if not values.size or not np.all(np.isfinite(values)):
    return None
  mean = float(values.mean())
  if how == 'mean' or values.size < 2:
    return mean
  # The one-sided 95 % end is an end of the two-sided 90 % interval, the same t
  # interval a report shows (outputs.mean_interval).
  low, high = outputs.mean_interval(values, level=0.90)
  return high if lower_better else low


def round_size(config, search: space_lib.Search, seeds: int) -> int:
  """Points a round asks: ``Search.points_per_round``, fewer when their members
  would not fit one program within the memory budget (``--mode=describe``'s
  estimate)."""
  from seedsweep.run import describe  # pylint: disable=g-import-not-at-top
  m = describe.describe(config)['memory_mib']
  fits = int((m['budget_mib'] - m['shared_mib']) // max(m['member_mib'], 1e-9))
  return max(1, min(search.points_per_round, fits // max(seeds, 1)))


def check_space(config, search: space_lib.Search, where: str) -> None:
  """UserError, before the study opens, for a key that names no config field or a
  value the field cannot take (each range's ends, each choice), checked as a trial's
  point is (runner.point_config): beside each ``model.name`` the search draws whose
  class has the field (:func:`conditions`), since an own model file's class brings its
  own fields; a model key no drawn class has is named with the first one's fields."""
  ends = {key: p.values if isinstance(p, space_lib.Choice) else (p.low, p.high)
          for key, p in search.params.items()}
  applies = conditions(config, search)
  for key in sorted(ends, key=lambda k: k != 'model.name'):  # the name's own errors first
    names = [n for n in applies if key in applies[n]] if conditional(key, applies) else []
    if conditional(key, applies) and not names:
      names = list(applies)[:1]  # no class has it: the first one's error names it
    for name in names or [None]:
      model = {} if name is None else {'model.name': name}
      for value in ends[key]:
        runner.point_config(config, {**model, key: value}, f'{where}: params[{key!r}]')


def study_identity(config, search: space_lib.Search, metric: str, label: str) -> dict:
  """What a resumed study must have been made with."""
  # As JSON data, as it is stored (tuples come back lists): a rerun compares equals.
  return json.loads(json.dumps({
      'search': label, 'space': search.describe(), 'metric': metric,
      'score': search.score, 'sampler': search.sampler, 'seed': search.seed,
      'config': config_checks.to_dict(config)}))


def open_study(optuna, storage: str, name: str, direction: str, identity: dict):
  """The study ``name`` in ``storage``, created or resumed; UserError when the one
  stored was made by another search or config."""
  try:
    study = optuna.create_study(storage=storage, study_name=name, direction=direction,
                                load_if_exists=True)
  except Exception as e:  # pylint: disable=broad-except  (SQLAlchemy's many errors)
    raise UserError(f'--study={storage}: cannot open the study ({type(e).__name__}: '
                    f'{str(e).splitlines()[0][:200]}); expected an SQLAlchemy URL '
                    '(sqlite:///path.db, postgresql://...)') from e
  stored = study.user_attrs.get('identity')
  if stored is None:
    study.set_user_attr('identity', identity)
    return study
  diff = [f'{k}: stored {stored.get(k)!r} != requested {identity[k]!r}'
          for k in ('search', 'space', 'metric', 'score', 'sampler', 'seed')
          if stored.get(k) != identity[k]]
  diff += config_checks.differences(stored.get('config', {}), identity['config'])
  if diff:
    raise UserError(f'study {name} in {storage} was made by another search or config:'
                    '\n  ' + '\n  '.join(diff[:8])
                    + '\nUse another --workdir (or --study), or the same search.')
  return study


def make_sampler(optuna, search: space_lib.Search, worker: int, round_number: int):
  """The sampler of one round, seeded by (search seed, worker, round)."""
  sequence = np.random.SeedSequence([search.seed, worker, round_number])
  seed = int(sequence.generate_state(1)[0])
  if search.sampler == 'random':
    return optuna.samplers.RandomSampler(seed=seed)
  # TPE models the scores once this many points are told, drawn at random before:
  # a third of the budget, at least one round (Optuna's 10 would leave a budget of
  # 12 a random search).
  startup = min(10, max(search.points_per_round, search.trials // 3))
  return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup)


def _mine(study, worker: int, states) -> list:
  return [t for t in study.get_trials(deepcopy=False, states=states)
          if t.user_attrs.get(WORKER) == worker]


def pending_round(optuna, study, worker: int) -> list:
  """This worker's asked, untold trials when their round was fully asked (an
  interrupted round, to train again); a round cut short while asking is failed."""
  running = _mine(study, worker, (optuna.trial.TrialState.RUNNING,))
  if not running:
    return []
  number = running[0].user_attrs[ROUND]
  if study.user_attrs.get(f'asked_{worker}_{number}') is not None:
    return [optuna.Trial(study, t._trial_id)  # pylint: disable=protected-access
            for t in sorted(running, key=lambda t: t.number)]
  for t in running:  # cut short while asking: asked again, with the same sampler seed
    study.tell(t.number, state=optuna.trial.TrialState.FAIL)
  return []


def ask_round(optuna, study, search, worker: int, k: int, applies=None) -> list:
  """Asks up to ``k`` trials (fewer where the budget ends); [] when it has.
  ``applies``: :func:`conditions` (a model key is drawn only for the classes that
  have it)."""
  states = optuna.trial.TrialState
  taken = len(study.get_trials(deepcopy=False, states=(states.COMPLETE, states.RUNNING,
                                                      states.WAITING)))
  failed = [t for t in study.get_trials(deepcopy=False, states=(states.FAIL,))
            if 'error' in t.user_attrs]  # diverged points count; cut-short asks do not
  n = min(k, search.trials - taken - len(failed))
  if n <= 0:
    return []
  told = [t for t in _mine(study, worker, (states.COMPLETE, states.FAIL))
          if t.state == states.COMPLETE or 'error' in t.user_attrs]
  number = 1 + max((t.user_attrs.get(ROUND, 0) for t in told), default=0)
  study.sampler = make_sampler(optuna, search, worker, number)
  dists = distributions(optuna, search)
  trials = []
  for _ in range(n):
    trial = ask_point(study, search, dists, applies or {})
    trial.set_user_attr(ROUND, number)
    trial.set_user_attr(WORKER, worker)
    trials.append(trial)
    faults.reached('search_ask')
  study.set_user_attr(f'asked_{worker}_{number}', [t.number for t in trials])
  return trials


def ask_point(study, search, dists: dict, applies: dict):
  """One trial: every key that applies to all trials drawn together (as
  ``study.ask(dists)`` does), then the model keys of the class it drew."""
  trial = study.ask({k: d for k, d in dists.items() if not conditional(k, applies)})
  if applies:
    name = value_of(trial.params['model.name'], search.params['model.name'])
    for key in applies[name]:
      suggest(trial, key, search.params[key])
  return trial


def suggest(trial, key: str, p) -> None:
  """Draws ``key`` of the search's param ``p`` in ``trial``, from the distribution
  :func:`distributions` gives it."""
  if isinstance(p, space_lib.Choice):
    trial.suggest_categorical(key, stored_choices(p))
  elif isinstance(p, space_lib.Integer):
    trial.suggest_int(key, p.low, p.high, step=p.step, log=p.log)
  else:
    trial.suggest_float(key, p.low, p.high, step=p.step or None, log=p.log)


def value_of(stored, param):
  """The value a trial's ``stored`` param stands for (a choice's tuple from its
  JSON text, :func:`stored_choices`)."""
  if isinstance(param, space_lib.Choice):
    return param.values[stored_choices(param).index(stored)]
  return stored


# Significant digits a continuous value keeps: labels and folder names that read
# (0.009105, not 0.009104804578291803); the point trained is the rounded one.
DIGITS = 4


def trial_point(search, trial) -> dict:
  """A trial's config overrides, in the search file's order (the keys it drew: a
  model key only where its class has the field): a float on a grid as the grid's
  decimal (0.35, not Optuna's 0.35000000000000003), any other float to
  :data:`DIGITS` significant digits, a choice's tuple as the tuple."""
  return {k: readable(value_of(trial.params[k], p), p)
          for k, p in search.params.items() if k in trial.params}


def readable(value, param):
  """A trial's ``value`` as it is trained and named: a :class:`~.space.Uniform` float on a
  grid as its decimal, any other to :data:`DIGITS` significant digits; others unchanged."""
  if isinstance(param, space_lib.Uniform):
    return float(f'{value:.12g}') if param.step else float(f'{value:.{DIGITS}g}')
  return value


def round_runs(config, search, trials, where: str) -> List[runner.Run]:
  """The programs of a round, each named by the trials it trains."""
  points = [trial_point(search, t) for t in trials]
  names = [f'trial_{t.number}' for t in trials]
  runs = runner.plan_points(config, points, names, where)
  numbered = []
  for r in runs:
    numbers = [trials[i].number for i in r.indices]
    numbered.append(runner.Run('trials_' + '+'.join(map(str, numbers)),
                               tuple(numbers), r.config))
  return numbered


def tell_round(optuna, study, search, trials, results_by_trial, metric, lower_better):
  """Tells each trial its score over its seeds (a non-finite seed fails it)."""
  for t in trials:
    result = results_by_trial[t.number]
    values = result['metrics'].get(metric)
    if values is None:
      raise UserError(f'the search scores {metric}, which the run of trial {t.number} '
                      f'does not report; expected one of '
                      f'{sorted(m for m in result["metrics"] if m.startswith("dev_"))} '
                      '(Search.metric)')
    t.set_user_attr('dev_values', [float(v) for v in values])
    value = score(values, search.score, lower_better)
    if value is None:
      t.set_user_attr('error', "a seed's dev score is not finite")
      study.tell(t, state=optuna.trial.TrialState.FAIL)
    else:
      study.tell(t, value)


def trial_results(runs: Sequence[runner.Run], results: Dict[str, dict]) -> dict:
  """``{trial number: that point's results}`` from the results of each run."""
  out = {}
  for r in runs:
    for number, point in zip(r.indices, outputs.point_results(results[r.name])):
      out[number] = point
  return out


def summary(optuna, study, label: str, storage: str, metric: str, search,
            importances=None) -> dict:
  """search.json: every trial, the best, the parameter importances (``importances``
  when the finished trials are those they were computed from)."""
  states = optuna.trial.TrialState
  trials = []
  for t in sorted(study.get_trials(deepcopy=False), key=lambda t: t.number):
    if t.state == states.FAIL and 'error' not in t.user_attrs:
      continue  # a round cut short while asking: asked again under another number
    trials.append({'number': t.number, 'state': t.state.name.lower(),
                   'params': trial_point(search, t), 'value': t.value,
                   'dev_values': t.user_attrs.get('dev_values'),
                   'round': t.user_attrs.get(ROUND), 'worker': t.user_attrs.get(WORKER),
                   'run': t.user_attrs.get('run')})
  complete = [t for t in trials if t['state'] == 'complete']
  best = None
  if complete:
    pick = min if study.direction == optuna.study.StudyDirection.MINIMIZE else max
    best = pick(complete, key=lambda t: (t['value'], -t['number']))['number']
  return {'search': label, 'study': study.study_name, 'storage': _safe_url(storage),
          'metric': metric, 'score': search.score,
          'direction': study.direction.name.lower(),
          'budget': search.trials, 'best': best, 'trials': trials,
          'importance': (importance(optuna, study, search) if importances is None
                         else importances)}


def importance(optuna, study, search) -> Dict[str, float]:
  """fANOVA importances of the params every finished trial drew (a model key of a
  conditional space is left out unless every trial's class had it; {} with fewer
  than two finished trials, or without scikit-learn)."""
  states = optuna.trial.TrialState
  complete = study.get_trials(deepcopy=False, states=(states.COMPLETE,))
  if len(complete) < 2:
    return {}
  drawn = [k for k in search.params if all(k in t.params for t in complete)]
  try:
    evaluator = optuna.importance.FanovaImportanceEvaluator(seed=IMPORTANCE_SEED)
    # Optuna's own choice of params: those every finished trial has (``drawn``).
    found = optuna.importance.get_param_importances(study, evaluator=evaluator)
  except (ImportError, RuntimeError, ValueError):
    return {}  # scikit-learn missing, or every point equal: nothing to apportion
  return {k: round(float(found.get(k, 0.0)), 6) for k in drawn}


def _safe_url(storage: str) -> str:
  """``storage`` without a password (``postgresql://user:***@host/db``)."""
  head, at_sign, tail = storage.rpartition('@')
  if not at_sign or ':' not in head.split('//', 1)[-1]:
    return storage
  scheme, _, user = head.partition('//')
  return f'{scheme}//{user.split(":", 1)[0]}:***@{tail}'


def study_name(root: str) -> str:
  """The workdir's name: one study per workdir (a shared storage holds several)."""
  return os.path.basename(os.path.abspath(root))


def storage_url(root: str, storage: str) -> str:
  """The study's storage: ``storage`` (``--study``), else SQLite in ``root``."""
  return storage or f'sqlite:///{os.path.abspath(os.path.join(root, STUDY_DB))}'


def write_files(root: str, label: str, info: dict) -> None:
  """sweep.json (the trials as a sweep's points) and search.json under ``root``."""
  runner.write_sweep(root, label, [(f'trial_{t["number"]}', t['params'], t['run'])
                                   for t in info['trials'] if t['run']])
  outputs.write_json(os.path.join(root, SEARCH), info)


def run(config, spec: str, root: str, storage: str = '', worker: str = '0/1',
        print_fn=print) -> dict:
  """Runs (or resumes) the search ``spec`` on ``config`` under ``root``; returns
  search.json's contents."""
  runtime.pin_for(config)
  search = load_search(spec)
  optuna = import_optuna()
  index, _ = runner.parse_shard(worker)
  label = runner.spec_label(spec, 'searches')
  where = f'--search={spec}'
  if search.seeds:
    config = keys.with_values(config, {'seeds': tuple(search.seeds)}, where)
  if tuple(config.stack.fields):
    raise UserError(f'{where} with config.stack set: the search stacks its points by '
                    'itself')
  check_space(config, search, where)
  applies = conditions(config, search)
  metric = score_metric(config, search)
  lower_better = outputs.lower_is_better(metric)
  workdir_lib.check_folder(root)
  os.makedirs(root, exist_ok=True)
  storage = storage_url(root, storage)
  study = open_study(optuna, storage, study_name(root),
                     'minimize' if lower_better else 'maximize',
                     study_identity(config, search, metric, label))
  primary = hosts.is_primary()
  k = round_size(config, search, len(config.seeds))
  info = None  # search.json as of the last tell
  while True:
    trials = pending_round(optuna, study, index) or ask_round(optuna, study, search,
                                                              index, k, applies)
    if not trials:
      break
    runs = round_runs(config, search, trials, where)
    folder = {number: r.name for r in runs for number in r.indices}
    for t in trials:
      t.set_user_attr('run', folder[t.number])
    if primary:  # the round's folders, before they train (asking told nothing)
      write_files(root, label, summary(optuna, study, label, storage, metric, search,
                                       info and info['importance']))
    print_fn(f'search round {trials[0].user_attrs[ROUND]}: trials '
             f'{", ".join(str(t.number) for t in trials)} of {search.trials} in '
             f'{len(runs)} program(s), {len(config.seeds)} seeds each')
    points = {t.number: trial_point(search, t) for t in trials}
    results = {r.name: runner.train_run(r, root, label, points, primary, print_fn)
               for r in runs}
    tell_round(optuna, study, search, trials, trial_results(runs, results), metric,
               lower_better)
    info = summary(optuna, study, label, storage, metric, search)
    if primary:
      write_files(root, label, info)
  if info is None:  # nothing was left to train: the study as it stands
    info = summary(optuna, study, label, storage, metric, search)
    if primary:
      write_files(root, label, info)
  print_fn(best_text(info, root))
  return info


def best_text(info: dict, root: str) -> str:
  """One line: the best trial on dev and its params."""
  if info['best'] is None:
    return f'search {info["search"]}: no finished trial'
  best = next(t for t in info['trials'] if t['number'] == info['best'])
  params = ', '.join(f'{k}={v:.4g}' if isinstance(v, float) else f'{k}={v}'
                     for k, v in best['params'].items())
  done = sum(t['state'] == 'complete' for t in info['trials'])
  return (f'search {info["search"]}: {done} of {info["budget"]} trials finished; best '
          f'on {info["metric"]} ({info["score"]} over seeds): trial {best["number"]} '
          f'= {best["value"]:.4f} ({params}); its test scores: seedsweep --mode=report '
          f'--workdir={root}')

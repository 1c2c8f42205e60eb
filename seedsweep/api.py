"""The Python API: what the ``seedsweep`` command does, for scripts and notebooks.

    import seedsweep
    config = seedsweep.load_config('experiments/demo.py:quick')
    config.seeds = (1, 2, 3)
    results = seedsweep.train(config, 'runs/demo')     # resumes like the command
    seedsweep.predict('runs/demo', ['a film worth seeing'])['labels']
    seedsweep.report('runs')                           # report.md, report.csv, plots

Each function is the command's mode of the same name, with the same files, the same
numbers and the same errors (:class:`seedsweep.UserError`, one line that says what
to change). The progress bar is ``tqdm.auto``'s: a widget in a notebook.
"""
import importlib
import os
from typing import Optional, Sequence

import ml_collections

from seedsweep.config import base
from seedsweep.config import checks as config_checks
from seedsweep.config import keys
from seedsweep.errors import UserError
from seedsweep.run import outputs
from seedsweep.run import runtime


def load_config(spec: str, **overrides):
  """Loads an experiment config, as ``--config=`` does.

  Args:
    spec: ``'path/to/file.py[:arg]'``: the file's ``get_config(arg)``. A packaged
      experiment is found by its name from any folder: ``'demo:quick'`` or
      ``'experiments/demo.py:quick'``.
    **overrides: fields to set, by dotted key spelled with ``__``
      (``train__num_epochs=3`` is ``--config.train.num_epochs=3``).
      ``model__name='my_code/cnn.py:CNN'`` names another model than the file's: of
      the file's model fields, it keeps those the class takes, and its own defaults
      fill the rest (each can be set here too); one set here that it does not take
      is refused. Any field of the model's class that the config lacks can be set
      (``model__unroll=2``; one without a default must be).

  Returns:
    The ``ml_collections.ConfigDict``.

  Raises:
    UserError: ``spec`` is no string, the file is missing or fails, ``get_config``
      returns no ConfigDict, or an override names no field or does not fit it (or,
      with ``model__name``, no field of the model it names).
  """
  spec = _spec(spec, 'load_config', 'spec', '--config', 'experiments')
  config = base.load_config(packaged_path(spec, 'experiments'))
  def where(key):
    return f'load_config({spec!r}, {key.replace(".", "__")}=...)'
  dotted = {key.replace('__', '.'): value for key, value in overrides.items()}
  # The model named here takes its own fields, first; its class gives a field the
  # config lacks (one without a default, a packaged class's own: unroll).
  if any(k == 'model.name' or k.startswith('model.') and k[6:] not in config.model
         for k in dotted):
    from seedsweep import models  # pylint: disable=g-import-not-at-top
    models.set_with_named_model(config, dotted, where)
    return config
  for key, value in dotted.items():
    keys.set_value(config, key, value, where(key))
  return config


def packaged_path(spec: str, folder: str) -> str:
  """Finds a packaged experiment, sweep or search file by its name.

  ``'demo:quick'`` and ``'experiments/demo.py:quick'`` both find
  seedsweep/experiments/demo.py from any folder.

  Args:
    spec: ``'path.py[:arg]'`` or a packaged file's name, with its ``:arg``.
    folder: ``'experiments'``, ``'sweeps'`` or ``'searches'``.

  Returns:
    ``spec`` itself when its file exists, else the packaged file of that name (with
    the same ``:arg``), else ``spec`` (whose error then names it).
  """
  path, colon, arg = spec.partition(':')
  name = path[len(folder) + 1:] if path.startswith(folder + '/') else path
  if os.path.exists(path) or '/' in name or os.sep in name:
    return spec
  package = importlib.import_module(f'seedsweep.{folder}')
  packaged = os.path.join(os.path.dirname(package.__file__),
                          name if name.endswith('.py') else name + '.py')
  return packaged + colon + arg if os.path.exists(packaged) else spec


def _start(config) -> None:
  """What the command does before a sweep, a search or a report: its thread pool,
  the compilation cache. (A run pins its own, once: seedsweep.run.prepare.)"""
  runtime.pin_for(config)
  runtime.enable_compilation_cache()


def train(config, workdir: str, print_fn=print,
          accept_changed_inputs: bool = False) -> dict:
  """Trains every seed of ``config`` in ``workdir``, as ``--mode=train`` does.

  Resumes from the checkpoints in ``workdir``; a finished run is left as it is.

  Args:
    config: the experiment's ConfigDict (:func:`load_config`).
    workdir: the run's folder: a new one, or one holding a run of this config.
    print_fn: called with every line of text (epochs, early stop, warnings, a
      dataset being prepared, the final table); the progress bar (``config.train.progress``) goes to stderr.
    accept_changed_inputs: resume from checkpoints trained on other input bytes
      (data, vectors, the user's model, its modules, reader) than the files hold
      now, said and recorded in the run (``--accept_changed_inputs``), instead of
      refusing.

  Returns:
    The results dict, also written to ``workdir/results.json``.

  Raises:
    UserError: ``config`` is no experiment's ConfigDict or is invalid, ``workdir`` is
      no path, is a file or holds a run of another config, or its checkpoints were
      trained on other input bytes.
    Stopped: SIGTERM or SIGINT stopped the run after saving where it was; the same
      call resumes it.
  """
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  from seedsweep.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  config = _config(config, 'train')
  workdir = _folder(workdir, 'train', 'workdir', "a run's folder, new or to resume")
  print_fn = _print_fn(print_fn, 'train')
  runtime.enable_compilation_cache()
  with workdir_lib.accepting_changed_inputs(accept_changed_inputs):
    return loop.train(config, workdir, print_fn)  # checks and pins config once


def workdir_config(workdir: str):
  """Reads the config a run was trained with.

  Args:
    workdir: the run's folder.

  Returns:
    The ConfigDict of its ``config.json``.

  Raises:
    UserError: ``workdir`` is no path, or holds no ``config.json``, or one that is
      not valid JSON.
  """
  from seedsweep.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  workdir = _folder(workdir, 'workdir_config', 'workdir', "a trained run's folder")
  stored = workdir_lib.stored_config(workdir)
  if stored is None:
    raise UserError(f'{workdir} holds no {outputs.CONFIG}; expected the workdir of a '
                    'trained run')
  return config_checks.from_dict(stored)


def evaluate(workdir: str, print_fn=print, config=None,
             accept_changed_inputs: bool = False) -> dict:
  """Re-evaluates a run's newest checkpoint, as ``--mode=eval`` does.

  Args:
    workdir: the run's folder.
    print_fn: called with each line of progress and the final table.
    config: the config it was trained with, to check (None: the one it stored).
    accept_changed_inputs: evaluate a checkpoint trained on other input bytes than
      the files hold now, said and recorded (as for :func:`train`).

  Returns:
    The results dict, also rewritten to ``workdir/results.json``.

  Raises:
    UserError: ``workdir`` is no path or holds no run or no checkpoint, or its
      checkpoint was trained on other input bytes than the dataset files hold now.
  """
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  from seedsweep.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  workdir = _folder(workdir, 'evaluate', 'workdir', "a trained run's folder",
                    'evaluate reads the config the run stored; config=... checks it')
  print_fn = _print_fn(print_fn, 'evaluate')
  if config is not None:
    config = _config(config, 'evaluate')
  runtime.enable_compilation_cache()
  with workdir_lib.accepting_changed_inputs(accept_changed_inputs):
    return loop.evaluate(config, workdir, print_fn)  # reads, checks and pins it once


def predict(workdir: str, texts: Optional[Sequence[str]] = None, print_fn=print,
            input_file: str = '') -> dict:
  """Labels new texts with every member of a trained run, as ``--mode=predict`` does.

  Args:
    workdir: a trained run's folder (its newest checkpoint predicts).
    texts: the texts, split on spaces as the dataset's were.
    print_fn: called with a line saying what predicts (and, for ``input_file`` with
      gold labels, the accuracy).
    input_file: instead of ``texts``, a file read as ``--mode=predict`` reads
      ``--input`` (TSV, CSV, JSONL, Parquet by training's column rules, else one text
      a line): the result then also has ``'rows'``, one record per input row in
      input order (``line``, ``text``, ``label``, ``gold`` where the row has one; an
      empty row's ``label`` None), and ``'gold'`` (the accuracy on the labelled rows).

  Returns:
    Every member's label for each text and the members' ensemble (the class of the
    highest mean probability), in the dataset's label names::

      {'labels': [...], 'probabilities': [[per class] per text], 'classes': [...],
       'per_seed': [[label per text] per member], 'members': ['seed_1', ...], ...}

    (seedsweep/run/predict.py:answers has every field, tags for the joint model).

  Raises:
    UserError: ``workdir`` is no path or holds no trained run, ``texts`` is a string,
      no list or holds an empty text, both or neither of ``texts`` and ``input_file``
      are given, or the file cannot be read.
  """
  from seedsweep.run import predict as predict_lib  # pylint: disable=g-import-not-at-top
  workdir = _folder(workdir, 'predict', 'workdir', "a trained run's folder",
                    'predict reads the config the run stored')
  print_fn = _print_fn(print_fn, 'predict')
  if (texts is None) == (not input_file):
    raise UserError('seedsweep.predict: give texts or input_file=PATH, one of them')
  if input_file:
    input_file = _folder(input_file, 'predict', 'input_file', 'a file of texts')
  elif not isinstance(texts, str) and not isinstance(texts, (list, tuple)):
    raise UserError(f'seedsweep.predict: texts is {_shown(texts)}; expected a list of '
                    "strings, e.g. ['a film worth seeing']")
  elif not texts:
    raise UserError('seedsweep.predict: texts is empty; expected a list of at least '
                    'one text')
  runtime.enable_compilation_cache()
  if input_file:  # the run's own config and columns
    rows, result = predict_lib.predict_file(None, workdir, input_file, print_fn)
    return {**result, 'rows': predict_lib.row_records(rows, result)}
  return predict_lib.predict(None, workdir, texts, print_fn)  # the run's own config


def run_sweep(config, spec: str, root: str, shard: str = '0/1', print_fn=print) -> dict:
  """Trains every point of a sweep, as ``--sweep`` does.

  Finished points are skipped and interrupted ones resumed. (Scheduler jobs: the
  command's ``--launcher``.)

  Args:
    config: the experiment's ConfigDict the sweep's points change.
    spec: the sweep file, ``'sweeps/X.py[:arg]'``, or a packaged sweep's name.
    root: the sweep's folder; each run goes in ``root/<run name>``.
    shard: ``'i/n'``: this process trains every n-th run from the i-th, as
      ``--sweep_shard``.
    print_fn: called with each line of progress.

  Returns:
    ``{run folder name: results}`` of this shard's runs.

  Raises:
    UserError: ``config`` is no experiment's ConfigDict, the sweep file or ``shard``
      is invalid, ``root`` is no path or a file, or a run refuses (as :func:`train`).
  """
  from seedsweep.sweep import runner  # pylint: disable=g-import-not-at-top
  config = _config(config, 'run_sweep')
  spec = _spec(spec, 'run_sweep', 'spec', '--sweep', 'sweeps')
  root = _folder(root, 'run_sweep', 'root', "the sweep's folder")
  _share(shard, 'run_sweep', 'shard')
  print_fn = _print_fn(print_fn, 'run_sweep')
  _start(config)
  return runner.run(config, packaged_path(spec, 'sweeps'), root, shard, print_fn=print_fn)


def run_search(config, spec: str, root: str, study: str = '', worker: str = '0/1',
               print_fn=print) -> dict:
  """Runs a hyperparameter search, as ``--search`` does, resuming where it stopped.

  Args:
    config: the experiment's ConfigDict the search's trials change.
    spec: the search file, ``'searches/X.py[:arg]'``, or a packaged search's name.
    root: the search's folder (its runs, search.json).
    study: an SQLAlchemy URL of the Optuna study ('' = SQLite in ``root``).
    worker: ``'i/n'``: this process is worker i of n, as ``--sweep_shard``.
    print_fn: called with each line of progress.

  Returns:
    search.json's contents: every trial with its params, its seeds' dev scores and
    score, the best trial and the parameter importances.

  Raises:
    UserError: ``config`` is no experiment's ConfigDict, the search file, its space
      or ``worker`` is invalid, ``config.stack`` is set, or ``root`` is no path or a
      file.
  """
  from seedsweep.sweep import search  # pylint: disable=g-import-not-at-top
  config = _config(config, 'run_search')
  spec = _spec(spec, 'run_search', 'spec', '--search', 'searches')
  root = _folder(root, 'run_search', 'root', "the search's folder")
  _share(worker, 'run_search', 'worker')
  if not isinstance(study, str):
    raise UserError(f'seedsweep.run_search: study is {_shown(study)}; expected an '
                    "SQLAlchemy URL ('sqlite:///path.db', 'postgresql://...'), or '' "
                    'for SQLite in root')
  print_fn = _print_fn(print_fn, 'run_search')
  _start(config)
  return search.run(config, packaged_path(spec, 'searches'), root, study, worker,
                    print_fn=print_fn)


def report(root: str, latex: bool = False, plots: bool = True, print_fn=print,
           out: str = '') -> dict:
  """Writes the report of every run under a folder, as ``--mode=report`` does.

  Args:
    root: a run's folder or a folder of runs (a sweep root).
    latex: also write ``report.tex``.
    plots: also write the plots.
    print_fn: called with warnings, the report's path and the verdict's lines.
    out: the folder for the report ('' = ``root``).

  Returns:
    A dict: ``rows`` (one dict per run), ``skipped`` (``[(run, reason)]``),
    ``files`` (the paths written) and ``verdict`` (the lines printed after the
    path: per table the best row, each other row's tests and effect size against
    it).

  Raises:
    UserError: ``root`` is no path, not a folder or holds no readable run, or ``out``
      is a file.
  """
  from seedsweep import reports  # pylint: disable=g-import-not-at-top
  root = _folder(root, 'report', 'root', 'a run\'s folder or a folder of runs')
  out = _folder(out, 'report', 'out', 'a folder for the report') if out else ''
  print_fn = _print_fn(print_fn, 'report')
  _start(base.get_base_config())  # runs re-evaluated for the report pin their own
  return reports.write_report(root, latex=latex, plots=plots, print_fn=print_fn, out=out)


def read_split(config, split: str = 'test'):
  """Reads a split of a dataset: inputs for :func:`predict` to check.

  Args:
    config: a dataset's name (``'demo'``, ``'sst/binary'``, ``'my/reader.py:read'``,
      as ``config.data.name`` takes it), an experiment's ConfigDict (its
      ``config.data`` names the dataset) or that ``config.data``.
    split: ``'train'``, ``'dev'`` or ``'test'``.

  Returns:
    ``(texts, labels)``: lists of strings, as the dataset's files hold them.

  Raises:
    UserError: ``config`` names no dataset, the dataset has no such split, or its
      files are missing or damaged.
  """
  from seedsweep import data  # pylint: disable=g-import-not-at-top
  if not isinstance(split, str):
    raise UserError(f'seedsweep.read_split: split is {_shown(split)}; expected '
                    "'train', 'dev' or 'test'")
  return data.read_split(_data_config(config), split)


def _data_config(config):
  """The ``config.data`` :func:`read_split` reads: of an experiment's config, the
  section itself, or the base config's for a dataset's name."""
  if isinstance(config, ml_collections.ConfigDict):
    if 'data' in config:
      return _config(config, 'read_split').data
    if 'name' in config and 'files' in config:  # config.data itself
      return config
  if not isinstance(config, str) or not config:
    raise UserError(f'seedsweep.read_split: config is {_shown(config)}; expected a '
                    "dataset's name ('demo'), an experiment's ConfigDict or its "
                    'config.data')
  from seedsweep import data  # pylint: disable=g-import-not-at-top
  from seedsweep.config import python_files  # pylint: disable=g-import-not-at-top
  if config == 'files':
    raise UserError("seedsweep.read_split('files'): own data files need their paths; "
                    "pass the experiment's config, whose config.data.files names them")
  if not python_files.is_reference(config) and config not in data.REGISTRY:
    variants = [n for n in sorted(data.REGISTRY) if n.startswith(config + '/')]
    close = (f' (did you mean {" or ".join(map(repr, variants))}?)' if variants
             else keys.did_you_mean(config, data.REGISTRY))
    raise UserError(f'seedsweep.read_split({config!r}): no dataset of that name'
                    f'{close}; expected one of '
                    f"{sorted(n for n in data.REGISTRY if n != 'files')}, a reader "
                    "'path/to/file.py:Name' or an experiment's ConfigDict")
  data_config = base.get_base_config().data
  data_config.name = config
  return data_config


def _shown(value) -> str:
  """A value as an error names it: a string or a number by its repr, anything else
  by its type (a ConfigDict's repr is its every field)."""
  if isinstance(value, (str, int, float, type(None))):
    return repr(value)[:80]
  return f'a {type(value).__name__}'


def _config(config, call: str):
  """``config`` if it is an experiment's ConfigDict; else UserError naming ``call``
  and how to make one."""
  if isinstance(config, str):
    raise UserError(f'seedsweep.{call}: config is the string {config!r}; expected a '
                    f'ConfigDict, e.g. seedsweep.load_config({config!r})')
  if not isinstance(config, ml_collections.ConfigDict):
    raise UserError(f'seedsweep.{call}: config is {_shown(config)}; expected the '
                    "ConfigDict of seedsweep.load_config('demo:quick') (or of "
                    'seedsweep.workdir_config(workdir))')
  missing = [k for k in ('seeds', 'data', 'model', 'train') if k not in config]
  if missing:  # a section (config.data), or a dict of a few fields
    raise UserError(f'seedsweep.{call}: config has no {", ".join(missing)}; expected '
                    "a whole experiment config (seedsweep.load_config('demo:quick')), "
                    'not a section of one')
  return config


def _folder(path, call: str, name: str, expected: str, hint: str = ''):
  """``path`` as a string (a ``pathlib.Path`` too); UserError naming ``call``'s
  argument ``name`` for anything else or an empty one."""
  if isinstance(path, os.PathLike):
    path = os.fspath(path)
  if isinstance(path, str) and path.strip():
    return path
  raise UserError(f'seedsweep.{call}: {name} is {_shown(path)}; expected the path '
                  f'of {expected}' + (f' ({hint})' if hint else ''))


def _print_fn(print_fn, call: str):
  """``print_fn`` if it can be called with a line; else UserError."""
  if callable(print_fn):
    return print_fn
  raise UserError(f'seedsweep.{call}: print_fn is {_shown(print_fn)}; expected a '
                  'function called with each line: print, a list\'s append, or '
                  'lambda *a: None for silence')


def _share(share, call: str, name: str) -> None:
  """UserError unless ``share`` is a string (``'i/n'``, checked where it is used)."""
  if not isinstance(share, str):
    raise UserError(f'seedsweep.{call}: {name} is {_shown(share)}; expected '
                    "'i/n', e.g. '0/1' (all of it) or '1/4'")


def _spec(spec, call: str, name: str, flag: str, folder: str) -> str:
  """``spec`` if it is a string naming a file or a packaged one (``folder``); else
  UserError, with the closest packaged names for a bare name that is neither."""
  from seedsweep import catalog  # pylint: disable=g-import-not-at-top
  if isinstance(spec, os.PathLike):
    spec = os.fspath(spec)
  if not isinstance(spec, str) or not spec:
    raise UserError(f'seedsweep.{call}: {name} is {_shown(spec)}; expected '
                    f"'{folder}/X.py[:arg]' or a packaged one's name "
                    '(seedsweep --mode=list lists them)')
  message = catalog.unknown_name(flag, spec)
  if message:  # the command's line, for this call
    raise UserError(f'seedsweep.{call}({spec!r}): '
                    + message.split(': ', 1)[1])
  return spec


__all__ = ['load_config', 'train', 'evaluate', 'predict', 'run_sweep', 'run_search',
           'report',
           'read_split', 'workdir_config', 'UserError']

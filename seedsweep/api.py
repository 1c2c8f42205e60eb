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
from typing import Sequence

from seedsweep.config import base
from seedsweep.config import checks as config_checks
from seedsweep.config import keys
from seedsweep.errors import UserError
from seedsweep.run import outputs
from seedsweep.run import runtime


def load_config(spec: str, **overrides):
  """The ConfigDict of ``'path/to/file.py[:arg]'`` (what ``--config=`` loads), with
  ``overrides`` set by dotted key spelled with ``__`` (``train__num_epochs=3`` is
  ``--config.train.num_epochs=3``). A packaged experiment is found by its name from
  any folder: ``'demo:quick'`` or ``'experiments/demo.py:quick'``."""
  config = base.load_config(packaged_path(spec, 'experiments'))
  for key, value in overrides.items():
    keys.set_value(config, key.replace('__', '.'), value,
                   f'load_config({spec!r}, {key}=...)')
  return config


def packaged_path(spec: str, folder: str) -> str:
  """``spec`` (``'path.py[:arg]'``) itself when its file exists, else the file of
  that name that the package installs from ``folder`` (``experiments``, ``sweeps``
  or ``searches``: ``'demo:quick'`` and ``'experiments/demo.py:quick'`` both find
  seedsweep/experiments/demo.py from any folder), else ``spec`` (whose error then
  names it)."""
  path, colon, arg = spec.partition(':')
  name = path[len(folder) + 1:] if path.startswith(folder + '/') else path
  if os.path.exists(path) or '/' in name or os.sep in name:
    return spec
  package = importlib.import_module(f'seedsweep.{folder}')
  packaged = os.path.join(os.path.dirname(package.__file__),
                          name if name.endswith('.py') else name + '.py')
  return packaged + colon + arg if os.path.exists(packaged) else spec


def _start(config) -> None:
  """What the command does before a run: its thread pool, the compilation cache."""
  runtime.pin_for(config)
  runtime.enable_compilation_cache()


def train(config, workdir: str, echo=print) -> dict:
  """Trains every seed of ``config`` in ``workdir`` (resuming what is there);
  returns the results dict (``workdir/results.json``)."""
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  _start(config)
  return loop.train(config, workdir, echo)


def workdir_config(workdir: str):
  """The ConfigDict a run was trained with (its ``config.json``)."""
  path = os.path.join(workdir, outputs.CONFIG)
  if not os.path.isfile(path):
    raise UserError(f'{workdir} holds no {outputs.CONFIG}; expected the workdir of a '
                    'trained run')
  try:
    return config_checks.from_dict(outputs.read_json(path))
  except ValueError as e:
    raise UserError(f'{path} is not valid JSON ({e}); expected the config.json a run '
                    'of seedsweep wrote') from e


def evaluate(workdir: str, echo=print) -> dict:
  """Re-evaluates the newest checkpoint of ``workdir`` with the config it was
  trained with; rewrites and returns its results."""
  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  config = workdir_config(workdir)
  _start(config)
  return loop.evaluate(config, workdir, echo)


def predict(workdir: str, texts: Sequence[str], echo=print) -> dict:
  """Every member's label for each of ``texts`` and the members' ensemble (the
  class of the highest mean probability), in the dataset's label names::

    {'labels': [...], 'probabilities': [[per class] per text], 'classes': [...],
     'per_seed': [[label per text] per member], 'members': ['seed_1', ...], ...}

  (seedsweep/run/predict.py:answers has every field, tags for the joint model).
  Texts are split on spaces, as the dataset's were.
  """
  from seedsweep.run import predict as predict_lib  # pylint: disable=g-import-not-at-top
  config = workdir_config(workdir)
  _start(config)
  return predict_lib.predict(config, workdir, texts, echo)


def run_sweep(config, spec: str, root: str, shard: str = '0/1', echo=print) -> dict:
  """``--sweep``: every point of the sweep file ``spec`` (``'sweeps/X.py[:arg]'`` or
  a packaged sweep's name) on ``config``, each in ``root/<point name>``, finished
  points skipped and interrupted ones resumed; ``shard='i/n'`` as
  ``--sweep_shard``. Returns ``{point name: results}``. (Scheduler jobs:
  the command's ``--launcher``.)"""
  from seedsweep.sweep import runner  # pylint: disable=g-import-not-at-top
  _start(config)
  return runner.run(config, packaged_path(spec, 'sweeps'), root, shard, echo=echo)


def run_search(config, spec: str, root: str, study: str = '', worker: str = '0/1',
               echo=print) -> dict:
  """``--search``: the search file ``spec`` (``'searches/X.py[:arg]'`` or a packaged
  search's name) on ``config`` under ``root``, resumed where it stopped; ``study``
  an SQLAlchemy URL (default SQLite in ``root``), ``worker='i/n'`` as
  ``--sweep_shard``. Returns search.json's contents: every trial with its params,
  its seeds' dev scores and score, the best trial and the parameter importances."""
  from seedsweep.sweep import search  # pylint: disable=g-import-not-at-top
  _start(config)
  return search.run(config, packaged_path(spec, 'searches'), root, study, worker,
                    echo=echo)


def report(root: str, latex: bool = False, plots: bool = True, echo=print,
           out: str = '') -> dict:
  """Writes ``report.md``, ``report.csv`` (``report.tex``) and plots for every run
  under ``root``, into ``out`` (default ``root``); returns ``{'rows', 'skipped',
  'files'}``."""
  from seedsweep import reports  # pylint: disable=g-import-not-at-top
  _start(base.get_base_config())  # runs re-evaluated for the report pin their own
  return reports.write_report(root, latex=latex, plots=plots, echo=echo, out=out)


def read_split(config, split: str = 'test'):
  """``(texts, labels)`` of a split of ``config``'s dataset, as its files hold them:
  inputs for :func:`predict` whose answers can be checked."""
  from seedsweep import data  # pylint: disable=g-import-not-at-top
  return data.read_split(config.data, split)


__all__ = ['load_config', 'train', 'evaluate', 'predict', 'run_sweep', 'run_search',
           'report',
           'read_split', 'workdir_config', 'UserError']

r"""The ``seedsweep`` command (also ``python -m seedsweep`` and, in a checkout,
``python launch.py``): ``seedsweep --config=experiments/demo.py --workdir=W``.

``seedsweep --mode=list`` lists the packaged experiments, sweeps, searches, models
and datasets, a line each (``--config=demo:quick`` names one from any folder);
``--mode=describe`` prints every config field with its value and meaning (all of them:
docs/configuration.md).

Modes: ``train`` (default; resumes from W's checkpoints), ``eval`` (re-evaluates the
checkpoints, rewrites results.json), ``verify`` (re-runs the first ``--verify_epochs``
epochs and compares them bit for bit with what W recorded; exit status 1 if not, 3
if they agree but a file the run read (its data, the user's code) changed since;
``--statistical``: trains the seeds again and compares the scores as distributions),
``describe`` (config, each field with its meaning, and parameter table; ``--json`` for
JSON), ``report`` (the tables and plots of every run under W, and the verdict of its
tests against the best row), ``list`` (what the package installs), ``commands`` (one
command line per sweep point), ``predict`` (the run in W labels the rows of
``--input``: TSV, CSV, JSONL, Parquet or text; JSONL out to ``--output``, ``-`` for
stdout; seedsweep/run/predict.py). Override any config field with
``--config.a.b=value`` and select a config variant with ``--config=file.py:arg``;
without ``--config``, eval, verify and predict take the overrides of fields that
change no number, on the config W stored (:func:`stored_with_overrides`).

Sweeps: ``--sweep=sweeps/X.py[:arg]`` trains every point in ``W/<point name>``;
``--sweep_shard=i/n`` takes every n-th point from the i-th (seedsweep/sweep/runner.py);
``--launcher=local|slurm`` runs the shards as jobs through submitit. Searches:
``--search=searches/X.py[:arg]`` (Optuna; seedsweep/sweep/search.py), resumed by the
same command, shared by workers through ``--study`` and ``--launcher``.
"""
import errno
import os
import sys
from typing import Optional

from absl import app
from absl import flags
from absl import logging
from ml_collections import config_flags

from seedsweep.run import runtime

MODES = ('train', 'eval', 'verify', 'describe', 'report', 'commands', 'predict',
         'list')
_CONFIG = config_flags.DEFINE_config_file(
    'config', None, 'Experiment config file, optionally `file.py:arg`, or a packaged '
    'one by name (`demo:quick`; --mode=list lists them).', lock_config=True)
_WORKDIR = flags.DEFINE_string('workdir', None, 'Directory of the run (train, eval).')
_MODE = flags.DEFINE_enum('mode', 'train', MODES, 'What to do (list: the packaged '
                          'experiments, sweeps, searches, models and datasets).')
_JSON = flags.DEFINE_bool('json', False, 'describe: print JSON instead of a table.')
_ACCEPT_CHANGED = flags.DEFINE_bool(
    'accept_changed_inputs', False, 'train (a resume), eval: go on from checkpoints '
    'trained on other input bytes (data, vectors, your model, its modules, reader) '
    'than the files hold now, said and recorded in the run, instead of refusing.')
_SWEEP = flags.DEFINE_string(
    'sweep', None, 'A sweep file, `sweeps/X.py[:arg]`: train every point under --workdir.')
_SWEEP_SHARD = flags.DEFINE_string(
    'sweep_shard', '0/1', 'i/n: run the sweep points k with k % n == i only (--search: '
    'be worker i of n sharing the study).')
_SEARCH = flags.DEFINE_string(
    'search', None, 'A search file, `searches/X.py[:arg]`: Optuna asks points, each '
    'trained with all its seeds, stacked where shapes allow, scored on dev over the '
    'seeds (seedsweep/sweep/search.py).')
_STUDY = flags.DEFINE_string(
    'study', '', '--search: the study storage, an SQLAlchemy URL (default sqlite in '
    '--workdir; postgresql://... for workers on several machines).')
_LAUNCHER = flags.DEFINE_enum(
    'launcher', 'none', ('none', 'local', 'slurm'),
    '--sweep: run the shards as jobs: local processes, or a Slurm job array, through '
    'submitit (resources in config.launch; seedsweep/sweep/launchers.py).')
_LATEX = flags.DEFINE_bool('latex', False, 'report: also write report.tex.')
_DISTRIBUTED = flags.DEFINE_bool(
    'distributed', False, 'Call jax.distributed.initialize() first (multi-host TPU or '
    'GPU slices: one process per host, every host running the same command).')
_VERIFY_EPOCHS = flags.DEFINE_integer(
    'verify_epochs', 1, 'verify: re-run this many first epochs and compare them bitwise '
    'with what the workdir recorded.')
_STATISTICAL = flags.DEFINE_bool(
    'statistical', False, 'verify: train the recorded seeds again to the end and compare '
    'their scores as distributions (equivalence test and almost stochastic order), '
    'where bits cannot match (another backend, another jax, native numerics of '
    'another CPU); exit status 1 if they differ.')
_REPRODUCE_INTO = flags.DEFINE_string(
    'reproduce_into', '', 'verify --statistical: where the seeds train again (default '
    'WORKDIR.reproduction; the same command resumes it).')
_MARGIN = flags.DEFINE_float(
    'margin', None, 'verify --statistical: the equivalence margin in points of the '
    "metric (default: the smallest the seed counts resolve from the record's spread).")
_INPUT = flags.DEFINE_string(
    'input', None, 'predict: the texts: TSV, CSV, JSONL or Parquet read as training '
    'reads them (a header naming the text and, optionally, label column, or '
    'label<TAB>text rows), else one text per line; one answer per row, in order.')
_OUTPUT = flags.DEFINE_string(
    'output', '-', 'predict: where the JSONL answers go (- : stdout). report: the '
    'folder report.md, report.csv and plots/ go to (- : --workdir).')
_DATA_DIR = flags.DEFINE_string(
    'data_dir', None, 'Raw datasets (layout: data/raw_files.py); overrides $SEEDSWEEP_DATA.')


# Errors of the disk, not of the program: a full or read-only disk, a quota, a
# permission; one line, since every write is atomic (seedsweep/files.py).
DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)


def main(argv):
  """The ``seedsweep`` command (``app.run(main)``): runs ``--mode``, and turns a
  UserError, a stop signal, Ctrl-C or a full disk into a one-line message and an exit
  status."""
  if len(argv) > 1:
    raise app.UsageError(f'Unexpected arguments: {argv[1:]}')
  if not flags.FLAGS['verbosity'].present:
    logging.set_verbosity(logging.WARNING)  # orbax and TFDS log every step at INFO
  # Imported here (and in run_mode) so that `--help` and flag errors stay fast.
  from seedsweep.errors import Stopped, UserError  # pylint: disable=g-import-not-at-top

  runtime.enable_compilation_cache()
  if _DISTRIBUTED.value:
    import jax  # pylint: disable=g-import-not-at-top
    jax.distributed.initialize()
  if _DATA_DIR.value:
    os.environ['SEEDSWEEP_DATA'] = _DATA_DIR.value

  try:
    run_mode(_MODE.value)
  except UserError as e:
    sys.exit(f'error: {e}')
  except Stopped as e:
    print(f'stopped: {e}', file=sys.stderr)
    sys.exit(128 + e.signum)
  except KeyboardInterrupt:  # Ctrl-C outside the training loop (loading, compiling)
    print('interrupted; rerun the same command to resume from the last checkpoint',
          file=sys.stderr)
    sys.exit(130)
  except OSError as e:
    if e.errno not in DISK_ERRORS:
      raise
    sys.exit(f'error: {e.filename or "writing"}: {e.strerror}; every file is written '
             'whole or not at all, so what was there before is intact: make room (or '
             'fix the permission) and rerun the same command')


def run_mode(mode: str) -> None:
  """Does what ``--mode`` asks (UserError for a missing or contradicting flag)."""
  from seedsweep import api  # pylint: disable=g-import-not-at-top
  from seedsweep.errors import UserError  # pylint: disable=g-import-not-at-top
  from seedsweep.sweep import runner as sweep  # pylint: disable=g-import-not-at-top
  workdir = _WORKDIR.value
  if RUN_OVERRIDES and mode in ('list', 'report'):  # no config to set them on
    raise UserError(f'--mode={mode} reads no config; drop --config.'
                    f'{next(iter(RUN_OVERRIDES))}')
  if mode == 'list':
    from seedsweep import catalog  # pylint: disable=g-import-not-at-top
    print(catalog.listing())
    return
  if mode == 'report':
    if not workdir:
      raise UserError('--workdir is required for --mode=report (the folder of runs)')
    api.report(workdir, latex=_LATEX.value,
               out='' if _OUTPUT.value == '-' else _OUTPUT.value)
    return
  config = flag_config(mode, workdir)  # None: the config the run in workdir stored
  # A run (train, eval, verify, predict, describe) checks its config and pins the
  # runtime once, itself (seedsweep.run.prepare); sweeps and searches pin here.
  if mode == 'describe':
    from seedsweep.run import describe  # pylint: disable=g-import-not-at-top
    info = describe.describe(config)
    print(describe.to_json(info) if _JSON.value
          else describe.format_description(info, config))
    return
  if not workdir:
    raise UserError(f'--workdir is required for --mode={mode}')
  if _LAUNCHER.value != 'none' and not (_SWEEP.value or _SEARCH.value):
    raise UserError(f'--launcher={_LAUNCHER.value} submits the shards of a sweep or '
                    'the workers of a search; add --sweep=sweeps/X.py or '
                    '--search=searches/X.py (a single run trains here)')
  if _SWEEP.value and _SEARCH.value:
    raise UserError('--sweep and --search both given; expected one (a search asks its '
                    'own points)')
  if mode == 'commands':
    if not _SWEEP.value:
      raise UserError('--mode=commands needs --sweep=sweeps/X.py')
    runtime.pin_for(config)  # before anything starts JAX's CPU client
    print('\n'.join(sweep.commands(config, _SWEEP.value, workdir, sys.argv)))
  elif _SEARCH.value:
    if mode != 'train':
      raise UserError(f'--search trains; for --mode={mode} point --workdir at one '
                      'trials_* folder (or use --mode=report on the root)')
    runtime.pin_for(config)
    if _LAUNCHER.value != 'none':
      from seedsweep.sweep import launchers  # pylint: disable=g-import-not-at-top
      launchers.submit_search(config, workdir, _LAUNCHER.value, sys.argv)
    else:
      from seedsweep.sweep import search  # pylint: disable=g-import-not-at-top
      search.run(config, _SEARCH.value, workdir, _STUDY.value, _SWEEP_SHARD.value)
  elif _SWEEP.value:
    if mode != 'train':
      raise UserError(f'--sweep trains; for --mode={mode} point --workdir at one point '
                      f'folder (or use --mode=report on the root)')
    runtime.pin_for(config)
    if _LAUNCHER.value != 'none':
      from seedsweep.sweep import launchers  # pylint: disable=g-import-not-at-top
      launchers.submit(config, _SWEEP.value, workdir, _LAUNCHER.value, sys.argv)
    else:
      sweep.run(config, _SWEEP.value, workdir, _SWEEP_SHARD.value)
  elif mode == 'train':
    api.train(config, workdir, accept_changed_inputs=_ACCEPT_CHANGED.value)
  elif mode == 'predict':
    predict(config, workdir)
  elif mode == 'verify' and _STATISTICAL.value:
    from seedsweep.reports import reproduction  # pylint: disable=g-import-not-at-top
    if not reproduction.reproduce(config or api.workdir_config(workdir), workdir,
                                  _REPRODUCE_INTO.value, _MARGIN.value)['reproduced']:
      sys.exit(1)
  elif mode == 'verify':
    from seedsweep.run import verify  # pylint: disable=g-import-not-at-top
    checked = verify.verify(config, workdir, _VERIFY_EPOCHS.value)
    if not checked['reproduced']:
      sys.exit(1)
    if checked['inputs_changed']:  # the bits agree, but from files that changed
      sys.exit(3)
  else:
    api.evaluate(workdir, config=config, accept_changed_inputs=_ACCEPT_CHANGED.value)


# Modes that read a trained run: without --config they use the config it stored.
READ_RUN_MODES = ('eval', 'verify', 'predict')


def flag_config(mode: str, workdir):
  """--config with its overrides; for :data:`READ_RUN_MODES` without --config, None:
  the run reads the config.json of ``workdir`` (once, seedsweep.run.prepare).
  ``--config.model.name`` naming another model than the file's keeps only the
  file's model fields it takes (models.take_named_model)."""
  from seedsweep.errors import UserError  # pylint: disable=g-import-not-at-top
  try:
    config = _CONFIG.value
    if config is not None:
      config.keys()  # config_flags defers a load failure to first attribute access
  except Exception as e:  # pylint: disable=broad-except
    raise UserError(explain_config_error(packaged_files(sys.argv)) or
                    f'cannot load --config: {type(e).__name__}: {e}') from e
  if config is None and mode in READ_RUN_MODES and workdir:
    return stored_with_overrides(mode, workdir) if RUN_OVERRIDES else None
  if config is None and RUN_OVERRIDES:
    key, text = next(iter(RUN_OVERRIDES.items()))
    raise UserError(f'--config.{key}={text} without --config: --mode={mode} needs '
                    '--config=FILE for it to override, e.g. --config=demo:quick '
                    '(eval, verify and predict take it on the run in --workdir)')
  if config is None:
    raise UserError('--config is required, e.g. --config=experiments/demo.py')
  overrides = flags.FLAGS['config'].override_values
  # The model named here takes its own fields; a held field is its class's.
  if 'model.name' in overrides or HELD_MODEL_FIELDS:
    from seedsweep import models  # pylint: disable=g-import-not-at-top
    from seedsweep.config import base  # pylint: disable=g-import-not-at-top
    from seedsweep.config import keys  # pylint: disable=g-import-not-at-top
    file_model = base.load_config(flags.FLAGS['config'].config_filename).model.name
    texts = {**{k: repr(v) for k, v in overrides.items()},
             **{f'model.{k}': v for k, v in HELD_MODEL_FIELDS.items()}}
    models.take_named_model(config, file_model, list(texts),
                            lambda key: f'--config.{key}={texts[key]}')
    for field, text in HELD_MODEL_FIELDS.items():
      keys.set_value(config, f'model.{field}', _literal(text),
                     f'--config.model.{field}={text}')
  return config


# The --config.<key>=TEXT flags given without --config: held back from config_flags
# (which has no config to apply them to) by parse_flags; eval, verify and predict set
# them on the config the run in --workdir stored (stored_with_overrides).
RUN_OVERRIDES = {}


def hold_run_overrides(argv):
  """``(argv, {key: TEXT})``: without ``--config``, ``argv`` without its
  ``--config.<key>`` flags (``=TEXT``, the next word, or alone: ``True``); with
  ``--config``, unchanged (config_flags applies them)."""
  if any(a == '--config' or a.startswith('--config=') for a in argv):
    return argv, {}
  return _take_flags(argv, '--config.', lambda key: False, bare='True')


def _take_flags(argv, prefix: str, keep, bare: Optional[str] = None):
  """``(argv, {key: TEXT})``: ``argv`` without its ``<prefix><key>`` flags whose
  ``key`` ``keep(key)`` does not keep, each ``=TEXT`` or the next word; ``bare``: a
  flag's value when a flag or nothing follows it (None: the next word whatever it is,
  a last flag dropped)."""
  out, held, i = [], {}, 0
  while i < len(argv):
    flag, eq, text = argv[i].partition('=')
    key = flag[len(prefix):] if flag.startswith(prefix) else ''
    if not key or keep(key):
      out.append(argv[i])
    elif eq:
      held[key] = text
    elif i + 1 < len(argv) and (bare is None or not argv[i + 1].startswith('-')):
      held[key], i = argv[i + 1], i + 1
    elif bare is not None:
      held[key] = bare
    i += 1
  return out, held


def stored_with_overrides(mode: str, workdir: str):
  """The config the run in ``workdir`` stored, with :data:`RUN_OVERRIDES` set: those
  of fields that change no number (declared ``semantic=False``: the progress bar,
  the dataset cache's folder, ...); one that would change what the run trained is
  refused in one line naming the flags ``mode`` takes."""
  from seedsweep import api  # pylint: disable=g-import-not-at-top
  from seedsweep.config import checks  # pylint: disable=g-import-not-at-top
  from seedsweep.config import keys  # pylint: disable=g-import-not-at-top
  from seedsweep.errors import UserError  # pylint: disable=g-import-not-at-top
  config = api.workdir_config(workdir)
  stored = checks.to_dict(config)
  for key, text in RUN_OVERRIDES.items():
    where = f'--config.{key}={text}'
    keys.set_value(config, key, _flag_value(config, key, text), where)
    changed = checks.differences(stored, checks.to_dict(config))
    if changed:
      takes = ([f'--config.{k}' for k in checks.NON_SEMANTIC]
               + [f'--config.{s}*' for s in checks.NON_SEMANTIC_SECTIONS])
      raise UserError(f'{where}: --mode={mode} uses the config the run in {workdir} '
                      f'trained with, and this changes it ({changed[0]}); it takes '
                      f'the flags that change no number: {", ".join(takes)}')
  return config


def _flag_value(config, key: str, text: str):
  """A ``--config.<key>`` flag's text as the field's value: a string field's as
  given, a bool's from ``true``/``false`` (any case, or 1/0), else as a Python
  literal (:func:`_literal`)."""
  current = config
  for part in key.split('.'):
    current = current.get(part) if hasattr(current, 'get') else None
  if isinstance(current, bool):
    return {'true': True, '1': True, 'false': False, '0': False}.get(text.lower(), text)
  return text if isinstance(current, str) else _literal(text)


# The --config.model.<field>=TEXT flags of fields the config file lacks, given with
# --config.model.name: held back from config_flags (which knows the file's fields
# only) by parse_flags, set (or refused) by flag_config as the named model's fields.
HELD_MODEL_FIELDS = {}


def _literal(text: str):
  """A flag's text as a Python value (``8``, ``0.5``, ``(3, 4)``, ``True``), else as
  the string it is."""
  import ast  # pylint: disable=g-import-not-at-top
  try:
    return ast.literal_eval(text)
  except (ValueError, SyntaxError):
    return text


def hold_model_fields(argv):
  """``(argv, {field: TEXT})``: with ``--config``, ``argv`` without the
  ``--config.model.<field>`` flags (``=TEXT`` or the next word) of fields the config
  file does not have, for flag_config to set as fields of the model named
  (``--config.model.name``, else the file's: a field without a default, a packaged
  class's own such as ``unroll``), or refuse naming its fields; unchanged when the
  file or the model does not load (the usual errors then say so)."""
  values = dict(a.split('=', 1) for a in argv if a.startswith(
      ('--config=', '--config.model.name=')))
  if '--config' not in values or not any(
      a.startswith('--config.model.') and not a.startswith('--config.model.name')
      for a in argv):
    return argv, {}
  from seedsweep import models  # pylint: disable=g-import-not-at-top
  from seedsweep.config import base  # pylint: disable=g-import-not-at-top
  from seedsweep.errors import UserError  # pylint: disable=g-import-not-at-top
  try:
    file_model = base.load_config(values['--config']).model
    models.model_class(values.get('--config.model.name', file_model.name))
  except UserError:
    return argv, {}
  return _take_flags(argv, '--config.model.', lambda field: field in file_model)


def predict(config, workdir: str) -> None:
  """--mode=predict: the texts of --input labelled by the run in ``workdir``, as
  JSONL to --output (progress and messages on stderr)."""
  from seedsweep.errors import UserError  # pylint: disable=g-import-not-at-top
  from seedsweep.run import predict as predict_lib  # pylint: disable=g-import-not-at-top
  if not _INPUT.value:
    raise UserError('--mode=predict needs --input=FILE (TSV, CSV, JSONL or Parquet '
                    'read as training reads them, or one text per line)')
  rows, result = predict_lib.predict_file(
      config, workdir, _INPUT.value, print_fn=lambda *a: print(*a, file=sys.stderr))
  predict_lib.write_jsonl(_OUTPUT.value, rows, result)


def explain_config_error(argv) -> Optional[str]:
  """Why ``--config`` (the file, or an override of it) did not load, in one line:
  the file and line of the failure, or the override naming no field with the fields
  that exist there; None if the config loads with every override."""
  from seedsweep.config import base  # pylint: disable=g-import-not-at-top
  from seedsweep.config import keys  # pylint: disable=g-import-not-at-top
  from seedsweep.errors import UserError  # pylint: disable=g-import-not-at-top
  spec_arg = next((a.split('=', 1)[1] for a in argv if a.startswith('--config=')), None)
  if spec_arg is None:
    return None
  try:
    config = base.load_config(spec_arg)
  except UserError as e:
    return str(e)
  for a in argv:
    flag = a.split('=', 1)[0]
    if flag.startswith('--config.'):
      message = keys.missing_field(config, flag[len('--config.'):])
      if message:
        return f'{flag}: {message} (config file {spec_arg.partition(":")[0]})'
  return None


def last_config_flags(argv) -> list:
  """``argv`` with only the last of each ``--config.<field>`` given more than once
  (``=value`` or the next word): the last one wins for every field, as absl does for
  most, where it would merge a tuple field's values (``--config.seeds='(1,)'
  --config.seeds='(3,4)'`` trained seeds 1, 3 and 4)."""
  spans, i = [], 0  # (flag, first word, end) of each word or flag with its value
  while i < len(argv):
    flag, eq, _ = argv[i].partition('=')
    takes_next = (flag.startswith('--config.') and not eq and i + 1 < len(argv)
                  and not argv[i + 1].startswith('-'))
    end = i + 2 if takes_next else i + 1
    spans.append((flag if flag.startswith('--config.') else None, i, end))
    i = end
  last = {flag: k for k, (flag, _, _) in enumerate(spans) if flag}
  return [w for k, (flag, start, end) in enumerate(spans)
          if flag is None or last[flag] == k for w in argv[start:end]]


def check_seed_flags(argv) -> None:
  """``--config.seeds=3`` would run seed 3 alone (absl reads one int as a 1-tuple):
  refused, with the two spellings a user may have meant."""
  for a in argv:
    flag, _, value = a.partition('=')
    if flag == '--config.seeds' and value.strip().isdigit():
      n = int(value)
      sys.exit(f"error: --config.seeds={value} is one number; expected a tuple of "
               f"seeds: --config.seeds='({n},)' for seed {n} alone, or "
               f"--config.seeds='{tuple(range(1, n + 1))}' for {n} seeds")


def packaged_files(argv):
  """``argv`` with ``--config=NAME[:arg]`` and ``--sweep=NAME[:arg]`` that name no file
  here pointed at the experiment or sweep the package installs under that name
  (``--config=demo:quick`` from any folder)."""
  from seedsweep import api  # pylint: disable=g-import-not-at-top
  folders = {'--config': 'experiments', '--sweep': 'sweeps', '--search': 'searches'}
  out = []
  for a in argv:
    flag, eq, value = a.partition('=')
    out.append(f'{flag}={api.packaged_path(value, folders[flag])}'
               if eq and flag in folders else a)
  return out


def check_packaged_names(argv) -> None:
  """A bare ``--config``, ``--sweep`` or ``--search`` name that is no file here and
  no packaged one: refused in one line naming the closest packaged ones."""
  from seedsweep import catalog  # pylint: disable=g-import-not-at-top
  for a in argv:
    flag, eq, value = a.partition('=')
    message = catalog.unknown_name(flag, value) if eq else None
    if message:
      sys.exit(f'error: {message}')


# absl's flags that print the help (app.define_help_flags), by name.
HELP_FLAGS = ('help', '?', 'helpshort', 'helpfull', 'helpxml')


def parse_flags(argv):
  """absl's flag parsing, with one clear line for a config that does not load."""
  argv = last_config_flags(argv)
  check_seed_flags(argv)
  argv = packaged_files(argv)
  check_packaged_names(argv)
  argv, held = hold_model_fields(argv)
  HELD_MODEL_FIELDS.clear()
  HELD_MODEL_FIELDS.update(held)
  argv, overrides = hold_run_overrides(argv)
  RUN_OVERRIDES.clear()
  RUN_OVERRIDES.update(overrides)
  command_line = sys.argv
  try:
    if held:  # config_flags reads its overrides from sys.argv
      sys.argv = argv
    return flags.FLAGS(argv)
  except SystemExit as e:
    # absl's help flags print the help and exit 1; asked for, it is no failure.
    if e.code == 1 and any(a.lstrip('-').split('=')[0] in HELP_FLAGS for a in argv[1:]):
      sys.exit(0)
    raise
  except Exception as e:  # pylint: disable=broad-except
    explained = explain_config_error(argv)
    if explained:
      sys.exit(f'error: {explained}')
    message = str(e)
    if isinstance(e, flags.Error):
      lines = [line for line in message.splitlines() if line.strip()]
      if 'Traceback (most recent call last)' in message:  # config_flags embeds one
        message = f'{lines[0]}\n  {lines[-1]}'
      sys.exit(f'error: {message}\nPass --helpshort to see the flags.')
    sys.exit(f'error: {type(e).__name__}: {message}')
  finally:
    sys.argv = command_line


def run(command=None) -> None:
  """The command's entry point: re-executes once with the malloc settings (before
  jax is imported; ``command`` is how to start this program again, default
  ``python sys.argv[0]``), then parses the flags and runs :func:`main`."""
  runtime.reexec_with_malloc_tunables(command)
  main_module = sys.modules.get('__main__')
  if main_module is not None and not getattr(main_module, '__doc__', None):
    main_module.__doc__ = __doc__  # absl's --help prints the main module's docstring
  for flag in flags.FLAGS.get_key_flags_for_module(__name__):  # --helpshort lists
    flags.FLAGS.register_key_flag_for_module(sys.argv[0], flag)  # the main module's
  app.run(main, flags_parser=parse_flags)

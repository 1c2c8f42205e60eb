"""The shared base of every experiment config; experiment files override it.

Not an experiment itself (no ``get_config``): see ``demo.py`` for the pattern.
"""
from encodings import aliases
import math
import sys

import ml_collections

from seedsweep.config import keys
from seedsweep.config import python_files
# The declaration's vocabulary (seedsweep/config/fields.py).
from seedsweep.config.fields import (NON_NEGATIVE, POSITIVE, RATE, STACK_ALWAYS,
                                     STACK_OFF_AT_ZERO, STACK_WHEN_SET, Choice, Field,
                                     Int, Number, Section, placeholder, seed_tuple)
from seedsweep.errors import UserError

PAPER_SEEDS = tuple(range(1, 11))


def _is_text_encoding(name) -> bool:
  """Whether ``name`` names a text encoding Python knows (not a bytes-to-bytes codec
  such as 'base64')."""
  try:
    'x'.encode(name)
    return True
  except (LookupError, TypeError, ValueError):
    return False


def check_text_encoding(key: str, value) -> None:
  """A check: a text encoding's name (:func:`_is_text_encoding`), else one UserError
  naming the closest (data/user_files.py's reader holds a stored config to it too)."""
  if _is_text_encoding(value):
    return
  known = sorted(n for n in set(aliases.aliases.values()) if _is_text_encoding(n))
  raise UserError(f'config.{key}={value!r} is not a text encoding Python knows'
                  f'{keys.did_you_mean(value, known)}; expected e.g. '
                  "'utf-8', 'cp1252' or 'latin-1'")


# Every field of an experiment config, declared once (seedsweep/config/fields.py):
# its default and doc, and what the rest of the code derives from the declaration:
# check= the check before anything runs (config/checks.py), semantic=False a field
# that changes no number (checks.NON_SEMANTIC), added= the value runs made before the
# field existed had in effect (checks.ADDED), stack= whether the points of a stack may
# vary it (config/stacking.py). A new field is one line here (docs/design.md, "How to
# add a config field").

DATA = Section('``config.data``: the dataset, its vocabulary, length buckets and word '
               'vectors', {
    'name': Field('demo', "the dataset: a key of data.REGISTRY, 'files' or "
                  'path/to/file.py:Reader'),
    'lowercase': Field(True, 'lower-case every text before it is split into words'),
    'min_count': Field(1, 'vocabulary: training words seen at least this often',
                       check=Int(0)),
    'oov': Field('unk', "words not in the vocabulary: 'unk' (one shared id) or "
                 "'delete'"),
    'num_buckets': Field(4, 'length buckets of training (each a compiled step)',
                         check=Int(1, 1024, ' (each bucket is a program compiled of '
                                   'its own)')),
    'bucket_multiple': Field(8, 'padded lengths are multiples of this',
                             check=Int(1, 2**16, ' (bucket lengths are its multiples)')),
    # Evaluation's own padded lengths: the fewest that pad dev and test to at most this
    # many times their real tokens (inputs/pipeline.py, eval_boundaries; one eval program
    # each: 1.1 takes 9 for SST-2). 0 = the training buckets' lengths (4 programs for
    # SST-2, padding 1.30x): the default while more programs cost more than they save.
    'eval_padding': Field(
        0.0, 'dev/test padded to at most this many times their real tokens (0 = the '
        "training buckets' lengths)", added=0.0, check=Number(
        "a finite number >= 1 (padded tokens at most this many times the real ones), "
        "or 0 for the training buckets' lengths",
        lambda v: v == 0 or 1 <= v < math.inf, optional=False)),
    'max_length': Field(0, '> 0: every example keeps its first N tokens only',
                        check=Int(0, note=' (0 = no limit)')),
    'tfds_dir': Field('', "prepared datasets' cache ('' = $SEEDSWEEP_TFDS_DIR or "
                      "~/.cache/seedsweep/tfds)",
                      semantic=False),
    'verify_checksums': Field(True, 'raw files must match the sha256 in '
                              'data/raw_files.py'),
    'folds': Field((), 'mr, subj: the CV folds to run (() = all, stacked)'),
    'num_folds': Field(10, 'mr, subj: folds of the cross-validation',
                       check=Int(2, note=' (folds of cross-validation)')),
    'dev_holdout': Field(0.0, 'carve dev from train: fraction (<1) or count; 0 = off'),
    # path '' = random embeddings. `python -m seedsweep.data.word2vec` trains a file
    # (docs/data.md, "Training word vectors"): its corpus must not hold the dataset's
    # test sentences (IMDB experiments: --corpus=imdb_train).
    'vectors': Section('``config.data.vectors``: pretrained word vectors '
                       '(inputs/embeddings.py)', {
        'path': Field('', "a word-vector file ('' = random embeddings)"),
        'format': Field('', "'' = detect: glove | word2vec_text | word2vec_binary"),
        'lowercase': Field(False, "match the file's words lower-cased"),
        'static': Field(False, 'True: the embedding table is not trained'),
        'oov_init': Field('random', "words without a vector: 'random' | 'zero'"),
        'only_found': Field(False, 'vocabulary = words with a vector only'),
        'add_eval_words': Field(False, 'dev/test words with a vector join the '
                                'vocabulary'),
    }),
    'files': Section("``config.data.files``: your own data (``config.data.name = "
                     "'files'``): TSV, CSV, JSONL or Parquet paths", {
        'train': Field('', 'the training file (required)'),
        'dev': Field('', "the dev file ('' = none; data.dev_holdout may carve one)"),
        'test': Field('', "the test file ('' = no test scores)"),
        # Header names (JSON keys) of the text and label columns; '' = text/sentence
        # and label, or headerless label<TAB>text rows.
        'text_column': Field('', "the text's column or JSON key ('' = text or sentence)",
                             added=''),
        'label_column': Field('', "the label's column or JSON key ('' = label)",
                              added=''),
        # Parquet files carry their own; a wrong one is a one-line error naming the
        # file and its first line that does not decode.
        'encoding': Field('utf-8', 'the text encoding of CSV, TSV, JSONL and text '
                          "files (e.g. 'cp1252', 'latin-1')", added='utf-8',
                          check=check_text_encoding),
    }),
})

MODEL = Section('``config.model``: which model; experiment files add its fields', {
    'name': Field('bilstm', 'a key of models.REGISTRY or path/to/file.py:Class; the '
                   "section's other fields go to it"),
})

OPTIMIZER = Section('``config.optimizer``: the optax optimiser, clipping, the '
                    "embedding's update", {
    'name': Field('adam', 'the optimiser: sgd | adagrad | adadelta | rmsprop | adam'),
    'learning_rate': Field(1e-3, 'the step size (constant)', check=POSITIVE,
                           stack=STACK_ALWAYS),
    # Optimiser-specific fields; unset ones keep optax's defaults.
    'momentum': Field(placeholder(float), "sgd, rmsprop: momentum (None = optax's "
                    'default)', check=RATE),
    'nesterov': Field(False, 'sgd: Nesterov momentum'),
    'initial_accumulator_value': Field(placeholder(float), "adagrad: the "
                                       "accumulators' start (None = optax's)",
                                       check=NON_NEGATIVE),
    'eps': Field(placeholder(float), "the denominator's epsilon (adagrad, adadelta, "
                 "rmsprop, adam; None = optax's)", check=NON_NEGATIVE),
    'rho': Field(placeholder(float), "adadelta: the decay rate (None = optax's)",
                 check=RATE),
    'decay': Field(placeholder(float), "rmsprop: the decay rate (None = optax's)",
                   check=RATE),
    'centered': Field(False, 'rmsprop: centred (divides by the variance)'),
    'b1': Field(placeholder(float), "adam: the first moment's decay (None = "
                "optax's)", check=RATE),
    'b2': Field(placeholder(float), "adam: the second moment's decay (None = "
                "optax's)", check=RATE),
    'clip_global_norm': Field(0.0, 'gradients scaled to this global norm at most '
                              '(0 = off)', check=NON_NEGATIVE,
                              stack=STACK_OFF_AT_ZERO),
    'clip_value': Field(0.0, 'each gradient entry clipped to [-v, v] (0 = off)',
                        check=NON_NEGATIVE, stack=STACK_OFF_AT_ZERO),
    # The word-embedding table's update: 'dense', 'rows' (only the batch's rows: the
    # dense optimiser up to rounding for sgd without momentum, adagrad, adadelta and
    # rmsprop without momentum; 2.5-3x faster C-LSTM and MT-LSTM steps on a CPU),
    # 'lazy' (any optimizer; untouched rows keep their moments: not dense Adam/RMSprop)
    # or 'auto' ('rows' where it is exact, else 'dense').
    # seedsweep/engine/embedding_rows.py.
    'embedding_update': Field(
        'auto', "the embedding's update: 'dense' | 'rows' | 'lazy' | 'auto'",
        added='dense'),
})

L2 = Section('``config.l2``: the L2 penalty added to the loss', {
    'coef': Field(0.0, 'the L2 penalty: loss += coef * sum of the squares of '
                  'l2.params (0 = off)', check=NON_NEGATIVE,
                  stack=STACK_WHEN_SET),
    'params': Field(('kernel',), 'regexes: the parameters whose path matches one are '
                    'penalised'),
})

# seedsweep/config/stacking.py: point i sets each key of stack.fields (learning
# rate, clip norms, l2.coef, dropout rates, the joint model's rho and beta) to
# stack.points[i]; every point runs every seed. --sweep groups a sweep's points
# this way by itself. () = the config's own values.
STACK = Section('``config.stack``: hyperparameter points trained in the same '
                'program', {
    'fields': Field((), 'the keys the points set (model.dropout, ...)', added=()),
    'points': Field((), 'one tuple of values per point, in the order of fields',
                    added=()),
})

# Set all three and the members are every combination of an init, a data-order
# and a dropout seed (config.seeds is then not used); the report splits the seed
# variance by source. () = one seed per member (config.seeds).
SEED_DESIGN = Section('``config.seed_design``: a factorial design of init, data-order, '
                      'dropout seeds', {
    'init': Field((), 'the seeds of the initial parameters', added=()),
    'data': Field((), 'the seeds of the order of training batches', added=()),
    'dropout': Field((), 'the seeds of the dropout masks', added=()),
})

TRAIN = Section('``config.train``: epochs, batches, selection, early stopping, NaN '
                'policy', {
    'num_epochs': Field(10, 'passes over the training set (at most, with patience)',
                        check=Int(1)),
    'batch_size': Field(50, 'training examples a step', check=Int(1)),
    'eval_batch_size': Field(500, 'most rows of an eval chunk (dev and test mixed)',
                             check=Int(1)),
    'selection': Field('best_dev', "'best_dev' or 'last' (epoch whose params count)",
                       check=Choice(('best_dev', 'last'))),
    # Early stopping, per seed: a seed's selection ends after this many epochs without a
    # better dev score; the run ends when every seed's has. 0 = off (best_dev only).
    'patience': Field(0, 'epochs without a better dev score before a seed stops '
                      '(0 = off)', check=Int(0, note=' (0 = no early stopping)')),
    # How the members step (seedsweep/run/pieces.py, place): 'lanes' vmaps them at
    # the fixed width train.lanes, padded, groups of lanes one after another, so a
    # program's shapes (and an accelerator's kernels) never change with the member
    # count; 'auto' is lanes on a GPU or TPU, map on one CPU, vmap over CPU devices.
    'seed_parallel': Field('auto', "'lanes', 'vmap', 'map' or 'auto' (lanes on a GPU "
                           "or TPU, map on one CPU)",
                           check=Choice(('lanes', 'vmap', 'map', 'auto'))),
    # The lanes of one program under 'lanes', per device: a run of fewer members pads
    # them, one of more trains groups of this many (docs/gpu.md, "Lanes").
    'lanes': Field(16, "members one program steps side by side under 'lanes' (per "
                   'device)', added=16, check=Int(
        1, 4096, ' (a lane group: every program of the run has this many members)')),
    'checkpoint_every': Field(1, 'epochs between checkpoints (and the last one)',
                              check=Int(1)),
    # The most train steps the host hands the device at a time (one program runs them,
    # the host reading nothing back in between); fewer while a chunk would run over
    # about 2 s, so that a stop signal is seen within seconds. Off the CPU all of one
    # padded length, one step where fewer of one length come in a row
    # (engine.steps.host_free_programs). Changes no number.
    'steps_per_dispatch': Field(8, 'most train steps one program runs at a time',
                                semantic=False, added=1, check=Int(
        1, 4096, ' (steps one program runs before the host looks again)')),
    # A seed whose train loss becomes NaN or infinite: 'freeze' (it keeps its last
    # finite parameters, flagged in metrics and results; the other seeds go on) or
    # 'fatal' (the run stops at the end of that epoch).
    'nan_policy': Field('freeze', "a seed whose loss is NaN: 'freeze' it or stop "
                        "('fatal')", semantic=False, added='freeze',
                        check=Choice(('freeze', 'fatal'))),
    'progress': Field(True, 'progress bar on the terminal', semantic=False),
})

RUNTIME = Section('``config.runtime``: the CPU thread pool, the numerics, the memory '
                  'budget', {
    # Where the arithmetic runs: XLA:CPU's intra-op pool. 0 (the default) = the
    # usable cores, at least 2 (NPROC where the environment sets it). Under portable
    # numerics a seed's bits do not depend on it (engine/portable.py's sums and dots);
    # under native numerics they do (Eigen splits dots by it). The record names the
    # pool that ran. docs/design.md, "Core counts". Runs made before the pool was
    # pinned used the machine's cores (0); from 2026-11-23 to 2026-12-04 the default
    # was 4.
    'cpu_threads': Field(0, "XLA:CPU's thread pool (0 = the usable cores, at least 2)",
                         added=0, check=Int(0, None, (
        ' (0 = the default, the usable cores, at least 2)'))),
    # 'portable': the same bits on every x86-64 CPU with AVX2 and FMA (XLA and its
    # kernels pinned to arithmetic that does not follow the CPU); 'native': XLA's
    # choices for this CPU, numbers of this CPU family only. docs/design.md, "Portable
    # numerics". Runs made before portable numerics: the machine's own.
    'numerics': Field('portable', "'portable' (the same bits on any x86-64 CPU) or "
                      "'native' (this CPU's)", added='native',
                      check=Choice(('portable', 'native'))),
    # float32 matmuls on a GPU or TPU: 'highest' (full float32, as on a CPU: a seed's
    # numbers do not hinge on whether the device has TF32), 'high' (TF32 on NVIDIA,
    # three bfloat16 passes on a TPU) or 'default' (the backend's fastest: TF32, one
    # bfloat16 pass). A CPU computes float32 whatever this says. docs/gpu.md.
    # Every run before it was a CPU run (float32 whatever the setting) but the GPU
    # checks of 2026-11-27, which took the backend's default.
    'matmul_precision': Field('highest', "float32 matmuls on a GPU/TPU: 'highest' | "
                              "'high' | 'default'", added='highest',
                              check=Choice(('highest', 'high', 'default'))),
    # MiB a run may hold (seedsweep/run/memory.py estimates it from the shapes before
    # compiling); 0 = 50 % of what this process can use on a CPU (RAM or a cgroup's
    # limit), 80 % of a GPU's memory. Members beyond it train in groups one after
    # another inside the run (seedsweep/run/groups.py); one member over it is refused.
    'memory_budget': Field(
        0, "MiB a run may hold; more members train in groups (0 = half the RAM, 80 % "
        "of a GPU's)", semantic=False, added=0, check=Number(
            'MiB as a number >= 0 (0 = 50 % of the memory this process can use)',
            lambda v: not v < 0, optional=False)),
})

# seedsweep/run/tracking.py. TensorBoard's HParams tab always gets each finished
# run (workdir/tensorboard/hparams).
LOG = Section('``config.log``: where runs are also logged (none changes a number)', {
    'mlflow': Field(False, 'one MLflow run per finished run (pip install -e .[mlflow])',
                    added=False),
    'mlflow_uri': Field('', "'' = $MLFLOW_TRACKING_URI, else file:<workdir>/../mlruns",
                        added=''),
    'mlflow_experiment': Field('seedsweep', 'the MLflow experiment runs are logged to',
                               added='seedsweep'),
}, semantic=False)

# --launcher=local|slurm; seedsweep/sweep/launchers.py. None changes a number.
LAUNCH = Section('``config.launch``: what each scheduler job of a sweep asks for', {
    'jobs': Field(0, 'shards of the sweep, one job each (0 = one per run: a program '
                  'of the sweep)'),
    'timeout_min': Field(24 * 60, "minutes a job may run before it is stopped"),
    'cpus_per_task': Field(4, 'CPU cores a job asks for'),
    'gpus_per_node': Field(0, 'GPUs a job asks for'),
    'mem_gb': Field(16, 'GiB of memory a job asks for'),
    'slurm_partition': Field('', "the Slurm partition ('' = the cluster's default)"),
    'slurm_array_parallelism': Field(64, 'jobs of the array running at once'),
}, semantic=False)

PAPER = Section('``config.paper``: the number the paper reports for this row (paper '
                'experiments)', {
    'source': Field('', "the paper and table ('' = not a paper's row)"),
    'metric': Field('test_accuracy', 'the metric the paper reports (the report\'s '
                    'first)'),
    'value': Field(placeholder(float), "the paper's number (None: not reported)"),
    'note': Field('', "how to read the number (e.g. 'best of 10 runs')"),
    'other': Section('Other numbers the paper reports for the same row: '
                     '{metric: value}', {}),
})

BASE = Section('Every field of an experiment config with its default, section by '
               'section', {
    'seeds': Field(PAPER_SEEDS, 'the seeds; each trains as one member of the program '
                   '(never a sweep axis)', check=seed_tuple),
    'data': DATA,
    'model': MODEL,
    'optimizer': OPTIMIZER,
    'l2': L2,
    'stack': STACK,
    'seed_design': SEED_DESIGN,
    'train': TRAIN,
    'runtime': RUNTIME,
    'log': LOG,
    'launch': LAUNCH,
    'paper': PAPER,
})
FIELDS = BASE.flat()        # {'train.batch_size': Field}: every field by its dotted key
SECTIONS = BASE.sections()  # {'data.vectors': Section}


def get_base_config() -> ml_collections.ConfigDict:
  """Every field of an experiment config with its default (:data:`BASE`), section by
  section."""
  return BASE.build()


def parse_arg(arg: str, **defaults) -> ml_collections.ConfigDict:
  """``get_config(arg)``'s argument, ``'fine,lstm,quick'``, as named values (after
  big_vision's ``bvcc.parse_arg``).

  Each keyword names a value and gives its default, whose kind says how a bare token
  sets it: a bool is a flag its name turns on (``quick=False``: ``'quick'``); a tuple
  lists choices, the first the default, and a bare choice picks one
  (``dataset=('binary', 'fine')``: ``'fine'``). ``name=value`` sets any value,
  converted to its default's type (``'dataset=fine'``, ``'quick=true'``, ``'hidden=64'``
  for ``hidden=32``). Commas separate tokens; empty ones are skipped.

  Returns:
    A ConfigDict of every name: ``parse_arg('fine', dataset=('binary', 'fine'),
    quick=False)`` is ``{'dataset': 'fine', 'quick': False}``.

  Raises:
    ValueError: one line naming the calling file (``experiments/clstm_sst.py``) and
      the token: unknown (with the closest valid token and every choice), a second
      value for the same name, or a value that fits not its choices or type.
  """
  caller = sys._getframe(1).f_globals.get('__file__') or ''  # pylint: disable=protected-access
  where = '/'.join(caller.replace('\\', '/').split('/')[-2:]) or 'get_config'
  bare = {}  # a bare token -> the name it sets
  for name, default in defaults.items():
    for token in default if isinstance(default, tuple) else (
        (name,) if isinstance(default, bool) else ()):
      if bare.setdefault(token, name) != name:
        raise ValueError(f'{where}: parse_arg: {token!r} would set both {bare[token]} '
                         f'and {name}')
  values = {n: d[0] if isinstance(d, tuple) else d for n, d in defaults.items()}
  given, unknown = {}, []
  for token in [t for t in (arg or '').split(',') if t]:
    name, eq, text = token.partition('=')
    if not eq:
      name, text = bare.get(token), token
    if name not in defaults:
      unknown.append(token)
      continue
    if name in given:
      raise ValueError(f'{where}: {given[name]!r} and {token!r} both set {name}; '
                       f'expected one value for each of {tuple(defaults)}')
    given[name] = token
    values[name] = _arg_value(where, token, defaults[name], text)
  if unknown:
    options = list(bare) if '=' not in unknown[0] else list(defaults)
    hint = keys.did_you_mean(unknown[0].partition('=')[0], options) if len(
        unknown) == 1 else ''
    items = ['|'.join(d) + f' ({n}, default {d[0]})' if isinstance(d, tuple) else
             n if isinstance(d, bool) else f'{n}=<{type(d).__name__}> (default {d!r})'
             for n, d in defaults.items()]
    expected = ('none' if not items else f'none or {items[0]}' if len(items) == 1 else
                'none or a comma-separated mix of ' + ', '.join(items))
    raise ValueError(f'{where}: unknown argument(s) {unknown}{hint}; expected {expected}')
  return ml_collections.ConfigDict(values)


def _arg_value(where: str, token: str, default, text: str):
  """The value ``text`` gives a name whose default is ``default`` (parse_arg)."""
  if isinstance(default, tuple):
    if text in default:
      return text
    expected = 'one of ' + '|'.join(default) + keys.did_you_mean(text, default)
  elif isinstance(default, bool):
    if text == token or text.lower() in ('true', '1', 'yes'):
      return True
    if text.lower() in ('false', '0', 'no'):
      return False
    expected = 'true or false'
  elif isinstance(default, (int, float)):
    try:
      return type(default)(text)
    except ValueError:
      expected = f'an {type(default).__name__}' if isinstance(default, int) else 'a float'
  else:
    return text
  raise ValueError(f'{where}: argument {token!r}: {token.partition("=")[0]} expects '
                   f'{expected}')


def set_paper(config, source: str, value, metric: str = 'test_accuracy') -> None:
  """The number the paper reports for this config's row (None: not reported)."""
  config.paper.source = source
  config.paper.metric = metric
  config.paper.value = value


def make_quick(config, embed_dim: int = 32, seeds=(1, 2), num_epochs: int = 1) -> None:
  """The smoke-test settings every ``:quick`` variant shares: two seeds, one epoch,
  two length buckets, small word vectors (about a minute on 2 CPU cores); a variant
  may keep more ``seeds`` (``config.seeds``: all) or ``num_epochs``."""
  config.seeds = seeds
  config.train.num_epochs = num_epochs
  config.data.num_buckets = 2
  config.model.embed_dim = embed_dim


def load_config(spec: str) -> ml_collections.ConfigDict:
  """The config of ``'path/to/file.py[:arg]'``: the file's ``get_config(arg)``.

  What ``--config=`` loads, for scripts and notebooks (no flag parsing); a relative
  path is taken from the current folder.
  """
  config = python_files.call(spec, 'get_config', '--config')
  if not isinstance(config, ml_collections.ConfigDict):
    raise UserError(f'--config={spec}: get_config returned {type(config).__name__}; '
                    'expected an ml_collections.ConfigDict (start from '
                    'seedsweep.config.base.get_base_config())')
  return config

"""The shared base of every experiment config; experiment files override it.

Not an experiment itself (no ``get_config``): see ``demo.py`` for the pattern.
"""
import ml_collections
from ml_collections import config_dict

from seedsweep.config import python_files
from seedsweep.errors import UserError

PAPER_SEEDS = tuple(range(1, 11))


def get_base_config() -> ml_collections.ConfigDict:
  """Every field of an experiment config with its default, section by section."""
  config = ml_collections.ConfigDict()
  config.seeds = PAPER_SEEDS  # the vmap axis; never a sweep axis
  config.data = _data_config()
  config.model = _model_config()
  config.optimizer = _optimizer_config()
  config.l2 = _l2_config()
  config.stack = _stack_config()
  config.seed_design = _seed_design_config()
  config.train = _train_config()
  config.runtime = _runtime_config()
  config.log = _log_config()
  config.launch = _launch_config()
  config.paper = _paper_config()
  return config


def _data_config() -> ml_collections.ConfigDict:
  """``config.data``: the dataset, its vocabulary, length buckets and word vectors."""
  data = ml_collections.ConfigDict()
  data.name = 'demo'       # a key of data.REGISTRY
  data.lowercase = True
  data.min_count = 1       # vocabulary: training words seen at least this often
  data.oov = 'unk'         # 'unk' (shared unknown id) or 'delete'
  data.num_buckets = 4     # length buckets (= train-step compilations)
  data.bucket_multiple = 8  # padded lengths are multiples of this
  # Evaluation's own padded lengths: the fewest that pad dev and test to at most this
  # many times their real tokens (data/pipeline.py, eval_boundaries; one eval program
  # each: 1.1 takes 9 for SST-2). 0 = the training buckets' lengths (4 programs for
  # SST-2, padding 1.30x): the default while more programs cost more than they save.
  data.eval_padding = 0.0
  data.max_length = 0      # > 0: every example keeps its first N tokens only
  data.tfds_dir = ''       # '' = $SEEDSWEEP_TFDS_DIR or ~/.cache/seedsweep/tfds
  data.verify_checksums = True  # raw files must match data/raw.py RECORDED
  data.folds = ()          # mr, subj: the CV folds to run (() = all, stacked)
  data.num_folds = 10
  data.dev_holdout = 0.0   # carve dev from train: fraction (<1) or count; 0 = off
  data.vectors = _vectors_config()
  data.files = _files_config()
  return data


def _vectors_config() -> ml_collections.ConfigDict:
  """``config.data.vectors``: pretrained word vectors (data/embeddings.py)."""
  # path '' = random embeddings. `python -m seedsweep.data.word2vec` trains a file
  # (docs/data.md, "Training word vectors"): its corpus must not hold the dataset's test sentences (IMDB
  # experiments: --corpus=imdb_train).
  vectors = ml_collections.ConfigDict()
  vectors.path = ''
  vectors.format = ''       # '' = detect: glove | word2vec_text | word2vec_binary
  vectors.lowercase = False  # match the file's words lower-cased
  vectors.static = False    # True: the embedding table is not trained
  vectors.oov_init = 'random'  # words without a vector: 'random' | 'zero'
  vectors.only_found = False   # vocabulary = words with a vector only
  vectors.add_eval_words = False  # dev/test words with a vector join it
  return vectors


def _files_config() -> ml_collections.ConfigDict:
  """``config.data.files``: your own data (``config.data.name = 'files'``)."""
  files = ml_collections.ConfigDict()  # TSV, CSV or JSONL paths
  files.train = ''
  files.dev = ''
  files.test = ''
  # Header names (JSON keys) of the text and label columns; '' = text/sentence and
  # label, or headerless label<TAB>text rows.
  files.text_column = ''
  files.label_column = ''
  return files


def _model_config() -> ml_collections.ConfigDict:
  """``config.model``: which model; experiment files add its fields."""
  model = ml_collections.ConfigDict()
  model.name = 'bilstm'    # a key of models.REGISTRY; other fields go to it
  return model


def _optimizer_config() -> ml_collections.ConfigDict:
  """``config.optimizer``: the optax optimiser, clipping, the embedding's update."""
  optimizer = ml_collections.ConfigDict()
  optimizer.name = 'adam'  # sgd | adagrad | adadelta | rmsprop | adam
  optimizer.learning_rate = 1e-3
  # Optimiser-specific fields; unset ones keep optax's defaults.
  optimizer.momentum = config_dict.placeholder(float)   # sgd, rmsprop
  optimizer.nesterov = False                            # sgd
  optimizer.initial_accumulator_value = config_dict.placeholder(float)  # adagrad
  optimizer.eps = config_dict.placeholder(float)   # adagrad adadelta rmsprop adam
  optimizer.rho = config_dict.placeholder(float)   # adadelta
  optimizer.decay = config_dict.placeholder(float)  # rmsprop
  optimizer.centered = False                       # rmsprop
  optimizer.b1 = config_dict.placeholder(float)    # adam
  optimizer.b2 = config_dict.placeholder(float)    # adam
  optimizer.clip_global_norm = 0.0  # 0 = off
  optimizer.clip_value = 0.0        # 0 = off
  # The word-embedding table's update: 'dense', 'rows' (only the batch's rows: the
  # dense optimiser up to rounding for sgd without momentum, adagrad, adadelta and
  # rmsprop without momentum; 2.5-3x faster C-LSTM and MT-LSTM steps on a CPU),
  # 'lazy' (any optimizer; untouched rows keep their moments: not dense Adam/RMSprop)
  # or 'auto' ('rows' where it is exact, else 'dense').
  # seedsweep/engine/embedding_rows.py.
  optimizer.embedding_update = 'auto'
  return optimizer


def _l2_config() -> ml_collections.ConfigDict:
  """``config.l2``: the L2 penalty added to the loss."""
  l2 = ml_collections.ConfigDict()
  l2.coef = 0.0            # loss += coef * sum ||W||^2 over ...
  l2.params = ('kernel',)  # ... parameters whose path matches a regex here
  return l2


def _stack_config() -> ml_collections.ConfigDict:
  """``config.stack``: hyperparameter points trained in the same program."""
  # (seedsweep/config/stacking.py): point i sets each key of stack.fields (learning
  # rate, clip norms, l2.coef, dropout rates, the joint model's rho and beta) to
  # stack.points[i]; every point runs every seed. --sweep groups a sweep's points
  # this way by itself. () = the config's own values.
  stack = ml_collections.ConfigDict()
  stack.fields = ()
  stack.points = ()
  return stack


def _seed_design_config() -> ml_collections.ConfigDict:
  """``config.seed_design``: a factorial design of init, data-order, dropout seeds."""
  # Set all three and the members are every combination of an init, a data-order
  # and a dropout seed (config.seeds is then not used); the report splits the seed
  # variance by source. () = one seed per member (config.seeds).
  seed_design = ml_collections.ConfigDict()
  seed_design.init = ()
  seed_design.data = ()
  seed_design.dropout = ()
  return seed_design


def _train_config() -> ml_collections.ConfigDict:
  """``config.train``: epochs, batches, selection, early stopping, NaN policy."""
  train = ml_collections.ConfigDict()
  train.num_epochs = 10
  train.batch_size = 50
  train.eval_batch_size = 500  # most rows of an eval chunk (dev and test mixed)
  train.selection = 'best_dev'  # 'best_dev' or 'last' (epoch whose params count)
  # Early stopping, per seed: a seed's selection ends after this many epochs without a
  # better dev score; the run ends when every seed's has. 0 = off (best_dev only).
  train.patience = 0
  train.seed_parallel = 'auto'  # 'vmap', 'map' or 'auto' (map on CPU, else vmap)
  train.checkpoint_every = 1    # epochs between checkpoints (and the last one)
  # The most train steps the host hands the device at a time (one program runs them,
  # the host reading nothing back in between); fewer while a chunk would run over
  # about 2 s, so that a stop signal is seen within seconds. Changes no number.
  train.steps_per_dispatch = 8
  # A seed whose train loss becomes NaN or infinite: 'freeze' (it keeps its last
  # finite parameters, flagged in metrics and results; the other seeds go on) or
  # 'fatal' (the run stops at the end of that epoch).
  train.nan_policy = 'freeze'
  train.progress = True         # progress bar on the terminal
  return train


def _runtime_config() -> ml_collections.ConfigDict:
  """``config.runtime``: the CPU thread pool, the numerics, the memory budget."""
  # Where the arithmetic runs. XLA:CPU splits long sums into one part per thread of its
  # intra-op pool, so the pool's size is part of what defines a seed's numbers: pinned
  # (4 by default) they are the same on every machine, 1 core or 64. Another value
  # gives numbers of its own, again the same on every machine; 0 = XLA's default (the
  # usable cores: numbers then depend on the machine). docs/design.md, "Core counts".
  runtime = ml_collections.ConfigDict()
  runtime.cpu_threads = 4
  # 'portable': the same bits on every x86-64 CPU with AVX2 and FMA (XLA and its kernels
  # pinned to arithmetic that does not follow the CPU); 'native': XLA's choices for
  # this CPU, numbers of this CPU family only. docs/design.md, "Portable numerics".
  runtime.numerics = 'portable'
  # float32 matmuls on a GPU or TPU: 'highest' (full float32, as on a CPU: a seed's
  # numbers do not hinge on whether the device has TF32), 'high' (TF32 on NVIDIA,
  # three bfloat16 passes on a TPU) or 'default' (the backend's fastest: TF32, one
  # bfloat16 pass). A CPU computes float32 whatever this says. docs/gpu.md.
  runtime.matmul_precision = 'highest'
  # MiB a run may hold (seedsweep/run/memory.py estimates it from the shapes before
  # compiling); 0 = 50 % of what this process can use on a CPU (RAM or a cgroup's
  # limit), 80 % of a GPU's memory. Members beyond it train in groups one after
  # another inside the run (seedsweep/run/groups.py); one member over it is refused.
  runtime.memory_budget = 0
  return runtime


def _log_config() -> ml_collections.ConfigDict:
  """``config.log``: where runs are also logged (none changes a number)."""
  # seedsweep/run/tracking.py. TensorBoard's HParams tab always gets each finished
  # run (workdir/tensorboard/hparams).
  log = ml_collections.ConfigDict()
  log.mlflow = False        # one MLflow run per finished run (pip install -e .[mlflow])
  log.mlflow_uri = ''       # '' = $MLFLOW_TRACKING_URI, else file:<workdir>/../mlruns
  log.mlflow_experiment = 'seedsweep'
  return log


def _launch_config() -> ml_collections.ConfigDict:
  """``config.launch``: what each scheduler job of a sweep asks for."""
  # --launcher=local|slurm; seedsweep/sweep/launchers.py. None changes a number.
  launch = ml_collections.ConfigDict()
  launch.jobs = 0           # shards of the sweep, one job each (0 = one per run: a program of the sweep)
  launch.timeout_min = 24 * 60
  launch.cpus_per_task = 4
  launch.gpus_per_node = 0
  launch.mem_gb = 16
  launch.slurm_partition = ''
  launch.slurm_array_parallelism = 64  # jobs of the array running at once
  return launch


def _paper_config() -> ml_collections.ConfigDict:
  """``config.paper``: the number the paper reports for this row (paper experiments)."""
  paper = ml_collections.ConfigDict()
  paper.source = ''
  paper.metric = 'test_accuracy'
  paper.value = config_dict.placeholder(float)  # None: not reported
  paper.note = ''  # how to read the number (e.g. 'best of 10 runs')
  # Other numbers the paper reports for the same row: {metric: value}.
  paper.other = ml_collections.ConfigDict()
  return paper


def parse_arg(arg: str, where: str, choices, flags=('quick',)):
  """Splits a config argument ``'a,b,quick'`` into one choice per group and flags.

  ``choices`` maps a group name to its allowed values, the first being the default;
  ``flags`` are switches. Returns ``(selected {group: value}, set of flags)``; an
  unknown or repeated argument raises ValueError naming the file and what it takes.
  """
  selected, on = {}, set()
  for a in [a for a in (arg or '').split(',') if a]:
    group = next((g for g, values in choices.items() if a in values), None)
    if a in flags:
      on.add(a)
    elif group is None or group in selected:
      accepted = [f'{g}: {"|".join(v)}' for g, v in choices.items()]
      raise ValueError(f'{where}: argument {a!r} is unknown or repeats a choice; '
                       f'expected at most one of each of {accepted}, plus {flags}')
    else:
      selected[group] = a
  for group, values in choices.items():
    selected.setdefault(group, values[0])
  return selected, on


def set_paper(config, source: str, value, metric: str = 'test_accuracy') -> None:
  """The number the paper reports for this config's row (None: not reported)."""
  config.paper.source = source
  config.paper.metric = metric
  config.paper.value = value


def make_quick(config, embed_dim: int = 32) -> None:
  """The smoke-test settings every ``:quick`` variant shares: two seeds, one epoch,
  two length buckets, small word vectors (about a minute on 2 CPU cores)."""
  config.seeds = (1, 2)
  config.train.num_epochs = 1
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

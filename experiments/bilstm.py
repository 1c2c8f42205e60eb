r"""Bi-LSTM baseline on any registered dataset, ten seeds, with the dataset's protocol.

Run (DATASET is a name of ``python -m seedsweep.data --list``, e.g. sst/binary, trec/coarse, mr):
  python launch.py --config=experiments/bilstm.py:sst/binary --workdir=runs/bilstm_sst2
  python launch.py --config=experiments/bilstm.py:mr --workdir=runs/bilstm_mr       # 10 folds x 10 seeds
  python launch.py --config=experiments/bilstm.py:trec/coarse,quick --workdir=runs/q

Arguments (comma-separated): the dataset (default ``sst/binary``) and ``quick`` (one
epoch, two seeds, two folds: a smoke test). Protocol: datasets without a dev split
(TREC, IMDB, MR, Subj, ATIS jointslu) hold out 10 % of training for epoch selection;
MR and Subj run all 10 folds stacked with the seeds. Model: 300-d random embeddings,
150 hidden units per direction, mean pooling, dropout 0.5, Adam 1e-3, batch 50.
No paper number: this is the common baseline, not a paper's row.
Measured: not yet run in full (10 epochs). One epoch, 2026-11-21 (2 cores, 10 seeds):
test SST-2 77.84 ± 1.18, SST-1 38.96 ± 1.00, TREC coarse 75.32 ± 2.56 (docs/log.md).
"""
from seedsweep.config import base
from seedsweep import data

NO_DEV = ('trec/coarse', 'trec/fine', 'imdb', 'mr', 'subj', 'atis/jointslu')


def get_config(arg: str = ''):
  datasets = ('sst/binary',) + tuple(n for n in data.REGISTRY if n != 'sst/binary')
  arg = base.parse_arg(arg, dataset=datasets, quick=False)
  config = base.get_base_config()
  config.data.name = arg.dataset
  if config.data.name in NO_DEV:
    config.data.dev_holdout = 0.1
  config.model.name = 'bilstm'
  config.model.embed_dim = 300
  config.model.hidden = 150
  config.model.pooling = 'mean'
  config.model.dropout = 0.5
  config.optimizer.name = 'adam'
  config.optimizer.learning_rate = 1e-3
  config.train.batch_size = 50
  config.train.num_epochs = 10
  if arg.quick:
    base.make_quick(config)
    config.model.hidden = 32
    if config.data.name in ('mr', 'subj'):
      config.data.folds = (0, 1)
  return config

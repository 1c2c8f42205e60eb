"""The DC-Bi-LSTM recipe (docs/models.md §3.2) shared by ``dclstm_*.py`` experiments.

Not an experiment itself: ``dclstm_sst.py``, ``dclstm_mr.py``, ``dclstm_subj.py`` and
``dclstm_trec.py`` call :func:`dclstm_config` with their dataset and paper numbers.
"""
from seedsweep.config import base

SOURCE = 'Ding et al. 2018, Densely Connected Bidirectional LSTM'
# Model variants of the paper's tables: config.model fields (and a note).
MODELS = {
    'dclstm': {'name': 'dclstm', 'dl': 15, 'dh': 13, 'th': 100},
    'bilstm300': {'name': 'dclstm', 'dl': 0, 'dh': 0, 'th': 300},  # Table 3 row 1
    'bilstm100': {'name': 'dclstm', 'dl': 0, 'dh': 0, 'th': 100},  # Tables 4/5 row 1
    'stacked': {'name': 'stacked_bilstm', 'dl': 15, 'dh': 13, 'th': 100},
}


def dclstm_config(dataset: str, model: str, paper_value, quick: bool):
  """The paper's hyperparameters for ``dataset`` (a data.REGISTRY name)."""
  config = base.get_base_config()
  config.data.name = dataset
  config.data.lowercase = True
  config.data.oov = 'delete'  # "words not in the pre-trained set are abandoned"
  if dataset.startswith(('trec', 'mr', 'subj')):
    config.data.dev_holdout = 0.1  # docs/models.md §3.2: 10 % of training for selection
  # With GloVe 42B (--config.data.vectors.path=...): static, only words with a vector
  # (dev/test words too: every word the vectors know is kept, docs/log.md,
  # "Word vectors").
  config.data.vectors.static = True
  config.data.vectors.only_found = True
  config.data.vectors.add_eval_words = True
  config.model.update(MODELS[model])
  config.model.embed_dim = 300
  config.model.dropout = 0.5
  config.optimizer.name = 'adam'
  config.optimizer.learning_rate = 0.005
  config.optimizer.clip_global_norm = 5.0
  config.l2.coef = 1e-3
  config.l2.params = ('classifier/kernel',)  # "L2 constraints over the soft-max"
  config.train.batch_size = 200
  config.train.num_epochs = 30
  config.train.patience = 5  # docs/models.md §3.2: dev early stopping (the reimplementation's 5)
  base.set_paper(config, SOURCE, paper_value)
  if quick:
    base.make_quick(config)
    config.model.update(dl=min(config.model.dl, 3), dh=min(config.model.dh, 8),
                        th=min(config.model.th, 20))
    if dataset in ('mr', 'subj'):
      config.data.folds = (0, 1)
  return config

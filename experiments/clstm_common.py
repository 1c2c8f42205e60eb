"""The C-LSTM recipe (docs/models.md §4.1-4.2) shared by ``clstm_sst.py`` and
``clstm_trec.py``, and the LSTM / Bi-LSTM baselines of its tables.

Not an experiment itself.
"""
from seedsweep.config import base

SOURCE = 'Zhou et al. 2015, A C-LSTM Neural Network for Text Classification'
MODELS = ('clstm', 'lstm', 'bilstm', 'literal')


def clstm_config(dataset: str, model: str, size: int, maxlen: int, paper_value,
                 quick: bool):
  """``size``: filters and memory dimension (150 SST, 300 TREC); ``maxlen``: the
  longest training sentence (the literal variant pads to it)."""
  config = base.get_base_config()
  config.data.name = dataset
  config.data.lowercase = True
  # With word2vec (--config.data.vectors.path=...): fine-tuned, and dev/test words
  # that have a vector join the vocabulary (docs/models.md §4.4.6).
  config.data.vectors.static = False
  config.data.vectors.add_eval_words = True
  config.model.embed_dim = 300
  if model in ('clstm', 'literal'):
    config.model.name = 'clstm'
    config.model.filters = size
    config.model.hidden = size
    config.model.dropout = 0.5
    if model == 'literal':
      config.model.literal = True
      config.model.maxlen = maxlen
  else:  # the paper's own LSTM / Bi-LSTM baselines: same embeddings, dropout, d
    config.model.name = model
    config.model.hidden = size
    config.model.pooling = 'last'  # Bi-LSTM: [forward at the last word; backward at the first]
    config.model.embed_dropout = 0.5
    config.model.dropout = 0.5
  config.optimizer.name = 'rmsprop'
  config.optimizer.learning_rate = 1e-3
  config.optimizer.decay = 0.9
  config.optimizer.eps = 1e-6
  config.l2.coef = 1e-3
  config.l2.params = ('classifier/kernel',)  # softmax weights only
  config.train.batch_size = 50
  base.set_paper(config, SOURCE, paper_value)
  if quick:
    base.make_quick(config)
    config.model.hidden = 16
    if 'filters' in config.model:
      config.model.filters = 16
  return config

"""The MT-LSTM recipe (docs/models.md §2.1-2.2) shared by ``mtlstm_sst.py``,
``mtlstm_trec.py`` and ``mtlstm_imdb.py``, with the paper's LSTM baseline (the same
code with one group, same sizes).

Not an experiment itself.
"""
from seedsweep.config import base

SOURCE = 'Liu et al. 2015, Multi-Timescale Long Short-Term Memory Neural Network'
# Model variants of Table 3: config.model fields.
MODELS = {
    'f2s': {'strategy': 'f2s'},
    's2f': {'strategy': 's2f'},
    'lstm': {'strategy': 'f2s', 'groups': 1},
}
# Table 3, accuracy %: (model, dataset) -> paper number.
PAPER = {
    ('lstm', 'sst/fine'): 47.9, ('lstm', 'sst/binary'): 85.8,
    ('lstm', 'trec/coarse'): 91.3, ('lstm', 'imdb'): 88.5,
    ('s2f', 'sst/fine'): 48.9, ('s2f', 'sst/binary'): 86.7,
    ('s2f', 'trec/coarse'): 93.3, ('s2f', 'imdb'): 90.2,
    ('f2s', 'sst/fine'): 49.1, ('f2s', 'sst/binary'): 87.2,
    ('f2s', 'trec/coarse'): 94.4, ('f2s', 'imdb'): 92.1,
}


def mtlstm_config(dataset: str, model: str, hidden: int, groups: int, epochs: int,
                  quick: bool):
  """Table 2's sizes for ``dataset``: ``hidden`` units in all, in ``groups`` groups."""
  config = base.get_base_config()
  config.data.name = dataset
  config.data.lowercase = True  # GloVe 6B (uncased) stands in for their word2vec
  if dataset in ('trec/coarse', 'imdb'):
    config.data.dev_holdout = 0.1  # docs/models.md §2.2: epoch chosen on 10 % of train
  config.data.vectors.static = False  # fine-tuned
  config.data.vectors.add_eval_words = True  # dev/test words keep their vector
  config.model.name = 'mtlstm'
  config.model.embed_dim = 100
  config.model.hidden = hidden
  config.model.groups = groups
  config.model.update(MODELS[model])
  config.model.init_scale = 0.1  # U(-0.1, 0.1) for every parameter
  config.optimizer.name = 'adagrad'
  config.optimizer.learning_rate = 0.1
  config.optimizer.initial_accumulator_value = 0.0
  config.optimizer.eps = 1e-8
  config.l2.coef = 1e-5  # all weights; not biases, not embeddings
  config.l2.params = (r'group_\d+/(input|recurrent|peephole)$', 'classifier/kernel')
  config.train.batch_size = 32
  config.train.num_epochs = epochs
  base.set_paper(config, SOURCE, PAPER.get((model, dataset)))
  if quick:
    base.make_quick(config)
    config.model.hidden = 4 * groups if model != 'lstm' else 12
  return config

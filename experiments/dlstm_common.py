"""The DLSTM recipe (docs/models.md §1.1-1.2) shared by ``dlstm_sst.py``, ``dlstm_trec.py``
and ``dlstm_atis.py``.

Not an experiment itself.
"""
from seedsweep.config import base

SOURCE = 'Shi et al. 2016, Deep LSTM based Feature Mapping for Query Classification'


def dlstm_config(dataset: str, paper_value, quick: bool, note: str = ''):
  config = base.get_base_config()
  config.data.name = dataset
  config.data.lowercase = False  # GloVe 840B is cased
  # With vectors (--config.data.vectors.path=glove.840B.300d.txt): static
  # (docs/models.md §1.2, after Lei et al.'s code); training words without a vector
  # get random rows.
  config.data.vectors.static = True
  config.data.vectors.add_eval_words = True  # as Lei et al.'s code: every file's words
  config.model.name = 'dlstm'
  config.model.embed_dim = 300
  config.model.hidden = 256
  config.model.layers = 3
  config.model.units = 3
  config.model.cell = 'literal'
  config.model.dropout = 0.5
  config.optimizer.name = 'adagrad'  # alpha / sqrt(sum g^2 + 1e-5), from zero
  config.optimizer.learning_rate = 0.1
  config.optimizer.initial_accumulator_value = 0.0
  config.optimizer.eps = 1e-5
  config.l2.coef = 1e-5  # weight matrices only
  config.l2.params = (r'layer_\d+/(kernel|recurrent|peephole)$', 'classifier/kernel')
  config.train.batch_size = 64
  config.train.num_epochs = 100
  # No scan to compile, so more length buckets are cheap; they cut the padding of an
  # SST-2 epoch from 1.35x to 1.21x the real tokens (the model is matmul-bound; Lei
  # et al.'s recipe batches equal-length sentences only).
  config.data.num_buckets = 8
  config.data.bucket_multiple = 4
  base.set_paper(config, SOURCE, paper_value)
  config.paper.note = note
  if quick:
    base.make_quick(config)
    config.model.hidden = 16
  return config

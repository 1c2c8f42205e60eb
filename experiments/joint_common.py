"""The joint slot-filling and intent recipe (docs/models.md §5.1-5.2) shared by
``joint_atis.py`` and ``joint_trec.py``: the rows of the paper's Table 1 and Figure 4
as ``config.model`` fields of ``joint_slu``.

Not an experiment itself.
"""
from seedsweep.config import base

SOURCE = ('Ma et al. 2017, Jointly Trained Sequential Labeling and Classification by '
          'Sparse Attention Neural Networks')
# Table 1 / Figure 4 rows: config.model fields.
ROWS = {
    'independent': {'cnn': False, 'independent': True, 'head': 'mean'},
    'joint': {'cnn': False, 'head': 'mean'},
    'joint_cnn': {'head': 'mean'},
    'attention': {'head': 'softmax'},
    'sparse': {'head': 'sparse'},
    'latent_cnn': {'latent': True, 'head': 'mean'},
    'latent_attention': {'latent': True, 'head': 'softmax'},
    'latent_sparse': {'latent': True, 'head': 'sparse'},
}
# rho and beta of the sparse head, chosen on ATIS dev by sweeps/joint_sparsity.py
# (docs/log.md, "The joint model (issue 6)"); the paper does not give them.
RHO = 0.1
BETA = 0.01


def joint_config(dataset: str, row: str, quick: bool):
  config = base.get_base_config()
  config.data.name = dataset
  # With vectors (TREC: the paper's 300-d pretrained ones, fine-tuned): dev/test words
  # that have a vector join the vocabulary, as in every paper config here.
  config.data.vectors.add_eval_words = True
  config.model.name = 'joint_slu'
  config.model.embed_dim = 100
  config.model.tag_dim = 50
  config.model.widths = (3, 5, 7)
  config.model.filters = 100
  config.model.hidden = 200  # d: docs/models.md §5.2 (the paper does not say)
  config.model.rho = RHO
  config.model.beta = BETA
  config.model.dropout = 0.5
  config.model.init_scale = 0.05
  config.model.update(head='sparse', cnn=True, latent=False, independent=False)
  config.model.update(ROWS[row])
  # AdaDelta as Keras/Lasagne define it; the paper's "learning rate 0.001" would
  # hardly move (docs/models.md §5.4 item 6).
  config.optimizer.name = 'adadelta'
  config.optimizer.learning_rate = 1.0
  config.optimizer.rho = 0.95
  config.optimizer.eps = 1e-6
  config.train.batch_size = 16
  config.train.num_epochs = 50  # at most; the epoch is chosen on dev
  config.train.selection = 'best_dev'
  # Each seed's selection ends after 10 epochs without a better dev score; the run
  # ends when every seed's has (the paper gives no schedule; docs/models.md §5.2).
  config.train.patience = 10
  if quick:
    base.make_quick(config)
    config.model.update(hidden=16, filters=8, tag_dim=8)
  return config

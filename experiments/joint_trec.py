r"""The latent-label joint model on TREC (Ma et al. 2017, Figure 4): question
classification where no slot tags exist, previous hidden states taking their place.

Run:
  python launch.py --config=experiments/joint_trec.py --workdir=runs/joint_trec
  python launch.py --config=experiments/joint_trec.py:independent --workdir=runs/lstm_trec
  python launch.py --config=experiments/joint_trec.py:quick --workdir=/tmp/q

Arguments, one bar of Figure 4 (accuracy %, the paper's numbers):
  ``sparse``       latent LSTM + CNN + sparse att. (the default)  94.0
  ``attention``    latent LSTM + CNN + attention (softmax)        93.4
  ``latent_cnn``   latent LSTM + CNN (mean pooling)               92.6
  ``independent``  an LSTM with mean pooling                      92.2
and ``quick`` (2 seeds, 1 epoch, a small model).

Protocol: TREC coarse (6 classes), 10 % of the 5452 training questions held out as
dev for epoch selection (docs/models.md §5.2), test on the 500. The paper fine-tuned 300-d
pretrained vectors; none exist here, so random 300-d vectors are trained unless
``--config.data.vectors.path`` names a file.
Measured 2026-11-25 (AMD EPYC, 2 cores, 10 seeds; docs/log.md, campaign): ``sparse``
test 88.72 ± 1.09; 91.50 ± 0.78 with IMDB skip-gram 300-d vectors, fine-tuned. The
other rows: not yet run in full.
"""
from seedsweep.config import base
from seedsweep.experiments import joint_common

PAPER = {'sparse': 94.0, 'attention': 93.4, 'latent_cnn': 92.6, 'independent': 92.2}
ROWS = {'sparse': 'latent_sparse', 'attention': 'latent_attention',
        'latent_cnn': 'latent_cnn', 'independent': 'joint'}


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, row=tuple(PAPER), quick=False)
  config = joint_common.joint_config('trec/coarse', ROWS[arg.row], arg.quick)
  config.data.dev_holdout = 0.1
  if not arg.quick:
    config.model.embed_dim = 300
  base.set_paper(config, joint_common.SOURCE, PAPER[arg.row])
  return config

r"""C-LSTM on TREC (coarse, 6 classes; Zhou et al. 2015, Table 2), and its LSTM /
Bi-LSTM baselines.

Run:
  python launch.py --config=experiments/clstm_trec.py --workdir=runs/clstm_trec
  python launch.py --config=experiments/clstm_trec.py:lstm --workdir=runs/lstm_trec
  python launch.py --config=experiments/clstm_trec.py:quick --workdir=/tmp/q

Arguments: ``clstm`` (default), ``lstm``, ``bilstm`` or ``literal`` (end-padded to the
longest training question, 37 tokens); ``quick`` (2 seeds, 1 epoch, a small model).

Protocol: 1000 training questions held out for epoch selection, training on the other
4452, test on the 500; 300 filters and memory cells; at most 50 epochs.
Paper (word2vec, fine-tuned): C-LSTM 94.6, LSTM 93.2, Bi-LSTM 93.0.
Measured: docs/log.md.
"""
from seedsweep.config import base
from seedsweep.experiments import clstm_common

PAPER = {'clstm': 94.6, 'lstm': 93.2, 'bilstm': 93.0}


def get_config(arg: str = ''):
  choice, flags = base.parse_arg(arg, 'experiments/clstm_trec.py',
                                 {'model': clstm_common.MODELS})
  config = clstm_common.clstm_config(
      'trec/coarse', choice['model'], size=300, maxlen=37,
      paper_value=PAPER.get(choice['model']), quick='quick' in flags)
  config.data.dev_holdout = 1000.0
  if 'quick' not in flags:
    config.train.num_epochs = 50
  return config

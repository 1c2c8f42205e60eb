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
Measured 2026-11-25 (AMD EPYC, 2 cores; docs/log.md, campaign): C-LSTM test 90.40 ±
0.60 over 10 seeds; 92.68 ± 0.73 with IMDB skip-gram 300-d vectors, fine-tuned.
``lstm``, ``bilstm``, ``literal``: not yet run in full.
"""
from seedsweep.config import base
from seedsweep.experiments import clstm_common

PAPER = {'clstm': 94.6, 'lstm': 93.2, 'bilstm': 93.0}


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, model=clstm_common.MODELS, quick=False)
  config = clstm_common.clstm_config(
      'trec/coarse', arg.model, size=300, maxlen=37,
      paper_value=PAPER.get(arg.model), quick=arg.quick)
  config.data.dev_holdout = 1000.0
  if not arg.quick:
    config.train.num_epochs = 50
  return config

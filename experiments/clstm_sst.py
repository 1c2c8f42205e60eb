r"""C-LSTM on SST (Zhou et al. 2015, Table 1), and its LSTM / Bi-LSTM baselines.

Run (ten seeds in one program; random embeddings unless vectors are given):
  python launch.py --config=experiments/clstm_sst.py --workdir=runs/clstm_sst2
  python launch.py --config=experiments/clstm_sst.py:fine --workdir=runs/clstm_sst1
  python launch.py --config=experiments/clstm_sst.py:binary,lstm --workdir=runs/lstm_sst2
  python launch.py --config=experiments/clstm_sst.py:binary,quick --workdir=/tmp/q
  # with the paper's vectors: --config.data.vectors.path=GoogleNews-vectors-negative300.bin

Arguments (comma-separated): ``binary`` (SST-2, default) or ``fine`` (SST-1);
``clstm`` (default), ``lstm``, ``bilstm`` (the paper's baselines) or ``literal``
(end-padded to the longest training sentence, 52 tokens; docs/models.md §4.4.3);
``quick`` (2 seeds, 1 epoch, a small model: a smoke test).

Protocol: training on phrases and sentences (``sst/*_phrases``), dev and test on
sentences, 150 filters and memory cells, at most 20 epochs, epoch chosen on dev.
Paper (word2vec, fine-tuned): C-LSTM 87.8 / 49.2; LSTM 86.6 / 46.6; Bi-LSTM 87.9 /
47.8 (SST-2 / SST-1).
Measured (AMD EPYC, 2 cores, 10 seeds; docs/log.md, campaign): C-LSTM SST-2 85.30 ±
0.49 (2026-11-25), SST-1 47.29 ± 0.83 (2026-11-26); with IMDB skip-gram 300-d vectors,
fine-tuned, 88.42 ± 0.44 (2026-11-25) / 50.10 ± 0.86 (2026-11-27). ``lstm``,
``bilstm``, ``literal``: not yet run in full.
"""
from seedsweep.config import base
from seedsweep.experiments import clstm_common

PAPER = {('binary', 'clstm'): 87.8, ('fine', 'clstm'): 49.2,
         ('binary', 'lstm'): 86.6, ('fine', 'lstm'): 46.6,
         ('binary', 'bilstm'): 87.9, ('fine', 'bilstm'): 47.8}


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, dataset=('binary', 'fine'), model=clstm_common.MODELS,
                       quick=False)
  config = clstm_common.clstm_config(
      f'sst/{arg.dataset}_phrases', arg.model, size=150, maxlen=52,
      paper_value=PAPER.get((arg.dataset, arg.model)), quick=arg.quick)
  if not arg.quick:
    config.train.num_epochs = 20
  return config

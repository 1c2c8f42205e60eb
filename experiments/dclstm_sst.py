r"""DC-Bi-LSTM on SST (Ding et al. 2018, Table 1; baselines of Tables 3-5).

Run (ten seeds in one program; random embeddings unless vectors are given):
  python launch.py --config=experiments/dclstm_sst.py --workdir=runs/dclstm_sst2
  python launch.py --config=experiments/dclstm_sst.py:fine --workdir=runs/dclstm_sst1
  python launch.py --config=experiments/dclstm_sst.py:binary,bilstm300 --workdir=runs/bilstm300_sst2
  python launch.py --config=experiments/dclstm_sst.py:fine,phrases --workdir=runs/dclstm_sst1_phrases
  python launch.py --config=experiments/dclstm_sst.py:binary,quick --workdir=/tmp/q
  # with the paper's vectors: --config.data.vectors.path=glove.42B.300d.txt

Arguments (comma-separated): ``binary`` (SST-2, default) or ``fine`` (SST-1);
``dclstm`` (dl=15, dh=13, th=100, default), ``bilstm300``, ``bilstm100`` (the paper's
own Bi-LSTM baselines, Tables 3-5 row 1) or ``stacked`` (deep stacked Bi-LSTM, no
dense connections); ``phrases`` (train on every labelled phrase too: docs/models.md §3.2's
ablation); ``quick`` (2 seeds, 1 epoch, a small model: a smoke test).

Protocol: sentence-level training (docs/models.md §3.2: the paper does not say which;
phrases are the ablation), standard dev for epoch selection, tested on sentences, at
most 30 epochs, each seed stopping after 5 without a better dev score.
Paper (GloVe 42B, static): SST-2 89.7, SST-1 51.9;
Bi-LSTM 300: 87.2 / 49.2; Bi-LSTM 100: 87.5 / 48.5.
Measured (AMD EPYC, 2 cores, 10 seeds; docs/log.md, campaign): SST-2 81.48 ± 0.75
(2026-11-24), SST-1 40.61 ± 1.23 (2026-11-25); with IMDB skip-gram 300-d static
vectors 86.16 ± 0.62 (2026-11-24) / 47.91 ± 1.13 (2026-11-25), ``fine,phrases`` 50.24
± 0.95 (2026-11-28). The Bi-LSTM and stacked variants: not yet run in full.
"""
from seedsweep.config import base
from seedsweep.experiments import dclstm_common

PAPER = {  # (dataset, model) -> test accuracy (%)
    ('binary', 'dclstm'): 89.7, ('fine', 'dclstm'): 51.9,
    ('binary', 'bilstm300'): 87.2, ('fine', 'bilstm300'): 49.2,
    ('binary', 'bilstm100'): 87.5, ('fine', 'bilstm100'): 48.5,
}


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, dataset=('binary', 'fine'),
                       model=tuple(dclstm_common.MODELS), quick=False, phrases=False)
  phrases = '_phrases' if arg.phrases else ''
  return dclstm_common.dclstm_config(
      f'sst/{arg.dataset}{phrases}', arg.model, PAPER.get((arg.dataset, arg.model)),
      arg.quick)

r"""DLSTM on ATIS intents (Shi et al. 2016, Table 2): single-label intent accuracy.

Run:
  python launch.py --config=experiments/dlstm_atis.py --workdir=runs/dlstm_atis
  python launch.py --config=experiments/dlstm_atis.py:quick --workdir=/tmp/q

Protocol: ATIS 4978 training / 893 test utterances (``atis/jointslu``); each label
string is one class (``atis_flight+atis_airfare`` too); test labels never seen in
training count as errors. No dev: the model after epoch 100 is tested. Paper: 97.9.
Measured 2026-11-26 (AMD EPYC, 2 cores; docs/log.md, campaign): test 94.92 ± 0.83 over
5 seeds; 95.79 ± 0.64 with IMDB skip-gram 300-d static vectors. Ten seeds: not yet run.
"""
from seedsweep.config import base
from seedsweep.experiments import dlstm_common


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, quick=False)
  config = dlstm_common.dlstm_config('atis/jointslu', 97.9, arg.quick)
  config.train.selection = 'last'
  return config

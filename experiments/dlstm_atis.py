r"""DLSTM on ATIS intents (Shi et al. 2016, Table 2): single-label intent accuracy.

Run:
  python launch.py --config=experiments/dlstm_atis.py --workdir=runs/dlstm_atis
  python launch.py --config=experiments/dlstm_atis.py:quick --workdir=/tmp/q

Protocol: ATIS 4978 training / 893 test utterances (``atis/jointslu``); each label
string is one class (``atis_flight+atis_airfare`` too); test labels never seen in
training count as errors. No dev: the model after epoch 100 is tested. Paper: 97.9.
"""
from seedsweep.config import base
from seedsweep.experiments import dlstm_common


def get_config(arg: str = ''):
  _, flags = base.parse_arg(arg, 'experiments/dlstm_atis.py', {})
  config = dlstm_common.dlstm_config('atis/jointslu', 97.9, 'quick' in flags)
  config.train.selection = 'last'
  return config

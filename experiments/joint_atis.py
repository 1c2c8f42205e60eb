r"""The joint slot-filling and intent model on ATIS (Ma et al. 2017, Table 1).

Run:
  python launch.py --config=experiments/joint_atis.py --workdir=runs/joint_atis
  python launch.py --config=experiments/joint_atis.py:joint_cnn --workdir=runs/joint_cnn
  python launch.py --config=experiments/joint_atis.py:quick --workdir=/tmp/q

Arguments, one row of Table 1 (slot F1 / intent error %, the paper's numbers):
  ``sparse``            + joint + CNN + sparse att. (the default)   96.98 / 5.12
  ``attention``         + joint + CNN + attention (softmax)         96.73 / 5.71
  ``joint_cnn``         + joint + CNN (mean pooling)                97.35 / 5.96
  ``joint``             + joint (one LSTM on the words, two heads)  95.54 / 6.32
  ``independent``       vanilla LSTMs, one for slots, one for intent 93.74 / 7.21
  ``latent_cnn``        latent labels: + joint + CNN                    - / 6.43
  ``latent_attention``  latent labels: + attention                      - / 5.61
  ``latent_sparse``     latent labels: + sparse att.                    - / 5.42
and ``quick`` (2 seeds, 1 epoch, a small model).

Protocol: ATIS as the slot-gated release splits it (``atis``: 4478 training, 500 dev,
893 test utterances, BIO slot tags, multi-intent labels one class each); random
100-d word vectors; the epoch (of at most 50; a seed stops after 10 without a better
dev score) with the best dev intent accuracy is tested. The paper's ATIS is
TriCRF's 5138-dialog version, not obtainable: numbers compare only roughly
(docs/models.md §5.2). Slot F1 counts chunks as conlleval does.
Measured 2026-11-25 (AMD EPYC, 2 cores, 10 seeds; docs/log.md, campaign): ``sparse``
slot F1 94.44 ± 0.45, intent error 5.46 ± 0.89 (32 min). The other rows: not yet run
in full.
"""
from seedsweep.config import base
from seedsweep.experiments import joint_common

# Table 1: row -> (slot F1, intent error %); None: not reported.
PAPER = {
    'sparse': (96.98, 5.12), 'attention': (96.73, 5.71), 'joint_cnn': (97.35, 5.96),
    'joint': (95.54, 6.32), 'independent': (93.74, 7.21),
    'latent_cnn': (None, 6.43), 'latent_attention': (None, 5.61),
    'latent_sparse': (None, 5.42),
}


def get_config(arg: str = ''):
  arg = base.parse_arg(arg, row=tuple(PAPER), quick=False)
  config = joint_common.joint_config('atis', arg.row, arg.quick)
  slot_f1, intent_error = PAPER[arg.row]
  if slot_f1 is None:
    base.set_paper(config, joint_common.SOURCE, intent_error, 'test_intent_error')
  else:
    base.set_paper(config, joint_common.SOURCE, slot_f1, 'test_slot_f1')
    config.paper.other = {'test_intent_error': intent_error}
  config.paper.note = "TriCRF's ATIS version"
  return config

"""The sparse-attention penalty's rho (target mean weight) and beta (its weight),
which Ma et al. 2017 do not give: the grid of docs/models.md §5.1, chosen on the ATIS dev
split by intent accuracy (the number the sparse head exists to improve).

Base config: experiments/joint_atis.py (the "+joint+CNN+sparse att." row). The chosen
pair is joint_common.RHO / BETA; the sweep that chose it is in docs/log.md ("The
joint model (issue 6)").
rho and beta change no shape, so the runner trains the 12 points as ONE program
(``[12 points x seeds]`` members; folder ``rho=0.05+0.1+0.2+0.3,beta=0.01+0.1+1.0``).
"""
from seedsweep.sweep import grid

RHO = (0.05, 0.1, 0.2, 0.3)
BETA = (0.01, 0.1, 1.0)


def sweep(arg: str = ''):
  del arg
  points = grid.product(**{'model.rho': RHO, 'model.beta': BETA})
  return [{**p, 'paper.metric': 'dev_accuracy', 'paper.value': None,
           'paper.other': {}, 'paper.note': 'rho and beta are not given'}
          for p in points]

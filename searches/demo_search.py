"""Learning rate, dropout and L2 of the demo's Bi-LSTM, searched by Optuna's TPE over
12 points asked 4 at a time, 3 seeds a point: each round is ONE program of
``[4 points x 3 seeds]`` members, and each point is scored on its seeds' mean dev
accuracy (seedsweep/sweep/search.py).

  seedsweep --config=demo --search=demo_search --workdir=/tmp/seedsweep/demo_search
  seedsweep --mode=report --workdir=/tmp/seedsweep/demo_search

``searches/demo_search.py:quick`` is the tests' form (4 points, 2 a round, 2 seeds);
``:lcb`` scores a point by the lower end of its mean's 95 % interval instead.

Measured 2026-12-07 (AMD EPYC, 2 cores; 136 s): trial 1 chosen (learning rate
0.009105, dropout 0.35, L2 1.029e-06), dev 96.33, test 95.57 ± 1.40 over its 3 seeds.
"""
from seedsweep.config import base
from seedsweep.sweep import space

PARAMS = {
    'optimizer.learning_rate': space.log_uniform(1e-3, 3e-2),
    'model.dropout': space.uniform(0.0, 0.5, step=0.05),
    'l2.coef': space.log_uniform(1e-7, 1e-3),
}


def search(arg: str = ''):
  arg = base.parse_arg(arg, quick=False, lcb=False)  # 'quick,lcb': both
  score = 'lcb' if arg.lcb else 'mean'
  if arg.quick:
    return space.Search(PARAMS, trials=4, points_per_round=2, seeds=(1, 2), score=score)
  return space.Search(PARAMS, trials=12, points_per_round=4, seeds=(1, 2, 3),
                      score=score)

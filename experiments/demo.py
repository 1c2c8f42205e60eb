r"""Bi-LSTM on the embedded synthetic demo dataset, ten seeds in one jitted program.

Run:
  python launch.py --config=experiments/demo.py --workdir=/tmp/seedsweep/demo
  python launch.py --config=experiments/demo.py:quick --workdir=/tmp/seedsweep/demo_quick
  python launch.py --config=experiments/demo.py:bow --workdir=/tmp/seedsweep/demo_bow
  python launch.py --config=experiments/demo.py:quick,variance --workdir=/tmp/seedsweep/demo_var

Arguments (comma-separated): ``quick`` (fewer epochs, a smoke test of ~20 s on 2 CPU
cores); a model name, ``bilstm`` (default), ``lstm`` or ``bow`` (order-blind baseline);
``variance``: a factorial seed design, 3 init x 3 data-order x 3 dropout seeds = 27
members in one program, whose report splits the seed variance by source.

Expected (seeds 1..10, 2 CPU cores): see docs/log.md, results log.
"""
from seedsweep.config import base

MODELS = ('bilstm', 'lstm', 'bow')


def get_config(arg: str = ''):
  args = [a for a in (arg or '').split(',') if a]
  flags = ('quick', 'variance')
  unknown = [a for a in args if a not in MODELS + flags]
  if unknown:
    raise ValueError(f'experiments/demo.py: unknown argument(s) {unknown}; expected '
                     f'a comma-separated subset of {MODELS + flags}')
  model = next((a for a in args if a in MODELS), 'bilstm')

  config = base.get_base_config()
  config.data.name = 'demo'
  config.model.name = model
  config.model.embed_dim = 32
  if model != 'bow':
    config.model.hidden = 32
    config.model.pooling = 'last'
    config.model.dropout = 0.2
  config.optimizer.name = 'adam'
  config.optimizer.learning_rate = 5e-3
  config.train.batch_size = 32
  config.train.num_epochs = 10
  if 'quick' in args:
    config.train.num_epochs = 2
    config.data.num_buckets = 2  # fewer compilations for a smoke test
  if 'variance' in args:
    config.seed_design.init = config.seed_design.data = (1, 2, 3)
    config.seed_design.dropout = (1, 2, 3)
  return config

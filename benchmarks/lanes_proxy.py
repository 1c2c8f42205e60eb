r"""Lanes on a CPU under native numerics: is a seed's bits its own at one lane width?

A proxy, run without a GPU, for the question lanes answer there
(docs/reproducibility.md, "Lanes on the CPU"). With ``config.runtime.numerics=
'native'`` (XLA:CPU's own kernels, not the portable forms the golden runs use), seed
``--seed``'s parameters after ``--steps`` train steps of epoch 1 in these runs, each
built in this one process:

* ``alone``: the seed alone, lanes of ``--lanes`` (one lane used, the rest padding);
* ``among``: the seed among ``--members`` seeds (1..n), at the same width;
* ``reversed``: the same seeds in reversed order (the seed in another lane);
* ``groups``: ``2 x --lanes`` seeds, trained as two lane groups (the seed's group
  through the same compiled program);
* for contrast, plain ``vmap`` at the members' own width: the seed alone against
  among ``--members``.

Each is compared with ``alone`` array by array, bit for bit: the number of arrays
that differ and the largest difference. Run it as::

  python benchmarks/lanes_proxy.py --config=experiments/demo.py:quick --steps=20
  python benchmarks/lanes_proxy.py --config=experiments/dlstm_sst.py:binary --tiny

``--tiny``: one length bucket of at most 32 tokens (tests/conftest.py tiny_shapes).
Prints a Markdown table and, with ``--out``, writes it and a JSON record there.
"""
import argparse
import datetime
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)


def seed_params(config, seed: int, steps: int):
  """``seed``'s parameters (a flat list of host arrays) after epoch 1's first
  ``steps`` steps of ``config``'s members, trained by lane group when it has more
  than one."""
  import jax  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  from seedsweep.run import epoch as epoch_lib  # pylint: disable=g-import-not-at-top
  from seedsweep.run import groups  # pylint: disable=g-import-not-at-top
  from seedsweep.run import pieces as pieces_lib  # pylint: disable=g-import-not-at-top
  exp = pieces_lib.build(config)
  seeds = list(exp.members.seeds)
  where = seeds.index(seed)
  bounds = groups.for_placement(len(seeds), 10 ** 9, exp.placement.group,
                                exp.placement.lanes) or [(0, len(seeds))]
  for a, b in bounds:
    if a <= where < b:
      part = exp.group(a, b) if (a, b) != (0, len(seeds)) else exp
      state, _, _ = epoch_lib.train_steps(part, part.init_state(), 1, max_steps=steps)
      params = jax.device_get(state.params)
      return [np.asarray(x)[where - a] for x in jax.tree.leaves(params)]
  raise AssertionError('unreachable')


def compare(a, b) -> dict:
  """Arrays that differ between two flat lists of arrays, and the largest
  difference."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  differ = [i for i, (x, y) in enumerate(zip(a, b)) if x.tobytes() != y.tobytes()]
  worst = max((float(np.max(np.abs(a[i].astype(np.float64) - b[i]))) for i in differ),
              default=0.0)
  return {'arrays': len(a), 'differ': len(differ), 'max_abs': worst}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--config', default='experiments/demo.py:quick')
  parser.add_argument('--seed', type=int, default=1)
  parser.add_argument('--members', type=int, default=10)
  parser.add_argument('--lanes', type=int, default=16)
  parser.add_argument('--steps', type=int, default=20)
  parser.add_argument('--tiny', action='store_true')
  parser.add_argument('--out', default='')
  args = parser.parse_args(argv)
  import seedsweep  # pylint: disable=g-import-not-at-top
  from seedsweep.run import provenance  # pylint: disable=g-import-not-at-top
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top

  def config(seeds, form):
    c = seedsweep.load_config(args.config, train__progress=False,
                              runtime__numerics='native')
    if args.tiny:
      from tests.conftest import tiny_shapes  # pylint: disable=g-import-not-at-top
      tiny_shapes(c)
    c.seeds = tuple(seeds)
    c.train.seed_parallel = form
    c.train.lanes = args.lanes
    return c

  n = args.members
  others = [s for s in range(1, 2 * max(n, args.lanes) + 2) if s != args.seed]
  among = [args.seed] + others[:n - 1]
  runs = {'alone': ([args.seed], 'lanes'), 'among': (among, 'lanes'),
          'reversed': (among[::-1], 'lanes'),
          'groups': ([args.seed] + others[:2 * args.lanes - 1], 'lanes'),
          'vmap alone': ([args.seed], 'vmap'), 'vmap among': (among, 'vmap')}
  params = {name: seed_params(config(seeds, form), args.seed, args.steps)
            for name, (seeds, form) in runs.items()}
  rows = {name: compare(params['alone'], params[name])
          for name in ('among', 'reversed', 'groups')}
  rows['vmap among (against vmap alone)'] = compare(params['vmap alone'],
                                                    params['vmap among'])
  record = {'date': datetime.date.today().isoformat(), 'config': args.config,
            'tiny': args.tiny, 'seed': args.seed, 'members': n, 'lanes': args.lanes,
            'steps': args.steps, 'numerics': runtime.numerics(),
            'cpu': ' / '.join(provenance._cpuinfo()[:2]),  # pylint: disable=protected-access
            'cores': os.cpu_count(), 'rows': rows,
            'command': 'python benchmarks/lanes_proxy.py ' + ' '.join(
                sys.argv[1:] if argv is None else argv)}
  lines = [f'Seed {args.seed} after {args.steps} steps, {args.config}'
           f'{" (tiny)" if args.tiny else ""}, XLA:CPU native numerics, lanes of '
           f'{args.lanes}, {record["cpu"]}; against the seed alone at that width:', '',
           '| run | arrays differing | largest difference |', '| --- | ---: | ---: |']
  for name, r in rows.items():
    lines.append(f'| {name} | {r["differ"]} of {r["arrays"]} | {r["max_abs"]:.3g} |')
  table = '\n'.join(lines)
  print(table)
  print(json.dumps(record))
  if args.out:
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f'lanes_proxy_{record["date"]}')
    with open(stem + '.md', 'w') as f:
      f.write(table + f'\n\nCommand: `{record["command"]}`\n')
    with open(stem + '.json', 'w') as f:
      json.dump(record, f, indent=1)
  return record


if __name__ == '__main__':
  main()

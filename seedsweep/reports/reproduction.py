"""``--mode=verify --statistical``: a run reproduced as a distribution where its bits
cannot be (a GPU against a CPU, an ARM machine, another jax, a record of native
numerics from another CPU).

The recorded seeds are trained again to the end in a folder of their own, and the
two sets of per-seed scores are compared: two one-sided Welch t-tests of equivalence
within a margin (by default the smallest one these seed counts resolve, from the
record's own spread: statistics.resolvable_margin) and Almost Stochastic Order both
ways (neither side may dominate at epsilon < 0.2, deep-significance's advice). Both
hold: "reproduced as a distribution"; else "differs", with the figures.
"""
import os
from typing import Optional, Sequence

import numpy as np

from seedsweep.config import checks as config_checks
from seedsweep.errors import UserError
from seedsweep.reports import statistics
from seedsweep.run import loop
from seedsweep.run import outputs

ALPHA = 0.05
ASO_THRESHOLD = statistics.ASO_THRESHOLD  # epsilon below it: one side dominates
POWER = 0.8          # of the default margin: equal distributions pass this often


def verdict(recorded: Sequence[float], reproduced: Sequence[float],
            margin: Optional[float] = None) -> dict:
  """Whether two sets of per-seed scores are one distribution, and the figures."""
  a = np.asarray(recorded, np.float64)
  b = np.asarray(reproduced, np.float64)
  if len(a) < 2 or len(b) < 2:
    raise UserError(f'a distribution needs two seeds a side; the record has {len(a)} '
                    f'and the reproduction {len(b)}')
  std = float(a.std(ddof=1))
  if margin is None:
    margin = statistics.resolvable_margin(std, len(a), len(b), POWER, ALPHA)
    if margin is None:  # every recorded seed scored the same
      margin = float(np.abs(b - a.mean()).max()) or 1e-9
  p = statistics.tost_p(a, b, margin)
  eps = (statistics.aso_epsilon(b, a), statistics.aso_epsilon(a, b))
  dominated = [e is not None and e < ASO_THRESHOLD for e in eps]
  equivalent = p is not None and p < ALPHA
  return {'reproduced': bool(equivalent and not any(dominated)),
          'recorded': {'mean': float(a.mean()), 'std': std, 'n': len(a)},
          'reproduced_scores': {'mean': float(b.mean()), 'std': float(b.std(ddof=1)),
                                'n': len(b)},
          'difference': float(b.mean() - a.mean()), 'margin': float(margin),
          'tost_p': p, 'aso_epsilon': {'reproduction_over_record': eps[0],
                                       'record_over_reproduction': eps[1]},
          'power': statistics.tost_power(std, len(a), len(b), margin, ALPHA)}


def describe(v: dict, metric: str) -> str:
  """The verdict in a few lines."""
  a, b = v['recorded'], v['reproduced_scores']
  eps = v['aso_epsilon']
  def shown(e):
    return 'n/a' if e is None else f'{e:.2f}'
  head = 'reproduced as a distribution' if v['reproduced'] else 'differs'
  p = 'n/a' if v['tost_p'] is None else f'{v["tost_p"]:.3g}'
  lines = [
      f'{head}: {metric} {a["mean"]:.2f} ± {a["std"]:.2f} recorded ({a["n"]} seeds), '
      f'{b["mean"]:.2f} ± {b["std"]:.2f} retrained ({b["n"]} seeds); difference '
      f'{v["difference"]:+.2f}',
      f'  equivalence within ±{v["margin"]:.2f} (two one-sided Welch t-tests): p {p} '
      f'({"<" if v["tost_p"] is not None and v["tost_p"] < ALPHA else ">="} {ALPHA})',
      f'  almost stochastic order, epsilon (under {ASO_THRESHOLD}: dominates): '
      f'retrained over recorded {shown(eps["reproduction_over_record"])}, recorded '
      f'over retrained {shown(eps["record_over_reproduction"])}']
  if v['power'] is not None:
    lines.append(f'  power: two sets of these sizes from one distribution with the '
                 f'recorded spread pass at this margin with probability '
                 f'{v["power"]:.2f}')
  return '\n'.join(lines)


def reproduce(config, workdir: str, into: str = '', margin: Optional[float] = None,
              print_fn=print) -> dict:
  """Trains ``workdir``'s experiment again in ``into`` (default ``WORKDIR.reproduction``;
  the same command resumes it) and compares the per-seed scores of the config's
  metric; returns :func:`verdict` with ``'into'``. The config may differ from the
  recorded one in ``runtime`` only (numerics, threads)."""
  results_path = os.path.join(workdir, outputs.RESULTS)
  config_path = os.path.join(workdir, outputs.CONFIG)
  if not os.path.exists(results_path) or not os.path.exists(config_path):
    raise UserError(f'{workdir} holds no finished run ({outputs.RESULTS} and '
                    f'{outputs.CONFIG}); expected the workdir of a run to reproduce')
  recorded = outputs.read_json(results_path)
  stored = outputs.read_json(config_path)
  changed = [d for d in config_checks.differences(stored, config_checks.to_dict(config))
             if not d.startswith('runtime.')]
  if changed:
    raise UserError(f'--config differs from the config {workdir} recorded in '
                    f'{"; ".join(changed)}; a reproduction may change runtime.* only')
  into = into or workdir.rstrip('/') + '.reproduction'
  metric = config.paper.metric or 'test_accuracy'
  if metric not in recorded.get('metrics', {}):
    raise UserError(f'{results_path} records no {metric!r} per seed '
                    f'(config.paper.metric); it has {sorted(recorded.get("metrics", {}))}')
  print_fn(f'{workdir}: training its {len(recorded["metrics"][metric])} members again '
           f'to the end in {into} (the same command resumes it)')
  results = loop.train(config, into, print_fn=print_fn)
  v = verdict(recorded['metrics'][metric], results['metrics'][metric], margin)
  print_fn(f'{workdir}: ' + describe(v, metric))
  records = [r.get('provenance', {}).get('determinism') or {} for r in (recorded, results)]
  print_fn('  recorded on ' + _machine(records[0]) + '; retrained on '
           + _machine(records[1]))
  return dict(v, into=into)


def _machine(record: dict) -> str:
  if not record:
    return '(no record)'
  where = record.get('device_kind') if record.get('backend') != 'cpu' else (
      f'{record.get("cpu_model")} ({record.get("cpu_arch", "?")})')
  return (f'{where}, {record.get("numerics", "native")} numerics, jax '
          f'{record.get("jax")}')

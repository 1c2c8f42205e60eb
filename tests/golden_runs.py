"""The golden runs: the demo and a quick run of every model family, whose every epoch's
parameter hashes and metrics are committed under tests/golden/ and compared to the bit
by tests/test_golden.py on whatever machine the suite runs.

Under portable numerics (the default) they hold on every x86-64 CPU with AVX2 and FMA.
A change that moves them must be deliberate: regenerate them, and say so in the
commit with what else the change regenerates (README tables, published rows)::

    python -m tests.golden_runs            # every golden run
    python -m tests.golden_runs demo       # one
"""
import datetime
import json
import os
import sys
import tempfile
from typing import Dict, List

from seedsweep import models
from seedsweep.models import registered

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'golden')
# name -> config, as each model family declares them (models/registered.py,
# PaperConfigs.golden): the demo and a quick run per family, those
# ../shared/cross-machine holds for a Zen 3.
GOLDEN = {name: config for family in models.FAMILIES
          for name, config in registered.paper_configs(family).golden.items()}
# What a golden keeps of the machine that made it (provenance.determinism_record).
RECORD = ('numerics', 'cpu_isa', 'cpu_arch', 'cpu_model', 'cpu_simd', 'jax', 'jaxlib',
          'backend', 'device_kind', 'platform_version', 'xla_flags', 'cpu_threads',
          'matmul_precision', 'program', 'unportable_ops')
# Row fields that are not numbers of the run.
NOT_COMPARED = ('wall_time',)


def path(name: str) -> str:
  return os.path.join(GOLDEN_DIR, f'{name}.json')


def train(name: str, workdir: str) -> dict:
  """Trains golden run ``name`` in ``workdir`` in this process; returns what a golden
  file holds (``config``, ``determinism``, ``test_accuracy``, ``rows``) and the
  cores it had (``usable_cores``: not compared)."""
  import seedsweep  # pylint: disable=g-import-not-at-top
  from seedsweep.run import outputs  # pylint: disable=g-import-not-at-top
  config = seedsweep.load_config(GOLDEN[name], train__progress=False)
  results = seedsweep.train(config, workdir, print_fn=lambda *_: None)
  record = results['provenance']['determinism']
  rows = [{k: v for k, v in row.items() if k not in NOT_COMPARED}
          for row in outputs.MetricsLog(workdir).rows()]
  return {'config': GOLDEN[name], 'usable_cores': record.get('usable_cores'),
          'determinism': {k: record.get(k) for k in RECORD},
          'test_accuracy': results['summary']['test_accuracy'],
          'rows': rows}


def row_differences(golden: List[dict], found: List[dict], limit: int = 5) -> List[str]:
  """``'epoch E seed S: field golden -> now'`` for the first ``limit`` differences,
  and a count of the rest."""
  def key(row):
    return (row['epoch'], row.get('fold'), row.get('seed'))
  now = {key(r): r for r in found}
  out = []
  for row in golden:
    other = now.pop(key(row), None)
    where = f'epoch {row["epoch"]} seed {row.get("seed")}' + (
        f' fold {row["fold"]}' if row.get('fold') is not None else '')
    if other is None:
      out.append(f'{where}: missing now')
      continue
    out += [f'{where}: {k} {row[k]!r} -> {other.get(k)!r}'
            for k in row if row[k] != other.get(k)]
  out += [f'epoch {k[0]} seed {k[2]}: not in the golden' for k in now]
  return out[:limit] + ([f'... and {len(out) - limit} more'] if len(out) > limit else [])


def regenerate(names) -> Dict[str, dict]:
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  import seedsweep  # pylint: disable=g-import-not-at-top
  runtime.pin_for(seedsweep.load_config(GOLDEN['demo']))
  os.makedirs(GOLDEN_DIR, exist_ok=True)
  made = {}
  for name in names:
    with tempfile.TemporaryDirectory() as tmp:
      golden = train(name, os.path.join(tmp, name))
    golden['made'] = datetime.date.today().isoformat()
    with open(path(name), 'w') as f:
      json.dump(golden, f, indent=1)
      f.write('\n')
    acc = golden['test_accuracy']
    print(f'{name}: {len(golden["rows"])} rows, test accuracy {acc["mean"]:.2f} ± '
          f'{acc["std"]:.2f} -> {path(name)}')
    made[name] = golden
  return made


if __name__ == '__main__':
  os.chdir(os.path.dirname(GOLDEN_DIR) + '/..')
  regenerate(sys.argv[1:] or list(GOLDEN))

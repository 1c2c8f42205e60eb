"""``import seedsweep`` from a user's own project: its ``data.py`` and ``models.py``
stay its own, and the demo's quick config trains through the package."""
import json
import os
import subprocess
import sys

import pytest
import textwrap

from tests.conftest import REPO
from tests.conftest import SHARED_DATA
from tests.conftest import user_environment

pytestmark = pytest.mark.slow  # end-to-end: `pytest -m "not slow"` skips it

SCRIPT = textwrap.dedent('''
    import json, sys
    import seedsweep
    from seedsweep.config import base
    from seedsweep.run import loop
    import data, models  # the project's own modules, after seedsweep's
    config = base.load_config({demo!r} + ':quick')
    config.train.progress = False
    config.seeds = (1, 2)  # tests/conftest.py's small_config: programs compiled before
    results = loop.train(config, 'run', echo=lambda *a: None)
    print(json.dumps({{
        'package': seedsweep.__file__, 'package_data': seedsweep.data.__file__,
        'user_data': data.__file__, 'user_models': models.__file__,
        'where': data.WHERE + models.WHERE, 'seeds': results['seeds'],
        'test_accuracy': results['metrics']['test_accuracy'],
        'modules': sorted(m for m in sys.modules if m.split('.')[0] in (
            'training', 'experiments', 'sweeps'))}}))
''')


def test_the_demo_trains_through_import_seedsweep_beside_a_users_data_and_models(
    tmp_path):
  (tmp_path / 'data.py').write_text("WHERE = 'user data, '\n")
  (tmp_path / 'models.py').write_text("WHERE = 'user models'\n")
  script = SCRIPT.format(demo=os.path.join(REPO, 'experiments', 'demo.py'))
  env = dict(user_environment(), SEEDSWEEP_DATA=SHARED_DATA,
             SEEDSWEEP_TFDS_DIR=str(tmp_path / 'tfds'))
  env.pop('PYTHONPATH', None)  # only what the install puts on the path
  proc = subprocess.run([sys.executable, '-c', script], cwd=tmp_path, env=env,
                        capture_output=True, text=True, timeout=600, check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  out = json.loads(proc.stdout.strip().splitlines()[-1])
  assert out['package'] == os.path.join(REPO, 'seedsweep', '__init__.py')
  assert out['package_data'] == os.path.join(REPO, 'data', '__init__.py')
  assert out['user_data'] == str(tmp_path / 'data.py')
  assert out['user_models'] == str(tmp_path / 'models.py')
  assert out['where'] == 'user data, user models'
  assert out['modules'] == []
  assert out['seeds'] == [1, 2]
  assert len(out['test_accuracy']) == 2 and all(0 <= a <= 100
                                                 for a in out['test_accuracy'])
  assert os.path.exists(tmp_path / 'run' / 'results.json')

"""The package as a user installs it: the jax pins of setup.cfg, constraints.txt and
the golden runs agree, every accelerator extra takes the same jax; and ``import
seedsweep`` from a user's own project, whose ``data.py`` and ``models.py`` stay its
own, trains, predicts, re-evaluates and reports the demo's quick config through the
Python API (seedsweep/api.py) and the installed command."""
import configparser
import glob
import json
import os
import re
import subprocess
import sys

from packaging.requirements import Requirement
import pytest
import textwrap

from tests.conftest import REPO
from tests.conftest import SHARED_DATA
from tests.conftest import user_environment

PINNED = ('jax', 'jaxlib')  # exactly: the golden runs hold their bits
ACCELERATORS = ('cuda12', 'cuda13', 'tpu')  # jax's own extras of the same name


def _setup_cfg():
  parser = configparser.ConfigParser()
  parser.read(os.path.join(REPO, 'setup.cfg'))
  return parser


def _requirements(text):
  return [Requirement(line) for line in text.splitlines()
          if line.strip() and not line.strip().startswith('#')]


def _pin(requirement):
  """'0.10.2' of ``name==0.10.2``; fails on any other specifier."""
  (spec,) = requirement.specifier
  assert spec.operator == '==', f'{requirement}: expected an exact pin (==)'
  return spec.version


def _release(version):
  """The version without a suffix such as a git hash ('0.10.2+g1a2b3c' -> '0.10.2')."""
  return re.match(r'[0-9][0-9A-Za-z.]*', version).group(0)


def _install_pins():
  install = _requirements(_setup_cfg()['options']['install_requires'])
  return {r.name: _pin(r) for r in install if r.name in PINNED}


def _constraints():
  with open(os.path.join(REPO, 'constraints.txt')) as f:
    lines = [line.split('#')[0].strip() for line in f]
  return dict(line.split('==') for line in lines if line)


def test_setup_cfg_constraints_and_every_golden_agree_on_jax_and_jaxlib():
  """One jax: the one setup.cfg installs, constraints.txt locks, and every golden run
  (tests/golden/*.json) was made with; constraints.txt's header says how to move all
  of them together."""
  pins = _install_pins()
  assert set(pins) == set(PINNED), f'setup.cfg install_requires pins only {pins}'
  locked = _constraints()
  lock = {name: locked.get(name) for name in PINNED}
  assert lock == pins, f'constraints.txt locks {lock}, setup.cfg pins {pins}'
  goldens = sorted(glob.glob(os.path.join(REPO, 'tests', 'golden', '*.json')))
  assert goldens
  for path in goldens:
    with open(path) as f:
      record = json.load(f)['determinism']
    made = {name: _release(record[name]) for name in PINNED}
    assert made == pins, (f'{os.path.relpath(path, REPO)} was made with {made}, '
                          f'setup.cfg pins {pins}')


def test_every_extra_that_names_jax_pins_the_installed_jax():
  """An accelerator extra (jax[cuda12]==V, ...) takes the jax install_requires pins,
  so that `pip install -e ".[cuda12]" -c constraints.txt` adds a plugin and no
  other jax."""
  extras = _setup_cfg()['options.extras_require']
  assert set(ACCELERATORS) <= set(extras)
  pin = _install_pins()['jax']
  for extra in extras:
    for requirement in _requirements(extras[extra]):
      if requirement.name == 'jax':
        assert _pin(requirement) == pin, f'extra {extra!r}: {requirement}'
        if extra in ACCELERATORS:
          assert requirement.extras == {extra}, f'extra {extra!r}: {requirement}'
  for extra in ACCELERATORS:
    assert any(r.name == 'jax' for r in _requirements(extras[extra])), extra


SCRIPT = textwrap.dedent('''
    import json, sys
    import seedsweep
    import data, models  # the project's own modules, after seedsweep's
    # tests/conftest.py's small_config: programs compiled before
    config = seedsweep.load_config('experiments/demo.py:quick', seeds=(1, 2),
                                   train__progress=False)
    results = seedsweep.train(config, 'runs/demo', print_fn=lambda *a: None)
    texts, labels = seedsweep.read_split(config, 'test')
    answers = seedsweep.predict('runs/demo', texts, print_fn=lambda *a: None)
    with open('texts.jsonl', 'w') as f:
      f.writelines(json.dumps({'text': t}) + '\\n' for t in texts[:20])
    evaluated = seedsweep.evaluate('runs/demo', print_fn=lambda *a: None)
    report = seedsweep.report('runs', plots=False, print_fn=lambda *a: None)
    print(json.dumps({
        'package': seedsweep.__file__, 'package_data': seedsweep.data.__file__,
        'user_data': data.__file__, 'user_models': models.__file__,
        'where': data.WHERE + models.WHERE, 'seeds': results['seeds'],
        'test_accuracy': results['metrics']['test_accuracy'],
        'evaluated': evaluated['metrics']['test_accuracy'],
        'report': [os.path.basename(f) for f in report['files']],
        'labels': labels, 'answers': answers,
        'modules': sorted(m for m in sys.modules if m.split('.')[0] in (
            'training', 'experiments', 'sweeps'))}))
''').replace('import json, sys', 'import json, os, sys')


def accuracy(predicted, labels):
  return 100 * sum(p == y for p, y in zip(predicted, labels)) / len(labels)


@pytest.mark.slow  # end-to-end: `pytest -m "not slow"` skips it
def test_the_demo_trains_predicts_and_reports_through_the_python_api_and_the_command(
    tmp_path):
  """A user's folder with its own ``data.py`` and ``models.py``: the API trains the
  demo's quick config, predicts its test split (each seed's labels give the test
  accuracy training reported), re-evaluates and reports; the installed ``seedsweep``
  command predicts the same labels from a JSONL file, and ``python -m seedsweep``
  runs."""
  (tmp_path / 'data.py').write_text("WHERE = 'user data, '\n")
  (tmp_path / 'models.py').write_text("WHERE = 'user models'\n")
  env = dict(user_environment(), SEEDSWEEP_DATA=SHARED_DATA,
             SEEDSWEEP_TFDS_DIR=str(tmp_path / 'tfds'))
  env.pop('PYTHONPATH', None)  # only what the install puts on the path
  proc = subprocess.run([sys.executable, '-c', SCRIPT], cwd=tmp_path, env=env,
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
  assert os.path.exists(tmp_path / 'runs' / 'demo' / 'results.json')
  answers, labels = out['answers'], out['labels']
  assert answers['members'] == ['seed_1', 'seed_2']
  assert answers['classes'] == ['negative', 'positive']
  assert len(answers['labels']) == len(labels) == 1000
  assert [accuracy(p, labels) for p in answers['per_seed']] == pytest.approx(
      out['test_accuracy'], abs=1e-9)
  assert out['evaluated'] == out['test_accuracy']
  for probabilities, label in zip(answers['probabilities'], answers['labels']):
    assert sum(probabilities) == pytest.approx(1, abs=1e-5)
    assert answers['classes'][probabilities.index(max(probabilities))] == label
  assert 'report.md' in out['report']

  command = os.path.join(os.path.dirname(sys.executable), 'seedsweep')
  proc = subprocess.run([command, '--mode=predict', '--workdir=runs/demo',
                         '--input=texts.jsonl', '--output=answers.jsonl'],
                        cwd=tmp_path, env=env, capture_output=True, text=True,
                        timeout=300, check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  records = [json.loads(line) for line in
             (tmp_path / 'answers.jsonl').read_text().splitlines()]
  assert [r['label'] for r in records] == answers['labels'][:20]
  assert [r['per_seed']['seed_2'] for r in records] == answers['per_seed'][1][:20]

  fresh = {k: v for k, v in env.items() if k != 'GLIBC_TUNABLES'}  # it re-executes
  proc = subprocess.run([sys.executable, '-m', 'seedsweep', '--helpshort'], cwd=tmp_path,
                        env=fresh, capture_output=True, text=True, timeout=300,
                        check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]  # asked for: no failure
  assert '--mode: <train|eval|' in proc.stdout, proc.stderr[-3000:]

"""launch.py end to end, as a user runs it (subprocesses on the real demo data)."""
import json
import os
import struct

import numpy as np
import pytest

from tests.conftest import run_launch

SMALL = ['--config=experiments/demo.py:quick', "--config.seeds=(1,2)",
         '--config.train.progress=False', '--config.data.num_buckets=2']


def _snapshot(workdir):
  """{relative path: bytes} of every file in a workdir."""
  out = {}
  for root, _, files in os.walk(workdir):
    for f in files:
      p = os.path.join(root, f)
      with open(p, 'rb') as fh:
        out[os.path.relpath(p, workdir)] = (fh.read(), os.stat(p).st_mtime_ns)
  return out


def _results(workdir):
  with open(os.path.join(workdir, 'results.json')) as f:
    return json.load(f)


def test_describe_json_counts_parameters(tmp_path):
  # A fresh TFDS dir: building the dataset must not print on stdout.
  proc = run_launch('--config=experiments/demo.py', '--mode=describe', '--json',
                    env={'SEEDSWEEP_TFDS_DIR': str(tmp_path)})
  assert proc.returncode == 0, proc.stderr[-3000:]
  info = json.loads(proc.stdout)
  assert info['params_total'] == sum(m['params'] for m in info['modules'])
  emb = info['vocab_size'] * info['config']['model']['embed_dim']
  assert info['params_without_embeddings'] == info['params_total'] - emb
  # Bi-LSTM, hidden h, input e, 2 classes: 2 * 4h(e + h + 1) + (2h * 2 + 2).
  h, e = info['config']['model']['hidden'], info['config']['model']['embed_dim']
  assert info['params_without_embeddings'] == 2 * 4 * h * (e + h + 1) + 2 * h * 2 + 2


def test_config_overrides_reach_the_model_and_the_seeds():
  proc = run_launch('--config=experiments/demo.py:lstm', '--mode=describe', '--json',
                    '--config.model.hidden=7', "--config.seeds=(4,2)",
                    '--config.optimizer.learning_rate=0.5')
  assert proc.returncode == 0, proc.stderr[-3000:]
  info = json.loads(proc.stdout)
  assert info['config']['seeds'] == [4, 2]
  assert info['config']['optimizer']['learning_rate'] == 0.5
  shapes = {m['module']: m['shapes'] for m in info['modules']}
  assert shapes['encoder/forward']['recurrent'] == [7, 28]


def test_describe_prints_a_table():
  proc = run_launch('--config=experiments/demo.py:lstm', '--mode=describe')
  assert proc.returncode == 0, proc.stderr[-3000:]
  assert 'without embeddings' in proc.stdout and 'encoder/forward' in proc.stdout


@pytest.mark.parametrize('args,expected', [
    (['--config=experiments/demo.py', '--config.train.nonexistent=3'],
     "config.train has no field 'nonexistent'"),
    (['--config=experiments/demo.py', '--config.trian.num_epochs=3'],
     "config has no field 'trian' (did you mean 'train'?)"),
    (['--config=experiments/nope.py'], 'experiments/nope.py'),
    (['--config=experiments/demo.py:quack'], "unknown argument(s) ['quack']"),
    (['--config=experiments/demo.py', '--config.optimizer.name=lamb'],
     "config.optimizer.name='lamb'"),
    (['--config=experiments/demo.py', "--config.seeds=(1,1)"], 'repeats a seed'),
    (['--config=experiments/demo.py', '--config.model.name=gru'],
     "config.model.name='gru'"),
    (['--config=experiments/demo.py', '--config.model.pooling=median'],
     "config.model.pooling='median'"),
    (['--config=experiments/demo.py', '--config.train.selection=best'],
     "config.train.selection='best' (did you mean 'best_dev'?)"),
    (['--config=experiments/demo.py', '--config.model.hidden=-3'],
     'config.model.hidden=-3; expected an int >= 1'),
    (['--config={tmp}/syntax.py'], '{tmp}/syntax.py, line 2: SyntaxError: '),
    (['--config={tmp}/raises.py:x'], "{tmp}/raises.py, line 3: get_config('x') raised "
     'KeyError: '),
    (['--config=experiments/demo.py', '--config.train.patience=3',
      '--config.train.selection=last'], "config.train.patience=3 needs"),
])
def test_bad_config_is_a_clear_error(tmp_path, args, expected):
  (tmp_path / 'syntax.py').write_text('def get_config(arg=None):\n  return {\n')
  (tmp_path / 'raises.py').write_text('def get_config(arg=None):\n  options = {}\n'
                                      '  return options[arg]\n')
  args = [a.format(tmp=tmp_path) for a in args]
  proc = run_launch(*args, f'--workdir={tmp_path / "w"}')
  assert proc.returncode == 1
  lines = proc.stderr.strip().splitlines()
  assert lines[-1].startswith('error: ') and expected.format(tmp=tmp_path) in lines[-1], (
      proc.stderr[-3000:])
  assert 'Traceback' not in proc.stderr, proc.stderr[-3000:]


def _scalars(folder):
  """``{tag: {step: value}}`` of the TensorBoard event files in ``folder`` (records:
  8-byte length, 4-byte CRC, an Event proto, 4-byte CRC)."""
  from tensorboardX.proto import event_pb2  # pylint: disable=g-import-not-at-top
  out = {}
  for name in os.listdir(folder):
    data = open(os.path.join(folder, name), 'rb').read()
    i = 0
    while i < len(data):
      n = struct.unpack('<Q', data[i:i + 8])[0]
      event = event_pb2.Event.FromString(data[i + 12:i + 12 + n])
      i += 12 + n + 4
      for v in event.summary.value:
        out.setdefault(v.tag, {})[event.step] = v.simple_value
  return out


@pytest.mark.slow
def test_finished_run_is_left_alone_and_other_configs_are_refused(tmp_path):
  workdir = str(tmp_path / 'run')
  proc = run_launch(*SMALL, f'--workdir={workdir}')
  assert proc.returncode == 0, proc.stderr[-3000:]
  results = _results(workdir)
  assert results['seeds'] == [1, 2]
  assert set(results['metrics']) >= {'test_accuracy', 'dev_accuracy', 'best_epoch'}
  assert len(results['metrics']['test_accuracy']) == 2
  assert set(results['summary']['test_accuracy']) == {'mean', 'std', 'min', 'max'}
  prov = results['provenance']
  assert prov['versions']['jax'] and prov['data']['checksums']['train']
  timing = results['timing']  # what the run cost, by phase (seconds, MiB)
  assert timing['train'] > 0 and timing['eval'] > 0 and timing['build'] > 0
  assert 0 <= timing['compile'] < results['wall_time'] and timing['peak_rss_mib'] > 100
  assert sorted(os.listdir(os.path.join(workdir, 'tensorboard'))) == [
      'aggregate', 'seed_1', 'seed_2']
  rows = [json.loads(line) for line in open(os.path.join(workdir, 'metrics.jsonl'))]
  means = _scalars(os.path.join(workdir, 'tensorboard', 'aggregate'))
  for epoch in (1, 2):
    dev = [r['dev_accuracy'] for r in rows if r['epoch'] == epoch]
    assert means['dev_accuracy/mean'][epoch] == pytest.approx(np.mean(dev), rel=1e-6)
    assert means['dev_accuracy/std'][epoch] == pytest.approx(np.std(dev, ddof=1),
                                                             rel=1e-5, abs=1e-6)
  before = _snapshot(workdir)

  again = run_launch(*SMALL, f'--workdir={workdir}')
  assert again.returncode == 0, again.stderr[-3000:]
  assert 'nothing to do' in again.stdout
  assert _snapshot(workdir) == before

  other = run_launch(*SMALL[:1], "--config.seeds=(3,)", *SMALL[2:],
                     f'--workdir={workdir}')
  assert other.returncode != 0
  assert 'holds a run of another config' in other.stderr
  assert 'seeds: [1, 2] != [3]' in other.stderr
  assert _snapshot(workdir) == before

  evaluated = run_launch(*SMALL, '--mode=eval', f'--workdir={workdir}')
  assert evaluated.returncode == 0, evaluated.stderr[-3000:]
  assert _results(workdir)['metrics'] == results['metrics']

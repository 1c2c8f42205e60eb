"""launch.py end to end, as a user runs it (subprocesses on the real demo data)."""
import json
import re

import pytest

from tests.conftest import in_tier
from tests.conftest import run_launch


@pytest.mark.slow
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


@pytest.mark.slow
def test_config_overrides_reach_the_model_and_the_seeds():
  # A field given twice takes its last value, a tuple's too (absl would merge it).
  proc = run_launch('--config=experiments/demo.py:lstm', '--mode=describe', '--json',
                    '--config.model.hidden=5', "--config.seeds=(1,3)",
                    '--config.model.hidden=7', "--config.seeds=(4,2)",
                    '--config.optimizer.learning_rate=0.5')
  assert proc.returncode == 0, proc.stderr[-3000:]
  info = json.loads(proc.stdout)
  assert info['config']['seeds'] == [4, 2]
  assert info['config']['optimizer']['learning_rate'] == 0.5
  shapes = {m['module']: m['shapes'] for m in info['modules']}
  assert shapes['encoder/forward']['recurrent'] == [7, 28]


@pytest.mark.slow
@pytest.mark.full  # describe's JSON: the tests above
def test_describe_prints_a_table():
  proc = run_launch('--config=experiments/demo.py:lstm', '--mode=describe')
  assert proc.returncode == 0, proc.stderr[-3000:]
  assert 'without embeddings' in proc.stdout and 'encoder/forward' in proc.stdout


BAD = [
    (['--config=experiments/demo.py', '--config.train.nonexistent=3'],
     "config.train has no field 'nonexistent'"),
    (['--config=experiments/demo.py', '--config.trian.num_epochs=3'],
     "config has no field 'trian' (did you mean 'train'?)"),
    (['--config=experiments/nope.py'], 'experiments/nope.py'),
    (['--config=dmo:quick'], "no packaged experiment 'dmo'; closest packaged: demo ("),
    (['--config=demo', '--sweep=demo_lrr'],
     "no packaged sweep 'demo_lrr'; closest packaged: demo_lr, "),
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
    (['--config=experiments/demo.py', '--config.seeds=3'],
     "--config.seeds=3 is one number; expected a tuple of seeds: --config.seeds='(3,)' "
     "for seed 3 alone, or --config.seeds='(1, 2, 3)' for 3 seeds"),
    (['--config=experiments/demo.py', '--config.model.hidden=-3'],
     'config.model.hidden=-3; expected an int >= 1'),
    (['--config={tmp}/syntax.py'], '{tmp}/syntax.py, line 2: SyntaxError: '),
    (['--config={tmp}/raises.py:x'], "{tmp}/raises.py, line 3: get_config('x') raised "
     'KeyError: '),
    (['--config=experiments/demo.py', '--config.train.patience=3',
      '--config.train.selection=last'], "config.train.patience=3 needs"),
    (['--config=experiments/demo.py', '--launcher=local'],
     '--launcher=local submits the shards of a sweep or the workers of a search; add --sweep='),
    (['--config=experiments/demo.py', '--mode=predict'], '--mode=predict needs --input'),
    (['--config.train.num_epochs=3'], '--config.train.num_epochs=3 without --config: '
     '--mode=train needs --config=FILE for it to override'),
]


# Each case a process of its own (the line the command prints, its exit status); the
# README tier runs a misspelt field, a broken config file and a missing flag.
@pytest.mark.slow
@pytest.mark.parametrize('args,expected', in_tier(BAD, BAD[1], BAD[11], BAD[15]))
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




def test_list_names_what_the_package_installs_and_help_points_to_it():
  proc = run_launch('--mode=list')
  assert proc.returncode == 0, proc.stderr[-3000:]
  lines = proc.stdout.splitlines()
  headings = [line.split()[0] for line in lines if line and not line[0].isspace()]
  assert headings[:5] == ['experiments', 'sweeps', 'searches', 'models', 'datasets']
  assert any(line.split()[:2] == ['demo_models', 'Two'] for line in lines)
  assert any(line.split()[:1] == ['sst/binary'] for line in lines)
  helped = run_launch('--help')
  assert helped.returncode == 0, helped.stderr[-3000:]  # absl's own help exits 1
  assert '--mode=list' in helped.stdout and 'list' in helped.stdout.split(
      '--mode:')[1].split('\n')[0]


@pytest.mark.slow
def test_describe_prints_each_fields_meaning_beside_its_value():
  proc = run_launch('--config=demo:quick', '--mode=describe')
  assert proc.returncode == 0, proc.stderr[-3000:]
  lines = proc.stdout.splitlines()
  assert any(re.fullmatch(r"train\.patience = 0 +# epochs without a better dev score "
                          r"before a seed stops \(0 = off\)", l) for l in lines)
  assert any(re.fullmatch(r'model\.hidden = 32 +# LSTM units \(per direction\) '
                          r'\(RecurrentClassifier\)', l) for l in lines)
  # A field of the class the config does not set: described, with its default.
  assert any(re.fullmatch(r'model\.unroll = 1 +# .*\(RecurrentClassifier\); its '
                          r'default, not in the config', l) for l in lines)
  assert all('# ' in l for l in lines if re.match(r'[a-z_.]+ = ', l))

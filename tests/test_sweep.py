"""The sweep runner: point folders, overrides, shards, command lines, and a sweep that
is interrupted and resumes without recomputing its finished points."""
import json
import os

import pytest

from seedsweep.errors import UserError
import seedsweep
from seedsweep import reports
from seedsweep.config import base as base_config
from seedsweep.config import keys
from seedsweep.run import checkpoints
from seedsweep.sweep import runner as sweep
from tests.conftest import REPO
from tests.conftest import run_launch
from tests.conftest import small_config


def test_point_names_are_readable_stable_and_distinct():
  point = {'model.dl': 5, 'model.dh': 40, 'paper.value': 88.4}
  assert sweep.point_name(point) == 'dl=5,dh=40'
  assert sweep.point_name({'model.dropout': 0.5, 'data.dropout': 1e-05}) == (
      'model.dropout=0.5,data.dropout=1e-05')
  assert sweep.point_name({'model.widths': (3, 5), 'data.name': 'sst/fine'}) == (
      'widths=3-5,name=sst_fine')
  assert sweep.point_names([{'paper.value': 1.0}], 's.py') == ['point_0']
  with pytest.raises(UserError, match='points 0 and 1 give the same'):
    sweep.point_names([{'a.b': 1}, {'a.b': 1}], 's.py')


def test_no_value_of_a_point_makes_a_run_write_outside_the_sweep_root(tmp_path):
  """Values become folder names made safe and short; keys naming where runs write
  (the dataset cache, MLflow's store) are refused in a point."""
  long = sweep.point_name({'data.name': '../../' + 'x' * 300, 'model.hidden': 8})
  assert '/' not in long and len(long) <= sweep.NAME_LIMIT
  assert long != sweep.point_name({'data.name': '../../' + 'x' * 299, 'model.hidden': 8})
  escape = tmp_path / 'escape.py'
  escape.write_text('def sweep(arg):\n  return [{"model.hidden": 8},\n'
                    '          {"data.tfds_dir": "/tmp/elsewhere"}]\n')
  with pytest.raises(UserError, match=r'point 1 sets data.tfds_dir, a path runs write '
                                      r'to; a sweep writes under its --workdir only'):
    sweep.load_points(str(escape))


def test_a_bad_point_names_its_field_before_any_point_trains(tmp_path):
  typo = tmp_path / 'typo.py'
  typo.write_text('def sweep(arg):\n  return [{"model.hidden": 8}, {"model.hiden": 8}]\n')
  root = tmp_path / 'root'
  with pytest.raises(UserError, match=r"point 1 \(hiden=8\) sets model.hiden=8: model "
                                      r"'bilstm' \(RecurrentClassifier\) has no field "
                                      r"'hiden'; the closest it has is 'hidden'; its "
                                      r"fields are \["):
    sweep.run(small_config(), str(typo), str(root), print_fn=lambda *a: None)
  assert not root.exists()


def test_bad_sweep_files_and_shards_are_named(tmp_path):
  bad = tmp_path / 'bad.py'
  bad.write_text('def sweep(arg):\n  return [{"seeds": (1, 2)}]\n')
  with pytest.raises(UserError, match='never a sweep axis'):
    sweep.load_points(str(bad))
  with pytest.raises(UserError, match='no file'):
    sweep.load_points(str(tmp_path / 'missing.py'))
  with pytest.raises(UserError, match='expected none or hidden'):
    sweep.load_points('sweeps/demo.py:depth')
  for text in ('2/2', '1', 'a/b'):
    with pytest.raises(UserError, match='--sweep_shard'):
      sweep.parse_shard(text)
  assert sweep.parse_shard('1/3') == (1, 3)


def test_commands_print_one_line_per_program_and_keep_the_overrides():
  # sweeps/demo.py crosses hidden (a shape) with dropout (stacked): two programs.
  argv = ['launch.py', '--config=experiments/demo.py', '--sweep=sweeps/demo.py',
          '--mode=commands', '--config.seeds=(1,2)']
  lines = sweep.commands(base_config.load_config('experiments/demo.py'),
                         'sweeps/demo.py', '/runs/d', argv)
  assert len(lines) == 2
  assert lines[1] == ("seedsweep --config=experiments/demo.py "
                      "--sweep=sweeps/demo.py '--config.seeds=(1,2)' --workdir=/runs/d "
                      '--sweep_shard=1/2')


def test_points_that_change_no_shape_share_one_program(tmp_path):
  spec = tmp_path / 'mixed.py'
  spec.write_text('def sweep(arg):\n'
                  '  return [{"model.hidden": h, "optimizer.learning_rate": lr}\n'
                  '          for h in (16, 32) for lr in (1e-3, 2e-3)] + [\n'
                  '         {"model.hidden": 8}]\n')
  points, runs = sweep.plan_runs(small_config(), str(spec))
  assert [r.name for r in runs] == ['hidden=16,learning_rate=0.001+0.002',
                                    'hidden=32,learning_rate=0.001+0.002', 'hidden=8']
  assert [r.indices for r in runs] == [(0, 1), (2, 3), (4,)]
  assert runs[1].config.model.hidden == 32
  assert tuple(runs[1].config.stack.fields) == ('optimizer.learning_rate',)
  assert tuple(runs[1].config.stack.points) == ((1e-3,), (2e-3,))
  assert not runs[2].stacked and tuple(runs[2].config.stack.fields) == ()
  assert len(points) == 5


def test_a_point_without_a_stacked_value_takes_the_configs_own(tmp_path):
  spec = tmp_path / 'partial.py'
  spec.write_text('def sweep(arg):\n'
                  '  return [{"l2.coef": 1e-4}, {"optimizer.learning_rate": 0.02}]\n')
  config = small_config()
  _, runs = sweep.plan_runs(config, str(spec))
  assert len(runs) == 1
  assert tuple(runs[0].config.stack.fields) == ('l2.coef', 'optimizer.learning_rate')
  assert tuple(runs[0].config.stack.points) == (
      (1e-4, config.optimizer.learning_rate), (0.0, 0.02))


def test_a_point_naming_an_own_model_file_takes_that_class_s_fields(tmp_path):
  """As a single run's --config.model.name: the class's own fields and defaults, the
  packaged fields it lacks left out (also in a stacked run), one it lacks set by the
  point refused in one line; a packaged name keeps the config's fields."""
  cnn = os.path.join(REPO, 'examples', 'linen_cnn.py') + ':CNNClassifier'
  spec = tmp_path / 'own.py'
  spec.write_text(f'def sweep(arg):\n  return [{{"model.name": "bilstm"}},\n'
                  f'    {{"model.name": {cnn!r}, "model.filters": 4}},\n'
                  f'    {{"model.name": {cnn!r}, "optimizer.learning_rate": 0.01}},\n'
                  f'    {{"model.name": {cnn!r}, "optimizer.learning_rate": 0.02}}]\n')
  config = small_config()
  _, runs = sweep.plan_runs(config, str(spec))
  assert dict(runs[0].config.model) == dict(config.model)
  assert dict(runs[1].config.model) == {'name': cnn, 'embed_dim': 32, 'dropout': 0.2,
                                        'filters': 4, 'widths': (3, 4, 5)}
  assert runs[2].stacked and dict(runs[2].config.model) == {**runs[1].config.model,
                                                            'filters': 16}
  spec.write_text(f'def sweep(arg):\n  return [{{"model.name": {cnn!r}, '
                  '"model.hidden": 8}]\n')
  with pytest.raises(UserError, match=r"^--sweep=.*own.py point 0 \(name=.*,hidden=8\) "
                     r"sets model.hidden=8: model .* \(CNNClassifier\) has no field "
                     r"'hidden'; the closest it has is '\w+'; its fields are "
                     r"\['embed_dim', 'filters', 'widths', 'dropout'\]$"):
    sweep.plan_runs(config, str(spec))


def test_a_point_naming_a_packaged_model_that_lacks_the_configs_fields_takes_its_own(
    tmp_path):
  """A sweep over the Bi-LSTM and the C-LSTM: the C-LSTM has no pooling field, so its
  point takes its own fields as ``--config.model.name=clstm`` does (it was refused
  when training); the Bi-LSTM's, whose fields fit, keeps the config's."""
  import seedsweep  # pylint: disable=g-import-not-at-top
  spec = tmp_path / 'two.py'
  spec.write_text('def sweep(arg):\n  return [{"model.name": "bilstm"}, '
                  '{"model.name": "clstm", "model.filters": 8}]\n')
  config = small_config()
  _, runs = sweep.plan_runs(config, str(spec))
  assert dict(runs[0].config.model) == dict(config.model)
  alone = seedsweep.load_config('experiments/demo.py:quick', model__name='clstm',
                                model__filters=8)
  assert dict(runs[1].config.model) == dict(alone.model)
  assert 'pooling' not in runs[1].config.model


# An own model whose dropout takes a traced rate (the package's Dropout), beside
# examples/linen_cnn.py, whose flax nn.Dropout tests its rate in Python.
TRACED_DROPOUT = '''
import flax.linen as nn
from seedsweep.models import baselines, pooling
from seedsweep.models.dropout import Dropout


class Mean(nn.Module):
  vocab_size: int
  num_classes: int
  embed_dim: int = 8
  dropout: float = 0.0

  @nn.compact
  def __call__(self, batch, *, train: bool):
    x, mask = baselines.embed_batch(batch, self.vocab_size, self.embed_dim)
    x = Dropout(self.dropout, deterministic=not train)(pooling.masked_mean(x, mask))
    return nn.Dense(self.num_classes)(x)
'''


def _dropout_sweep(tmp_path, model):
  spec = tmp_path / 'rates.py'
  spec.write_text(f'def sweep(arg):\n  return [{{"model.name": {model!r}, '
                  '"model.dropout": d, "optimizer.learning_rate": lr}\n'
                  '          for d in (0.1, 0.3) for lr in (1e-3, 2e-3)]\n')
  return str(spec)


@pytest.mark.slow
def test_a_rate_an_own_model_tests_in_python_gets_a_program_per_value(tmp_path):
  """flax's nn.Dropout tests its rate in Python: a sweep over it runs each rate as
  a program of its own (stacking the rest), as the model contract finds it; a model
  whose dropout takes a traced rate stacks every point in one program."""
  cnn = os.path.join(REPO, 'examples', 'linen_cnn.py') + ':CNNClassifier'
  _, runs = sweep.plan_runs(small_config(), _dropout_sweep(tmp_path, cnn))
  assert [r.indices for r in runs] == [(0, 1), (2, 3)]
  assert [r.config.model.dropout for r in runs] == [0.1, 0.3]
  assert all(tuple(r.config.stack.fields) == ('optimizer.learning_rate',) for r in runs)
  assert [r.name.rsplit(',', 2)[1:] for r in runs] == [
      ['dropout=0.1', 'learning_rate=0.001+0.002'],
      ['dropout=0.3', 'learning_rate=0.001+0.002']]
  own = tmp_path / 'traced.py'
  own.write_text(TRACED_DROPOUT)
  (run,) = sweep.plan_runs(small_config(), _dropout_sweep(tmp_path, f'{own}:Mean'))[1]
  assert tuple(run.config.stack.fields) == ('model.dropout', 'optimizer.learning_rate')
  assert len(run.config.stack.points) == 4


@pytest.mark.slow
@pytest.mark.full  # what it plans: the test above; programs of one point: any sweep's
def test_a_sweep_over_a_flax_dropout_rate_trains_each_rate_apart(tmp_path):
  cnn = os.path.join(REPO, 'examples', 'linen_cnn.py') + ':CNNClassifier'
  config = small_config(seeds=(1,), epochs=1)
  config.data.num_buckets = 1
  config.model.embed_dim = 8
  spec = _dropout_sweep(tmp_path, cnn)
  results = sweep.run(config, spec, str(tmp_path / 'root'), print_fn=lambda *a: None)
  assert len(results) == 2
  by_point = [p for r in results.values() for p in r['by_point']]
  assert len(by_point) == 4 and all(
      len(p['metrics']['test_accuracy']) == 1 for p in by_point)
  rows = reports.write_report(str(tmp_path / 'root'), plots=False,
                              print_fn=lambda *a: None)['rows']
  assert [r['overrides'] for r in rows] == sweep.load_points(spec)


@pytest.mark.slow
@pytest.mark.full  # points in one program: test_points_that_change_no_shape_share...
def test_stacked_points_give_the_numbers_of_their_runs_alone(tmp_path):
  """Three points differing in every kind of stacked value, in one program. Where
  a point's run alone has the same terms (dropout, L2, clipping all on), each
  member's parameters after every epoch are bitwise those of the run alone; a point
  with them off (0) among points with them on computes them with a neutral value,
  equal to leaving them out up to float rounding."""
  spec = tmp_path / 'stacked.py'
  spec.write_text(
      'def sweep(arg):\n'
      '  return [{"optimizer.learning_rate": lr, "model.dropout": d, "l2.coef": c,\n'
      '           "optimizer.clip_global_norm": g}\n'
      '          for lr, d, c, g in ((2e-3, 0.1, 1e-4, 0.5), (1e-2, 0.3, 1e-3, 1.0),\n'
      '                              (5e-3, 0.0, 0.0, 0.0))]\n')
  config = small_config(seeds=(1, 2), epochs=2)
  config.data.num_buckets = 1
  config.model.embed_dim = config.model.hidden = 16  # compute is not what is tested
  root = tmp_path / 'sweep'
  results = sweep.run(config, str(spec), str(root), print_fn=lambda *a: None)
  (name,) = results
  stacked = _rows(root / name / 'metrics.jsonl')
  points, runs = sweep.plan_runs(config, str(spec))
  assert runs[0].stacked and len(runs) == 1
  for i, point in enumerate(points):
    alone = seedsweep.train(
        keys.with_values(config, point, 'test'), str(tmp_path / f'alone{i}'),
        print_fn=lambda *a: None)
    own = results[name]['by_point'][i]
    mine = [r for r in stacked if r['point'] == own['label']]
    alone_rows = _rows(tmp_path / f'alone{i}' / 'metrics.jsonl')
    assert [(r['epoch'], r['seed']) for r in mine] == [
        (r['epoch'], r['seed']) for r in alone_rows]
    if i < 2:
      assert ([r['params_sha256'] for r in mine]
              == [r['params_sha256'] for r in alone_rows])
      assert own['metrics'] == alone['metrics']
    else:
      for r, q in zip(mine, alone_rows):
        assert r['train_loss'] == pytest.approx(q['train_loss'], abs=1e-5)
        assert r['dev_loss'] == pytest.approx(q['dev_loss'], abs=1e-5)
  rows = reports.write_report(str(root), plots=False, print_fn=lambda *a: None)['rows']
  assert [r['overrides'] for r in rows] == points
  assert [r['metrics']['test_accuracy']['values'] for r in rows] == [
      p['metrics']['test_accuracy'] for p in results[name]['by_point']]


def _rows(path):
  with open(path) as f:
    return [json.loads(line) for line in f]


@pytest.mark.slow
def test_interrupted_sweep_resumes_without_recomputing_finished_points(
    tmp_path, monkeypatch):
  """3 points of one seed: point 0 finishes, point 1 dies after its first epoch's
  checkpoint; the second invocation skips 0, resumes 1 after epoch 1, trains 2. The
  points differ in patience, which leaves the train and eval programs alike (one
  compilation for the three, the programs of test_stacking.py's plain run)."""
  config = small_config(seeds=(1,), epochs=2)
  config.data.num_buckets = 1
  root = str(tmp_path / 'sweep')
  spec = tmp_path / 'patience.py'
  spec.write_text('def sweep(arg):\n  return [{"train.patience": p} for p in (3, 4, 5)]\n')
  save = checkpoints.Checkpoints.save
  saves = []

  def dying_save(self, epoch, state, meta):
    save(self, epoch, state, meta)
    saves.append(epoch)
    if len(saves) == 3:  # point 0: epochs 1, 2; point 1: epoch 1
      raise KeyboardInterrupt
  monkeypatch.setattr(checkpoints.Checkpoints, 'save', dying_save)
  with pytest.raises(KeyboardInterrupt):
    sweep.run(config, str(spec), root, print_fn=lambda *a: None)
  monkeypatch.setattr(checkpoints.Checkpoints, 'save', save)
  names = ['patience=3', 'patience=4', 'patience=5']
  assert sorted(os.listdir(root)) == names[:2] + ['sweep.json']
  first = os.path.join(root, names[0], 'results.json')
  finished = (os.stat(first).st_mtime_ns, open(first).read())
  epoch1 = _rows(os.path.join(root, names[1], 'metrics.jsonl'))
  assert {r['epoch'] for r in epoch1} == {1}

  messages = []  # resumed through the Python API (seedsweep.run_sweep)
  results = seedsweep.run_sweep(config, str(spec), root, print_fn=messages.append)
  assert list(results) == names
  assert (os.stat(first).st_mtime_ns, open(first).read()) == finished
  assert any('finished run found' in str(m) for m in messages)
  resumed = _rows(os.path.join(root, names[1], 'metrics.jsonl'))
  assert resumed[:1] == epoch1 and [r['epoch'] for r in resumed] == [1, 2]
  for name, patience in zip(names, (3, 4, 5)):
    point = json.load(open(os.path.join(root, name, 'point.json')))
    assert point['overrides'] == {'train.patience': patience}
    stored = json.load(open(os.path.join(root, name, 'config.json')))
    assert stored['train']['patience'] == patience and stored['seeds'] == [1]
    assert results[name]['seeds'] == [1]

  # The report from checkpoints alone equals the one from the logs.
  def table():
    rows = reports.write_report(root, plots=False, print_fn=lambda *a: None)['rows']
    csv = open(os.path.join(root, reports.REPORT_CSV)).read()
    return [{k: v for k, v in r.items() if k != 'wall_time'} for r in rows], csv
  from_logs = table()
  assert [r['point'] for r in from_logs[0]] == names
  for name in names:
    for file in ('results.json', 'metrics.jsonl'):
      os.remove(os.path.join(root, name, file))
  assert table() == from_logs


@pytest.mark.slow
@pytest.mark.full  # the launcher's jobs: test_chaos.py in the README tier
def test_the_local_launcher_runs_each_shard_as_a_job_and_a_rerun_mends_failures(
    tmp_path):
  """``--launcher=local``: shard k/2 of a 2-point sweep trains point k in a process of
  its own. Jobs that die are named with their logs, and the same command again
  finishes the sweep. (The points differ in patience: one compilation for both.)"""
  root = tmp_path / 'sweep'
  spec = tmp_path / 'patience.py'
  spec.write_text('def sweep(arg):\n  return [{"train.patience": p} for p in (3, 4)]\n')
  args = ('--config=experiments/demo.py:quick', f'--sweep={spec}', f'--workdir={root}',
          '--launcher=local', '--config.seeds=(1,)', '--config.train.num_epochs=1',
          '--config.train.progress=False', '--config.data.num_buckets=1',
          '--config.model.embed_dim=8')
  killed = run_launch(*args, env={'SEEDSWEEP_FAULT': 'build'})  # each job, once built
  assert killed.returncode == 1, killed.stderr[-2000:]
  assert '2 of 2 jobs failed: shard 0/2 (' in killed.stderr
  assert os.path.join(str(root), 'jobs') in killed.stderr
  assert not list(root.glob('*/results.json'))
  proc = run_launch(*args)
  assert proc.returncode == 0, proc.stderr[-2000:]
  assert 'all 2 jobs finished' in proc.stdout
  assert sorted(p.parent.name for p in root.glob('*/results.json')) == [
      'patience=3', 'patience=4']
  logs = [log.read_text() for log in (root / 'jobs').glob('*_0_log.out')]
  assert any('sweep point 2/2 (1/1 of shard 1/2)' in text for text in logs), logs
  bad = run_launch('--config=experiments/demo.py:quick', f'--sweep={spec}',
                   f'--workdir={root}', '--sweep_shard=2/2')
  assert bad.returncode != 0 and '--sweep_shard=' in bad.stderr


def test_a_point_sets_a_field_of_the_class_that_the_config_leaves_at_its_default():
  """demo:quick's config names no ``unroll`` nor ``embed_dropout`` (the class's own
  fields, at their defaults): a point setting one gets it added, stacked points too
  (the base carries it for config.stack), and a misspelt one is one line naming the
  closest field."""
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  config = seedsweep.load_config('demo:quick', seeds=(1,))
  assert 'unroll' not in config.model and 'embed_dropout' not in config.model
  assert sweep.point_config(config, {'model.unroll': 2}, 'point 0').model.unroll == 2
  [run] = sweep.plan_points(config, [{'model.embed_dropout': 0.1},
                                      {'model.embed_dropout': 0.2}], ['a', 'b'], 'x')
  assert tuple(run.config.stack.fields) == ('model.embed_dropout',)
  assert tuple(run.config.stack.points) == ((0.1,), (0.2,))
  exp = pieces.build(run.config)
  assert exp.device.hparams['model.embed_dropout'].tolist() == pytest.approx([0.1, 0.2])
  with pytest.raises(UserError, match=r"^point 0 sets model.unrol=2: model 'bilstm' "
                     r"\(RecurrentClassifier\) has no field 'unrol'; the closest it "
                     r"has is 'unroll'"):
    sweep.point_config(config, {'model.unrol': 2}, 'point 0')

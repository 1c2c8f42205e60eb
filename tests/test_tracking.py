"""A finished run in TensorBoard's HParams dashboard and in MLflow, read back with
TensorBoard's and MLflow's own readers (seedsweep/run/tracking.py)."""
import os

import pytest

from seedsweep.run import loop
from seedsweep.run import tracking
from tests.conftest import small_config


def hparams_session(folder):
  """``(hparams, metric tags, {scalar tag: value})`` of an HParams session folder,
  as TensorBoard reads it."""
  from tensorboard.backend.event_processing import event_accumulator  # pylint: disable=g-import-not-at-top
  from tensorboard.plugins.hparams import metadata, plugin_data_pb2  # pylint: disable=g-import-not-at-top
  events = event_accumulator.EventAccumulator(folder)
  events.Reload()
  hparams, metric_tags = {}, []
  for content in events.PluginTagToContent(metadata.PLUGIN_NAME).values():
    data = plugin_data_pb2.HParamsPluginData.FromString(content)
    if data.HasField('session_start_info'):
      for key, value in data.session_start_info.hparams.items():
        hparams[key] = getattr(value, value.WhichOneof('kind'))
    if data.HasField('experiment'):
      metric_tags = [m.name.tag for m in data.experiment.metric_infos]
  scalars = {tag: events.Scalars(tag)[-1].value for tag in events.Tags()['scalars']}
  return hparams, metric_tags, scalars


@pytest.mark.slow
def test_a_finished_run_reaches_the_hparams_tab_and_later_mlflow(tmp_path, monkeypatch):
  mlflow_tracking = pytest.importorskip('mlflow.tracking')
  monkeypatch.delenv('MLFLOW_TRACKING_URI', raising=False)
  config = small_config()  # programs compiled by tests/test_train.py
  workdir = str(tmp_path / 'runs' / 'demo')
  results = loop.train(config, workdir, print_fn=lambda *a: None)

  hparams, metric_tags, scalars = hparams_session(
      os.path.join(workdir, 'tensorboard', tracking.HPARAMS))
  assert hparams['model.name'] == 'bilstm' and hparams['num_seeds'] == 2
  assert hparams['optimizer.learning_rate'] == pytest.approx(
      config.optimizer.learning_rate)
  assert 'log.mlflow' not in hparams and 'seeds' not in hparams
  assert 'test_accuracy/mean' in metric_tags and 'test_accuracy/std' in metric_tags
  summary = results['summary']['test_accuracy']
  assert scalars['test_accuracy/mean'] == pytest.approx(summary['mean'], rel=1e-6)
  assert scalars['test_accuracy/std'] == pytest.approx(summary['std'], rel=1e-6)
  assert not os.path.exists(os.path.join(workdir, tracking.TRACKING))

  # MLflow turned on afterwards: the finished run is logged (log.* changes no number,
  # so the workdir still holds "this" config), once.
  config.log.mlflow = True
  for _ in range(2):
    again = loop.train(config, workdir, print_fn=lambda *a: None)
  assert again['metrics'] == results['metrics']
  client = mlflow_tracking.MlflowClient(f'file:{tmp_path / "runs" / "mlruns"}')
  experiment = client.get_experiment_by_name('seedsweep')
  (run,) = client.search_runs([experiment.experiment_id])
  assert run.info.run_name == 'demo' and run.info.status == 'FINISHED'
  assert run.data.tags[tracking.WORKDIR_TAG] == workdir
  assert run.data.params['model.name'] == 'bilstm'
  for i, seed in enumerate(results['seeds']):
    assert run.data.metrics[f'final/test_accuracy/seed_{seed}'] == pytest.approx(
        results['metrics']['test_accuracy'][i])
  assert run.data.metrics['final/test_accuracy/mean'] == pytest.approx(summary['mean'])
  history = client.get_metric_history(run.info.run_id, 'dev_accuracy/seed_1')
  rows = [r for r in loop.outputs.MetricsLog(workdir).rows() if r['seed'] == 1]
  assert [(m.step, m.value) for m in history] == [
      (r['epoch'], pytest.approx(r['dev_accuracy'])) for r in rows]

  # A tracking server that does not answer: one line at once (MLflow's own retries
  # take minutes), the run left as it was.
  import socket  # pylint: disable=g-import-not-at-top
  from seedsweep.errors import UserError  # pylint: disable=g-import-not-at-top
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    config.log.mlflow_uri = f'http://127.0.0.1:{s.getsockname()[1]}'
  with pytest.raises(UserError, match=r'cannot log .* to MLflow at http://127\.0\.0\.1:'
                     r'\d+: cannot reach .*the run itself is saved'):
    loop.train(config, workdir, print_fn=lambda *a: None)

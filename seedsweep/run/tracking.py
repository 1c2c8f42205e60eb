"""A finished run recorded where researchers watch runs, beside its own files.

* TensorBoard's HParams dashboard (always): ``workdir/tensorboard/hparams`` holds one
  session whose hyperparameters are the run's config (:func:`hparams_of`) and whose
  metrics are each result's mean and std over the seeds (``test_accuracy/mean``,
  ``test_accuracy/std``). ``tensorboard --logdir=SWEEP_ROOT`` then compares a sweep's
  points in the HParams tab.
* MLflow (``config.log.mlflow=True``, the ``[mlflow]`` extra): one MLflow run per
  workdir in experiment ``config.log.mlflow_experiment``, with the config as params,
  each member's per-epoch metrics (``<metric>/<member>``, step = epoch), each
  member's selected result (``final/<metric>/<member>``) and the aggregate
  (``final/<metric>/mean``, ``/std``). The store is ``config.log.mlflow_uri``, else
  ``$MLFLOW_TRACKING_URI``, else a local file store ``file:<workdir>/../mlruns`` that
  every run and sweep point under the same folder shares. A run trained again
  replaces its MLflow run.

Both are written once, when the run finishes (a resumed run logs its whole history),
under the workdir's lock; a finished run met again writes only what is
:func:`missing` (under the lock too), else nothing.
"""
import os
import shutil
from typing import Dict, List

from seedsweep.config import checks as config_checks
from seedsweep.config import keys
from seedsweep.errors import UserError
from seedsweep.inputs import raw
from seedsweep.run import outputs

HPARAMS = 'hparams'  # under workdir/tensorboard
TRACKING = 'tracking.json'  # workdir: where the run was logged
WORKDIR_TAG = 'seedsweep.workdir'


def hparams_of(config, as_dict=None) -> Dict[str, object]:
  """The config's fields that can tell runs apart, flattened (``model.hidden``):
  numbers, strings and booleans as they are, tuples as text; unset fields, the
  paper's numbers and the fields that change no number left out; ``seeds`` as their
  count (``num_seeds``). ``as_dict``: the config's JSON form, when made already."""
  flat = config_checks.flatten(config_checks.to_dict(config) if as_dict is None
                               else as_dict)
  out = {}
  for key, value in sorted(flat.items()):
    if (value is None or key == 'seeds' or key.startswith('paper.')
        or key in config_checks.NON_SEMANTIC
        or key.startswith(config_checks.NON_SEMANTIC_SECTIONS)):
      continue
    out[key] = (', '.join(map(str, value)) if isinstance(value, (list, tuple))
                else value)
  out['num_seeds'] = len(config.seeds)
  return out


def summary_metrics(results: dict) -> Dict[str, float]:
  """``{'<metric>/mean': .., '<metric>/std': ..}`` over the seeds (each key under
  ``<point>/`` for a stacked run)."""
  return {f'{p.get("label") + "/" if p.get("label") else ""}{name}/{stat}':
          float(s[stat]) for p in outputs.point_results(results)
          for name, s in p['summary'].items() for stat in ('mean', 'std')}


def write_hparams(config, workdir: str, results: dict, as_dict=None) -> str:
  """The run's HParams sessions (replacing earlier ones): ``tensorboard/hparams``,
  or ``tensorboard/hparams/<point>`` for each point of a stacked run; their folder."""
  summary_writer = outputs.tensorboardx().SummaryWriter
  from tensorboardX.summary import hparams  # pylint: disable=g-import-not-at-top
  folder = os.path.join(workdir, 'tensorboard', HPARAMS)
  shutil.rmtree(folder, ignore_errors=True)
  # (label, config, results, as_dict): a session per point, with the config that
  # point would have alone ('' and the run's own for one point).
  points = outputs.point_results(results)
  cleared = {'stack.fields': (), 'stack.points': ()}
  sessions = ([('', config, results, as_dict)] if len(points) == 1 else
              [(p['label'], keys.with_values(config, {**cleared, **p['overrides']},
                                             'config.stack'), p, None) for p in points])
  for label, own_config, own_results, own_dict in sessions:
    metrics = summary_metrics(own_results)
    with summary_writer(os.path.join(folder, label) if label else folder) as writer:
      for summary in hparams(hparams_of(own_config, own_dict), metrics):
        writer.file_writer.add_summary(summary)
      for tag, value in metrics.items():
        writer.add_scalar(tag, value, results.get('epochs_completed') or 0)
  return folder


def mlflow_uri(config, workdir: str) -> str:
  """The MLflow tracking URI: ``config.log.mlflow_uri``, else ``$MLFLOW_TRACKING_URI``,
  else a file store ``mlruns/`` beside ``workdir``."""
  uri = config.log.mlflow_uri or os.environ.get('MLFLOW_TRACKING_URI')
  if uri:
    return uri
  # MLflow 3 keeps its file store working only on request; it is what needs no server.
  os.environ.setdefault('MLFLOW_ALLOW_FILE_STORE', 'true')
  return 'file:' + os.path.join(os.path.dirname(os.path.abspath(workdir)), 'mlruns')


def log_mlflow(config, workdir: str, results: dict, rows: List[dict],
               as_dict=None) -> str:
  """One MLflow run for ``workdir`` (an earlier one of the same workdir deleted);
  its run id."""
  try:
    from mlflow.entities import Metric, Param  # pylint: disable=g-import-not-at-top
    from mlflow.tracking import MlflowClient  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    raise UserError("config.log.mlflow=True needs MLflow: pip install "
                    "'seedsweep[mlflow]' (or set config.log.mlflow=False)") from e
  uri = mlflow_uri(config, workdir)
  if uri.startswith(('http://', 'https://')):  # MLflow's own retries take minutes
    offline = raw.unreachable(uri)
    if offline:
      raise UserError(f'cannot log {workdir} to MLflow at {uri}: {offline}; the run '
                      'itself is saved: fix config.log.mlflow_uri (or start the '
                      'server) and rerun the same command')
  try:
    client = MlflowClient(tracking_uri=uri)
    name = config.log.mlflow_experiment
    experiment = client.get_experiment_by_name(name)
    experiment_id = (experiment.experiment_id if experiment
                     else client.create_experiment(name))
    where = os.path.abspath(workdir)
    for old in client.search_runs([experiment_id],
                                  f"tags.`{WORKDIR_TAG}` = '{where}'"):
      client.delete_run(old.info.run_id)
    provenance = results.get('provenance') or {}
    run = client.create_run(experiment_id, run_name=os.path.basename(where), tags={
        WORKDIR_TAG: where, 'seedsweep.git_commit': str(provenance.get('git_commit')),
        'seedsweep.dataset': str(config.data.name), 'seedsweep.model': str(config.model.name)})
    run_id = run.info.run_id
    params = [Param(k, str(v)[:500])
              for k, v in hparams_of(config, as_dict).items()]
    metrics = [Metric(k, v, 0, int(results.get('epochs_completed') or 0))
               for k, v in final_metrics(results).items()]
    metrics += [Metric(f'{key}/{outputs.row_member(row)}',
                       float(value), 0, int(row['epoch']))
                for row in rows for key, value in row.items()
                if key not in ('epoch', 'seed', 'fold') and isinstance(value, (int, float))
                and not isinstance(value, bool)]
    for start in range(0, max(len(params), len(metrics)), 100):
      client.log_batch(run_id, metrics=metrics[start:start + 100],
                       params=params[start:start + 100])
    client.set_terminated(run_id)
  except UserError:
    raise
  except Exception as e:  # pylint: disable=broad-except  (MLflow raises many types)
    raise UserError(f'cannot log {workdir} to MLflow at {uri} ({type(e).__name__}: '
                    f'{str(e).splitlines()[0] if str(e) else ""}); the run itself is '
                    'saved: fix config.log.mlflow_uri (or set config.log.mlflow=False) '
                    'and rerun the same command') from e
  return run_id


def final_metrics(results: dict) -> Dict[str, float]:
  """Each member's selected result and the aggregate over seeds."""
  members = results.get('members') or [outputs.member_label(s, f) for s, f in zip(
      results['seeds'], results.get('folds') or [None] * len(results['seeds']))]
  out = {f'final/{name}/{member}': float(value)
         for name, values in results['metrics'].items()
         for member, value in zip(members, values)}
  out.update({f'final/{k}': v for k, v in summary_metrics(results).items()})
  return out


def _has_hparams(workdir: str) -> bool:
  return os.path.isdir(os.path.join(workdir, 'tensorboard', HPARAMS))


def _has_mlflow(config, workdir: str) -> bool:
  """Whether ``workdir/tracking.json`` says the run was logged to this store."""
  path = os.path.join(workdir, TRACKING)
  if not os.path.exists(path):
    return False
  try:
    return outputs.read_json(path).get('mlflow_uri') == mlflow_uri(config, workdir)
  except ValueError:
    return False  # damaged: logged again


def missing(config, workdir: str) -> bool:
  """Whether a finished run lacks a record :func:`record_finished` writes (its
  HParams session; its MLflow run under ``config.log.mlflow``). Reads only: a
  finished run met again is left as it is unless this is true (and then its
  records are written under the workdir's lock)."""
  return not _has_hparams(workdir) or bool(config.log.mlflow
                                           and not _has_mlflow(config, workdir))


def record_finished(config, workdir: str, results: dict, again: bool = True,
                    as_dict=None) -> None:
  """HParams always; MLflow when ``config.log.mlflow`` (its run id kept in
  ``workdir/tracking.json``). With ``again=False`` (a finished run met again) only
  what is :func:`missing`: a run finished before MLflow was turned on gets logged
  then. The caller holds the workdir's lock. ``as_dict``: the config's JSON form."""
  if again or not _has_hparams(workdir):
    write_hparams(config, workdir, results, as_dict)
  if not config.log.mlflow or (not again and _has_mlflow(config, workdir)):
    return
  path = os.path.join(workdir, TRACKING)
  uri = mlflow_uri(config, workdir)
  run_id = log_mlflow(config, workdir, results, outputs.MetricsLog(workdir).rows(),
                      as_dict)
  outputs.write_json(path, {'mlflow_uri': uri, 'mlflow_run_id': run_id,
                            'mlflow_experiment': config.log.mlflow_experiment})

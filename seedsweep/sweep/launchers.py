"""A sweep's shards as scheduler jobs, submitted through submitit (the ``[slurm]``
extra): ``--launcher=local`` or ``--launcher=slurm`` beside ``--sweep``.

Each job runs the same command with ``--sweep_shard=k/n`` (``n`` =
``config.launch.jobs``, 0: one job per point), so a job is exactly what a user could
start by hand: it trains its points one after another, skips finished ones and
resumes interrupted ones. Rerunning the launch after a failure or a timeout
resubmits every shard; the finished points cost nothing.

* ``local``: submitit's local executor, one process per job on this machine, all at
  once; the launch waits for them and names the failed ones with their log files.
* ``slurm``: one Slurm job array (``sbatch`` through submitit) with the resources of
  ``config.launch`` (partition, time limit, CPUs, GPUs, memory, how many array tasks
  run at once); the launch returns after submission with the array's job id.

A search (``--search``) submits ``config.launch.jobs`` workers (0: one), each the same
command with ``--sweep_shard=k/n``: they share the study and its trial budget.

Job logs and submitit's pickles go to ``ROOT/jobs/``.
"""
import os
import subprocess
import sys
from typing import List, Sequence

from seedsweep.errors import UserError
from seedsweep.sweep import runner

LAUNCHERS = ('none', 'local', 'slurm')
JOBS_DIR = 'jobs'  # under the sweep root


def shard_commands(argv: Sequence[str], jobs: int) -> List[List[str]]:
  """The command of each shard: this one (``python -m seedsweep`` with ``argv``'s
  flags) with its ``--sweep_shard=k/jobs`` (:func:`runner.shard_flags`)."""
  return [[sys.executable, '-m', 'seedsweep', *flags]
          for flags in runner.shard_flags(argv, jobs)]


def run_command(command: Sequence[str], cwd: str) -> int:
  """One job: ``command`` in ``cwd`` (its output in the job's log); raises if it
  fails, so that submitit reports the job as failed."""
  returncode = subprocess.run(list(command), cwd=cwd, check=False).returncode
  if returncode:
    raise RuntimeError(f'exit status {returncode}: {" ".join(command)}')
  return returncode


def make_executor(config, launcher: str, folder: str):
  """submitit's executor for ``launcher`` with ``config.launch``'s resources."""
  try:
    import submitit  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    raise UserError(f"--launcher={launcher} needs submitit: pip install "
                    "'seedsweep[slurm]'") from e
  launch = config.launch
  executor = submitit.AutoExecutor(folder=folder, cluster=launcher)
  executor.update_parameters(
      name='seedsweep', timeout_min=int(launch.timeout_min),
      cpus_per_task=int(launch.cpus_per_task), gpus_per_node=int(launch.gpus_per_node),
      mem_gb=launch.mem_gb, slurm_array_parallelism=int(launch.slurm_array_parallelism),
      **({'slurm_partition': launch.slurm_partition} if launch.slurm_partition else {}))
  return executor


def check_jobs(config) -> int:
  """``config.launch.jobs``, checked: an int >= 0."""
  jobs = config.launch.jobs
  if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 0:
    raise UserError(f'config.launch.jobs={jobs!r}; expected an int >= 0 (0 = one job '
                    'per run of a sweep, one worker for a search)')
  return jobs


def submit(config, spec: str, root: str, launcher: str, argv: Sequence[str],
           print_fn=print) -> list:
  """Submits the shards of the sweep ``spec`` under ``root``; the submitit jobs.
  Every point's config is checked first, so a bad point submits nothing."""
  check_launcher(launcher)
  points, runs = runner.plan_runs(config, spec)
  jobs = min(check_jobs(config) or len(runs), len(runs))
  return run_jobs(config, root, launcher, shard_commands(argv, jobs),
                  f'{jobs} jobs for the {len(points)} points of {spec} '
                  f'({len(runs)} programs)', print_fn)


def submit_search(config, root: str, launcher: str, argv: Sequence[str],
                  print_fn=print) -> list:
  """Submits ``config.launch.jobs`` (0: one) workers of the search that ``argv``
  names, sharing its study (``--study``; SQLite in ``root`` by default)."""
  check_launcher(launcher)
  jobs = check_jobs(config) or 1
  return run_jobs(config, root, launcher, shard_commands(argv, jobs),
                  f'{jobs} search workers', print_fn)


def check_launcher(launcher: str) -> None:
  """UserError unless ``launcher`` is one that submits jobs (``local`` or ``slurm``)."""
  if launcher not in LAUNCHERS[1:]:
    raise UserError(f'--launcher={launcher!r}; expected one of {LAUNCHERS}')


def run_jobs(config, root: str, launcher: str, commands: List[List[str]], what: str,
             print_fn=print) -> list:
  """Submits ``commands`` as one job each; with ``local``, waits for them and raises
  UserError naming the failed ones; with ``slurm``, returns after submission."""
  jobs = len(commands)
  folder = os.path.join(os.path.abspath(root), JOBS_DIR)
  executor = make_executor(config, launcher, folder)
  submitted = executor.map_array(run_command, commands, [os.getcwd()] * jobs)
  print_fn(f'--launcher={launcher}: {what} (logs in {folder})')
  if launcher == 'slurm':
    print_fn(f'submitted Slurm job array {submitted[0].job_id.split("_")[0]}; when it is '
             f'done: seedsweep --mode=report --workdir={root}')
    return submitted
  failed = []
  for k, job in enumerate(submitted):
    try:
      job.result()
    except Exception as e:  # pylint: disable=broad-except  (submitit wraps the error)
      failed.append(f'shard {k}/{jobs} ({why_failed(e, str(job.paths.stderr), root)}; '
                    f'log {job.paths.stderr})')
  if failed:
    raise UserError(f'{len(failed)} of {jobs} jobs failed: ' + '; '.join(failed)
                    + '. Rerun the same command to retry them (finished points are '
                    'kept)')
  print_fn(f'all {jobs} jobs finished; seedsweep --mode=report --workdir={root}')
  return submitted


def why_failed(error: Exception, log: str, root: str) -> str:
  """A job's reason in a line: the last ``error:`` line of its log, else a full disk
  under ``root`` (which also keeps that line from its log), else submitit's last."""
  try:
    with open(log, errors='replace') as f:
      said = [x for x in f.read().splitlines() if x.startswith('error: ')]
  except OSError:
    said = []
  if said:
    return said[-1][len('error: '):][:300]
  try:
    full = os.statvfs(root).f_bavail == 0
  except OSError:
    full = False
  if full:
    return f'No space left on device: the file system of {root} is full'
  return (str(error).strip().splitlines() or [type(error).__name__])[-1][:200]

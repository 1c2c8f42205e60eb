"""One door for a run: its config checked once, its workdir opened once::

    checked = check_config(config)      validated (each stacked point too), runtime
                                        pinned, its points and JSON form made once
    run = prepare_run(config, workdir)  and the workdir: config.json read and compared
                                        once, a finished run's results
    with run.locked() as run: ...       the workdir's lock: one process at a time

What comes after trusts what a :class:`Prepared` carries: ``pieces.build``
validates nothing again, ``config.stack``'s points are not computed again, and
config.json, the provenance and the HParams session share one JSON form of the
config. ``train``, ``evaluate``, ``verify`` and ``predict`` each prepare their run
here, once.
"""
import contextlib
import dataclasses
import os
from typing import Any, Optional, Tuple

from seedsweep.config import checks as config_checks
from seedsweep.config import keys
from seedsweep.config import paths
from seedsweep.config import stacking
from seedsweep.errors import UserError
from seedsweep.run import outputs
from seedsweep.run import runtime
from seedsweep.run import workdir as workdir_lib


@dataclasses.dataclass(frozen=True)
class Checked:
  """A config validated, each point of ``config.stack`` as a run of its own would
  be, with this process's runtime pinned to it; and what is derived from it once."""
  config: Any                      # its file paths absolute (config.paths.resolved)
  points: Tuple[dict, ...]         # stacking.points(config): ({},) without a stack
  point_configs: Tuple[Any, ...]   # the config of each point (the config itself alone)
  as_dict: dict                    # config_checks.to_dict of the config as given: what
                                   # config.json and the records hold
  base: str = ''                   # the folder its relative paths were taken from


def check_config(config, base: Optional[str] = None) -> Checked:
  """``config`` checked (UserError naming its first bad value, before anything is
  written) and the runtime pinned (before anything starts JAX's CPU client); its
  relative file paths taken from ``base`` (None: the current folder; a workdir's:
  the folder its run was started in, workdir.started_in)."""
  base = os.getcwd() if base is None else base
  as_dict = config_checks.to_dict(config)
  config = paths.resolved(config, base)
  config_checks.validate(config)
  points = tuple(stacking.points(config))
  configs = []
  for i, point in enumerate(points):
    if not point:
      configs.append(config)
      continue
    where = f'config.stack.points[{i}] ({stacking.point_label(point)})'
    one = keys.with_values(config, point, where)
    try:
      config_checks.validate(one)
    except UserError as e:
      raise UserError(f'{where}: {e}') from e
    configs.append(one)
  runtime.pin_for(config)
  return Checked(config, points, tuple(configs), as_dict, base)


@dataclasses.dataclass(frozen=True)
class Prepared:
  """A run ready to start: its config :class:`Checked` and its workdir read once."""
  checked: Checked
  workdir: str
  holds_config: bool                # its config.json holds this config (False: none)
  finished: Optional[dict] = None   # a finished run's results (None: to train)
  signature: Optional[tuple] = None  # config.json's when read (workdir.config_signature)

  @property
  def config(self):
    """The run's config (checked)."""
    return self.checked.config

  @contextlib.contextmanager
  def locked(self):
    """Holds the workdir's lock for the block (UserError if another process has it)
    and yields the run as the workdir is then: config.json is read again only when
    another process wrote it after it was read here (only a lock holder writes it)."""
    with workdir_lib.hold(self.workdir):
      run = self
      signature = workdir_lib.config_signature(self.workdir)
      if signature != self.signature:
        run = dataclasses.replace(self, signature=signature, holds_config=(
            workdir_lib.compare_config(workdir_lib.stored_config(self.workdir),
                                       self.checked.as_dict, self.workdir,
                                       self.checked.base)))
      yield run


def prepare_run(config, workdir: str) -> Prepared:
  """The run of ``config`` to train in ``workdir`` (a new folder, made here, or one
  holding a run of this config): UserError for a bad config, a file, another
  config's run, or checkpoints without a config.json. Writes nothing else: a
  finished run's folder is left as it is (its lock file included)."""
  checked = check_config(config)  # a bad config is refused before the workdir exists
  workdir_lib.check_folder(workdir)
  os.makedirs(workdir, exist_ok=True)
  signature = workdir_lib.config_signature(workdir)  # before the read: see locked()
  holds = workdir_lib.compare_config(workdir_lib.stored_config(workdir),
                                     checked.as_dict, workdir, checked.base)
  return Prepared(checked, workdir, holds,
                  workdir_lib.finished_results(checked.config, workdir, holds), signature)


def prepare_existing(config, workdir: str, expected: str = 'a run') -> Prepared:
  """A run trained (at least in part) in ``workdir``, to evaluate, verify or predict
  with; ``config`` None: the config it was trained with. UserError if ``workdir``
  holds no config.json (``expected the workdir of <expected>``) or another config's."""
  workdir_lib.check_folder(workdir)
  signature = workdir_lib.config_signature(workdir)
  stored = workdir_lib.stored_config(workdir)
  if stored is None:
    raise UserError(f'{workdir} holds no {outputs.CONFIG}; expected the workdir of '
                    f'{expected}')
  if config is None:  # its paths as the folder it was started in gives them
    checked = check_config(config_checks.from_dict(stored),
                           workdir_lib.started_in(workdir))
  else:
    checked = check_config(config)
    workdir_lib.compare_config(stored, checked.as_dict, workdir, checked.base)
  return Prepared(checked, workdir, True, None, signature)

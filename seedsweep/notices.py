"""The one-line notices lower layers give while a run works (a dataset being prepared,
a download, a damaged cache entry rebuilt): where they go.

A bottom module beside ``errors``, so the input machinery and the runtime can say a
line without a ``print_fn`` threaded down to them. Outside a run the line goes to
stderr; a door of the run layer (train, evaluate, predict, verify) sends it to its
caller's ``print_fn`` for its duration (:func:`to`), so a caller that collects or
silences the lines gets these too. So do the lines the libraries log through absl
(orbax saving and restoring checkpoints, TFDS preparing a dataset): from WARNING up
(or from the level ``absl.logging.set_verbosity`` set), each as one line naming its
package; the chatter below it is dropped for the block, as the command drops it.
"""
import contextlib
import logging
import os
import sys
from typing import Callable, Optional

# The print_fn of the run now open (None: stderr). A plain global, not a context
# variable: the compilation cache is read from the run's compile-ahead thread too.
_sink: Optional[Callable[..., None]] = None


def say(line: str) -> None:
  """Gives ``line`` to the open run's ``print_fn``, else writes it to stderr."""
  sink = _sink
  if sink is None:
    print(line, file=sys.stderr, flush=True)
  else:
    sink(line)


class _AbslLines(logging.Handler):
  """absl's records (orbax's, TFDS's) as :func:`say` lines: ``warning: orbax: ...``."""

  def emit(self, record: logging.LogRecord) -> None:
    """Says ``record`` from the threshold up (:func:`_threshold`); drops the rest."""
    if record.levelno < _threshold():
      return
    try:
      message = record.getMessage().strip()
    except Exception:  # pylint: disable=broad-except  (a record's own bad arguments)
      message = str(record.msg)
    if record.exc_info and record.exc_info[1] is not None:
      error = record.exc_info[1]
      first = (str(error).strip().splitlines() or [''])[0]
      message += f' ({type(error).__name__}: {first})'
    say(f'{record.levelname.lower()}: {_package(record.pathname)}: {message}')


def _threshold() -> int:
  """The level absl's lines reach ``print_fn`` from: absl's verbosity (WARNING
  unless ``absl.logging.set_verbosity`` or the command's ``--verbosity`` set another:
  orbax logs every save at INFO)."""
  from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top
  from absl.logging import converter  # pylint: disable=g-import-not-at-top
  verbosity = absl_logging.get_verbosity()
  return (logging.DEBUG if verbosity >= converter.ABSL_DEBUG
          else converter.absl_to_standard(verbosity))


def _package(path: str) -> str:
  """The top-level package of a source file: ``orbax`` for
  ``.../site-packages/orbax/checkpoint/...``, else the file's name."""
  parts = os.path.normpath(path or '?').split(os.sep)
  for i in range(len(parts) - 2, -1, -1):
    if parts[i] in ('site-packages', 'dist-packages'):
      return parts[i + 1]
  return os.path.basename(path or '?')


@contextlib.contextmanager
def _absl_to_sink():
  """Within the block, absl's records go to :class:`_AbslLines` only (not to stderr
  through the root logger's handlers, absl's own included); as before after."""
  logger = logging.getLogger('absl')
  handler, propagate = _AbslLines(), logger.propagate
  logger.addHandler(handler)
  logger.propagate = False
  try:
    yield
  finally:
    logger.removeHandler(handler)
    logger.propagate = propagate


@contextlib.contextmanager
def to(print_fn: Callable[..., None]):
  """Within the block, :func:`say` calls ``print_fn``, and absl's lines become its
  lines; the sink before is restored after, however the block ends (a run inside a
  sweep nests inside the sweep's)."""
  global _sink
  before, _sink = _sink, print_fn
  try:
    with _absl_to_sink() if before is None else contextlib.nullcontext():
      yield  # (the outermost block routes absl's lines; an inner one reuses it)
  finally:
    _sink = before

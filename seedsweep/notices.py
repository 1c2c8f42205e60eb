"""The one-line notices lower layers give while a run works (a dataset being prepared,
a download, a damaged cache entry rebuilt): where they go.

A bottom module beside ``errors``, so the input machinery and the runtime can say a
line without a ``print_fn`` threaded down to them. Outside a run the line goes to
stderr; a door of the run layer (train, evaluate, predict, verify) sends it to its
caller's ``print_fn`` for its duration (:func:`to`), so a caller that collects or
silences the lines gets these too.
"""
import contextlib
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


@contextlib.contextmanager
def to(print_fn: Callable[..., None]):
  """Within the block, :func:`say` calls ``print_fn``; the sink before is restored
  after, however the block ends (a run inside a sweep nests inside the sweep's)."""
  global _sink
  before, _sink = _sink, print_fn
  try:
    yield
  finally:
    _sink = before

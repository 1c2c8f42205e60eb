"""SIGTERM (what a cloud preemption or a scheduler sends) and SIGINT (Ctrl-C) ask a
training loop to stop at its next step boundary, so it can save a checkpoint first.

A second signal of either kind ends the process at once, as without this module.
"""
import contextlib
import dataclasses
import signal
import threading

SIGNALS = (signal.SIGTERM, signal.SIGINT)


@dataclasses.dataclass
class StopRequest:
  """Set by the first stop signal: ``requested`` is its name ('SIGTERM'), or ''."""
  requested: str = ''
  signum: int = 0

  def __bool__(self):
    """Whether a stop signal came (the step loop asks before each step)."""
    return bool(self.requested)


@contextlib.contextmanager
def catch():
  """A :class:`StopRequest` set by SIGTERM/SIGINT during the block (handlers are
  installed only in the main thread, where Python delivers signals)."""
  stop = StopRequest()
  if threading.current_thread() is not threading.main_thread():
    yield stop
    return
  previous = {s: signal.getsignal(s) for s in SIGNALS}

  def handler(signum, frame):
    if stop:  # the second signal: give up waiting for the step boundary
      signal.signal(signum, previous[signum])
      signal.raise_signal(signum)
      return
    stop.requested, stop.signum = signal.Signals(signum).name, signum

  for s in SIGNALS:
    signal.signal(s, handler)
  try:
    yield stop
  finally:
    for s, h in previous.items():
      signal.signal(s, h)

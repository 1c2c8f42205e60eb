"""Errors a user can act on. ``launch.py`` prints their message without a traceback."""


class UserError(Exception):
  """Bad input (config, flag, data file, checkpoint, workdir): the message says
  what was wrong, where, and what was expected."""


class Stopped(Exception):
  """A run stopped by a signal after saving where it was: ``launch.py`` prints the
  message and exits with ``128 + signum``, as a process the signal ended would."""

  def __init__(self, message: str, signum: int):
    super().__init__(message)
    self.signum = signum

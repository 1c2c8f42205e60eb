"""Errors a user can act on. ``launch.py`` prints their message without a traceback."""


class UserError(Exception):
  """Bad input (config, flag, data file, checkpoint, workdir): the message says
  what was wrong, where, and what was expected."""

"""Config and sweep files are Python, run as they are (never load one you do not
trust): ``get_config(arg)`` / ``sweep(arg)`` of a file, with every way it can fail
told in one line that names the file and the line."""
import importlib.util
import os
import traceback
from typing import Any

from seedsweep.errors import UserError


def _line_in(path: str, error: BaseException) -> str:
  """``'path, line N'`` of the deepest frame of ``error`` in ``path`` (else path)."""
  real = os.path.realpath(path)
  lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)
           if os.path.realpath(frame.filename) == real]
  return f'{path}, line {lines[-1]}' if lines else path


def call(spec: str, function: str, flag: str, always_arg: bool = False) -> Any:
  """``function(arg)`` of the file of ``spec`` = ``path/to/file.py[:arg]`` (without an
  arg ``function()``, or ``function('')`` with ``always_arg``); ``flag`` names where
  the spec came from (``--config``)."""
  path, _, arg = spec.partition(':')
  if not os.path.isfile(path):
    raise UserError(f'{flag}={spec}: no file {path!r} (relative to {os.getcwd()}); '
                    f'expected a Python file defining {function}(arg)')
  module_spec = importlib.util.spec_from_file_location(f'_seedsweep_{function}_file',
                                                       path)
  module = importlib.util.module_from_spec(module_spec)
  try:
    module_spec.loader.exec_module(module)
  except SyntaxError as e:
    raise UserError(f'{path}, line {e.lineno}: SyntaxError: {e.msg} ({flag}={spec})'
                    ) from None
  except Exception as e:  # pylint: disable=broad-except
    raise UserError(f'{_line_in(path, e)}: {type(e).__name__}: {e} (while loading '
                    f'{flag}={spec})') from e
  fn = getattr(module, function, None)
  if not callable(fn):
    raise UserError(f'{flag}={spec}: {path} defines no function {function}(arg); '
                    f'expected one (see experiments/demo.py and sweeps/demo.py)')
  try:
    return fn(arg) if arg or always_arg else fn()
  except UserError:
    raise
  except Exception as e:  # pylint: disable=broad-except
    called = f'{function}({arg!r})' if arg or always_arg else f'{function}()'
    raise UserError(f'{_line_in(path, e)}: {called} raised {type(e).__name__}: {e} '
                    f'({flag}={spec})') from e

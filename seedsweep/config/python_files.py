"""Config, sweep and search files, and a user's own model and dataset code, are
Python, run as they are (configs are trusted code: never load one you do not trust):
``get_config(arg)`` / ``sweep(arg)`` of a file, or the object a reference
``path/to/file.py:Name`` or ``package.module:Name`` names, with every way it can fail
told in one line that names the file and the line."""
import hashlib
import importlib
import importlib.util
import os
import sys
import traceback
from typing import Any, Optional

from seedsweep import files
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
  files.refuse_folder(path, flag, f'a Python file defining {function}(arg)')
  if not os.path.isfile(path):
    raise UserError(f'{flag}={spec}: no file {path!r} (relative to {os.getcwd()}); '
                    f'expected a Python file defining {function}(arg)')
  module = _exec_file(path, f'_seedsweep_{function}_file', f'{flag}={spec}')
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


def _exec_file(path: str, module_name: str, where: str):
  """The module of the Python file ``path``, run; UserError naming ``where``."""
  module_spec = importlib.util.spec_from_file_location(module_name, path)
  module = importlib.util.module_from_spec(module_spec)
  try:
    module_spec.loader.exec_module(module)
  except SyntaxError as e:
    raise UserError(f'{path}, line {e.lineno}: SyntaxError: {e.msg} ({where})'
                    ) from None
  except Exception as e:  # pylint: disable=broad-except
    raise UserError(f'{_line_in(path, e)}: {type(e).__name__}: {e} (while loading '
                    f'{where})') from e
  return module


def is_reference(name) -> bool:
  """Whether a config name is a reference to user code (``file.py:Name``,
  ``package.module:Name``) rather than a registered name."""
  return isinstance(name, str) and ':' in name


def reference_file(ref: str) -> Optional[str]:
  """The absolute path of a ``file.py:Name`` reference's file (None for a module)."""
  target = ref.rpartition(':')[0]
  return os.path.abspath(os.path.expanduser(target)) if target.endswith('.py') else None


def load_object(ref: str, field: str) -> Any:
  """The object ``ref`` (``path/to/file.py:Name`` or ``package.module:Name``) names;
  ``field`` (``config.model.name``) is where it was given. A file is run once per
  process (the same class every time it is named)."""
  target, _, attr = ref.rpartition(':')
  where = f'{field}={ref!r}'
  files.refuse_folder(os.path.expanduser(target), field, 'path/to/file.py:Name')
  path = reference_file(ref)
  if path is not None:
    if not os.path.isfile(path):
      raise UserError(f'{where}: no file {path}; expected path/to/file.py:Name or '
                      'package.module:Name')
    name = '_seedsweep_user_' + hashlib.sha256(path.encode()).hexdigest()[:16]
    module = sys.modules.get(name)
    if module is None:
      digest = _file_digest(path)  # the bytes about to run (read again by the loader)
      module = _exec_file(path, name, where)
      sys.modules[name] = module  # classes keep their identity (pickling, jit caches)
      _RAN[path] = digest
  else:
    try:
      module = importlib.import_module(target)
    except Exception as e:  # pylint: disable=broad-except  (any error of its import)
      raise UserError(f'{where}: cannot import {target} ({type(e).__name__}: {e}); '
                      'expected an importable module, or path/to/file.py:Name') from e
  if not attr or not hasattr(module, attr):
    names = sorted(n for n in vars(module) if not n.startswith('_'))
    raise UserError(f'{where}: {target} defines no {attr!r}; it defines {names[:12]}')
  return getattr(module, attr)


# {absolute path: sha256 of the bytes this process ran} of each user file loaded: a
# file edited after it was loaded still runs as loaded here (its module is kept).
_RAN = {}


def _file_digest(path: str) -> str:
  """The sha256 of the file ``path``."""
  with open(path, 'rb') as f:
    return hashlib.sha256(f.read()).hexdigest()


def reference_digest(ref: str) -> Optional[str]:
  """The sha256 of a ``file.py:Name`` reference's file (None for a module): of the
  bytes this process ran when it has loaded it, else of the file now."""
  path = reference_file(ref)
  if path in _RAN:
    return _RAN[path]
  if path is None or not os.path.isfile(path):
    return None
  return _file_digest(path)

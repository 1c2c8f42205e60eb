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


def raised_in(ref: str, error: BaseException) -> Optional[str]:
  """``'path, line N'`` of the deepest frame of ``error`` in the file of ``ref``
  (``file.py:Name``, as the reference writes it, or the module file of
  ``package.module:Name``): where the user's reader or builder raised at run time;
  None when no frame of ``error`` is in that file."""
  target = ref.rpartition(':')[0]
  path = (os.path.expanduser(target) if reference_file(ref) else
          getattr(sys.modules.get(target), '__file__', None))
  if not path:
    return None
  where = _line_in(path, error)
  return where if where != path else None


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
    if module is not None and changed_since_loaded(path):
      # Edited since this process ran it (a notebook's edit-and-rerun): run it again,
      # with its own modules, rather than train the old code under a new record.
      _forget(path)
      module = None
    if module is None:
      module = _load_user_file(path, name, where)
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


# {absolute path: {path: sha256}} of each user file loaded: the bytes this process
# ran of it (first) and of each module of the user's own it imported. A file or one of
# its modules edited since is run again at its next load (load_object).
_RAN = {}
_NOT_USERS = []  # the folders whose modules are not the user's (_not_users)


def _load_user_file(path: str, name: str, where: str):
  """Runs the user's file ``path`` as module ``name`` with its folder importable (as
  for a script), and records the digests of it and of the user's modules it
  imported."""
  folder = os.path.dirname(path)
  if folder not in sys.path:
    sys.path.insert(0, folder)
  before = set(sys.modules)
  digest = _file_digest(path)  # the bytes about to run (read again by the loader)
  module = _exec_file(path, name, where)
  sys.modules[name] = module  # classes keep their identity (pickling, jit caches)
  imported = [sys.modules[n] for n in set(sys.modules) - before if n in sys.modules]
  _RAN[path] = {path: digest, **{
      p: _file_digest(p) for p in _user_modules([module] + imported) if p != path}}
  return module


def _not_users() -> list:
  """The folders of the standard library, installed packages and seedsweep itself
  (its models/, data/, experiments/ ... folders too): what is not a user's code."""
  if not _NOT_USERS:
    import site  # pylint: disable=g-import-not-at-top
    import sysconfig  # pylint: disable=g-import-not-at-top
    roots = [sysconfig.get_paths()[k] for k in ('stdlib', 'platstdlib', 'purelib',
                                                  'platlib')]
    roots += site.getsitepackages() + [site.getusersitepackages()]
    for package in ('seedsweep', 'seedsweep.models', 'seedsweep.data',
                    'seedsweep.experiments', 'seedsweep.sweeps', 'seedsweep.searches'):
      spec = importlib.util.find_spec(package)
      roots += list(spec.submodule_search_locations or []) if spec else []
    _NOT_USERS.extend(sorted({os.path.realpath(r) + os.sep for r in roots if r}))
  return _NOT_USERS


def user_module_file(module) -> Optional[str]:
  """The real path of ``module``'s .py file when it is the user's own (not the
  standard library's, an installed package's or seedsweep's), else None."""
  file = getattr(module, '__file__', None)
  if not isinstance(file, str) or not file.endswith('.py') or not os.path.isfile(file):
    return None
  real = os.path.realpath(file)
  return None if any(real.startswith(r) for r in _not_users()) else real


def _user_modules(modules) -> list:
  """The files of the user's own modules among ``modules`` and those their globals
  reach (a module imported, or the module of a class or function imported from
  one), transitively: what a user file's code runs."""
  found, queue, seen = [], list(modules), set()
  while queue:
    module = queue.pop(0)
    if id(module) in seen:
      continue
    seen.add(id(module))
    file = user_module_file(module)
    if file is None:
      continue
    found.append(file)
    for value in list(vars(module).values()):
      target = value if isinstance(value, type(sys)) else sys.modules.get(
          getattr(value, '__module__', None) or '')
      if target is not None and id(target) not in seen:
        queue.append(target)
  return list(dict.fromkeys(found))


def changed_since_loaded(path: str) -> bool:
  """Whether the user file ``path``, or a module of the user's it imported, holds
  other bytes now than this process ran (a file gone counts as changed)."""
  for file, digest in _RAN.get(path, {}).items():
    if not os.path.isfile(file) or _file_digest(file) != digest:
      return True
  return False


def _forget(path: str) -> None:
  """Drops the user file ``path``'s module and its modules from ``sys.modules``, so
  that they run again when next imported."""
  files = {os.path.realpath(f) for f in _RAN.pop(path, {})}
  for name, module in list(sys.modules.items()):
    if user_module_file(module) in files:
      del sys.modules[name]


def _file_digest(path: str) -> str:
  """The sha256 of the file ``path``."""
  with open(path, 'rb') as f:
    return hashlib.sha256(f.read()).hexdigest()


def reference_digest(ref: str) -> Optional[str]:
  """The sha256 of a ``file.py:Name`` reference's file (None for a module): of the
  bytes this process ran when it has loaded it, else of the file now."""
  path = reference_file(ref)
  if path in _RAN:
    return _RAN[path][path]
  return file_digest_now(ref)


def reference_imports(ref: str, given: Optional[str] = None) -> dict:
  """``{path: sha256}`` of the modules of the user's own that a loaded ``file.py:Name``
  reference's file imported, as this process ran them ({} for a module, or a file not
  loaded). Each path is written as the reference writes its file's (relative to the
  same folder, or absolute), so a record names the same keys from any folder the
  reference is given from; ``given``: the reference as the config gave it, when
  ``ref`` is its absolute form (config.paths)."""
  path = reference_file(ref)
  target = (given or ref).rpartition(':')[0]
  if path not in _RAN:
    return {}
  base, real_base = os.path.dirname(target), os.path.dirname(os.path.realpath(path))
  out = {}
  for file, digest in list(_RAN[path].items())[1:]:
    if os.path.isabs(target):
      key = file
    else:
      key = os.path.normpath(os.path.join(base, os.path.relpath(file, real_base)))
    out[key] = digest
  return out


def file_digest_now(key: str) -> Optional[str]:
  """The sha256 of a recorded user file as it is now (``key``: a reference
  ``file.py:Name`` or a path, as :func:`reference_imports` writes it); None when it
  is gone, or a module reference."""
  path = reference_file(key) if is_reference(key) else os.path.abspath(key)
  if path is None or not os.path.isfile(path):
    return None
  return _file_digest(path)

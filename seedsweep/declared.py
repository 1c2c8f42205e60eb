"""Names a package's modules declare: how ``models/`` and ``data/`` find their entries.

A model family or a dataset is one file: its module declares a dict at module level
(``MODELS`` in ``models/``, ``DATASETS`` and ``SHA256`` in ``data/``) and the
package's registry is the union of those dicts over its modules, found by scanning
the package as big_vision imports ``big_vision.models.{name}``: no list kept by hand.
A bottom module (it imports only ``errors``), so both packages can use it.
"""
import importlib
import pkgutil
import types
from typing import Any, Dict, List

from seedsweep.errors import UserError


def modules_declaring(package: types.ModuleType, attribute: str) -> List[types.ModuleType]:
  """The modules of ``package`` (every folder of its ``__path__``, by module name) that
  define ``attribute``; names starting with ``_`` (``__main__``) are not imported."""
  names = sorted({info.name for info in pkgutil.iter_modules(package.__path__)
                  if not info.name.startswith('_')})
  modules = [importlib.import_module(f'{package.__name__}.{name}') for name in names]
  return [m for m in modules if hasattr(m, attribute)]


def merged(modules: List[types.ModuleType], attribute: str) -> Dict[str, Any]:
  """``{name: entry}``: the ``attribute`` dicts of ``modules`` in their order; a name
  two modules declare is refused in one line naming both."""
  out, owner = {}, {}
  for module in modules:
    for name, entry in getattr(module, attribute).items():
      if name in owner:
        raise UserError(f'{attribute} name {name!r} is declared by both '
                        f'{owner[name]} and {module.__name__}; expected one module each')
      out[name], owner[name] = entry, module.__name__
  return out

"""Names a package's modules declare: how ``models/`` and ``data/`` find their entries.

A model family or a dataset is one file: its module assigns a dict at its top level
(``MODELS`` in ``models/``, ``DATASETS`` and ``SHA256`` in ``data/``) and the
package's registry is the union of those dicts over its modules, found by scanning
the package (as big_vision imports ``big_vision.models.{name}``, by module name): no
list kept by hand.
A bottom module (it imports only ``errors``), so both packages can use it.
"""
import importlib
import pkgutil
import re
import types
from typing import Any, Dict, List

from seedsweep.errors import UserError


def modules_declaring(package: types.ModuleType, attribute: str) -> List[types.ModuleType]:
  """The modules of ``package`` (every folder of its ``__path__``, by module name) that
  assign ``attribute`` at their top level, imported. The others are not imported:
  one run as a command (``python -m seedsweep.data.word2vec``) must not be imported
  first, by its package."""
  assigns = re.compile(rf'^{attribute}\s*[:=]', re.MULTILINE)  # at the top level
  found = []
  for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
    spec = info.module_finder.find_spec(info.name)
    if info.ispkg or not (spec and spec.origin and spec.origin.endswith('.py')):
      continue
    with open(spec.origin, encoding='utf-8') as f:
      source = f.read()
    if assigns.search(source):
      found.append(importlib.import_module(f'{package.__name__}.{info.name}'))
  return found


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

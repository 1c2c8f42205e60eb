"""The package's layers (docs/design.md, "Layers"): every import, at the top of a
file or inside a function, goes to the module's own layer or one below it; models and
the input machinery import only the bottom layer, the datasets' readers only it and the
machinery; the engine touches no file; no two files import each other, directly or
around a loop."""
import ast
import os

import pytest

from tests.conftest import REPO

# Bottom to top. The folders the checkout keeps at its top level are installed as
# sub-packages (setup.cfg, package_dir).
LAYERS = (
    ('seedsweep.errors', 'seedsweep.files', 'seedsweep.notices', 'seedsweep.declared'),
    ('seedsweep.config',),
    ('seedsweep.inputs',),  # the input machinery: the engine's pipeline, caches, arrays
    ('seedsweep.models', 'seedsweep.data'),  # models; the datasets' readers, registry
    ('seedsweep.engine',),
    ('seedsweep.run',),
    ('seedsweep.sweep',),
    ('seedsweep.reports',),
    ('seedsweep', 'seedsweep.experiments', 'seedsweep.sweeps', 'seedsweep.searches',
     'launch'),
)
FOLDERS = {'seedsweep': 'seedsweep', 'models': 'seedsweep.models',
           'data': 'seedsweep.data', 'experiments': 'seedsweep.experiments',
           'sweeps': 'seedsweep.sweeps', 'searches': 'seedsweep.searches'}
# What the engine must not import: it computes, the run layer reads and writes files.
FILE_LIBRARIES = ('os', 'io', 'json', 'csv', 'pathlib', 'shutil', 'tempfile', 'orbax',
                  'tensorboardX', 'etils', 'tensorflow_datasets')


def module_files():
  """``{dotted module name: path}`` of every Python file of the package."""
  found = {'launch': os.path.join(REPO, 'launch.py')}
  for folder, package in FOLDERS.items():
    for where, _, files in os.walk(os.path.join(REPO, folder)):
      for name in files:
        if not name.endswith('.py'):
          continue
        relative = os.path.relpath(os.path.join(where, name), os.path.join(REPO, folder))
        parts = relative[:-3].split(os.sep)
        if parts[-1] == '__init__':
          parts = parts[:-1]
        found['.'.join([package] + parts)] = os.path.join(where, name)
  return found


MODULES = module_files()


def imports_of(name: str):
  """``[(imported module, line)]`` of module ``name``: a ``from X import Y`` counts as
  ``X.Y`` when that is a module, else as ``X``."""
  tree = ast.parse(open(MODULES[name], encoding='utf-8').read())
  out = []
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      out += [(alias.name, node.lineno) for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
      for alias in node.names:
        full = f'{node.module}.{alias.name}'
        out.append((full if full in MODULES else node.module, node.lineno))
  return out


def layer_of(module: str) -> int:
  """The index in LAYERS of the longest layer prefix of ``module`` (None: outside)."""
  best = None
  for i, prefixes in enumerate(LAYERS):
    for prefix in prefixes:
      if module == prefix or module.startswith(prefix + '.'):
        if best is None or len(prefix) > best[1]:
          best = (i, len(prefix))
  return None if best is None else best[0]


def ours(module: str) -> bool:
  return module in MODULES or module.split('.')[0] in ('seedsweep', 'launch')


def test_the_layer_table_covers_every_file():
  assert len(MODULES) > 60
  assert [m for m in MODULES if layer_of(m) is None] == []


@pytest.mark.parametrize('name', sorted(MODULES))
def test_imports_go_down_the_layers(name):
  mine = layer_of(name)
  bad = [f'{name}:{line} imports {target} (layer {layer_of(target)} > {mine})'
         for target, line in imports_of(name)
         if ours(target) and layer_of(target) > mine]
  assert bad == []


# Beside their own package, what each may import: layers up to this index.
LOW_PACKAGES = {'seedsweep.models': 1, 'seedsweep.inputs': 1, 'seedsweep.data': 2}


@pytest.mark.parametrize('package', sorted(LOW_PACKAGES))
def test_models_inputs_and_data_import_only_the_layers_below_them(package):
  """Models and the input machinery import the bottom layer only (the machinery no
  reader); the readers import it and the machinery, not the models."""
  top = LOW_PACKAGES[package]
  bad = [f'{name}:{line} imports {target}'
         for name in MODULES if name == package or name.startswith(package + '.')
         for target, line in imports_of(name)
         if ours(target) and layer_of(target) > top
         and not (target == package or target.startswith(package + '.'))]
  assert bad == []


def test_the_engine_imports_the_input_pipeline_only():
  """What the engine computes on: the device-resident pipeline, no reader, no cache."""
  bad = [f'{name}:{line} imports {target}'
         for name in MODULES if name.startswith('seedsweep.engine')
         for target, line in imports_of(name)
         if target.startswith(('seedsweep.data', 'seedsweep.inputs'))
         and target != 'seedsweep.inputs.pipeline']
  assert bad == []


def test_the_engine_reads_and_writes_no_file():
  bad = [f'{name}:{line} imports {target}'
         for name in MODULES if name.startswith('seedsweep.engine')
         for target, line in imports_of(name)
         if target.split('.')[0] in FILE_LIBRARIES]
  assert bad == []


def test_no_import_cycle():
  graph = {name: sorted({t for t, _ in imports_of(name) if t in MODULES and t != name})
           for name in MODULES}
  state, stack, cycles = {}, [], []

  def visit(node):
    state[node] = 'open'
    stack.append(node)
    for nxt in graph[node]:
      if state.get(nxt) == 'open':
        cycles.append(stack[stack.index(nxt):] + [nxt])
      elif nxt not in state:
        visit(nxt)
    stack.pop()
    state[node] = 'done'

  for name in sorted(graph):
    if name not in state:
      visit(name)
  assert cycles == []


def test_no_file_imports_a_folder_by_its_bare_name():
  """``data``, ``models``... are a user's names: the package, its tests and
  benchmarks import them only as ``seedsweep.data``, ``seedsweep.models``..."""
  bare = set(FOLDERS) - {'seedsweep'} | {'training'}
  files = dict(MODULES)
  for folder in ('tests', 'benchmarks'):
    for name in os.listdir(os.path.join(REPO, folder)):
      if name.endswith('.py'):
        files[f'{folder}.{name[:-3]}'] = os.path.join(REPO, folder, name)
  bad = []
  for name, path in files.items():
    for node in ast.walk(ast.parse(open(path, encoding='utf-8').read())):
      targets = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                 [node.module] if isinstance(node, ast.ImportFrom) and node.module
                 else [])
      bad += [f'{name}:{node.lineno} imports {t}' for t in targets
              if t.split('.')[0] in bare]
  assert bad == []


UNPICKLERS = ('pickle', 'dill', 'cloudpickle', 'joblib', 'shelve', 'marshal')


@pytest.mark.parametrize('name', sorted(MODULES))
def test_no_file_the_framework_reads_can_run_code(name):
  """Checkpoints, data, vectors and caches are read as data: no unpickling module is
  imported and no loader is asked to allow pickles (configs and sweeps are Python by
  design: docs/design.md)."""
  tree = ast.parse(open(MODULES[name], encoding='utf-8').read())
  bad = [f'{name}:{line} imports {target}' for target, line in imports_of(name)
         if target.split('.')[0] in UNPICKLERS]
  bad += [f'{name}:{node.lineno} passes allow_pickle=True' for node in ast.walk(tree)
          if isinstance(node, ast.keyword) and node.arg == 'allow_pickle'
          and not (isinstance(node.value, ast.Constant) and node.value.value is False)]
  assert not bad, bad

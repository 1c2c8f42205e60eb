"""What the package installs, by name, a line each (``seedsweep --mode=list``): the
experiments (``--config=NAME[:ARG]``), sweeps (``--sweep=NAME``), searches
(``--search=NAME``), models (``config.model.name``) and datasets
(``config.data.name``); and, for a name that is none of them, the closest ones.

Files are read, not run: a file's line is the first sentence of its docstring.
"""
import ast
import difflib
import importlib
import os
import re
from typing import List, Optional, Tuple

# The folders of named files: (package folder, the flag naming one, what a file is,
# the function it defines).
FOLDERS = (('experiments', '--config', 'experiment', 'get_config'),
           ('sweeps', '--sweep', 'sweep', 'sweep'),
           ('searches', '--search', 'search', 'search'))
WIDTH = 100  # a line's summary is cut to this many characters


def summary(docstring: Optional[str]) -> str:
  """The first sentence of a docstring on one line, without RST markup, cut to
  :data:`WIDTH` characters."""
  paragraph = ' '.join((docstring or '').strip().split('\n\n')[0].split())
  # A sentence ends at '. ' before a capital ('et al. 2015' goes on).
  sentence = re.split(r'\. (?=[A-Z])', paragraph, maxsplit=1)[0].rstrip('.')
  sentence = sentence.replace('``', '').replace(':mod:', '')
  return sentence if len(sentence) <= WIDTH else sentence[:WIDTH - 3] + '...'


def _folder_path(folder: str) -> str:
  return os.path.dirname(importlib.import_module(f'seedsweep.{folder}').__file__)


def packaged_files(folder: str, function: str) -> List[Tuple[str, str]]:
  """``[(name, summary)]`` of the files of ``seedsweep.<folder>`` that define
  ``function`` at their top level (``get_config``: an experiment; a shared recipe
  such as ``clstm_common.py`` is not one), by name."""
  where = _folder_path(folder)
  out = []
  for file in sorted(os.listdir(where)):
    if not file.endswith('.py') or file.startswith('_'):
      continue
    try:
      with open(os.path.join(where, file), encoding='utf-8') as f:
        tree = ast.parse(f.read())
    except (SyntaxError, UnicodeDecodeError) as e:  # a file being written: say so
      line = getattr(e, 'lineno', None)
      out.append((file[:-3], f'(does not parse: {type(e).__name__}'
                  + (f' at line {line})' if line else ')')))
      continue
    if any(isinstance(node, ast.FunctionDef) and node.name == function
           for node in tree.body):
      out.append((file[:-3], summary(ast.get_docstring(tree))))
  return out


def models() -> List[Tuple[str, str]]:
  """``[(name, line)]`` of models.REGISTRY: the class, its fixed fields, its
  docstring's first sentence."""
  from seedsweep import models as models_lib  # pylint: disable=g-import-not-at-top
  out = []
  for name, (cls, fixed) in models_lib.REGISTRY.items():
    fixed_text = ''.join(f', {k}={v!r}' for k, v in fixed.items())
    out.append((name, f'{cls.__name__}{fixed_text}: {summary(cls.__doc__)}'))
  return out


def datasets() -> List[Tuple[str, str]]:
  """``[(name, line)]`` of data.REGISTRY: the reader's docstring's first sentence,
  its classes and protocol."""
  from seedsweep import data as data_lib  # pylint: disable=g-import-not-at-top
  out = []
  for name, spec in data_lib.REGISTRY.items():
    facts = ([f'config {spec.config}'] if spec.config else []) + (
        [f'{len(spec.label_names)} classes'] if spec.label_names else []) + (
            ['cross-validated'] if spec.cross_validation else [])
    what = re.split(r': |; ', summary(spec.builder.__doc__), maxsplit=1)[0]
    out.append((name, what + (f' ({", ".join(facts)})' if facts else '')))
  return out


def _block(title: str, items: List[Tuple[str, str]]) -> List[str]:
  width = max(len(name) for name, _ in items) + 2
  return [title] + [f'  {name:<{width}}{line}' for name, line in items] + ['']


def listing() -> str:
  """What ``seedsweep --mode=list`` prints: every packaged experiment, sweep, search,
  model and dataset, a line each, under a heading saying how to use them."""
  lines = []
  for folder, flag, _, function in FOLDERS:
    lines += _block(f'{folder} ({flag}=NAME[:ARG]; seedsweep/{folder}/):',
                    packaged_files(folder, function))
  lines += _block('models (--config.model.name=NAME, or path/to/file.py:Class):',
                  models())
  lines += _block('datasets (--config.data.name=NAME; python -m seedsweep.data NAME '
                  'for its statistics):', datasets())
  lines.append('An experiment\'s arguments (ARG: comma-separated): its file\'s '
               'docstring, or --config=NAME:help, whose error lists them. Every '
               'config field: --mode=describe, docs/configuration.md.')
  return '\n'.join(lines)


def unknown_name(flag: str, value: str) -> Optional[str]:
  """One line for ``--config``/``--sweep``/``--search`` = ``value`` when it is a bare
  name (no folder) that names no file here and no packaged file: the closest
  packaged names; None when it is a file, a packaged name or a path elsewhere (whose
  own error names it)."""
  for folder, folder_flag, kind, function in FOLDERS:
    if flag != folder_flag:
      continue
    path = value.partition(':')[0]
    name = path[len(folder) + 1:] if path.startswith(folder + '/') else path
    if not path or os.path.exists(path) or '/' in name or os.sep in name:
      return None
    stem = name[:-3] if name.endswith('.py') else name
    names = [n for n, _ in packaged_files(folder, function)]
    if stem in names:
      return None
    close = difflib.get_close_matches(stem, names, n=3, cutoff=0.4)
    which = (f'closest packaged: {", ".join(close)}' if close else
             f'packaged {folder}: {", ".join(names)}')
    return (f'{flag}={value}: no file {path!r} here and no packaged {kind} {stem!r}; '
            f'{which} (seedsweep --mode=list lists each with a line)')
  return None

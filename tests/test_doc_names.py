"""The manual names only what exists: every file, module, function, class, config key,
flag and dataset that README.md and docs/ (the dated log aside) put in backticks."""
import ast
import collections
import configparser
import functools
import os
import re
import shlex

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pages():
  """README.md and the manual's pages; docs/log.md is a dated record, true then."""
  pages = ['README.md']
  for folder, subfolders, names in os.walk(os.path.join(ROOT, 'docs')):
    subfolders[:] = sorted(d for d in subfolders if not d.startswith(('_', '.'))
                           and d != 'jupyter_execute')
    pages += sorted(os.path.relpath(os.path.join(folder, name), ROOT)
                    for name in names if name.endswith('.md'))
  return [page for page in pages if page != os.path.join('docs', 'log.md')]


# --- the rules' vocabulary -----------------------------------------------------------

# Packages that are not ours, and jax's transformations written bare: a dotted name or
# module starting with one of these is theirs (`jax.lax.scan`, `optax.adam`,
# `flax.linen.Module`, `python -m pytest`, `jit(vmap(init))`).
EXTERNAL = {
    'absl', 'cloudpickle', 'dill', 'flax', 'gensim', 'grad', 'io', 'jax', 'jit',
    'jnp', 'joblib', 'lax', 'marshal', 'ml_collections', 'mlflow', 'nn', 'nnx', 'np',
    'numpy', 'optax', 'optuna', 'orbax', 'os', 'pathlib', 'pickle', 'pip', 'pytest',
    'scipy', 'shelve', 'shutil', 'sphinx', 'submitit', 'sys', 'tempfile', 'tensorboard',
    'tensorflow', 'tensorflow_datasets', 'tf', 'tfds', 'torch', 'vmap', 'wandb', 'zlib',
}

# The manual's metavariables: `--config=FILE.py[:ARG]`, `ROOT/sweep.json`, `[:VARIANT]`.
PLACEHOLDERS = {'ARG', 'DATASET', 'DIR', 'E', 'FILE', 'N', 'NAME', 'ROOT', 'ROW',
                'ROWS', 'RUN', 'SIGNAL', 'TAB', 'VARIANT', 'X'}

# The records of results.json whose key paths the manual names
# (`provenance.determinism.matmul_precision`).
RECORDS = {'provenance'}

# Sections about other people's code (docs/models.md, "Reference implementations"):
# their file and function names are those repositories'; only names that are
# unmistakably ours (these prefixes) are checked there.
FOREIGN_SECTION = re.compile(r'(Reference|Public) implementations')
OURS = ('seedsweep', 'experiments/', 'sweeps/', 'searches/', 'benchmarks/', 'results/',
        'tests/', 'config.', '--config', 'python ')

# The few names in backticks that no rule below tells from ours.
ALLOWED = {
    '--config.a.b=value',         # the shape of an override
    '_phrases',                   # the suffix of `sst/binary_phrases`, `sst/fine_...`
    # Other libraries' names, out of the sections about other implementations:
    'AdadeltaOptimizer',          # TensorFlow 1
    'LSTMCell',                   # TensorFlow
    'SkylakeX',                   # an OpenBLAS core
    'TpuDevice',                  # what jax.devices() prints on a TPU
    'YNN_FLAG_CONSISTENT_ARITHMETIC',  # YNNPACK's
    'deepsig',                    # deep-significance, the package
    'multi_aso',                  # ... and its function
    'scancel',                    # Slurm's command
    'stsa.*',                     # Kim's SST files, which the tests compare with
    'stsa.{fine,binary}.phrases.train',   # ... and Lei's
}

# File extensions that make a backticked word a file name.
EXTENSIONS = ('py', 'md', 'json', 'jsonl', 'txt', 'csv', 'tsv', 'tex', 'cfg', 'png',
              'svg', 'pdf', 'npz', 'ipynb', 'sh', 'db', 'out', 'zip', 'gz', 'parquet',
              'lock', 'html')
_FILE_RE = re.compile(r'[^\s/]*\.(%s)$' % '|'.join(EXTENSIONS))
_IDENT = r'[A-Za-z_]\w*'
_DOTTED_RE = re.compile(r'(%s)((\.(%s|\*|\{[\w,]+\}))+)(\(.*\))?$' % (_IDENT, _IDENT))
_NAME_RE = re.compile(r'(_*[A-Za-z]\w*)(\(.*\))?$')
# The checkout's folders of build outputs, caches and machine-local files (.gitignore).
_NOT_CHECKOUT = {'__pycache__', '_build', 'jupyter_execute', '.ipynb_checkpoints'}
_NOT_CHECKOUT_TOP = {'runs', 'build', 'dist'}


# --- the manual's code spans ---------------------------------------------------------

def _spans(page):
  """``(line, text, language, heading)`` of every inline code span of ``page``
  (``language`` None) and of every line of its fenced code blocks."""
  with open(os.path.join(ROOT, page), encoding='utf-8') as f:
    lines = f.read().split('\n')
  fence = language = None   # the opening fence of the block we are in, its language
  heading = ''
  paragraph = []            # (line number, text) of the prose lines since a break
  out = []

  def flush():
    if not paragraph:
      return
    text = '\n'.join(line for _, line in paragraph)
    starts = [0]
    for _, line in paragraph:
      starts.append(starts[-1] + len(line) + 1)
    for match in re.finditer(r'(?<![`\\])(`+)(?!`)(.+?)(?<!`)\1(?!`)', text, re.S):
      if text[:match.start()].endswith('}'):   # a MyST role: {ref}`...`
        continue
      row = sum(1 for start in starts[1:] if start <= match.start())
      out.append((paragraph[row][0], ' '.join(match.group(2).split()), None, heading))
    paragraph.clear()

  for number, line in enumerate(lines, 1):
    if fence is not None:
      if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
        fence = None
      else:
        out.append((number, line, language, heading))
      continue
    opening = re.match(r'\s*(`{3,}|~{3,}|:{3,})(.*)', line)
    if opening:
      flush()
      fence, language = opening.group(1), opening.group(2).strip() or 'text'
    elif not line.strip():
      flush()
    else:
      if line.startswith('#'):
        flush()
        heading = line
      paragraph.append((number, line))
  flush()
  return out


# --- what the checkout has -----------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _checkout():
  """Every file of the checkout (relative paths) but build outputs, caches and the
  machine-local folders .gitignore lists."""
  paths = []
  for folder, subfolders, names in os.walk(ROOT):
    top = folder == ROOT
    subfolders[:] = [d for d in subfolders
                     if d not in _NOT_CHECKOUT and not d.endswith('.egg-info')
                     and not (d.startswith('.') and d != '.ci')
                     and not (top and d in _NOT_CHECKOUT_TOP)]
    paths += [os.path.relpath(os.path.join(folder, name), ROOT) for name in names]
  return sorted(paths)


@functools.lru_cache(maxsize=None)
def _basenames():
  return {os.path.basename(path) for path in _checkout()}


@functools.lru_cache(maxsize=None)
def _folders():
  return {path.rsplit('/', i)[0] for path in _checkout()
          for i in range(1, path.count('/') + 1)}


@functools.lru_cache(maxsize=None)
def _entries():
  """Every file and folder of the checkout."""
  return _folders() | set(_checkout())


class _Source:
  """What the checkout's Python code defines and says (this file aside)."""

  def __init__(self):
    self.modules = {}         # dotted module name -> names bound at its top level
    self.aliases = {}         # any dotted tail of a module name -> those modules
    self.classes = {}         # class name -> [(members, base names)]
    self.defined = set()      # every def, class, module or class attribute, self.x
    self.words = set()        # every identifier the code defines or uses
    self.strings = set()      # every string constant but docstrings
    self.templates = []       # f-strings with a word (f'recurrent_{d}'), as regexes
    self.fields = set()       # the fields of the models (config.model.*)
    for path in _checkout():
      if path.endswith('.py') and path != os.path.relpath(__file__, ROOT):
        with open(os.path.join(ROOT, path), encoding='utf-8') as f:
          self._add(path, ast.parse(f.read(), path), path.startswith('tests' + os.sep))
    for entries in self.classes.values():
      for members, _ in entries:
        self.defined |= members
    self.words |= self.defined
    # setup.cfg and CI (their comments aside): the extras, package_dir, addopts, the
    # pytest marker `slow` and flags.
    self.config_text = ''
    for path in ('setup.cfg', os.path.join('.ci', 'run')):
      with open(os.path.join(ROOT, path), encoding='utf-8') as f:
        self.config_text += ''.join(line for line in f
                                    if not line.lstrip().startswith('#'))
    self.words.update(re.findall(_IDENT, self.config_text))
    self.text = '\n'.join(self.strings)

  def _add(self, path, tree, test):
    # A test's definitions count (`conftest.tiny_shapes`), not its words and strings:
    # tests name wrong fields and files on purpose.
    parts = path[:-len('.py')].split(os.sep)
    if parts[-1] == '__init__':
      parts = parts[:-1]
    names = ['.'.join(parts)]
    if parts and parts[0] in ('models', 'data', 'experiments', 'sweeps', 'searches'):
      names.append('.'.join(['seedsweep'] + parts))   # installed inside the package
    top = set()
    for node in tree.body:
      top |= _bound(node)
      if not isinstance(node, (ast.Import, ast.ImportFrom)):
        self.defined |= _bound(node)
    if '__getattr__' in top:   # names given on first use (`seedsweep.train`)
      top |= {leaf.value for node in tree.body if isinstance(node, ast.Assign)
              for leaf in ast.walk(node.value) if isinstance(leaf, ast.Constant)
              and isinstance(leaf.value, str) and re.fullmatch(_IDENT, leaf.value)}
    for name in names:
      self.modules.setdefault(name, set()).update(top)
      segments = name.split('.')
      for i in range(len(segments)):
        self.aliases.setdefault('.'.join(segments[i:]), set()).add(name)
    docstrings = set()
    todo = collections.deque([(tree, None)])   # (node, the members of its class)
    while todo:
      node, members = todo.popleft()
      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                           ast.AsyncFunctionDef)) and node.body and isinstance(
                               node.body[0], ast.Expr):
        docstrings.add(id(node.body[0].value))
      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        self.defined.add(node.name)
      elif isinstance(node, ast.ClassDef):
        # Methods, class attributes, dataclass fields and `self.x = ...` of its methods.
        members = {node.name}
        for child in node.body:
          members |= _bound(child)
        self.classes.setdefault(node.name, []).append(
            (members, [ast.unparse(base).split('.')[-1] for base in node.bases]))
        if parts[0] == 'models':
          self.fields |= {child.target.id for child in node.body
                          if isinstance(child, ast.AnnAssign)
                          and isinstance(child.target, ast.Name)}
      elif members is not None and isinstance(node, (ast.Assign, ast.AnnAssign,
                                                     ast.AugAssign)):
        members |= _self_attributes(node)
      todo.extend((child, members) for child in ast.iter_child_nodes(node))
      if test:
        continue
      if isinstance(node, ast.Name):
        self.words.add(node.id)
      elif isinstance(node, ast.Attribute):
        self.words.add(node.attr)
      elif isinstance(node, ast.arg):
        self.words.add(node.arg)
      elif isinstance(node, ast.keyword) and node.arg:
        self.words.add(node.arg)
      elif isinstance(node, ast.alias):
        self.words.update((node.asname or node.name).split('.'))
      elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings):
        self.strings.add(node.value)
      elif isinstance(node, ast.JoinedStr):
        pieces = [part.value if isinstance(part, ast.Constant) else None
                  for part in node.values]
        if re.search('[a-z]{3}', ''.join(piece or '' for piece in pieces)):
          self.templates.append(re.compile(''.join(
              r'\w+' if piece is None else re.escape(piece) for piece in pieces)))

  def members(self, cls, seen=()):
    """The attributes a class of that name defines, with those of its bases."""
    out = set()
    for members, bases in self.classes.get(cls, []):
      out |= members
      for base in bases:
        if base not in seen:
          out |= self.members(base, seen + (cls,))
    return out

  def says(self, piece):
    """Whether a string of the code holds ``piece`` as a whole word or file name."""
    return re.search(r'(?<![A-Za-z0-9-])%s(?![A-Za-z0-9])' % re.escape(piece),
                     self.text) is not None


def _self_attributes(node):
  """``x`` of ``self.x = ...`` (or ``cls.x``)."""
  targets = (node.targets if isinstance(node, ast.Assign) else
             [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
  return {target.attr for target in targets if isinstance(target, ast.Attribute)
          and isinstance(target.value, ast.Name) and target.value.id in ('self', 'cls')}


def _bound(node):
  """The names a statement binds (def, class, import, =, for, with, self.x =)."""
  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
    return {node.name}
  if isinstance(node, (ast.Import, ast.ImportFrom)):
    return {(alias.asname or alias.name).split('.')[0] for alias in node.names}
  targets = []
  if isinstance(node, ast.Assign):
    targets = node.targets
  elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For)):
    targets = [node.target]
  elif isinstance(node, ast.With):
    targets = [item.optional_vars for item in node.items if item.optional_vars]
  out = set()
  for target in targets:
    for leaf in ast.walk(target):
      if isinstance(leaf, ast.Name):
        out.add(leaf.id)
      elif isinstance(leaf, ast.Attribute):
        out.add(leaf.attr)
  return out


@functools.lru_cache(maxsize=None)
def _source():
  return _Source()


@functools.lru_cache(maxsize=None)
def _config_keys():
  """Every config key (`train.num_epochs`, `data.vectors`) and model field."""
  from seedsweep.config import base  # pylint: disable=g-import-not-at-top
  keys = set()

  def walk(node, prefix):
    for key, value in node.items():
      keys.add(prefix + key)
      if hasattr(value, 'items'):
        walk(value, prefix + key + '.')
  walk(base.get_base_config(), '')
  keys |= {'model.' + field for field in _source().fields}
  return keys


@functools.lru_cache(maxsize=None)
def _datasets():
  from seedsweep import data  # pylint: disable=g-import-not-at-top
  return set(data.REGISTRY)


@functools.lru_cache(maxsize=None)
def _extras():
  parser = configparser.ConfigParser()
  parser.read(os.path.join(ROOT, 'setup.cfg'))
  return set(parser['options.extras_require'])


# --- the rules -----------------------------------------------------------------------

def _braces(text):
  """`a_{x,y}.py` -> [`a_x.py`, `a_y.py`]."""
  match = re.search(r'\{([^{}]*,[^{}]*)\}', text)
  if not match:
    return [text]
  return [expanded for choice in match.group(1).split(',')
          for expanded in _braces(text[:match.start()] + choice + text[match.end():])]


def _glob(pattern, under=''):
  """Whether a checkout path matches ``pattern``: `<x>`, `*` and a placeholder file name
  (`FILE.py`) stand for any text."""
  pieces = re.split(r'<[^>]*>|\*|\b(?:%s)(?=\.\w+$)' % '|'.join(PLACEHOLDERS),
                    pattern.rstrip('/'))
  if len(pieces) == 1:
    return under + pattern.rstrip('/') in (
        _folders() if pattern.endswith('/') else _entries())
  regex = re.compile(re.escape(under) + '[^/]*'.join(re.escape(p) for p in pieces)
                     + ('/.+' if pattern.endswith('/') else '(/.+)?') + '$')
  return any(regex.match(path) for path in _checkout())


def _check_path(token):
  """A file or folder: of the checkout, a dataset, or one a run writes."""
  path = re.sub(r'(\.py)[:\[].*$', r'\1', token)    # experiments/x.py:arg, x.py[:ARG]
  path = re.sub(r'::.*$', '', path)                 # run/faults.py::reached(moment)
  problems = [_check_one_path(variant) for variant in _braces(path)]
  return next((problem for problem in problems if problem), None)


def _check_one_path(path):
  head = path.split('/')[0]
  if (path.split('.')[0] in PLACEHOLDERS or head in PLACEHOLDERS or path[0] in '~/$'
      or path.startswith(('..', 'path/to/', 'docs/_build/'))):
    return None   # a placeholder, a path outside the checkout, the manual's build
  if '/' in path:
    if head in _entries():
      return None if _glob(path) else 'no such file or folder in the checkout'
    if 'seedsweep/' + head in _folders():
      return None if _glob(path, 'seedsweep/') else 'no such file in seedsweep/'
    if path in _datasets():
      return None
    if head in {name.split('/')[0] for name in _datasets()}:
      return 'no such dataset in data.REGISTRY'
  elif _glob(path) or path in _basenames():
    return None
  if re.match(r'\.(%s)$' % '|'.join(EXTENSIONS), path):
    return None   # a kind of file: `.csv`
  if re.match(r'\.%s$' % _IDENT, path):
    return _check_name(path[1:])   # a method: `.zipped`
  if not (_FILE_RE.search(path) or path.endswith('/') or '<' in path or '*' in path):
    return None   # a key path (`dev_accuracy/mean`, `classifier/kernel`), a repository
  # A file or folder a run writes: its literal pieces are in the code's strings.
  for piece in re.split(r'<[^>]*>|\*|/', path):
    piece = piece.strip('._-')
    if piece and piece not in PLACEHOLDERS and not _source().says(piece):
      return f'{piece!r} is in no file of the checkout nor any string of the code'
  return None


def _check_dotted(token):
  """`seedsweep.run.loop`, `Steps.train_chunk`, `config.train.patience`, `base.f()`."""
  match = _DOTTED_RE.match(token)
  dotted = token[:match.start(5)] if match.group(5) else token
  if dotted.split('.')[0] in PLACEHOLDERS:      # `RUN.reproduction`: a run's folder
    return _check_one_path('.' + dotted.split('.', 1)[1] + '/')
  problems = [_check_one_dotted(variant) for variant in _braces(dotted)]
  return next((problem for problem in problems if problem), None)


def _check_one_dotted(dotted):
  source = _source()
  segments = dotted.split('.')
  if segments[0] in EXTERNAL:
    return None
  prefix = segments[-1] == '*'
  if prefix:
    segments = segments[:-1]
  # A config key, with or without `config.` (`config.train.patience`, `data.vectors`).
  key = '.'.join(segments[1:] if segments[0] == 'config' else segments)
  keys = _config_keys()
  if (key in keys or (prefix and any(k.startswith(key + '.') for k in keys))
      or ('.' in key and any(k.endswith('.' + key) for k in keys))):  # vectors.static
    return None
  # A module and the attributes down from it (`loop.train`, `seedsweep.inputs.vectors`).
  for i in range(len(segments), 0, -1):
    for module in source.aliases.get('.'.join(segments[:i]), ()):
      if i == len(segments) or _has_attributes(source.modules[module], segments[i:]):
        return None
  # A class and its members (`Steps.train_chunk`).
  if segments[0] in source.classes and _has_attributes(source.members(segments[0]),
                                                      segments[1:]):
    return None
  # A key path in a record the code writes (`provenance.data.protocol`): every key a
  # string of the code.
  if segments[0] in RECORDS and all(segment in source.strings for segment in segments):
    return None
  return 'no such module, attribute or config key'


def _has_attributes(names, rest):
  source = _source()
  if rest[0] not in names:
    return False
  if len(rest) == 1:
    return True
  if rest[0] in source.classes:
    return _has_attributes(source.members(rest[0]), rest[1:])
  return any(_has_attributes(source.modules[m], rest[1:])
             for m in source.aliases.get(rest[0], ()))


def _check_name(token):
  """`train_steps`, `make_quick()`, `ChunkSizes`, `_keep_where`, `dev_accuracy`."""
  source = _source()
  match = _NAME_RE.match(token)
  name = match.group(1)
  if len(name) == 1 or name in EXTERNAL or name in PLACEHOLDERS:
    return None
  # Shaped like code (a call, a class, a private name): defined somewhere.
  if match.group(2) or name.startswith('_') or re.match(r'[A-Z]\w*[a-z]', name):
    if name in source.defined or name in source.aliases:
      return None
    return 'defined nowhere in the code'
  # A word (a config field, a value, a mode, a key, a constant, an environment
  # variable, an experiment): the code defines or uses it, or has it as a string or the
  # name of a file; a metric (`test_loss`): its split and its measure.
  metric = re.match(r'(train|dev|test)_(\w+)$', name)
  if (name in source.words or name in source.strings or name in source.aliases
      or any(template.fullmatch(name) for template in source.templates)
      or name in _datasets()
      or any(key.split('.')[-1] == name for key in _config_keys())
      or (metric and metric.group(2) in source.strings)):
    return None
  return 'the code neither defines nor uses this name, nor has it as a string'


def _check_flag(flag):
  """`--config=demo:quick`, `--config.train.patience=5`, `--sweep_shard=i/N`."""
  if not flag.startswith('--'):
    return None   # a short option of another tool (pytest -n)
  name, _, value = flag[2:].partition('=')
  if name in ('config', 'sweep', 'search') and value:
    return _check_packaged(name, value)
  if name.startswith('config.'):
    key = name[len('config.'):]
    if key == '*':
      return None
    *section, last = key.split('.')
    variants = ['.'.join(section + [choice]) for choice in last.split('/')]
    missing = [v for v in variants if _check_one_dotted('config.' + v)]
    return f'no config key {", ".join(missing)}' if missing else None
  if name.startswith('xla_'):
    return None   # XLA's own flags
  source = _source()
  name = name[len('no-'):] if name.startswith('no-') else name
  if name in source.strings or '--' + name in source.strings or (
      '--' + name in source.config_text):
    if name == 'mode' and value and value not in source.strings:
      return f'no mode {value!r}'
    return None
  return 'no command of the checkout defines this flag'


def _check_packaged(flag, value):
  """`--config=demo:quick`, `--sweep=sweeps/demo.py`: the file exists."""
  path = re.sub(r'\[.*$', '', value).split(':')[0]
  if path in PLACEHOLDERS or path.endswith('.py'):
    return _check_path(path)
  folder = {'config': 'experiments', 'sweep': 'sweeps', 'search': 'searches'}[flag]
  return None if _glob(f'{folder}/{path}.py') else f'no {folder}/{path}.py'


def _check_command(command):
  """A shell command: of ours, its script or module, extras and flags exist."""
  try:
    words = shlex.split(command)
  except ValueError:
    words = command.split()
  ours = words[0] == 'seedsweep' or words[0].startswith('-')
  problems = []
  for i, word in enumerate(words):
    if words[0].startswith('python') and i and words[i - 1] == '-m':
      ours = word.split('.')[0] in _source().aliases and word.split('.')[0] != 'pytest'
      if ours and word not in _source().aliases:
        problems.append(f'no module {word}')
    elif (words[0].startswith('python') and i == 1 and _FILE_RE.search(word)):
      ours = True
      problems.append(_check_path(word))
    elif words[:2] == ['pip', 'install'] and re.match(r'(\.|seedsweep)\[', word):
      missing = set(re.search(r'\[(.*)\]', word).group(1).split(',')) - _extras()
      if missing:
        problems.append(f'no extra {", ".join(sorted(missing))} in setup.cfg')
    elif word.startswith('-') and ours:
      problems.append(_check_flag(word))
  return next((problem for problem in problems if problem), None)


def problem(token):
  """Why a backticked token names nothing that exists, or None."""
  token = token.strip()
  if not token or token in ALLOWED:
    return None
  if ' ' in token:
    first = token.split()[0]
    if first in ('python', 'python3', 'seedsweep', 'pip') or first.startswith('--'):
      return _check_command(token)
    return None   # prose, a formula or a snippet
  if token.startswith('-'):
    return _check_flag(token)
  if re.match(r"""(['"])(.+)\1$""", token):
    return None if token[1:-1] in _source().strings else 'no string of the code says it'
  if '=' in token:
    left = token.split('=')[0]
    if _DOTTED_RE.match(left):
      return _check_dotted(left)   # `config.train.patience=5`, `vectors.static=True`
    return None   # a value: `dropout=0.5`, `NPROC=3`
  if '/' in token or token.startswith('.') or _FILE_RE.search(
      re.sub(r'[:\[].*$', '', token)):
    return _check_path(token)
  if re.match(r'[\w.]+<\w+>[\w.]*$', token) and token.startswith('seedsweep.'):
    module = re.compile(re.sub(r'<\w+>', r'\\w+', re.escape(token)))
    return None if any(map(module.fullmatch, _source().modules)) else 'no such module'
  if _DOTTED_RE.match(token):
    return _check_dotted(token)
  if re.search(r'<\w+>|\*', token) and re.match(r'[\w.<>*:@-]+$', token):
    return _check_one_path(token)   # a name a run writes: `point_<i>`, `seeds_*`
  if _NAME_RE.match(token):
    return _check_name(token)
  return None   # a value, a shape, a formula


def _fenced_problem(line, language):
  """A shell block's commands (a line that goes on from the one before starts with a
  flag); a Python block's `seedsweep.x` names and imports; an API page's autodoc
  targets."""
  if language in ('sh', 'bash', 'console', 'shell'):
    command = line.split('  #')[0].strip().rstrip('\\').strip()
    if command and not command.startswith('#'):
      return _check_command(command)
    return None
  names = []
  if language == 'python':
    names = re.findall(r'\bseedsweep(?:\.\w+)+', line)
    imported = re.match(r'\s*from (seedsweep[\w.]*) import ([\w, ]+)', line)
    if imported:
      names += [f'{imported.group(1)}.{name.strip()}'
                for name in imported.group(2).split(',')]
  elif language == '{eval-rst}':
    names = re.findall(r'^\s*\.\. auto\w+:: ([\w.]+)', line)
  for name in names:
    found = problem(name)
    if found:
      return f'{name}: {found}'
  return None


def _missing():
  """`page:line: `text`: why` of every name in the manual that names nothing."""
  out = []
  for page in _pages():
    for number, text, language, heading in _spans(page):
      if FOREIGN_SECTION.search(heading) and not text.startswith(OURS):
        continue
      found = _fenced_problem(text, language) if language else problem(text)
      if found:
        out.append(f'{page}:{number}: `{text}`: {found}')
  return out


def test_the_manual_names_only_what_exists():
  missing = _missing()
  assert not missing, (f'{len(missing)} names in the manual name nothing that exists '
                       '(fix the page, or see the rules in tests/test_doc_names.py):\n'
                       + '\n'.join(missing))


def test_a_misspelt_name_of_each_kind_fails():
  for token in ('seedsweep/run/loops.py', 'run/verfy.py', 'experiments/demos.py:quick',
                'data/vector.py', 'seedsweep.run.lop', 'seedsweep.run.loop.trian',
                'Steps.train_chunks', 'config.train.num_epoch', 'train.num_epoch',
                '--config.model.hiden=3', 'make_quik()', 'ChunkSize', '_keep_were',
                'sst/binari', 'result.json', '--config=demos:quick', '--sweep=demos',
                'python benchmarks/compares.py', 'pip install -e ".[cuda11]"',
                '--sweep_shards=0/2', '--mode=verfy', 'tests/golden_run.py',
                'python -m seedsweep.data.word2vecs', 'sweeps/dclstm_{depth,widht}.py',
                "'portabel'"):
    assert problem(token), token
  assert _fenced_problem('seedsweep --config=demo --sweep=dem --workdir=runs/x', 'sh')
  assert _fenced_problem('  --config.train.patiense=3', 'sh')
  assert _fenced_problem('from seedsweep.sweep import grid, prodct', 'python')
  assert _fenced_problem('.. automodule:: seedsweep.run.lop', '{eval-rst}')
  for token in ('experiments/demo.py:quick', 'seedsweep.run.loop', 'run/verify.py',
                'config.train.num_epochs', 'results.json', 'jax.lax.scan', '.csv',
                '--config=demo:quick', 'sst/binary', 'dropout=0.5', 'lax.scan',
                'python -m pytest -x', 'dev_accuracy/mean', 'ROOT/sweep.json'):
    assert not problem(token), (token, problem(token))
  assert not _fenced_problem('seedsweep --config=demo --sweep=demo --workdir=x', 'sh')

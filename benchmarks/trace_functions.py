r"""How many of the project's functions one short run enters (issue 80's trace).

  python benchmarks/trace_functions.py              # demo:quick, 2 seeds, 1 epoch
  python benchmarks/trace_functions.py --list       # and every function, by file

One ``demo:quick`` epoch of 2 seeds through :func:`seedsweep.train` in a fresh
workdir, under ``sys.setprofile``: every named function of the checkout's
``seedsweep/``, ``models/``, ``data/`` and ``experiments/`` entered, counted once
(lambdas, comprehensions, generator expressions and class and module bodies are not). The
config is loaded before the trace; what the run imports is traced. A count, not a
time: the machine's load does not change it.
"""
import argparse
import collections
import inspect
import os
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)

FOLDERS = ('seedsweep', 'models', 'data', 'experiments')
UNNAMED = frozenset({'<lambda>', '<listcomp>', '<dictcomp>', '<setcomp>', '<genexpr>',
                     '<module>'})


def trace(fn, bodies: bool = False):
  """``(result, {file relative to the checkout: {qualified function name}})`` of
  the project's named functions ``fn()`` enters (this thread's calls); with
  ``bodies``, the class bodies it runs (importing) too."""
  roots = tuple(os.path.join(REPO, f) + os.sep for f in FOLDERS)
  entered = set()

  def profile(frame, event, _arg):
    if event == 'call':
      code = frame.f_code
      # A class or module body is no function (CO_OPTIMIZED marks a function's).
      if ((bodies or code.co_flags & inspect.CO_OPTIMIZED)
          and code.co_name not in UNNAMED
          and code.co_filename.startswith(roots)):
        entered.add((code.co_filename, code.co_qualname, code.co_firstlineno))

  sys.setprofile(profile)
  try:
    result = fn()
  finally:
    sys.setprofile(None)
  by_file = collections.defaultdict(set)
  for path, name, _ in entered:
    by_file[os.path.relpath(path, REPO)].add(name)
  return result, dict(by_file)


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--config', default='demo:quick')
  parser.add_argument('--seeds', default='1,2')
  parser.add_argument('--list', action='store_true', help='every function, by file')
  parser.add_argument('--bodies', action='store_true',
                      help='count the class bodies run too (the issue\'s first figure)')
  args = parser.parse_args(argv)
  import seedsweep  # pylint: disable=g-import-not-at-top
  config = seedsweep.load_config(args.config)
  config.seeds = tuple(int(s) for s in args.seeds.split(','))
  config.train.num_epochs = 1
  config.train.progress = False
  with tempfile.TemporaryDirectory() as workdir:
    _, by_file = trace(lambda: seedsweep.train(config, workdir, print_fn=lambda _: None),
                       bodies=args.bodies)
  total = sum(len(v) for v in by_file.values())
  print(f'{total} functions in {len(by_file)} files')
  for path, names in sorted(by_file.items(), key=lambda kv: (-len(kv[1]), kv[0])):
    print(f'{len(names):4d}  {path}')
    if args.list:
      for name in sorted(names):
        print(f'        {name}')


if __name__ == '__main__':
  main()

"""seedsweep: reproducible multi-seed sweeps of LSTM-family sentence classifiers.

The layers, bottom to top (each imports only its own and those below it;
tests/test_layers.py):

1. :mod:`seedsweep.errors`, :mod:`seedsweep.files`, :mod:`seedsweep.declared`,
   :mod:`seedsweep.config`
2. :mod:`seedsweep.inputs`   the input machinery: raw files, the prepared-dataset cache,
   vocabularies, encoded arrays, the device-resident pipeline (layer 1 only)
3. :mod:`seedsweep.models`, :mod:`seedsweep.data` (the checkout's ``models/`` and
   ``data/`` folders: the models, and the datasets' readers and registry; models
   import layer 1 only, data layers 1-2)
4. :mod:`seedsweep.engine`   pure JAX: keys, state, optimisers, objectives, steps
5. :mod:`seedsweep.run`      one run and its files
6. :mod:`seedsweep.sweep`    many runs
7. :mod:`seedsweep.reports`   tables and plots from a folder of runs
8. this package itself, the experiment, sweep and search files (``experiments/``,
   ``sweeps/``, ``searches/``, installed as :mod:`seedsweep.experiments`,
   :mod:`seedsweep.sweeps`, :mod:`seedsweep.searches`) and ``launch.py``

``models/``, ``data/``, ``experiments/``, ``sweeps/`` and ``searches/`` live at the
checkout's top level and are installed inside this package (setup.cfg, package_dir).
A checkout that is only on ``sys.path``, not installed (a device machine that has no
package index, a second worktree), finds them there too: see ``__path__`` below.
"""
import os as _os

# Run from a checkout without installing it: its top-level folders are this package's
# subpackages, as package_dir maps them when installed. An installed package finds its
# own copies first, in its own folder; only the names it lacks fall through to here.
_CHECKOUT = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if all(_os.path.isfile(_os.path.join(_CHECKOUT, *parts)) for parts in (
    ('setup.cfg',), ('models', '__init__.py'), ('experiments', '__init__.py'))):
  __path__.append(_CHECKOUT)  # pylint: disable=undefined-variable

# The Python API (seedsweep/api.py), imported on first use so that ``import seedsweep``
# stays cheap (no jax until a function needs it).
_API = ('load_config', 'train', 'evaluate', 'predict', 'run_sweep', 'run_search',
        'report',
        'read_split', 'workdir_config')
__all__ = list(_API) + ['UserError']


def __getattr__(name):
  if name in _API:
    from seedsweep import api  # pylint: disable=g-import-not-at-top
    return getattr(api, name)
  if name == 'UserError':
    from seedsweep.errors import UserError  # pylint: disable=g-import-not-at-top
    return UserError
  if name.startswith('_'):  # what tools probe (__wrapped__): the plain error
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  import difflib  # pylint: disable=g-import-not-at-top
  close = difflib.get_close_matches(name, __all__, n=1)  # a typo of a function's name
  raise AttributeError(f'module {__name__!r} has no attribute {name!r}'
                       + (f'; did you mean {close[0]!r}?' if close else
                          f'; its functions are {", ".join(_API)}'))

"""Sphinx configuration of the seedsweep manual.

Build (from the repository root, after ``pip install -e ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

then open ``docs/_build/html/index.html``. The pages are MyST Markdown (``*.md``);
``tutorial.ipynb`` is executed on every build (MyST-NB), so the manual shows what the
code does today. ``SEEDSWEEP_DOCS_EXECUTE=cache`` re-executes it only when it changed
(jupyter-cache, in ``docs/_build/.jupyter_cache``); ``off`` shows it unexecuted.
"""
import os
import sys

DOCS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(DOCS)
# Autodoc imports the package from this checkout; models/, data/, experiments/ ...
# are found through its install (pip install -e ".[docs]": setup.cfg's package_dir).
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(DOCS, '_ext'))  # config_fields: configuration.md's tables

project = 'seedsweep'
author = 'the seedsweep authors'
copyright = '2026, the seedsweep authors'  # pylint: disable=redefined-builtin
release = version = '0.1.0'

extensions = [
    'myst_nb',               # MyST Markdown pages and executed notebooks
    'sphinx.ext.autodoc',    # the API reference, from the docstrings
    'sphinx.ext.napoleon',   # Google-style docstring sections
    'config_fields',         # docs/_ext: every config field, from its declaration
]

source_suffix = {'.md': 'myst-nb', '.ipynb': 'myst-nb', '.rst': 'restructuredtext'}
root_doc = 'index'
exclude_patterns = ['_build', 'jupyter_execute', '**.ipynb_checkpoints', 'Thumbs.db',
                    '.DS_Store']

# --- MyST -----------------------------------------------------------------------------
myst_enable_extensions = ['dollarmath', 'colon_fence']
myst_heading_anchors = 3   # `page.md#a-heading` links, as GitHub makes them

# --- the notebook ---------------------------------------------------------------------
nb_execution_mode = os.environ.get('SEEDSWEEP_DOCS_EXECUTE', 'force')
nb_execution_timeout = 300            # seconds a cell; the whole notebook takes ~1 min
nb_execution_raise_on_error = True    # a cell that fails fails the build
nb_execution_show_tb = True           # ... and its traceback is in the build's log
nb_merge_streams = True               # a cell's stdout as one block
nb_render_markdown_format = 'gfm'    # Markdown outputs (the report's table) with tables

# --- API reference --------------------------------------------------------------------
autodoc_member_order = 'bysource'
autodoc_typehints = 'signature'
autodoc_mock_imports = []
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# --- HTML -----------------------------------------------------------------------------
html_theme = 'sphinx_book_theme'
html_title = 'seedsweep'
html_theme_options = {
    'show_toc_level': 2,
    'navigation_with_keys': False,
}
html_static_path = ['_static']
html_css_files = ['custom.css']   # wide tables: a smaller font, wrapping code

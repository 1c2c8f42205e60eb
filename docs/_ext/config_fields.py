"""The ``seedsweep-config-fields`` directive: the tables of every config field, each
with its default and doc, generated at build time from the declarations
(seedsweep/config/base.py, ``fields.markdown_tables``), so the manual cannot drift
from the code. Used in a MyST Markdown page (docs/configuration.md), whose parser reads
the generated Markdown."""
from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList


class ConfigFields(Directive):
  """Every field of ``config``, section by section (no arguments)."""
  has_content = False

  def run(self):
    from seedsweep.config import base  # pylint: disable=g-import-not-at-top
    from seedsweep.config import fields  # pylint: disable=g-import-not-at-top
    container = nodes.container()
    lines = fields.markdown_tables(base.BASE)
    self.state.nested_parse(StringList(lines, source='seedsweep/config/base.py'),
                            self.content_offset, container)
    return container.children


def setup(app):
  app.add_directive('seedsweep-config-fields', ConfigFields)
  return {'parallel_read_safe': True, 'parallel_write_safe': True}

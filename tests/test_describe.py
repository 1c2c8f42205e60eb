"""--mode=describe's text (seedsweep/run/describe.py): every config field beside its
value with what it is; the model's fields from its class's docstring."""
import re

from seedsweep.config import base
from seedsweep.run import describe


class Documented:
  """A model whose fields are documented.

  Attributes:
    hidden: LSTM units
      per direction.
    dropout (float): the rate before the classifier.

  Returns:
    nothing: a later section, not a field.
  """


def test_every_declared_field_is_printed_with_its_doc():
  config = base.get_base_config()
  config.model.hidden = 32
  config.model.pooling = 'max'
  config.data.tfds_dir = '/a/folder/whose/name/is/longer/than/the/column'
  lines = describe.config_lines(config, model='Documented',
                                model_docs=describe.attribute_docs(Documented))
  assert len(lines) == len(base.FIELDS) + 2
  docs = {}
  for line in lines:
    key, doc = re.fullmatch(r'([\w.]+) = .*?  +# (.+)', line).groups()
    docs[key] = doc
  assert {k: docs[k] for k in base.FIELDS} == {k: f.doc for k, f in base.FIELDS.items()}
  assert docs['model.hidden'] == 'LSTM units per direction. (Documented)'
  assert docs['model.pooling'] == 'a field of the model class Documented'
  assert 'train.patience = 0 ' in '\n'.join(lines)
  assert "/the/column'  # prepared datasets' cache" in '\n'.join(lines)


def test_attribute_docs_reads_the_attributes_section_only():
  assert describe.attribute_docs(Documented) == {
      'hidden': 'LSTM units per direction.',
      'dropout': 'the rate before the classifier.'}
  assert describe.attribute_docs(int) == {}

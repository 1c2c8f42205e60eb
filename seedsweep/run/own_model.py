"""A user's own model (``config.model.name = 'file.py:Class'``) checked against the
model contract (seedsweep.models.contract) when the run is built, before anything
trains or compiles: one ``UserError`` line per violation, naming the file and class;
its randomness too (host randomness refused; a warning when its parameters ignore the
init key, a hint when its logits look like probabilities: through the run's
``print_fn``, seedsweep.notices).

Registered models are not checked here: their own tests hold them to the contract.
"""
import dataclasses
from typing import Tuple

from seedsweep import notices
from seedsweep.config import python_files
from seedsweep.config import stacking
from seedsweep.engine import embedding_rows
from seedsweep.engine import optimizers
from seedsweep.inputs import encoded
from seedsweep.models import contract


def check(checked, data: encoded.EncodedDataset, model) -> Tuple[str, ...]:
  """Checks the run's model when it is a user's own; returns its stackable fields
  that it tests in Python (flax's ``Dropout``), which stay the config's numbers
  (``pieces.member_hparams`` traces none of them); () for a registered model.

  ``checked``: the run's config as seedsweep.run.prepare.check_config checked it.
  """
  config = checked.config
  name = config.model.name
  if not python_files.is_reference(name):
    return ()
  where = f'config.model.name={name!r}'
  fields = {f.name for f in dataclasses.fields(model)}
  stackable = tuple(f for f in stacking.MODEL_FIELDS if f in fields)
  stacked = tuple(f for f in stackable if len({
      repr(c.model[f] if f in c.model else getattr(model, f))
      for c in checked.point_configs}) > 1)
  vectors = data.embedding_tables is not None
  traced, params = contract.check(
      model, where, num_classes=data.num_classes, vocab_size=data.vocab_size,
      stackable=stackable, stacked=stacked,
      table_for='config.data.vectors.path' if vectors else None)
  # Host randomness is refused; a key it ignores, probabilities as logits are told.
  for line in contract.check_randomness(model, params, where,
                                        num_classes=data.num_classes,
                                        vocab_size=data.vocab_size):
    notices.say(line)
  static = vectors and config.data.vectors.static
  update = embedding_rows.check(
      config.optimizer, optimizers.l2_mask(params, config.l2.params), static)
  if update != 'dense':  # the step hands the model its batch's rows of the table
    asked = config.optimizer.embedding_update
    contract.check_table(
        params, where, data.vocab_size,
        f'config.optimizer.embedding_update={asked!r}'
        + (f' (= {update!r} for {config.optimizer.name})' if asked != update else '')
        + ' (or set --config.optimizer.embedding_update=dense)')
    contract.check_word_vectors(model, params, where,
                                contract.abstract_batch(data.num_classes))
  return tuple(f for f in stackable if f not in traced)

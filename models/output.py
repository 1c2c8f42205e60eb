"""What every model returns: :class:`ModelOutput`."""
from typing import Optional

import flax
import jax


@flax.struct.dataclass
class ModelOutput:
  """A model's answer for a batch (shapes for one seed; the engine stacks seeds).

  Sentence classifiers fill ``logits`` only. The joint model (docs/models.md §5) also
  tags every token and adds a penalty to the loss; the engine's objectives
  (seedsweep/engine/objectives.py) use whichever fields are set.
  """
  logits: jax.Array                          # [batch, classes]
  tag_logits: Optional[jax.Array] = None     # [batch, time, tags]
  predicted_tags: Optional[jax.Array] = None  # [batch, time] int32 (greedy decoding)
  penalty: Optional[jax.Array] = None        # () added once to the batch's loss
  attention: Optional[jax.Array] = None      # [batch, hops, time] (joint model)


def as_output(out) -> ModelOutput:
  """A model's answer as a :class:`ModelOutput`: a bare logits array ``[batch,
  classes]`` becomes ``ModelOutput(logits=out)`` (the model contract,
  seedsweep.models.contract); a ModelOutput is returned as it is."""
  return out if isinstance(out, ModelOutput) else ModelOutput(logits=out)

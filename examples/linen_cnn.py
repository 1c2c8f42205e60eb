"""A user's own Flax linen model: the CNN of examples/nnx_cnn.py, written in linen.

  seedsweep --config=demo:quick,bow \\
    --config.model.name=examples/linen_cnn.py:CNNClassifier \\
    --config.seeds='(1,2)' --workdir=runs/linen_cnn

The model contract (seedsweep.models.contract): fields ``vocab_size`` and
``num_classes`` (set from the data) and the config's; ``__call__(batch, *, train)``
returns logits ``[batch, num_classes]`` (or a ``ModelOutput``).
"""
from typing import Sequence

import flax.linen as nn
import jax.numpy as jnp

from seedsweep.models import baselines
from seedsweep.models import pooling


class CNNClassifier(nn.Module):
  """Embedding -> 1-D convolutions of several widths -> masked max over time ->
  dropout -> dense."""
  vocab_size: int
  num_classes: int
  embed_dim: int = 32
  filters: int = 16
  widths: Sequence[int] = (3, 4, 5)
  dropout: float = 0.5

  @nn.compact
  def __call__(self, batch, *, train: bool):
    """``batch['tokens']`` int32 [batch, time] -> logits [batch, num_classes]."""
    # The table is the module `embedding`; word vectors fill it.
    x, mask = baselines.embed_batch(batch, self.vocab_size, self.embed_dim)
    x = x * mask[..., None]  # padding reads as zeros
    features = [pooling.masked_max(nn.relu(nn.Conv(self.filters, (w,))(x)), mask)
                for w in self.widths]
    x = nn.Dropout(self.dropout, deterministic=not train)(jnp.concatenate(features, -1))
    return nn.Dense(self.num_classes)(x)

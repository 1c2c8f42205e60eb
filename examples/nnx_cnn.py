"""A user's own Flax NNX model: a CNN over word embeddings (Kim 2014's shape, small).

Train it on the demo data, two seeds in one program (docs/data.md, "An own model in
linen and in NNX"):

  seedsweep --config=demo:quick,bow \\
    --config.model.name=examples/nnx_cnn.py:CNNClassifier \\
    --config.seeds='(1,2)' --workdir=runs/nnx_cnn

The model contract (seedsweep.models.contract): ``__init__`` takes ``vocab_size``,
``num_classes`` (set from the data), the config's fields and ``rngs``; ``__call__``
takes the batch and ``train`` and returns logits ``[batch, num_classes]``.
"""
from typing import Sequence

import jax.numpy as jnp
from flax import nnx

from seedsweep.models import pooling


class CNNClassifier(nnx.Module):
  """Embedding -> 1-D convolutions of several widths -> masked max over time ->
  dropout -> linear."""

  def __init__(self, vocab_size: int, num_classes: int, embed_dim: int = 32,
               filters: int = 16, widths: Sequence[int] = (3, 4, 5),
               dropout: float = 0.5, *, rngs: nnx.Rngs):
    # Named `embedding`: word vectors (config.data.vectors) fill this table.
    self.embedding = nnx.Embed(vocab_size, embed_dim, rngs=rngs)
    self.convs = nnx.List([nnx.Conv(embed_dim, filters, kernel_size=(w,), rngs=rngs)
                           for w in widths])
    self.dropout = nnx.Dropout(dropout, rngs=rngs)  # off when train=False (eval mode)
    self.out = nnx.Linear(filters * len(widths), num_classes, rngs=rngs)

  def __call__(self, batch, *, train: bool):
    """``batch['tokens']`` int32 [batch, time] -> logits [batch, num_classes]."""
    tokens = batch['tokens']
    mask = pooling.length_mask(batch['lengths'], tokens.shape[1])
    # The step hands the batch's vectors over with row-sparse table updates.
    x = batch['word_vectors'] if 'word_vectors' in batch else self.embedding(tokens)
    x = x * mask[..., None]  # padding reads as zeros
    features = [pooling.masked_max(nnx.relu(conv(x)), mask) for conv in self.convs]
    return self.out(self.dropout(jnp.concatenate(features, axis=-1)))

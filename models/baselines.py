"""Baseline sentence classifiers the papers compare with.

* ``RecurrentClassifier``: embedding -> (Bi-)LSTM -> masked last/mean/max pooling ->
  dropout -> dense; registered as ``lstm`` and ``bilstm``.
* ``BagOfWords``: embedding -> masked mean -> dense (order-blind reference point).

Every model maps a batch ``{'tokens': int32 [batch, time], 'lengths': int32 [batch]}``
to a ``ModelOutput`` (logits ``[batch, classes]``) and names its word embedding
module ``embedding``.
"""
import functools

import flax.linen as nn
import jax
import jax.numpy as jnp

from seedsweep.models.dropout import Dropout
from seedsweep.models.output import ModelOutput
from seedsweep.models import pooling
from seedsweep.models import recurrent
from seedsweep.models import registered

def symmetric_uniform(scale: float):
  """Initialiser ``(key, shape, dtype)`` drawing from U(-scale, scale)."""
  return functools.partial(jax.random.uniform, minval=-scale, maxval=scale)


def embed_batch(batch, vocab_size: int, dim: int, scale: float = 0.25):
  """``(word vectors [batch, time, dim], mask [batch, time])`` of a batch.

  The table is the module ``embedding``, initialised from U(-scale, scale) (Kim 2014:
  0.25).
  """
  tokens = batch['tokens']
  mask = pooling.length_mask(batch['lengths'], tokens.shape[1])
  table = nn.Embed(vocab_size, dim, name='embedding',
                   embedding_init=symmetric_uniform(scale))
  if 'word_vectors' in batch:  # looked up by the train step (seedsweep/engine/embedding_rows.py)
    return batch['word_vectors'], mask
  return table(tokens), mask


class RecurrentClassifier(nn.Module):
  """LSTM or Bi-LSTM sentence classifier (one recurrent layer)."""
  vocab_size: int
  num_classes: int
  embed_dim: int = 300          # the word vectors' size
  hidden: int = 150             # LSTM units (per direction)
  bidirectional: bool = True    # fixed by the name: bilstm True, lstm False
  pooling: str = 'last'         # over time: last (both ends for a Bi-LSTM), mean or max
  dropout: float = 0.5          # on the pooled state, before the classifier
  embed_dropout: float = 0.0    # on the word vectors
  unroll: int = 1               # time steps per iteration of the LSTM's scan (speed)

  @nn.compact
  def __call__(self, batch, *, train: bool):
    x, mask = embed_batch(batch, self.vocab_size, self.embed_dim)
    x = Dropout(self.embed_dropout, deterministic=not train)(x)
    if self.bidirectional:
      h = recurrent.BiLSTM(self.hidden, self.unroll, name='encoder')(x, mask)
      if self.pooling == 'last':
        # Forward half at the last real token, backward half at the first token:
        # both directions' summaries of the whole sentence.
        fwd = pooling.last_real(h[..., :self.hidden], mask)
        pooled = jnp.concatenate([fwd, h[:, 0, self.hidden:]], axis=-1)
      else:
        pooled = pooling.pool(self.pooling, h, mask)
    else:
      h, _ = recurrent.LSTM(self.hidden, self.unroll, name='encoder')(x, mask)
      pooled = pooling.pool(self.pooling, h, mask)
    pooled = Dropout(self.dropout, deterministic=not train)(pooled)
    return ModelOutput(logits=nn.Dense(self.num_classes, name='classifier')(pooled))


class BagOfWords(nn.Module):
  """Mean of word vectors -> dense: ignores word order entirely."""
  vocab_size: int
  num_classes: int
  embed_dim: int = 300  # the word vectors' size
  dropout: float = 0.0  # on the mean, before the classifier

  @nn.compact
  def __call__(self, batch, *, train: bool):
    x, mask = embed_batch(batch, self.vocab_size, self.embed_dim)
    pooled = pooling.masked_mean(x, mask)
    pooled = Dropout(self.dropout, deterministic=not train)(pooled)
    return ModelOutput(logits=nn.Dense(self.num_classes, name='classifier')(pooled))


# The registry's names of this family (models/registered.py) and its paper configs as
# the tests run them; the demo's golden run is the Bi-LSTM's too.
MODELS = {
    'lstm': registered.Named(RecurrentClassifier, fixed={'bidirectional': False},
                             small={'embed_dim': 8, 'hidden': 6}, paper={'hidden': 150}),
    'bilstm': registered.Named(RecurrentClassifier, fixed={'bidirectional': True},
                               small={'embed_dim': 8, 'hidden': 6, 'pooling': 'mean'},
                               paper={'hidden': 150}),
    'bow': registered.Named(BagOfWords, small={'embed_dim': 8}, paper={}),
}
PAPER_CONFIGS = registered.PaperConfigs(
    golden={'demo': 'experiments/demo.py',
            'bilstm_sst2_quick': 'experiments/bilstm.py:sst/binary,quick'},
    trained=(('bilstm', 'trec/coarse,quick'),))

"""C-LSTM (Zhou et al. 2015): a convolution over word windows feeding an LSTM
(docs/models.md §4).

Words -> dropout -> one convolution of width 3 (``filters`` feature maps, ReLU, valid
padding, no pooling) -> an LSTM over the window sequence -> the hidden state at the
**last real window** (``max(len - k, 0)``, 0-indexed; a sentence shorter than ``k``
keeps its one window, which includes padding, as zero vectors) -> dropout -> softmax.

* ``widths``: several widths (the paper's Figure 2 variants): every feature-map
  sequence is cut to the shortest one (``L - k_max + 1`` windows) and the maps are
  concatenated per window.
* ``literal=True`` (ablation): every sentence is end-padded to ``maxlen`` tokens with
  a learnable vector (the paper's padding "unknown" word) and the state after all
  ``maxlen - k_max + 1`` windows classifies; longer sentences are cut at the end.

The convolution is one matmul over unfolded windows (``[b, L', k*m] @ [k*m, n]``):
the same numbers as ``lax.conv_general_dilated``, and under ``vmap`` over seeds a
batched matmul rather than a grouped convolution (jax-ml/jax#26568).
``benchmarks/clstm_conv.py`` measures the formulations side by side: on the 2-core
CPU all three are within 2-13 % of each other (docs/log.md, "Benchmark: C-LSTM
convolution under vmap").

Shapes: tokens ``[batch, time]``, windows ``[batch, time - k_max + 1, filters *
len(widths)]``, logits ``[batch, classes]``.
"""
from typing import Sequence

import flax.linen as nn
import jax.numpy as jnp

from seedsweep.models.baselines import embed_batch
from seedsweep.models.baselines import symmetric_uniform
from seedsweep.models.dropout import Dropout
from seedsweep.models.output import ModelOutput
from seedsweep.models import recurrent
from seedsweep.models import registered


def conv_windows(x, kernel, bias):
  """Valid 1-D convolution as one matmul over unfolded windows: ``x [b, L, m]``,
  ``kernel [k, m, n]`` -> ``[b, L - k + 1, n]`` (before the nonlinearity)."""
  k, m, n = kernel.shape
  n_windows = x.shape[1] - k + 1
  windows = jnp.concatenate([x[:, i:i + n_windows] for i in range(k)], axis=-1)
  return windows @ kernel.reshape(k * m, n) + bias


class WindowConv(nn.Module):
  """``filters`` feature maps of one width over word windows, ReLU."""
  width: int
  filters: int

  @nn.compact
  def __call__(self, x):
    kernel = self.param('kernel', nn.initializers.variance_scaling(
        1.0, 'fan_avg', 'uniform', in_axis=(0, 1), out_axis=2),
                        (self.width, x.shape[-1], self.filters), jnp.float32)
    bias = self.param('bias', nn.initializers.zeros, (self.filters,), jnp.float32)
    return nn.relu(conv_windows(x, kernel, bias))


class CLSTM(nn.Module):
  """C-LSTM sentence classifier (registered as ``clstm``)."""
  vocab_size: int
  num_classes: int
  embed_dim: int = 300  # the word vectors' size
  filters: int = 150    # feature maps per convolution width
  widths: Sequence[int] = (3,)  # the convolutions' widths (words per window)
  hidden: int = 150     # LSTM units
  dropout: float = 0.5  # on the word vectors and on the classifying state
  literal: bool = False  # ablation: sentences end-padded to maxlen (module docstring)
  maxlen: int = 0       # literal only: the padded length (longest training sentence)
  unroll: int = 1       # time steps per iteration of the LSTM's scan (speed)

  @nn.compact
  def __call__(self, batch, *, train: bool):
    x, mask = embed_batch(batch, self.vocab_size, self.embed_dim)
    lengths = batch['lengths']
    k_max = max(self.widths)
    if self.literal:
      if self.maxlen < k_max:
        raise ValueError(f'config.model.maxlen={self.maxlen}; the literal C-LSTM needs '
                         f'the longest training sentence (>= {k_max})')
      pad = self.param('pad_vector', symmetric_uniform(0.25), (self.embed_dim,),
                       jnp.float32)
      x = x[:, :self.maxlen]
      x = jnp.pad(x, ((0, 0), (0, self.maxlen - x.shape[1]), (0, 0)))
      real = jnp.arange(self.maxlen)[None, :] < jnp.minimum(lengths, self.maxlen)[:, None]
      x = jnp.where(real[..., None], x, pad)
    else:
      x = jnp.where(mask[..., None], x, 0.0)  # padding is zeros, whatever its ids
      if x.shape[1] < k_max:  # room for one window
        x = jnp.pad(x, ((0, 0), (0, k_max - x.shape[1]), (0, 0)))
    x = Dropout(self.dropout, deterministic=not train)(x)
    n_windows = x.shape[1] - k_max + 1
    q = jnp.concatenate([
        WindowConv(k, self.filters, name=f'conv_{k}')(x)[:, :n_windows]
        for k in self.widths], axis=-1)
    if self.literal:
      window_mask = jnp.ones(q.shape[:2], bool)
    else:
      last = jnp.maximum(lengths - k_max, 0)
      window_mask = jnp.arange(n_windows)[None, :] <= last[:, None]
    _, (h, _) = recurrent.LSTM(self.hidden, self.unroll, name='lstm')(q, window_mask)
    h = Dropout(self.dropout, deterministic=not train)(h)
    return ModelOutput(logits=nn.Dense(self.num_classes, name='classifier')(h))


def parameter_count(filters: int, hidden: int, num_classes: int, embed_dim: int = 300,
                    widths: Sequence[int] = (3,)) -> int:
  """Parameters without embeddings: convolutions, LSTM (one bias), softmax."""
  conv = sum(k * embed_dim * filters + filters for k in widths)
  lstm_in = filters * len(widths)
  return conv + 4 * hidden * (lstm_in + hidden + 1) + hidden * num_classes + num_classes


# The registry's name of this family (models/registered.py) and its paper configs as
# the tests run them.
MODELS = {
    'clstm': registered.Named(CLSTM, small={'embed_dim': 5, 'filters': 4, 'hidden': 6},
                              paper={'filters': 150, 'hidden': 150}),
}
PAPER_CONFIGS = registered.PaperConfigs(
    golden={'clstm_trec_quick': 'experiments/clstm_trec.py:quick'},
    trained=(('clstm_trec', 'quick'),), traced=(('clstm_sst', 'binary,quick'),))

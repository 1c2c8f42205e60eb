"""DC-Bi-LSTM (Ding et al. 2018): densely connected Bi-LSTM layers (docs/models.md §3).

``dl`` Bi-LSTM layers of ``dh`` units per direction, each reading the concatenation of
the word vectors and every earlier layer's output, then a top Bi-LSTM of ``th`` units
per direction, masked mean pooling over the top layer, dropout, softmax. With
``dense=False`` it is the paper's deep *stacked* Bi-LSTM (each layer reads the layer
below only); ``dl=0`` is a plain Bi-LSTM of ``th`` units (the paper's Bi-LSTM baselines).

Computation: a layer's pre-activation is ``W_l [e; h^1; ..; h^{l-1}] + b``. By default
(``projection='concat'``) each layer multiplies the growing concatenation by its kernel;
``'blocks'`` instead multiplies each source by its block of the kernel and sums, the
incremental form docs/models.md §3.6 suggests. Same numbers; on CPU ``concat`` measured
1.15-1.3x faster (benchmarks/dclstm_projection.py). Each layer is one ``lax.scan``
running both directions (the backward one over each sentence reversed within its
length).

Parameters per layer ``l`` (width ``w``, input ``in_l``): ``kernel [in_l, 8w]`` (forward
then backward gates ``[i, f, g, o]``), one ``bias [8w]`` (forget gates start at
``forget_bias``), ``recurrent_forward``/``recurrent_backward [w, 4w]``: ``2 * 4w (in_l +
w + 1)`` in all, the count of docs/models.md §3.1.

Shapes: tokens ``[batch, time]``, layer outputs ``[batch, time, 2w]``, logits
``[batch, classes]``.
"""
from typing import List

import flax.linen as nn
import jax.numpy as jnp

from seedsweep.errors import UserError
from seedsweep.models.baselines import embed_batch
from seedsweep.models.dropout import Dropout
from seedsweep.models.output import ModelOutput
from seedsweep.models import pooling
from seedsweep.models import recurrent
from seedsweep.models import registered


class BiLSTMLayerParams(nn.Module):
  """The parameters of one Bi-LSTM layer whose input is a concatenation."""
  in_features: int
  width: int
  forget_bias: float = 1.0

  @nn.compact
  def __call__(self):
    w = self.width
    kernel = self.param('kernel', nn.initializers.glorot_uniform(),
                        (self.in_features, 8 * w), jnp.float32)

    def bias_init(key, shape, dtype=jnp.float32):
      del key
      gates = jnp.zeros((2, 4, w), dtype).at[:, 1].set(self.forget_bias)  # [i f g o]
      return gates.reshape(shape)

    bias = self.param('bias', bias_init, (8 * w,), jnp.float32)
    recurrent_weights = jnp.stack([
        self.param(f'recurrent_{d}', nn.initializers.orthogonal(), (w, 4 * w),
                   jnp.float32) for d in ('forward', 'backward')])
    return kernel, bias, recurrent_weights


class DenseBiLSTM(nn.Module):
  """DC-Bi-LSTM sentence classifier (registered as ``dclstm``)."""
  vocab_size: int
  num_classes: int
  embed_dim: int = 300  # the word vectors' size
  dl: int = 15   # dense Bi-LSTM layers below the top one
  dh: int = 13   # units per direction of each dense layer
  th: int = 100  # units per direction of the top layer
  dense: bool = True  # False: the deep stacked Bi-LSTM baseline
  dropout: float = 0.5  # on the word vectors and on the pooled top layer
  forget_bias: float = 1.0  # the forget gates' initial bias
  unroll: int = 1  # time steps per iteration of each LSTM scan (speed)
  # How a layer's input is projected (same numbers, benchmarks/dclstm_projection.py):
  # 'concat' multiplies the growing concatenation by each layer's kernel; 'blocks'
  # multiplies each source by its block of the kernel and sums (docs/models.md §3.6).
  projection: str = 'concat'

  def widths(self) -> List[int]:
    """Units per direction of each layer, bottom to top: ``dl`` times ``dh``, then
    ``th``."""
    return [self.dh] * self.dl + [self.th]

  def input_blocks(self, layer: int) -> List[int]:
    """Sizes of the blocks of layer ``layer``'s input: the sources it reads."""
    if not self.dense:
      return [self.embed_dim] if layer == 0 else [2 * self.widths()[layer - 1]]
    return [self.embed_dim] + [2 * w for w in self.widths()[:layer]]

  def sources(self, layer: int) -> List[int]:
    """Which outputs layer ``layer`` reads: 0 = word vectors, j = layer j - 1's."""
    return list(range(layer + 1)) if self.dense else [layer]

  @nn.compact
  def __call__(self, batch, *, train: bool):
    e, mask = embed_batch(batch, self.vocab_size, self.embed_dim)
    e = Dropout(self.dropout, deterministic=not train)(e)
    widths = self.widths()
    layers = [BiLSTMLayerParams(sum(self.input_blocks(l)), w, self.forget_bias,
                                name=f'layer_{l + 1}')() for l, w in enumerate(widths)]

    def bilstm(l, pre):
      """Layer ``l`` on its pre-activations ``[batch, time, 8w]``: ``[batch, time, 2w]``."""
      fw, bw = jnp.split(pre, 2, axis=-1)
      return recurrent.bidirectional_scan(fw, bw, layers[l][2], mask, self.unroll)

    if self.projection == 'concat':
      x = e
      for l in range(len(widths)):
        h = bilstm(l, x @ layers[l][0] + layers[l][1])
        x = jnp.concatenate([x, h], -1) if self.dense else h
    elif self.projection == 'blocks':
      outputs = [e]  # source j: 0 = word vectors, j > 0 = layer j's output
      for l in range(len(widths)):
        pre, row = layers[l][1], 0
        for j in self.sources(l):
          rows = outputs[j].shape[-1]
          pre = pre + outputs[j] @ layers[l][0][row:row + rows]
          row += rows
        outputs.append(h := bilstm(l, pre))
    else:
      raise ValueError(f'config.model.projection={self.projection!r}; expected '
                       f"'concat' or 'blocks'")
    pooled = pooling.masked_mean(h, mask)
    pooled = Dropout(self.dropout, deterministic=not train)(pooled)
    return ModelOutput(logits=nn.Dense(self.num_classes, name='classifier')(pooled))


def parameter_count(dl: int, dh: int, th: int, num_classes: int, embed_dim: int = 300,
                    dense: bool = True) -> int:
  """docs/models.md §3.1: parameters without embeddings (softmax included)."""
  widths = [dh] * dl + [th]
  total = 0
  for l, w in enumerate(widths):
    if dense:
      in_l = embed_dim + 2 * sum(widths[:l])
    else:
      in_l = embed_dim if l == 0 else 2 * widths[l - 1]
    total += 2 * 4 * w * (in_l + w + 1)
  return total + 2 * th * num_classes + num_classes


def check_depths(fields) -> None:
  """``config.model``'s ``dl`` and ``dh`` together: dense layers need units."""
  dl, dh = fields.get('dl', DenseBiLSTM.dl), fields.get('dh', DenseBiLSTM.dh)
  if dl and not dh:  # dh=0 is the plain Bi-LSTM of the papers' tables, with dl=0
    raise UserError(f'config.model.dh={dh} with config.model.dl={dl}; expected dh '
                    '>= 1 (dl dense layers of dh units each), or dl=0 for none')


# The registry's names of this family (models/registered.py) and its paper configs as
# the tests run them.
_SMALL, _PAPER = {'embed_dim': 6, 'dl': 2, 'dh': 3, 'th': 5}, {'dl': 15, 'dh': 13, 'th': 100}
MODELS = {
    'dclstm': registered.Named(DenseBiLSTM, small=_SMALL, paper=_PAPER,
                               check=check_depths),
    'stacked_bilstm': registered.Named(DenseBiLSTM, fixed={'dense': False}, small=_SMALL,
                                       paper=_PAPER, check=check_depths),
}
PAPER_CONFIGS = registered.PaperConfigs(
    golden={'dclstm_sst2_quick': 'experiments/dclstm_sst.py:binary,quick'},
    trained=(('dclstm_trec', 'quick'),),
    traced=(('dclstm_sst', 'binary,quick'), ('dclstm_mr', 'quick'),
            ('dclstm_subj', 'quick')))

"""DLSTM (Shi et al. 2016): deep-LSTM feature mapping for query classification
(docs/models.md §1).

A stack of ``layers`` DLSTM layers. A layer holds ``units`` LSTM units stacked in depth
at each word, all sharing one parameter set ``{W [k, 4h], U [h, 4h], V_o, b [4h]}``
(gates ``[i, c, f, o]``). With ``P_t = W x_t + b``:

* unit 0 (input and output gates only): ``c0_t = σ(P_i) ⊙ tanh(P_c)``,
  ``h0_t = σ(P_o + V_o c0_t) ⊙ tanh(c0_t)``;
* unit j >= 1 reads the lower unit's output at the current word and its cell at the
  previous word: ``Q_t = P_t + U h_{j-1,t}``,
  ``c_{j,t} = σ(Q_i) ⊙ tanh(Q_c) ⊙ c_{j-1,t-1} + σ(Q_f) ⊙ c_{j-1,t}`` (eq. 10 as
  printed, ``cell='literal'``), ``h_{j,t} = σ(Q_o + V_o c_{j,t}) ⊙ tanh(c_{j,t})``.

The layer's output is ``z_t = Σ_j h_{j,t}``, dropped out, and feeds the next layer; the
layers' outputs are concatenated, mean-pooled over the real words, and classified.

Under the literal reading unit j at word t sees words ``t-j .. t`` only: a layer is a
causal convolution of width ``units``, computed with time shifts and no scan. The
other reading (``cell='own'``, docs/models.md §1.4) replaces ``c_{j-1,t}`` by the unit's
own ``c_{j,t-1}``: ``c_{j,t} = σ(Q_f) ⊙ c_{j,t-1} + σ(Q_i) ⊙ tanh(Q_c) ⊙ c_{j-1,t-1}``,
a first-order linear recurrence run by ``jax.lax.associative_scan``. Both readings are
causal, so right padding never reaches a real position. Logits ``[batch, classes]``.
"""
from typing import List

import flax.linen as nn
import jax
import jax.numpy as jnp

from seedsweep.models.baselines import embed_batch
from seedsweep.models.dropout import Dropout
from seedsweep.models.output import ModelOutput
from seedsweep.models import pooling
from seedsweep.models import registered

CELLS = ('literal', 'own')
PEEPHOLES = ('full', 'diagonal')


def shift_right(x):
  """``x [batch, time, h]`` delayed by one word along time, zeros at ``t = 0``."""
  return jnp.pad(x, ((0, 0), (1, 0), (0, 0)))[:, :-1]


def linear_recurrence(a, b):
  """``c_t = a_t ⊙ c_{t-1} + b_t`` with ``c_{-1} = 0``, along axis 1, in O(log T)
  depth: the associative operator ``(a1, b1) ∘ (a2, b2) = (a1 a2, a2 b1 + b2)``."""
  def combine(left, right):
    return left[0] * right[0], right[0] * left[1] + right[1]
  return jax.lax.associative_scan(combine, (a, b), axis=1)[1]


def dlstm_layer(x, kernel, recurrent, peephole, bias, units: int = 3,
                cell: str = 'literal'):
  """One DLSTM layer: ``x [batch, time, k]`` -> ``z [batch, time, h]`` (the sum of the
  units' outputs). ``peephole`` is ``[h, h]`` (full) or ``[h]`` (diagonal)."""
  peep = (lambda c: c @ peephole) if peephole.ndim == 2 else (lambda c: c * peephole)
  p_i, p_c, p_f, p_o = jnp.split(x @ kernel + bias, 4, axis=-1)
  c_low = jax.nn.sigmoid(p_i) * jnp.tanh(p_c)
  h_low = jax.nn.sigmoid(p_o + peep(c_low)) * jnp.tanh(c_low)
  z = h_low
  for _ in range(1, units):
    q_i, q_c, q_f, q_o = jnp.split(h_low @ recurrent, 4, axis=-1)
    new = jax.nn.sigmoid(p_i + q_i) * jnp.tanh(p_c + q_c) * shift_right(c_low)
    forget = jax.nn.sigmoid(p_f + q_f)
    if cell == 'literal':
      c_j = new + forget * c_low
    else:
      c_j = linear_recurrence(forget, new)
    h_low = jax.nn.sigmoid(p_o + q_o + peep(c_j)) * jnp.tanh(c_j)
    c_low = c_j
    z = z + h_low
  return z


class DLSTMLayerParams(nn.Module):
  """One layer's shared parameter set: ``(kernel [k, 4h], recurrent [h, 4h],
  peephole [h, h] or [h], bias [4h])``; Glorot-uniform weights, zero biases."""
  in_features: int
  hidden: int
  peephole: str = 'full'

  @nn.compact
  def __call__(self):
    h = self.hidden
    glorot = nn.initializers.glorot_uniform()
    peephole = (self.param('peephole', glorot, (h, h), jnp.float32)
                if self.peephole == 'full' else
                self.param('peephole', nn.initializers.uniform(0.1), (h,), jnp.float32))
    return (self.param('kernel', glorot, (self.in_features, 4 * h), jnp.float32),
            self.param('recurrent', glorot, (h, 4 * h), jnp.float32),
            peephole,
            self.param('bias', nn.initializers.zeros, (4 * h,), jnp.float32))


class DLSTM(nn.Module):
  """DLSTM sentence classifier (registered as ``dlstm``)."""
  vocab_size: int
  num_classes: int
  embed_dim: int = 300    # the word vectors' size
  hidden: int = 256       # units of each LSTM unit (h), a layer's output size
  layers: int = 3         # DLSTM layers
  units: int = 3          # LSTM units per layer: unit j sees j + 1 words
  cell: str = 'literal'   # eq. 10 as printed, or 'own' (the unit's own previous cell)
  peephole: str = 'full'  # V_o a full matrix, or 'diagonal'
  dropout: float = 0.5    # on each layer's output only (the paper)

  def features(self, x, *, train: bool) -> List[jax.Array]:
    """Each layer's (dropped-out) output ``[batch, time, h]`` for word vectors ``x``."""
    outputs = []
    for l in range(self.layers):
      params = DLSTMLayerParams(x.shape[-1], self.hidden, self.peephole,
                                name=f'layer_{l + 1}')()
      x = dlstm_layer(x, *params, units=self.units, cell=self.cell)
      x = Dropout(self.dropout, deterministic=not train)(x)
      outputs.append(x)
    return outputs

  @nn.compact
  def __call__(self, batch, *, train: bool):
    if self.cell not in CELLS:
      raise ValueError(f'config.model.cell={self.cell!r}; expected one of {CELLS}')
    if self.peephole not in PEEPHOLES:
      raise ValueError(f'config.model.peephole={self.peephole!r}; expected one of '
                       f'{PEEPHOLES}')
    if self.layers < 1 or self.units < 1:
      raise ValueError(f'config.model.layers={self.layers} and config.model.units='
                       f'{self.units}; expected both >= 1')
    x, mask = embed_batch(batch, self.vocab_size, self.embed_dim)
    z = jnp.concatenate(self.features(x, train=train), axis=-1)
    pooled = pooling.masked_mean(z, mask)
    return ModelOutput(logits=nn.Dense(self.num_classes, name='classifier')(pooled))


def parameter_count(embed_dim: int, hidden: int, layers: int, num_classes: int,
                    peephole: str = 'full') -> int:
  """Parameters without embeddings, softmax included (docs/models.md §1.1)."""
  v = hidden * hidden if peephole == 'full' else hidden
  total, k = 0, embed_dim
  for _ in range(layers):
    total += 4 * k * hidden + 4 * hidden * hidden + v + 4 * hidden
    k = hidden
  return total + layers * hidden * num_classes + num_classes


# The registry's name of this family (models/registered.py) and its paper configs as
# the tests run them.
MODELS = {
    'dlstm': registered.Named(DLSTM, paper={'hidden': 256}, small={
        'embed_dim': 6, 'hidden': 5, 'layers': 2, 'units': 2}),
}
PAPER_CONFIGS = registered.PaperConfigs(
    golden={'dlstm_trec_quick': 'experiments/dlstm_trec.py:quick'},
    trained=(('dlstm_trec', 'quick'),),
    traced=(('dlstm_sst', 'binary,quick'), ('dlstm_atis', 'quick')))

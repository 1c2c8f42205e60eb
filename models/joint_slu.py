"""Joint slot filling and intent classification with sparse attention (Ma et al. 2017,
docs/models.md §5).

Per token ``t`` the input of a unidirectional LSTM is a convolution over a window of
words and the previous tags: for each width ``w = 2k + 1`` in ``widths`` (3, 5, 7),
``ReLU(F^w [x_{t-k} .. x_{t+k}; T_{t-k} .. T_{t-1}] + b^w)`` with ``filters`` maps,
the widths concatenated and dropped out (``T`` are tag embeddings, a learned ``<BOS>``
tag before the sentence, zero word vectors outside it). A tag softmax reads each
``h_t``; the sentence head reads a pooled ``ĥ``:

* ``mean``: the masked mean of the ``h_t``;
* ``softmax``: ``Σ_t softmax_t(h_t·α) h_t`` ("+attention");
* ``sparse``: ``Σ_t σ(h_t·α) h_t`` ("+sparse att."), with the penalty ``β Σ_t KL(ρ ‖
  ρ̂_t)``, ``ρ̂_t`` the batch mean of ``σ(h_t·α)`` over the sentences that reach ``t``.

Previous tags are the gold ones in training (teacher forcing: the convolution is
parallel over time) and the greedy predictions at inference, fed back inside the
scan (docs/models.md §5.4.1); both look up the tag part of each filter by tag id.

Variants: ``latent=True`` (no slot labels, e.g. TREC: the previous hidden states
where the tags were), ``cnn=False`` (word vectors straight to the LSTM, "+joint"),
``independent=True`` (one LSTM per head, the vanilla baseline).

The module returns ``{'intent': [batch, classes], 'tags': [batch, time, tags] or
None, 'attention': [batch, time], 'penalty': scalar}`` (and ``'predicted_tags'``
with ``greedy=True``, the default at inference).
"""
from typing import Dict, Optional, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from seedsweep.models.baselines import embed_batch
from seedsweep.models.baselines import symmetric_uniform
from seedsweep.models import clstm
from seedsweep.models.dropout import Dropout
from seedsweep.models.output import ModelOutput
from seedsweep.models import recurrent
from seedsweep.models import registered

HEADS = ('mean', 'softmax', 'sparse')


def sparsity_penalty(weights, mask, rho: float, beta: float):
  """``β Σ_t KL(ρ ‖ ρ̂_t)``, ``ρ̂_t`` the mean of ``weights [batch, time]`` over the
  sentences with a token at ``t`` (clipped to [1e-6, 1 - 1e-6]); steps no sentence
  reaches add nothing."""
  m = mask.astype(weights.dtype)
  count = m.sum(axis=0)
  rho_hat = jnp.clip((weights * m).sum(axis=0) / jnp.maximum(count, 1.0), 1e-6, 1 - 1e-6)
  kl = rho * jnp.log(rho / rho_hat) + (1 - rho) * jnp.log((1 - rho) / (1 - rho_hat))
  return beta * jnp.sum(jnp.where(count > 0, kl, 0.0))


def shifted_ids(ids, r: int, fill: int):
  """``ids [batch, time]`` delayed by ``r`` steps; ``fill`` before the start."""
  return jnp.pad(ids, ((0, 0), (r, 0)), constant_values=fill)[:, :ids.shape[1]]


class SentenceHead(nn.Module):
  """Pools ``h [batch, time, d]`` and classifies: ``(logits, weights, penalty)``."""
  num_classes: int
  head: str = 'sparse'
  rho: float = 0.1
  beta: float = 0.1
  init_scale: float = 0.05

  @nn.compact
  def __call__(self, h, mask):
    if self.head not in HEADS:
      raise ValueError(f'config.model.head={self.head!r}; expected one of {HEADS}')
    penalty = jnp.zeros((), h.dtype)
    if self.head == 'mean':
      weights = mask / jnp.maximum(mask.sum(axis=1, keepdims=True), 1)
    else:
      alpha = self.param('alpha', symmetric_uniform(self.init_scale), (h.shape[-1],))
      scores = h @ alpha
      if self.head == 'softmax':
        weights = jax.nn.softmax(jnp.where(mask, scores, -jnp.inf), axis=1)
      else:
        weights = jax.nn.sigmoid(scores) * mask
        penalty = sparsity_penalty(weights, mask, self.rho, self.beta)
    pooled = jnp.einsum('bt,btd->bd', weights.astype(h.dtype), h)
    logits = nn.Dense(self.num_classes, name='classifier',
                      kernel_init=symmetric_uniform(self.init_scale))(pooled)
    return logits, weights, penalty


class JointSLU(nn.Module):
  """Joint slot tagger and intent classifier (registered as ``joint_slu``)."""
  vocab_size: int
  num_classes: int
  num_tags: int = 0          # slot tags (from the dataset); 0 with latent=True
  embed_dim: int = 100       # the word vectors' size
  tag_dim: int = 50          # the previous tag's embedding size
  widths: Sequence[int] = (3, 5, 7)  # the convolutions' widths (words per window)
  filters: int = 100         # per width
  hidden: int = 200          # LSTM units
  head: str = 'sparse'       # mean | softmax | sparse
  rho: float = 0.1           # sparse attention: target mean weight
  beta: float = 0.1          # sparse attention: penalty weight
  cnn: bool = True           # False: word vectors straight into the LSTM
  latent: bool = False       # previous hidden states instead of previous tags
  independent: bool = False  # two LSTMs on the word vectors, one per head
  dropout: float = 0.5       # on the convolution features
  init_scale: float = 0.05   # U(-0.05, 0.05) for every weight (docs/models.md §5.2)

  def _checks(self):
    if self.latent and not self.cnn:
      raise ValueError('config.model.latent=True needs config.model.cnn=True (the '
                       'hidden states enter through the convolution)')
    if self.cnn and not self.latent and self.num_tags < 1:
      raise ValueError(f'config.model.num_tags={self.num_tags}: a joint model with '
                       f'tag feedback needs a dataset with slot tags (or latent=True)')
    if self.independent and (self.cnn or self.num_tags < 1):
      raise ValueError('config.model.independent=True is the vanilla baseline of two '
                       'LSTMs, one per head: it needs cnn=False and a dataset with slot '
                       f'tags (cnn={self.cnn}, num_tags={self.num_tags})')
    if any(w % 2 == 0 or w < 1 for w in self.widths):
      raise ValueError(f'config.model.widths={tuple(self.widths)}; expected odd widths')

  def _lstm_weights(self, name: str, in_features: int):
    init = symmetric_uniform(self.init_scale)
    return (self.param(f'{name}_input', init, (in_features, 4 * self.hidden)),
            self.param(f'{name}_recurrent', init, (self.hidden, 4 * self.hidden)),
            self.param(f'{name}_bias', nn.initializers.zeros, (4 * self.hidden,)))

  @nn.compact
  def __call__(self, batch, *, train: bool,
               greedy: Optional[bool] = None) -> ModelOutput:
    """``greedy`` defaults to ``not train``: gold previous tags in training, the
    model's own greedy tags at inference."""
    self._checks()
    greedy = (not train) if greedy is None else greedy
    x, mask = embed_batch(batch, self.vocab_size, self.embed_dim, self.init_scale)
    x = x * mask[..., None]  # zero word vectors outside the sentence
    drop = Dropout(self.dropout, deterministic=not train)
    tag_head = None
    if self.num_tags and not self.latent:  # plain arrays: the greedy scan calls it
      kernel = self.param('tag_classifier_kernel', symmetric_uniform(self.init_scale),
                          (self.hidden, self.num_tags))
      bias = self.param('tag_classifier_bias', nn.initializers.zeros, (self.num_tags,))
      tag_head = lambda h: h @ kernel + bias
    head = SentenceHead(self.num_classes, self.head, self.rho, self.beta,
                        self.init_scale, name='sentence')
    out: Dict[str, Optional[jax.Array]] = {}
    if not self.cnn:
      w_in, w_h, b = self._lstm_weights('lstm', self.embed_dim)
      h, _ = recurrent.lstm_scan((x @ w_in + b)[None], w_h[None], mask)
      h_tags = h[0]
      if self.independent:
        w_in2, w_h2, b2 = self._lstm_weights('intent_lstm', self.embed_dim)
        h_int, _ = recurrent.lstm_scan((x @ w_in2 + b2)[None], w_h2[None], mask)
        h_sent = h_int[0]
      else:
        h_sent = h_tags
      out['tags'] = None if tag_head is None else tag_head(h_tags)
      if greedy and tag_head is not None:
        out['predicted_tags'] = out['tags'].argmax(-1)
    else:
      h_sent = self._conv_lstm(x, mask, batch, drop, tag_head, greedy, out)
    logits, attention, penalty = head(h_sent, mask)
    return ModelOutput(logits=logits, tag_logits=out.get('tags'),
                       predicted_tags=out.get('predicted_tags'), penalty=penalty,
                       attention=attention)

  def _conv_lstm(self, x, mask, batch, drop, tag_head, greedy, out):
    """The window convolution with feedback, then the LSTM: ``h [batch, time, d]``."""
    init = symmetric_uniform(self.init_scale)
    ks = [w // 2 for w in self.widths]
    feedback = self.hidden if self.latent else self.tag_dim
    word_part = []
    fb_kernels = []  # per width: [k, feedback, filters] (offset r = 1..k)
    for w, k in zip(self.widths, ks):
      f_word = self.param(f'conv{w}_word', init, (w, self.embed_dim, self.filters))
      bias = self.param(f'conv{w}_bias', nn.initializers.zeros, (self.filters,))
      fb_kernels.append(self.param(f'conv{w}_feedback', init, (k, feedback,
                                                               self.filters)))
      # Words t-k .. t+k, zeros outside the sentence: a valid convolution of the
      # k-padded sequence.
      word_part.append(clstm.conv_windows(jnp.pad(x, ((0, 0), (k, k), (0, 0))),
                                          f_word, bias))
    word_part = jnp.concatenate(word_part, axis=-1)  # [batch, time, widths * filters]
    w_in, w_h, b = self._lstm_weights('lstm', len(self.widths) * self.filters)
    # Dropout on the convolution features, one mask drawn for the whole sequence.
    keep = drop(jnp.ones(word_part.shape, word_part.dtype))
    k_max = max(ks)
    batch_size = x.shape[0]
    if self.latent:
      def feed(history):  # history [batch, k_max, d], most recent first
        return jnp.concatenate([
            jnp.einsum('brd,rdf->bf', history[:, :k], kern)
            for k, kern in zip(ks, fb_kernels)], axis=-1)
      h = self._scan(word_part, keep, mask, w_in, w_h, b, feed,
                     jnp.zeros((batch_size, k_max, self.hidden), x.dtype), None)
      return h
    tag_table = self.param('tag_embedding', init, (self.num_tags + 1, self.tag_dim))
    bos = self.num_tags
    # Per width and offset r: the tag part of the filters as a [tags + 1, filters] table.
    tables = [jnp.einsum('ne,ref->rnf', tag_table, kern) for kern in fb_kernels]

    def tag_feed(prev):  # prev [batch, k_max] tag ids, most recent first
      return jnp.concatenate([
          sum(tables[i][r][prev[:, r]] for r in range(k))
          for i, k in enumerate(ks)], axis=-1)

    if greedy:
      h, predicted = self._scan(word_part, keep, mask, w_in, w_h, b, tag_feed,
                                jnp.full((batch_size, k_max), bos, jnp.int32), tag_head)
      out['predicted_tags'] = predicted
    else:  # teacher forcing: gold previous tags, the convolution parallel over time
      gold = batch['tags']
      prev = jnp.stack([shifted_ids(gold, r + 1, bos) for r in range(k_max)], -1)
      conv = jax.nn.relu(word_part + jax.vmap(tag_feed, in_axes=1, out_axes=1)(prev))
      gates = (conv * keep) @ w_in + b
      hs, _ = recurrent.lstm_scan(gates[None], w_h[None], mask)
      h = hs[0]
    out['tags'] = tag_head(h)
    return h

  def _scan(self, word_part, keep, mask, w_in, w_h, b, feed, init_feedback, tag_head):
    """The feedback recurrence, one step per token. Latent: the carry holds the last
    hidden states; greedy: the last predicted tag ids (``tag_head`` given). Returns
    ``h [batch, time, d]`` (and the predicted tags ``[batch, time]`` when greedy)."""
    d = self.hidden
    batch_size = word_part.shape[0]

    def step(carry, inputs):
      h, c, fb = carry
      wp, kp, m = inputs
      conv = jax.nn.relu(wp + feed(fb)) * kp
      h_new, c_new = recurrent.lstm_cell(conv @ w_in + h @ w_h + b, c)
      m = m[:, None]
      h_new, c_new = jnp.where(m, h_new, h), jnp.where(m, c_new, c)
      if tag_head is None:
        new = jnp.concatenate([h_new[:, None], fb[:, :-1]], axis=1)
        emitted = h_new * m
      else:
        tag = tag_head(h_new).argmax(-1).astype(jnp.int32)
        new = jnp.concatenate([tag[:, None], fb[:, :-1]], axis=1)
        emitted = (h_new * m, tag)
      return (h_new, c_new, new), emitted

    zeros = jnp.zeros((batch_size, d), word_part.dtype)
    xs = (jnp.swapaxes(word_part, 0, 1), jnp.swapaxes(keep, 0, 1),
          jnp.swapaxes(mask, 0, 1))
    _, ys = jax.lax.scan(step, (zeros, zeros, init_feedback), xs)
    if tag_head is None:
      return jnp.swapaxes(ys, 0, 1)
    return jnp.swapaxes(ys[0], 0, 1), jnp.swapaxes(ys[1], 0, 1)


# The registry's name of this family (models/registered.py) and its paper configs as
# the tests run them.
MODELS = {
    'joint_slu': registered.Named(JointSLU, paper={'latent': True, 'hidden': 200}, small={
        'embed_dim': 8, 'tag_dim': 5, 'filters': 6, 'hidden': 9}),
}
PAPER_CONFIGS = registered.PaperConfigs(
    golden={'joint_atis_quick': 'experiments/joint_atis.py:quick'},
    trained=(('joint_trec', 'quick'),), traced=(('joint_atis', 'quick'),))

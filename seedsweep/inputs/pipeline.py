"""The device-resident input pipeline: length buckets, per-seed epoch orders, eval plans.

The encoded splits live on the device as int32 arrays. Each training step gathers its
batch from them inside jit, by indices that every seed draws for itself:

* Examples are grouped into a few length buckets (static padded lengths, so at most
  ``len(boundaries)`` compilations of the train step).
* Per seed and epoch (a pure function of both), each bucket's members are shuffled and
  cut into batches of ``batch_size``; a bucket's last batch may be partial and is
  filled with index -1 (weight 0).
* The order in which the buckets' batch slots are visited in an epoch is shared by all
  seeds (a function of the epoch alone) so that one step has one padded length for every
  seed. Which examples form each batch, and their order, is per seed.
* Cross-validation folds are *views* of the same arrays (inputs/encoded.py): a member of
  the stacked axis is a (fold, seed) pair, and it draws its batches from its fold's
  training rows. Bucket widths are the largest over all folds of the dataset, so a
  member's batches do not depend on which other folds run beside it.
"""
import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

import jax
import jax.numpy as jnp
import numpy as np

SCHEDULE_SALT = 0x5EED5  # seeds numpy's generator for the shared slot schedule


def bucket_boundaries(lengths: np.ndarray, num_buckets: int, multiple: int,
                      max_length: int) -> Tuple[int, ...]:
  """Padded lengths of the buckets: quantiles of ``lengths`` rounded up to ``multiple``.

  The last boundary covers ``max_length`` (the longest sequence of any split).
  """
  qs = np.quantile(lengths, np.arange(1, num_buckets + 1) / num_buckets)
  # Each quantile, and last the longest length, rounded up to a multiple (at least 1).
  at_least_1 = np.maximum(np.append(qs, max_length).astype(np.int64), 1)
  ups = -(-at_least_1 // multiple) * multiple
  return tuple(int(b) for b in sorted(set(ups.tolist())) if b <= ups[-1])


@dataclasses.dataclass(frozen=True)
class TrainPlan:
  """Static structure of an epoch: buckets, their members per view, and batch slots.

  ``members[b]`` is int32 ``[views, n_b]``: the training rows of each view that fall
  in bucket ``b``, padded with -1 to the largest view (views are cross-validation
  folds; a dataset with its own splits has one view and no padding). The slots of
  bucket ``b`` are contiguous; ``slot_bucket[s]`` is the bucket of slot ``s``.
  ``seed_order`` returns ``[slots, batch]`` rows (-1 = none).
  """
  boundaries: Tuple[int, ...]
  members: Tuple[np.ndarray, ...]
  batch_size: int
  slot_bucket: np.ndarray  # [slots]
  steps_per_epoch: int     # the batch slots of an epoch: one train step each
  padded: bool             # some view has fewer rows than a bucket's slots hold (-1s)

  @classmethod
  def build(cls, rows: Sequence[np.ndarray], lengths: Sequence[np.ndarray],
            boundaries: Tuple[int, ...], batch_size: int):
    """``rows[v]``: the training rows of view ``v``; ``lengths[v]``: their lengths."""
    # Each row's bucket: the smallest boundary that holds its length.
    which = [np.searchsorted(boundaries, l) for l in lengths]
    members, slots = [], []
    for b in range(len(boundaries)):
      per_view = [np.asarray(r)[w == b] for r, w in zip(rows, which)]
      stacked = np.full((len(per_view), max(len(p) for p in per_view)), -1, np.int32)
      for v, view_rows in enumerate(per_view):
        stacked[v, :len(view_rows)] = view_rows
      members.append(stacked)
      slots += [b] * (-(-stacked.shape[1] // batch_size))
    return cls(tuple(boundaries), tuple(members), batch_size,
               np.asarray(slots, np.int32), len(slots),
               any((m < 0).any() for m in members))

  def schedule(self, epoch: int) -> List[Tuple[int, int]]:
    """``[(slot, padded_length)]`` in visiting order; shared by all seeds and views."""
    rng = np.random.default_rng([SCHEDULE_SALT, epoch])
    order = rng.permutation(self.steps_per_epoch)
    return [(int(s), self.boundaries[self.slot_bucket[s]]) for s in order]

  def seed_order(self, data_key, view=0) -> jax.Array:
    """One seed's batches of ``view`` for one epoch: ``[slots, batch]`` int32.

    A view with fewer rows in a bucket than the bucket's width gets its -1 entries
    at the end of the bucket's last slots (a slot may hold no example at all).
    """
    out = []
    for b, members in enumerate(self.members):
      n = members.shape[1]
      if n == 0:
        continue
      idx = jnp.asarray(members)[view]
      row = idx[jax.random.permutation(jax.random.fold_in(data_key, b), n)]
      if (members < 0).any():
        row = row[jnp.argsort(row < 0, stable=True)]
      n_slots = -(-n // self.batch_size)
      row = jnp.concatenate([row, jnp.full((n_slots * self.batch_size - n,), -1,
                                           jnp.int32)])
      out.append(row.reshape(n_slots, self.batch_size))
    return jnp.concatenate(out, axis=0)


def chunk_rows(n, max_rows: int):
  """``(k, c)``: ``n`` eval rows in ``k = ceil(n / max_rows)`` chunks of ``c`` rows,
  ``c`` the smallest multiple of 8 (at most ``max_rows``) that holds them; ``n`` an
  int or an array of them (0 rows: no chunk)."""
  count = np.maximum(-(-n // max_rows), 1)  # -(-a // b): a / b rounded up
  per_chunk = -(-n // count)
  size = np.maximum(np.minimum(-(-per_chunk // 8) * 8, max_rows), 1)
  return -(-n // size), size


def eval_boundaries(lengths: np.ndarray, shortest: int, max_padding: float,
                    max_rows: int) -> Tuple[int, ...]:
  """The fewest padded lengths (each at least ``shortest``) for eval rows of
  ``lengths`` whose padded tokens, rows padded to whole chunks (:func:`chunk_rows`)
  included, are at most ``max_padding`` times the real tokens; when no set does,
  the one that pads least. Each length is one compilation of the eval program.

  Exact, by dynamic programming over the rows' distinct lengths: a bucket's tokens
  depend only on its longest length and its number of rows.
  """
  lengths = np.asarray(lengths, np.int64)
  cand, counts = np.unique(np.maximum(lengths, shortest), return_counts=True)
  cum = np.concatenate([[0], np.cumsum(counts)])
  real, n = float(np.maximum(lengths, 1).sum()), len(cand)
  rows = np.maximum(cum[None, :] - cum[:, None], 0)  # [i, j]: rows of candidates i..j-1
  count, size = chunk_rows(rows, max_rows)
  tokens = count * size * np.concatenate([[0], cand])[None, :]
  tokens = np.where(rows > 0, tokens, np.inf).astype(np.float64)  # i < j only
  best = np.full(n + 1, np.inf)  # best[j]: least tokens of candidates 0..j-1 so far
  best[0] = 0.0
  choices, least = [], (np.inf, 0)
  for k in range(1, n + 1):
    total = best[:, None] + tokens
    choices.append(np.argmin(total, axis=0))
    best = total[choices[-1], np.arange(n + 1)]
    least = min(least, (best[n], k))
    if best[n] <= max_padding * real:
      break
  bounds, j = [], n  # walk back the choices of the set found
  for arg in reversed(choices[:least[1]]):
    bounds.append(int(cand[j - 1]))
    j = arg[j]
  return tuple(sorted(bounds))


@dataclasses.dataclass(frozen=True)
class EvalPlan:
  """Every eval split of every view cut into chunks by length bucket.

  The rows of all eval splits (dev and test) are pooled per view and grouped by the
  bucket of their own length, so a row is padded only to its own bucket. A bucket's
  ``n`` rows (the most over the views) are cut into ``k = ceil(n / max_rows)`` chunks
  of ``c`` rows, ``c`` the smallest multiple of 8 (at most ``max_rows``) that holds
  them in ``k`` chunks, so each chunk pads fewer than 8 rows; every split shares the
  one compiled program of each length. ``chunks[length]`` is ``(rows [views, k, c],
  split [views, k, c])``: pooled rows (-1 = padding) and each row's index in
  ``splits``.
  """
  splits: Tuple[str, ...]
  chunks: Dict[int, Tuple[np.ndarray, np.ndarray]]

  @classmethod
  def build(cls, splits: Sequence[str], rows, lengths, boundaries: Tuple[int, ...],
            max_rows: int):
    """``rows[s][v]``, ``lengths[s][v]``: split ``s``'s rows in view ``v``, lengths."""
    per_view = []  # per view: {bucket: (rows, split index)}
    for v in range(len(rows[0])):
      r = np.concatenate([np.asarray(rows[s][v], np.int32) for s in range(len(splits))])
      sid = np.concatenate([np.full(len(rows[s][v]), s, np.int32)
                            for s in range(len(splits))])
      which = np.searchsorted(boundaries, np.concatenate(  # each row's bucket
          [np.asarray(lengths[s][v]) for s in range(len(splits))]))
      per_view.append({int(b): (r[which == b], sid[which == b])
                       for b in np.unique(which)})
    chunks = {}
    for b in sorted({b for groups in per_view for b in groups}):
      n = max(len(g[b][0]) if b in g else 0 for g in per_view)
      count, size = (int(x) for x in chunk_rows(n, max_rows))
      out_rows = np.full((len(per_view), count * size), -1, np.int32)
      out_split = np.zeros((len(per_view), count * size), np.int32)
      for v, groups in enumerate(per_view):
        if b in groups:
          out_rows[v, :len(groups[b][0])], out_split[v, :len(groups[b][1])] = groups[b]
      chunks[boundaries[b]] = (out_rows.reshape(-1, count, size),
                               out_split.reshape(-1, count, size))
    return cls(tuple(splits), chunks)


def device_arrays(views, labels: np.ndarray,
                  tags: Optional[np.ndarray] = None) -> Dict[str, np.ndarray]:
  """The arrays every step gathers from: ``tokens`` int32 ``[views, total]`` (flat,
  zero-padded to the longest view), ``starts`` and ``lengths`` ``[views, rows]``,
  ``labels`` ``[rows]``; for tagged datasets ``tags`` ``[total]`` (one tag per token,
  the same in every view: tagged data keeps every token)."""
  total = max(max(len(v.tokens) for v in views), 1)
  tokens = np.zeros((len(views), total), np.int32)
  for i, v in enumerate(views):
    tokens[i, :len(v.tokens)] = v.tokens
  out = {'tokens': tokens,
         'starts': np.stack([v.starts for v in views]).astype(np.int32),
         'lengths': np.stack([v.lengths for v in views]).astype(np.int32),
         'labels': np.asarray(labels, np.int32)}
  if tags is not None:
    out['tags'] = np.zeros(total, np.int32)
    out['tags'][:len(tags)] = tags
  return out


def gather_batch(arrays: Dict[str, jax.Array], view, idx: jax.Array, length: int):
  """The batch of rows ``idx`` (``[..., batch]``) of ``view`` (broadcastable to
  ``idx.shape[:-1]``): ``tokens`` ``[..., batch, length]`` right-padded with 0.

  Rows with ``idx == -1`` get weight 0 and length 0.
  """
  valid = idx >= 0
  safe = jnp.where(valid, idx, 0)
  v = jnp.broadcast_to(jnp.asarray(view)[..., None], idx.shape)
  n = jnp.minimum(jnp.where(valid, arrays['lengths'][v, safe], 0), length)
  pos = jnp.arange(length)
  flat = arrays['starts'][v, safe][..., None] + pos
  flat = jnp.minimum(flat, arrays['tokens'].shape[-1] - 1)
  real = pos < n[..., None]
  batch = {'tokens': jnp.where(real, arrays['tokens'][v[..., None], flat], 0),
           'lengths': n, 'labels': arrays['labels'][safe],
           'weights': valid.astype(jnp.float32)}
  if 'tags' in arrays:  # ``[..., batch, length]``, 0 on padding
    batch['tags'] = jnp.where(real, arrays['tags'][flat], 0)
  return batch

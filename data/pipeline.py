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
"""
import dataclasses
from typing import Dict, List, Tuple

import jax
import jax.numpy as jnp
import numpy as np

SCHEDULE_SALT = 0x5EED5  # seeds numpy's generator for the shared slot schedule


def bucket_boundaries(lengths: np.ndarray, num_buckets: int, multiple: int,
                      max_length: int) -> Tuple[int, ...]:
  """Padded lengths of the buckets: quantiles of ``lengths`` rounded up to ``multiple``.

  The last boundary covers ``max_length`` (the longest sequence of any split).
  """
  def up(n):
    return int(-(-max(int(n), 1) // multiple) * multiple)
  qs = np.quantile(lengths, np.arange(1, num_buckets + 1) / num_buckets)
  bounds = sorted({up(q) for q in qs} | {up(max_length)})
  return tuple(b for b in bounds if b <= up(max_length))


def bucket_of(lengths: np.ndarray, boundaries: Tuple[int, ...]) -> np.ndarray:
  """Index of the smallest boundary that holds each length."""
  return np.searchsorted(np.asarray(boundaries), lengths, side='left')


@dataclasses.dataclass(frozen=True)
class TrainPlan:
  """Static structure of an epoch: buckets, their members, and batch slots.

  ``slot_bucket[s]`` is the bucket of batch slot ``s``; the slots of bucket ``b`` are
  contiguous. ``orders`` returns ``[seeds, slots, batch]`` example indices (-1 = none).
  """
  boundaries: Tuple[int, ...]
  members: Tuple[np.ndarray, ...]  # per bucket, example indices (sorted)
  batch_size: int
  slot_bucket: np.ndarray  # [slots]

  @classmethod
  def build(cls, lengths: np.ndarray, boundaries: Tuple[int, ...], batch_size: int,
            offset: int = 0):
    """``offset`` is added to every index (the split's first row on the device)."""
    which = bucket_of(lengths, boundaries)
    members, slots = [], []
    for b in range(len(boundaries)):
      idx = (np.flatnonzero(which == b) + offset).astype(np.int32)
      members.append(idx)
      slots += [b] * (-(-len(idx) // batch_size))
    return cls(tuple(boundaries), tuple(members), batch_size,
               np.asarray(slots, np.int32))

  @property
  def steps_per_epoch(self) -> int:
    return len(self.slot_bucket)

  def schedule(self, epoch: int) -> List[Tuple[int, int]]:
    """``[(slot, padded_length)]`` in visiting order; shared by all seeds."""
    rng = np.random.default_rng([SCHEDULE_SALT, epoch])
    order = rng.permutation(self.steps_per_epoch)
    return [(int(s), self.boundaries[self.slot_bucket[s]]) for s in order]

  def seed_order(self, data_key) -> jax.Array:
    """One seed's batches for one epoch: ``[slots, batch]`` int32, -1 = padding."""
    rows = []
    for b, idx in enumerate(self.members):
      if len(idx) == 0:
        continue
      perm = jnp.asarray(idx)[jax.random.permutation(jax.random.fold_in(data_key, b),
                                                     len(idx))]
      n_slots = -(-len(idx) // self.batch_size)
      pad = n_slots * self.batch_size - len(idx)
      perm = jnp.concatenate([perm, jnp.full((pad,), -1, jnp.int32)])
      rows.append(perm.reshape(n_slots, self.batch_size))
    return jnp.concatenate(rows, axis=0)


@dataclasses.dataclass(frozen=True)
class EvalPlan:
  """A split cut into length-sorted chunks of ``batch_size``, grouped by padded length.

  ``chunks[length]`` is ``[n_chunks, batch_size]`` int32 indices (-1 = padding row).
  The same chunks serve every seed.
  """
  chunks: Dict[int, np.ndarray]

  @classmethod
  def build(cls, lengths: np.ndarray, boundaries: Tuple[int, ...], batch_size: int,
            offset: int = 0):
    """``offset`` is added to every index (the split's first row on the device)."""
    order = np.argsort(lengths, kind='stable').astype(np.int32)
    groups: Dict[int, list] = {}
    for start in range(0, len(order), batch_size):
      chunk = order[start:start + batch_size]
      length = boundaries[bucket_of(lengths[chunk].max(keepdims=True), boundaries)[0]]
      row = np.full((batch_size,), -1, np.int32)
      row[:len(chunk)] = chunk + offset
      groups.setdefault(length, []).append(row)
    return cls({k: np.stack(v) for k, v in sorted(groups.items())})


def concatenate_splits(splits, width: int):
  """All splits as one set of arrays (in the order given, train first), and offsets.

  Returns ``({'tokens': int32 [n_total, width], 'lengths', 'labels': [n_total]},
  {split: index of its first row})``. One array for every split means dev and test
  batches of one padded length share a compiled eval step.
  """
  names = list(splits)
  sizes = [len(splits[n]) for n in names]
  offsets = dict(zip(names, np.cumsum([0] + sizes[:-1]).tolist()))
  parts = [splits[n] for n in names]
  arrays = {
      'tokens': np.concatenate([
          np.pad(p.tokens, ((0, 0), (0, width - p.tokens.shape[1]))) for p in parts]),
      'lengths': np.concatenate([p.lengths for p in parts]),
      'labels': np.concatenate([p.labels for p in parts]),
  }
  return arrays, offsets


def gather_batch(split: Dict[str, jax.Array], idx: jax.Array, length: int):
  """Batch of ``idx`` (any shape ``[..., batch]``) cut to ``length`` columns.

  Rows with ``idx == -1`` get weight 0 and length 0.
  """
  valid = idx >= 0
  safe = jnp.where(valid, idx, 0)
  return {
      'tokens': split['tokens'][:, :length][safe],
      'lengths': jnp.where(valid, split['lengths'][safe], 0),
      'labels': split['labels'][safe],
      'weights': valid.astype(jnp.float32),
  }

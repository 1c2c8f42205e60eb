import jax
import jax.numpy as jnp
import numpy as np

from data import pipeline
from data import vocabulary
from training import rngs


def _lengths(n=203, seed=0):
  return np.random.default_rng(seed).integers(1, 40, n).astype(np.int32)


def test_bucket_boundaries_cover_every_length_in_multiples():
  lengths = _lengths()
  bounds = pipeline.bucket_boundaries(lengths, 4, 8, max_length=45)
  assert all(b % 8 == 0 for b in bounds) and list(bounds) == sorted(set(bounds))
  assert bounds[-1] >= 45 and len(bounds) <= 5
  which = pipeline.bucket_of(lengths, bounds)
  assert (np.asarray(bounds)[which] >= lengths).all()


def _plan(batch=16):
  lengths = _lengths()
  return lengths, pipeline.TrainPlan.build(
      lengths, pipeline.bucket_boundaries(lengths, 3, 8, 40), batch)


def test_each_seed_sees_every_example_once_per_epoch_in_its_own_order():
  lengths, plan = _plan()
  orders = [np.asarray(plan.seed_order(rngs.data_key(s, 1))) for s in (1, 2)]
  for order in orders:
    real = order[order >= 0]
    assert sorted(real.tolist()) == list(range(len(lengths)))
    # Every batch slot holds examples of its bucket only.
    for slot, bucket in enumerate(plan.slot_bucket):
      row = order[slot][order[slot] >= 0]
      assert (lengths[row] <= plan.boundaries[bucket]).all()
  assert not np.array_equal(orders[0], orders[1])


def test_orders_are_a_pure_function_of_seed_and_epoch():
  _, plan = _plan()
  a = plan.seed_order(rngs.data_key(3, 2))
  np.testing.assert_array_equal(a, plan.seed_order(rngs.data_key(3, 2)))
  assert not np.array_equal(a, plan.seed_order(rngs.data_key(3, 3)))
  # Inside jit and vmapped over seeds: the same rows as alone.
  both = jax.jit(jax.vmap(lambda s: plan.seed_order(rngs.data_key(s, 2))))(
      jnp.array([5, 3]))
  np.testing.assert_array_equal(both[1], a)


def test_schedule_visits_every_slot_once_and_depends_on_epoch_only():
  _, plan = _plan()
  s1 = plan.schedule(1)
  assert sorted(slot for slot, _ in s1) == list(range(plan.steps_per_epoch))
  assert s1 == plan.schedule(1) and s1 != plan.schedule(2)
  assert all(length == plan.boundaries[plan.slot_bucket[slot]] for slot, length in s1)


def test_eval_plan_covers_each_example_once_with_enough_columns():
  lengths = _lengths(seed=1)
  bounds = pipeline.bucket_boundaries(lengths, 3, 8, 40)
  plan = pipeline.EvalPlan.build(lengths, bounds, 50)
  seen = []
  for length, chunks in plan.chunks.items():
    real = chunks[chunks >= 0]
    assert (lengths[real] <= length).all()
    seen += real.tolist()
  assert sorted(seen) == list(range(len(lengths)))


def test_gather_batch_marks_padding_rows():
  split = {'tokens': jnp.arange(20).reshape(4, 5), 'lengths': jnp.array([5, 3, 4, 2]),
           'labels': jnp.array([0, 1, 1, 0])}
  batch = pipeline.gather_batch(split, jnp.array([2, -1, 0]), 3)
  np.testing.assert_array_equal(batch['tokens'], [[10, 11, 12], [0, 1, 2], [0, 1, 2]])
  np.testing.assert_array_equal(batch['weights'], [1, 0, 1])
  np.testing.assert_array_equal(batch['lengths'], [4, 0, 5])


def test_vocabulary_comes_from_training_tokens_only_and_encodes_oov():
  vocab = vocabulary.Vocabulary.build([['b', 'a', 'b'], ['c']], min_count=1)
  assert vocab.words[:2] == (vocabulary.PAD, vocabulary.UNK)
  assert vocab.words[2] == 'b'  # most frequent first
  ids, lengths = vocab.encode([['a', 'zzz', 'b']], oov='unk')
  np.testing.assert_array_equal(ids, [[vocab.index['a'], vocabulary.UNK_ID,
                                       vocab.index['b']]])
  ids, lengths = vocab.encode([['a', 'zzz', 'b'], ['zzz']], oov='delete')
  np.testing.assert_array_equal(lengths, [2, 0])


def test_tokenize_splits_on_ascii_space_only():
  assert vocabulary.tokenize('8\u00a01\\/2 Film', lowercase=True) == ['8\u00a01\\/2',
                                                                      'film']


def test_concatenated_splits_keep_each_split_at_its_offset():
  import data as data_lib  # pylint: disable=g-import-not-at-top
  a = data_lib.Split(np.array([[5, 6, 0]], np.int32), np.array([2], np.int32),
                     np.array([1], np.int32))
  b = data_lib.Split(np.array([[7], [8]], np.int32), np.array([1, 1], np.int32),
                     np.array([0, 1], np.int32))
  arrays, offsets = pipeline.concatenate_splits({'train': a, 'test': b}, width=8)
  assert offsets == {'train': 0, 'test': 1}
  assert arrays['tokens'].shape == (3, 8)
  np.testing.assert_array_equal(arrays['tokens'][1:, :2], [[7, 0], [8, 0]])
  np.testing.assert_array_equal(arrays['labels'], [1, 0, 1])

"""Pretrained vectors in experiments: loaded for the vocabulary, static or fine-tuned."""
import collections

import jax
import numpy as np
import pytest

from seedsweep.errors import Stopped, UserError
from seedsweep.run import describe
from seedsweep.run import faults
from seedsweep.run import loop
from seedsweep.run import pieces
from tests.conftest import in_tier
from tests.conftest import small_config
from tests.conftest import train_epoch

WORDS = ('the', 'film', 'movie', 'not')


def write_glove(path, dim, words=WORDS):
  rng = np.random.default_rng(0)
  vectors = {w: rng.normal(size=dim).round(4) for w in words}
  with open(path, 'w') as f:
    for w, v in vectors.items():
      f.write(w + ' ' + ' '.join(str(x) for x in v) + '\n')
  return vectors


def vector_config(path, static, seeds=(1, 2)):
  config = small_config(seeds=seeds, seed_parallel='map')
  config.data.num_buckets = 1
  config.data.vectors.path = str(path)
  config.data.vectors.static = static
  return config


def not_reached(*_):
  raise AssertionError('a refused resume built the train state (and compiled) first')


def _train(config, steps=3):
  exp = pieces.build(config)
  state = jax.tree.map(np.asarray, exp.init_state())
  s, _ = train_epoch(exp, exp.init_state(), 1, max_steps=steps)
  return exp, state, s


@pytest.mark.slow
@pytest.mark.parametrize('static', in_tier([True, False], False))
def test_vectors_initialise_the_found_words_and_static_keeps_them(tmp_path, static,
                                                                  monkeypatch):
  monkeypatch.setenv('SEEDSWEEP_CACHE', str(tmp_path / 'cache'))
  vectors = write_glove(tmp_path / 'v.txt', 32)
  exp, before, after = _train(vector_config(tmp_path / 'v.txt', static))
  index = exp.data.vocab.index
  emb0 = before.params['embedding']['embedding']
  found = [w for w in WORDS if w in index]
  assert found
  for w in found:  # every seed starts from the pretrained vector
    np.testing.assert_allclose(emb0[:, index[w]], np.stack([vectors[w]] * 2), atol=1e-6)
  other = next(i for w, i in index.items() if w not in WORDS and i > 1)
  assert not np.array_equal(emb0[0, other], emb0[1, other])  # per-seed random init
  emb1 = np.asarray(after.params['embedding']['embedding'])
  assert np.array_equal(emb1, emb0) == static
  dense = [np.asarray(x) for x in jax.tree.leaves(after.params['classifier'])]
  assert all(not np.array_equal(a, b) for a, b in zip(
      dense, jax.tree.leaves(before.params['classifier'])))


def test_the_run_records_the_vectors_file(tmp_path, monkeypatch):
  monkeypatch.setenv('SEEDSWEEP_CACHE', str(tmp_path / 'cache'))
  write_glove(tmp_path / 'v.txt', 32)
  exp = pieces.build(vector_config(tmp_path / 'v.txt', True))
  record = exp.provenance['data']['vectors']
  assert record['path'] == str(tmp_path / 'v.txt') and len(record['sha256']) == 64
  assert record['dataset_words_found'] == sum(w in exp.data.vocab.index for w in WORDS)
  assert record['dataset_words'] >= len(exp.data.vocab.words) - 2
  config = vector_config(tmp_path / 'v.txt', True)
  text = describe.format_description(describe.describe(config), config)
  assert (f"# vectors {tmp_path / 'v.txt'} (sha256 {record['sha256'][:12]}...): "
          f"{record['dataset_words_found']} of the dataset's") in text


def test_vectors_of_another_dimension_are_refused(tmp_path, monkeypatch):
  monkeypatch.setenv('SEEDSWEEP_CACHE', str(tmp_path / 'cache'))
  write_glove(tmp_path / 'v.txt', 7)
  with pytest.raises(UserError, match='embed_dim=32 but the vectors'):
    pieces.build(vector_config(tmp_path / 'v.txt', True))


# This config has 94 steps an epoch: a stop in epoch 1, and one in epoch 2 (after the
# epoch-1 checkpoint, so both kinds of checkpoint are checked).
@pytest.mark.slow
@pytest.mark.parametrize('stop_at_step, epoch',
                         in_tier([(3, 1), (94 + 3, 2)], (94 + 3, 2)))
def test_a_run_whose_vectors_file_changed_is_not_resumed(tmp_path, monkeypatch,
                                                         stop_at_step, epoch):
  """A stopped run resumed after its vectors file changed would mix two inputs in
  one seed's numbers: refused, naming the file, until the file it began with is back
  (one seed: the refusal is the run's, not a member's)."""
  monkeypatch.setenv('SEEDSWEEP_CACHE', str(tmp_path / 'cache'))
  path, workdir = tmp_path / 'v.txt', str(tmp_path / 'run')
  write_glove(path, 32)
  config = vector_config(path, static=True, seeds=(1,))
  quiet = lambda *_: None
  monkeypatch.setattr(faults, '_reached', collections.Counter())  # count from 0 here
  monkeypatch.setenv(faults.ENV, f'step:{stop_at_step}@TERM')
  # The signal comes in the chunk that holds step 3 (steps of one length, at most
  # train.steps_per_dispatch): the run stops at its end.
  with pytest.raises(Stopped, match=fr'at step [3-8]/94 of epoch {epoch}'):
    loop.train(config, workdir, print_fn=quiet)
  monkeypatch.delenv(faults.ENV)
  original = path.read_bytes()
  path.write_bytes(original + b'unseenword' + b' 0.5' * 32 + b'\n')  # other bytes
  with monkeypatch.context() as refused:  # before the state is built and compiled
    refused.setattr(pieces.Pieces, 'init_state', not_reached)
    with pytest.raises(UserError, match=r'cannot resume: .* vectors .*v\.txt hold now '
                                        r'\(vectors: \w{12}\.\.\. -> \w{12}\.\.\.\)'):
      loop.train(config, workdir, print_fn=quiet)
  path.write_bytes(original)
  assert loop.train(config, workdir, print_fn=quiet)['epochs_completed'] == 2


@pytest.mark.slow
@pytest.mark.full  # the vectors file checked on resume: above
def test_a_finished_run_is_re_evaluated_on_its_own_inputs_after_its_vectors_changed(
    tmp_path, monkeypatch):
  """--mode=eval reads every parameter from the checkpoint and the dataset the run
  saved (run/saved_data.py): a vectors file changed since changes no number, and
  the record still names the file the run was trained on."""
  monkeypatch.setenv('SEEDSWEEP_CACHE', str(tmp_path / 'cache'))
  path, workdir = tmp_path / 'v.txt', tmp_path / 'run'
  write_glove(path, 32)
  config = vector_config(path, static=True)
  config.train.num_epochs = 1
  trained = loop.train(config, str(workdir), print_fn=lambda *_: None)
  path.write_bytes(path.read_bytes() + b'unseenword' + b' 0.5' * 32 + b'\n')
  evaluated = loop.evaluate(config, str(workdir), print_fn=lambda *_: None)
  assert evaluated['summary'] == trained['summary']
  assert (evaluated['provenance']['data']['vectors']['sha256'] ==
          trained['provenance']['data']['vectors']['sha256'])

"""The seed-parallel engine: per-seed independence, training steps, selection."""
import jax
import numpy as np
import pytest

from seedsweep.errors import UserError
from seedsweep.run import epoch as epoch_lib
from seedsweep.run import loop
from seedsweep.run import outputs
from tests.conftest import in_tier
from tests.conftest import run_steps
from tests.conftest import small_config
from tests.conftest import train_epoch


def _one_bucket(seeds, mode):
  config = small_config(seeds=seeds, seed_parallel=mode)
  config.data.num_buckets = 1  # one compilation per (mode, number of seeds)
  return config


@pytest.mark.slow
@pytest.mark.parametrize('mode', in_tier(['map', 'vmap'], 'map'))
def test_one_train_step_changes_every_parameter_of_every_seed(mode):
  exp, before = run_steps(_one_bucket((1, 2), mode), 0)
  _, after = run_steps(_one_bucket((1, 2), mode), 1)
  flat_before = jax.tree_util.tree_flatten_with_path(before.params)[0]
  flat_after = jax.tree.leaves(after.params)
  for (path, b), a in zip(flat_before, flat_after):
    for seed in range(2):
      assert not np.array_equal(b[seed], a[seed]), (
          f'{jax.tree_util.keystr(path)} of seed {exp.members.seeds[seed]} did not change')
  np.testing.assert_array_equal(after.step, [1, 1])


def test_seeds_start_and_end_differently():
  _, state = run_steps(_one_bucket((1, 2), 'map'), 3)
  for leaf in jax.tree.leaves(state.params):
    assert not np.array_equal(leaf[0], leaf[1])


def _seed_3(seeds, mode, steps):
  _, state = run_steps(_one_bucket(seeds, mode), steps)
  return [leaf[list(seeds).index(3)] for leaf in jax.tree.leaves(state.params)]


@pytest.mark.slow
def test_seed_alone_equals_the_same_seed_inside_a_group_bitwise_with_map():
  """``map`` (the CPU default): each seed's step has single-seed shapes."""
  group, alone = _seed_3((7, 3, 5), 'map', 20), _seed_3((3,), 'map', 20)
  for g, a in zip(group, alone):
    np.testing.assert_array_equal(g, a)


@pytest.mark.slow
@pytest.mark.full  # the map form above; vmap: test_vmap_and_map_give_the_same_numbers
def test_seed_alone_equals_the_same_seed_inside_a_group_bitwise_with_vmap():
  """Groups of two or more share XLA's batched kernels, and a lone seed runs as a
  pair (itself twice): a batch of one would compile to unbatched kernels, whose
  rounding differs. Training steps, dev/test evaluation and the best-epoch
  selection give seed 3 the same bits alone and in groups."""
  def seed_3(seeds):
    exp, state = run_steps(_one_bucket(seeds, 'vmap'), 5)
    evals = epoch_lib.evaluate(exp, state.params)
    state = epoch_lib.keep_best(exp, state, evals, 1)
    i = list(seeds).index(3)
    return ([leaf[i] for leaf in jax.tree.leaves(state)],
            {k: v[i] for k, v in evals.items()})

  group_state, group_evals = seed_3((7, 3, 5))
  for seeds in ((3,), (3, 9)):
    alone_state, alone_evals = seed_3(seeds)
    for g, a in zip(group_state, alone_state):
      np.testing.assert_array_equal(g, a)
    assert alone_evals == group_evals, seeds


@pytest.mark.slow
def test_vmap_and_map_give_the_same_numbers():
  _, mapped = run_steps(_one_bucket((1, 2), 'map'), 5)
  _, vmapped = run_steps(_one_bucket((1, 2), 'vmap'), 5)
  for m, v in zip(jax.tree.leaves(mapped.params), jax.tree.leaves(vmapped.params)):
    assert np.linalg.norm(m - v) <= 1e-5 * np.linalg.norm(m)


@pytest.mark.slow
def test_results_take_each_seed_at_its_best_dev_epoch(tmp_path):
  config = small_config(seeds=(1, 2), epochs=3)
  config.data.num_buckets = 2
  results = loop.train(config, str(tmp_path), print_fn=lambda *_: None)
  rows = outputs.MetricsLog(str(tmp_path)).rows()
  assert [(r['epoch'], r['seed']) for r in rows] == [
      (e, s) for e in (1, 2, 3) for s in (1, 2)]
  for i, seed in enumerate(results['seeds']):
    mine = [r for r in rows if r['seed'] == seed]
    best = max(mine, key=lambda r: (r['dev_accuracy'], -r['epoch']))  # first best
    assert results['metrics']['best_epoch'][i] == best['epoch']
    assert results['metrics']['dev_accuracy'][i] == best['dev_accuracy']
    assert results['metrics']['test_accuracy'][i] == best['test_accuracy']
  summary = results['summary']['test_accuracy']
  values = results['metrics']['test_accuracy']
  assert summary['mean'] == pytest.approx(np.mean(values))
  assert summary['std'] == pytest.approx(np.std(values, ddof=1))


@pytest.mark.slow
@pytest.mark.full  # selection: test_results_take_each_seed_at_its_best_dev_epoch
def test_selection_last_reports_the_final_epoch(tmp_path):
  config = small_config(seeds=(1,), epochs=2, selection='last')
  config.data.num_buckets = 2
  results = loop.train(config, str(tmp_path), print_fn=lambda *_: None)
  last = [r for r in outputs.MetricsLog(str(tmp_path)).rows() if r['epoch'] == 2][0]
  assert results['metrics']['test_accuracy'] == [last['test_accuracy']]
  assert 'best_epoch' not in results['metrics']


@pytest.mark.slow
def test_early_stopping_gives_each_seed_its_numbers_alone(tmp_path):
  """With patience, a seed's selection stops as it would trained alone; the run ends
  when every seed's has, and a seed's numbers do not depend on its companions."""
  def run(seeds, name):
    config = small_config(seeds=seeds, epochs=10)
    config.data.num_buckets = 1  # one train and one eval program per member count
    config.optimizer.learning_rate = 0.03  # seed 2 stops after epoch 4, seed 1 after 7
    config.train.patience = 1
    return loop.train(config, str(tmp_path / name), print_fn=lambda *_: None)

  group = run((1, 2), 'group')
  alone = [run((seed,), f'seed{seed}') for seed in (1, 2)]
  for i, single in enumerate(alone):
    for key in ('best_epoch', 'dev_accuracy', 'test_accuracy'):
      assert group['metrics'][key][i] == single['metrics'][key][0]
    # Alone, a seed stops one epoch after its best (patience 1) or at the last epoch.
    assert single['epochs_completed'] == min(single['metrics']['best_epoch'][0] + 1, 10)
  assert min(s['epochs_completed'] for s in alone) < group['epochs_completed'] < 10
  assert group['epochs_completed'] == max(s['epochs_completed'] for s in alone)


@pytest.mark.slow
@pytest.mark.full  # stopping: test_early_stopping_gives_each_seed_its_numbers_alone
def test_a_run_ends_when_no_seed_improves_for_patience_epochs(tmp_path):
  config = small_config(seeds=(1, 2), epochs=6)
  config.data.num_buckets = 2
  # A rate too small to move any float32 parameter (0 is refused): dev accuracy
  # never beats epoch 1's.
  config.optimizer.learning_rate = 1e-30
  config.train.patience = 2
  results = loop.train(config, str(tmp_path), print_fn=lambda *_: None)
  assert results['epochs_completed'] == 3
  assert results['metrics']['best_epoch'] == [1, 1]
  assert {r['epoch'] for r in outputs.MetricsLog(str(tmp_path)).rows()} == {1, 2, 3}
  messages = []
  assert loop.train(config, str(tmp_path), print_fn=messages.append) == results
  assert 'finished run found (3 epochs)' in messages[0]


@pytest.mark.slow
@pytest.mark.parametrize('mode', in_tier(['map', 'vmap'], 'map'))
def test_a_seed_whose_loss_turns_nan_is_frozen_and_flagged_and_the_others_go_on(mode):
  """Seed 3's parameters are poisoned (NaN) before the first step: it takes no step
  and is flagged at step 1, while seeds 1 and 2 end with the bits of a run without
  it."""
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  exp = pieces.build(_one_bucket((1, 3, 2), mode))
  state = exp.init_state()
  kernel = state.params['classifier']['kernel']
  poisoned = state.replace(params={**state.params, 'classifier': {
      **state.params['classifier'], 'kernel': kernel.at[1].set(np.nan)}})
  before = jax.tree.map(np.asarray, poisoned.params)
  state, losses = train_epoch(exp, poisoned, 1, max_steps=3)
  assert np.isnan(losses[1]) and np.isfinite(losses[[0, 2]]).all()
  np.testing.assert_array_equal(state.nonfinite_step, [0, 1, 0])
  np.testing.assert_array_equal(state.step, [3, 0, 3])
  for b, a in zip(jax.tree.leaves(before), jax.tree.leaves(state.params)):
    np.testing.assert_array_equal(a[1], b[1])  # frozen as it was
  alone_exp, alone = run_steps(_one_bucket((1, 2), mode), 3)
  assert epoch_lib.params_fingerprints(exp, state.params)[::2] == epoch_lib.params_fingerprints(alone_exp, 
      alone.params)


@pytest.mark.slow
@pytest.mark.parametrize('policy', in_tier(['freeze', 'fatal'], 'fatal'))
def test_a_diverging_run_is_flagged_or_stopped_by_the_nan_policy(tmp_path, policy):
  config = small_config(seeds=(1, 2), epochs=1, nan_policy=policy)
  config.data.num_buckets = 1
  # Finite, at float32's limit: updates overflow (a non-finite rate is refused).
  config.optimizer.name, config.optimizer.learning_rate = 'sgd', 3e38
  if policy == 'fatal':
    with pytest.raises(UserError, match=r'the train loss became NaN or infinite '
                       r'\(seed_1 at step \d+, seed_2 at step \d+, by the end of epoch 1\)'
                       r'; config.train.nan_policy=fatal stops the run'):
      loop.train(config, str(tmp_path), print_fn=lambda *a: None)
    assert not (tmp_path / outputs.RESULTS).exists()
    return
  results = loop.train(config, str(tmp_path), print_fn=lambda *a: None)
  assert all(s > 0 for s in results['nonfinite_step'])
  rows = outputs.MetricsLog(str(tmp_path)).rows()
  assert [r['nonfinite_step'] for r in rows] == results['nonfinite_step']
  assert 'NaN or infinite' in outputs.format_table(results)


def test_eval_on_an_empty_workdir_is_refused_and_leaves_nothing(tmp_path):
  workdir = tmp_path / 'empty'
  workdir.mkdir()
  with pytest.raises(UserError, match=r'holds no config.json; expected the workdir of '
                                      r'a run'):
    loop.evaluate(small_config(), str(workdir), print_fn=lambda *a: None)
  assert list(workdir.iterdir()) == []


def test_the_epoch_line_shows_the_sample_std_as_the_final_table_does():
  rows = [{'train_loss': 1.0, 'dev_accuracy': 80.0}, {'train_loss': 3.0,
                                                      'dev_accuracy': 90.0}]
  assert epoch_lib.summary(2, 5, rows) == (
      'epoch 2/5  train_loss 2±1.4  dev_accuracy 85±7.1')


@pytest.mark.slow
def test_the_progress_rate_leaves_out_the_first_chunk():
  """The chunk of steps that compiled the training program is kept out of the bar's
  rate (its ETA): tqdm's ``unpause`` before it is counted; later chunks are counted
  as they come, each by its steps."""
  import functools  # pylint: disable=g-import-not-at-top
  import io  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  from tqdm import tqdm  # pylint: disable=g-import-not-at-top
  bar = tqdm(total=20, file=io.StringIO(), mininterval=0, miniters=1, smoothing=0)
  on_step = functools.partial(loop.progress_without_compilation, bar, 0)
  time.sleep(0.5)  # a first chunk that compiles
  on_step(8)
  assert bar.format_dict['elapsed'] < 0.25
  time.sleep(0.5)  # a chunk of a program compiled before: counted
  on_step(3)
  assert bar.format_dict['elapsed'] >= 0.5
  assert bar.n == 11


@pytest.mark.slow
def test_the_evaluation_compiled_ahead_is_not_compiled_again(caplog):
  """epoch.compile_ahead compiles the eval programs while epoch 1 trains: the
  first evaluation finds every one in jit's cache (none lowered again)."""
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  exp = pieces.build(small_config(seeds=(1, 2), epochs=1))
  state = exp.init_state()
  ahead = epoch_lib.compile_ahead(exp, state.params)
  state, _ = train_epoch(exp, state, 1, max_steps=2)
  ahead.join()
  jax.config.update('jax_log_compiles', True)
  try:
    with caplog.at_level('WARNING'):
      epoch_lib.evaluate(exp, state.params)
  finally:
    jax.config.update('jax_log_compiles', False)
  assert len(exp.schedule.eval_plan.chunks) > 1
  assert not [r for r in caplog.records if 'jit(_eval_' in r.getMessage()]


@pytest.mark.slow
def test_the_evaluation_compiles_one_program_per_length(caplog):
  """The host picks each eval chunk's program by its padded length (no branch on a
  device value, which a GPU would copy to the host): one compilation per length,
  shared by every split and chunk of that length."""
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  exp = pieces.build(small_config(seeds=(1, 2), epochs=1))
  state, _ = train_epoch(exp, exp.init_state(), 1, max_steps=2)
  jax.config.update('jax_log_compiles', True)
  try:
    with caplog.at_level('WARNING'):
      epoch_lib.evaluate(exp, state.params)
  finally:
    jax.config.update('jax_log_compiles', False)
  compiled = [r.getMessage() for r in caplog.records
              if 'Finished XLA compilation of jit(_eval_' in r.getMessage()]
  lengths = exp.schedule.eval_plan.chunks
  assert 1 < len(lengths) < len(exp.eval_chunks)
  assert len(compiled) == len(lengths) and all('_eval_batch' in c for c in compiled)


def test_a_workdir_that_is_a_file_is_refused_in_one_line(tmp_path):
  path = tmp_path / 'notes.txt'
  path.write_text('mine')
  with pytest.raises(UserError, match=r'^--workdir=.*notes.txt is a file; expected a '
                                      r'folder'):
    loop.train(small_config(), str(path), print_fn=lambda *_: None)
  assert path.read_text() == 'mine'


@pytest.mark.slow
def test_every_line_goes_through_print_fn_and_the_bar_only_to_stderr(tmp_path, capsys):
  """Epoch lines, the early stop and the final table reach print_fn, never stdout;
  without train.progress nothing else is written, with it the bar goes to stderr."""
  config = small_config(seeds=(1, 2), epochs=6)
  config.data.num_buckets = 2
  config.optimizer.learning_rate = 1e-30  # dev never beats epoch 1: early stop
  config.train.patience = 2
  lines = []
  loop.train(config, str(tmp_path / 'quiet'), print_fn=lines.append)
  out, err = capsys.readouterr()
  assert out == ''
  assert 'epoch' not in err and 'step' not in err
  said = '\n'.join(lines)
  assert [l.split()[1] for l in said.splitlines() if l.startswith('epoch ')] == [
      '1/6', '2/6', '3/6']
  assert 'early stop after epoch 3' in said
  config.train.progress = True
  config.train.num_epochs = 1
  lines = []
  loop.train(config, str(tmp_path / 'bar'), print_fn=lines.append)
  out, err = capsys.readouterr()
  assert out == ''
  assert 'step' in err  # the bar, on stderr
  assert any(l.startswith('epoch 1/1') for l in lines)


@pytest.mark.slow
def test_the_lower_layers_notices_go_through_print_fn_too(tmp_path, capfd):
  """A fresh dataset cache: 'preparing dataset' (the input machinery's line, said
  without a print_fn of its own) reaches the caller's print_fn like the epoch lines,
  and nothing reaches stdout or stderr; outside a run it goes to stderr again."""
  import seedsweep  # pylint: disable=g-import-not-at-top
  from seedsweep import notices  # pylint: disable=g-import-not-at-top
  config = small_config(seeds=(1,), epochs=1)
  config.data.num_buckets = 1
  config.data.tfds_dir = str(tmp_path / 'fresh_cache')
  capfd.readouterr()
  lines = []
  seedsweep.train(config, str(tmp_path / 'run'), print_fn=lines.append)
  out, err = capfd.readouterr()
  assert (out, err) == ('', '')
  said = '\n'.join(lines)
  assert (f'preparing dataset seedsweep_demo once, in {tmp_path / "fresh_cache"}'
          in said), said
  assert 'epoch 1/1' in said
  notices.say('a line outside any run')
  assert capfd.readouterr().err == 'a line outside any run\n'


def test_a_notices_sink_is_restored_however_its_block_ends(capfd):
  """Nested doors (a sweep's run) give the line to the innermost print_fn; each
  block's end, by an error too, restores the one before."""
  from seedsweep import notices  # pylint: disable=g-import-not-at-top
  outer, inner = [], []
  with notices.to(outer.append):
    with pytest.raises(UserError):
      with notices.to(inner.append):
        notices.say('inner')
        raise UserError('stopped')
    notices.say('outer')
  notices.say('none')
  assert (outer, inner) == (['outer'], ['inner'])
  assert capfd.readouterr().err == 'none\n'

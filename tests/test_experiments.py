"""Every paper experiment config: its ``quick`` variant builds on the real data
(../shared/data) and its train and eval steps trace; one per model family trains end
to end; and every variant resolves with the paper's number."""
import functools
import importlib
import json

import jax
import jax.numpy as jnp
import pytest

from seedsweep import models
from seedsweep.models import registered
from seedsweep.run import loop
from seedsweep.run import pieces
from tests.conftest import in_tier
from tests.conftest import tiny_shapes

# Each model family's paper configs as its module declares them (PAPER_CONFIGS):
# one quick variant per family trains end to end, under vmap (the TREC ones,
# tests/determinism_probe.py's, which compiles the same programs with
# train.seed_parallel=vmap); the golden runs train every family under map, the
# default; joint_atis:quick trains in tests/test_joint_slu.py, the cross-validated
# loop in tests/test_cross_validation.py. The other config files' quick variants are
# built on their dataset and traced (a compilation each would cost 20-35 s of CI time
# and test no other code).
PAPER = [registered.paper_configs(family) for family in models.FAMILIES]
TRAINED = [config for paper in PAPER for config in paper.trained]
TRACED = [config for paper in PAPER for config in paper.traced]


def get_config(name, arg):
  return importlib.import_module(f'seedsweep.experiments.{name}').get_config(arg)


@pytest.mark.slow
@pytest.mark.parametrize('name, arg', in_tier(TRACED, ('clstm_sst', 'binary,quick')))
def test_quick_variant_builds_on_its_data_and_its_steps_trace(name, arg):
  """The config's data, model, optimiser and plans built for real; the train chunk
  program (one step of each length) lowered and one eval chunk traced (shapes and
  dtypes checked, nothing compiled)."""
  exp = pieces.build(tiny_shapes(get_config(name, arg)))
  members = len(exp.members)
  state = jax.eval_shape(exp.init_state)
  batches = jax.eval_shape(functools.partial(
      exp.steps.epoch_plan, epoch=1, visits=exp.schedule.train_plan.schedule(1)), exp.device)
  position = jax.ShapeDtypeStruct((), jnp.int32)
  loss_sum = jax.ShapeDtypeStruct((members,), jnp.float32)
  lowered = exp.steps.lower_chunks(state, exp.device, batches, position, loss_sum)[0]
  new_state, loss, _ = lowered.out_info
  assert loss.shape == (members,)
  assert jax.tree.map(lambda a: (a.shape, a.dtype), new_state) == jax.tree.map(
      lambda a: (a.shape, a.dtype), state)
  length, (rows, split) = next(iter(exp.schedule.eval_plan.chunks.items()))
  sums = jax.eval_shape(exp.steps.eval_batch, state.params, exp.device, rows[:, 0],
                        split[:, 0], length=length,
                        n_splits=len(exp.schedule.eval_splits))
  assert all(v.shape == (members, len(exp.schedule.eval_splits))
             for v in jax.tree.leaves(sums))


@pytest.mark.slow
@pytest.mark.full  # a quick paper config trained: the golden run bilstm_sst2_quick
@pytest.mark.parametrize('name, arg', TRAINED)
def test_quick_variant_trains_end_to_end_under_vmap_in_the_portable_form(name, arg,
                                                                          tmp_path):
  """The model, data, optimiser and loop are the config's own; the shapes tiny, the
  seeds vmapped. No dot outside YNNPACK and no LAPACK call in the compiled train step
  (engine/portable.py; the golden runs record the same under map)."""
  config = tiny_shapes(get_config(name, arg))
  config.train.seed_parallel = 'vmap'
  results = loop.train(config, str(tmp_path), print_fn=lambda *a: None)
  accuracy = results['summary']['test_accuracy']
  assert 0 < accuracy['mean'] <= 100
  assert results['paper'] == config.paper.to_dict()
  assert json.loads((tmp_path / 'results.json').read_text())['seeds']
  assert results['provenance']['seed_parallel'] == 'vmap'
  assert results['provenance']['determinism']['unportable_ops'] == []


@pytest.mark.parametrize('name, arg, dataset, value', [
    ('dclstm_sst', '', 'sst/binary', 89.7), ('dclstm_sst', 'fine', 'sst/fine', 51.9),
    ('dclstm_sst', 'binary,bilstm300', 'sst/binary', 87.2),
    ('dclstm_sst', 'fine,bilstm100', 'sst/fine', 48.5),
    ('dclstm_sst', 'fine,phrases', 'sst/fine_phrases', 51.9),
    ('dclstm_mr', '', 'mr', 82.8), ('dclstm_subj', '', 'subj', 94.5),
    ('dclstm_trec', '', 'trec/coarse', 95.6),
    ('clstm_sst', '', 'sst/binary_phrases', 87.8),
    ('clstm_sst', 'fine', 'sst/fine_phrases', 49.2),
    ('clstm_sst', 'binary,lstm', 'sst/binary_phrases', 86.6),
    ('clstm_sst', 'fine,bilstm', 'sst/fine_phrases', 47.8),
    ('clstm_trec', '', 'trec/coarse', 94.6), ('clstm_trec', 'lstm', 'trec/coarse', 93.2),
    ('clstm_trec', 'bilstm', 'trec/coarse', 93.0),
    ('mtlstm_sst', '', 'sst/binary', 87.2), ('mtlstm_sst', 'fine', 'sst/fine', 49.1),
    ('mtlstm_sst', 'binary,s2f', 'sst/binary', 86.7),
    ('mtlstm_sst', 'fine,lstm', 'sst/fine', 47.9),
    ('mtlstm_trec', '', 'trec/coarse', 94.4), ('mtlstm_trec', 'lstm', 'trec/coarse', 91.3),
    ('mtlstm_imdb', '', 'imdb', 92.1), ('mtlstm_imdb', 's2f', 'imdb', 90.2),
    ('dlstm_sst', '', 'sst/binary', 87.2), ('dlstm_sst', 'fine', 'sst/fine', 49.2),
    ('dlstm_sst', 'binary,phrases', 'sst/binary_phrases', 88.7),
    ('dlstm_sst', 'fine,phrases', 'sst/fine_phrases', 51.9),
    ('dlstm_trec', '', 'trec/coarse', 94.8), ('dlstm_atis', '', 'atis/jointslu', 97.9),
    ('joint_atis', '', 'atis', 96.98), ('joint_atis', 'independent', 'atis', 93.74),
    ('joint_atis', 'latent_sparse', 'atis', 5.42), ('joint_trec', '', 'trec/coarse', 94.0),
    ('joint_trec', 'independent', 'trec/coarse', 92.2),
])
def test_full_configs_carry_the_papers_protocol_and_number(name, arg, dataset, value):
  config = get_config(name, arg)
  assert config.data.name == dataset and config.paper.value == value
  assert config.seeds == tuple(range(1, 11))


def test_headline_settings_and_bad_arguments():
  dc = get_config('dclstm_sst', '')
  assert (dc.model.dl, dc.model.dh, dc.model.th) == (15, 13, 100)
  assert dc.data.oov == 'delete' and dc.train.batch_size == 200
  assert get_config('dclstm_mr', '').data.folds == ()  # all ten folds
  assert get_config('clstm_trec', '').data.dev_holdout == 1000.0
  with pytest.raises(ValueError, match="'binary' and 'fine' both set dataset"):
    get_config('dclstm_sst', 'binary,fine')
  with pytest.raises(ValueError, match=r"unknown argument\(s\) \['sst3'\]"):
    get_config('clstm_sst', 'sst3')
  mt = get_config('mtlstm_trec', '')
  assert (mt.model.hidden, mt.model.groups, mt.model.strategy) == (55, 3, 'f2s')
  assert get_config('mtlstm_imdb', 'lstm').model.groups == 1
  assert get_config('mtlstm_imdb', '').data.max_length == 0  # every token kept
  assert get_config('dlstm_atis', '').train.selection == 'last'  # no dev: epoch 100
  assert get_config('dlstm_sst', '').optimizer.eps == 1e-5


def test_joint_rows_carry_both_of_table_1s_numbers_and_their_variant():
  from seedsweep.experiments import joint_atis  # pylint: disable=g-import-not-at-top
  for row, (slot_f1, intent_error) in joint_atis.PAPER.items():
    config = get_config('joint_atis', row)
    if slot_f1 is None:
      assert config.model.latent and config.paper.metric == 'test_intent_error'
      assert config.paper.value == intent_error
    else:
      assert config.paper.metric == 'test_slot_f1' and config.paper.value == slot_f1
      assert config.paper.other.to_dict() == {'test_intent_error': intent_error}
  head = lambda name, row: get_config(name, row).model.head
  assert [head('joint_atis', r) for r in ('joint_cnn', 'attention', 'sparse')] == [
      'mean', 'softmax', 'sparse']
  assert get_config('joint_atis', 'independent').model.independent
  trec = get_config('joint_trec', '')
  assert trec.model.latent and trec.data.dev_holdout == 0.1 and trec.model.embed_dim == 300
  atis = get_config('joint_atis', '')
  assert atis.optimizer.to_dict()['rho'] == 0.95 and atis.train.patience == 10


def test_parse_arg_reads_bare_choices_flags_and_named_values():
  from seedsweep.config import base  # pylint: disable=g-import-not-at-top
  spec = dict(dataset=('binary', 'fine'), model=('clstm', 'lstm'), quick=False, hidden=32)
  parse = lambda arg: tuple(base.parse_arg(arg, **spec).to_dict()[k] for k in spec)
  assert parse('') == ('binary', 'clstm', False, 32)
  assert parse('fine,quick') == ('fine', 'clstm', True, 32)
  assert parse('lstm,dataset=fine,quick=false,hidden=64') == ('fine', 'lstm', False, 64)
  # The forms the files document.
  assert get_config('bilstm', 'trec/coarse,quick').data.name == 'trec/coarse'
  assert get_config('demo', 'bow,quick,variance').model.name == 'bow'
  assert get_config('mtlstm_sst', 'fine,s2f,quick').model.strategy == 's2f'
  assert get_config('dclstm_sst', 'fine,phrases').data.name == 'sst/fine_phrases'


@pytest.mark.parametrize('name, arg, message', [
    ('clstm_sst', 'fien', "experiments/clstm_sst.py: unknown argument(s) ['fien'] (did "
     "you mean 'fine'?); expected none or a comma-separated mix of binary|fine (dataset, "
     "default binary), clstm|lstm|bilstm|literal (model, default clstm), quick"),
    ('demo', 'quack', "experiments/demo.py: unknown argument(s) ['quack'] (did you mean "
     "'quick'?)"),
    ('bilstm', 'trec/corse', "experiments/bilstm.py: unknown argument(s) ['trec/corse'] "
     "(did you mean 'trec/coarse'?); expected none or a comma-separated mix of "
     "sst/binary|"),
    ('dclstm_sst', 'dataset=fien', "experiments/dclstm_sst.py: argument 'dataset=fien': "
     "dataset expects one of binary|fine (did you mean 'fine'?)"),
    ('dlstm_trec', 'quick,quick', "experiments/dlstm_trec.py: 'quick' and 'quick' both "
     "set quick"),
])
def test_a_bad_argument_is_one_line_naming_the_file_token_and_closest_choice(
    name, arg, message):
  with pytest.raises(ValueError) as error:
    get_config(name, arg)
  assert str(error.value).startswith(message) and '\n' not in str(error.value)


def test_every_experiment_docstring_gives_its_command_and_a_dated_measurement():
  import pathlib  # pylint: disable=g-import-not-at-top
  import re  # pylint: disable=g-import-not-at-top
  folder = pathlib.Path(importlib.import_module('seedsweep.experiments').__path__[0])
  names = sorted(p.stem for p in folder.glob('*.py')
                 if p.stem != '__init__' and not p.stem.endswith('_common'))
  assert len(names) >= 16, names
  for name in names:
    doc = importlib.import_module(f'seedsweep.experiments.{name}').__doc__
    assert re.search(r'(launch\.py|seedsweep) --config=', doc), name
    assert 'Measured' in doc and re.search(r'20\d\d-\d\d-\d\d', doc), name

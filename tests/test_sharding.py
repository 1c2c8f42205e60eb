"""The seed axis sharded over several devices (4 CPU devices forced by XLA_FLAGS)."""
import json
import os
import socket
import subprocess
import sys

import pytest
import textwrap

import numpy as np

from tests.conftest import REPO
from tests.conftest import evaluate_split
from tests.conftest import run_steps
from tests.conftest import small_config

pytestmark = pytest.mark.slow  # end-to-end: `pytest -m "not slow"` skips it

SCRIPT = textwrap.dedent('''
    import sys
    sys.path.insert(0, {repo!r})
    import jax, numpy as np
    from tests.conftest import small_config
    from tests.conftest import evaluate_split, run_steps
    config = small_config(seeds={seeds!r}, seed_parallel='vmap')
    config.data.num_buckets = 1
    exp, state = run_steps(config, 5)
    leaf = jax.tree.leaves(state.params)[0]
    print('devices', jax.device_count(), 'mesh', exp.placement.devices,
          'shards', len(leaf.addressable_shards), 'on device', leaf.shape[0],
          'mode', exp.placement.mode)
    dev = evaluate_split(exp, state.params, 'dev')['accuracy']
    leaves = [np.asarray(x)[:len(exp.members)] for x in jax.tree.leaves(state.params)]
    np.savez({out!r}, dev=dev, *leaves)
''')


def _run(out, devices, seeds=(1, 2, 3, 4)):
  env = dict(os.environ)
  env['XLA_FLAGS'] = f'--xla_force_host_platform_device_count={devices}'
  proc = subprocess.run([sys.executable, '-c', SCRIPT.format(repo=REPO, out=out,
                                                             seeds=tuple(seeds))],
                        capture_output=True, text=True, env=env, timeout=600,
                        check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  return proc.stdout, np.load(out)


def _here(seeds=(1, 2, 3, 4)):
  """What SCRIPT saves, computed in this process on its one device: the reference
  (the process boundary is what forces the other device counts only)."""
  import jax  # pylint: disable=g-import-not-at-top
  assert jax.device_count() == 1
  config = small_config(seeds=tuple(seeds), seed_parallel='vmap')
  config.data.num_buckets = 1
  exp, state = run_steps(config, 5)
  assert exp.placement.devices == 1
  dev = evaluate_split(exp, state.params, 'dev')['accuracy']
  leaves = [np.asarray(x)[:len(exp.members)] for x in jax.tree.leaves(state.params)]
  return {'dev': dev, **{f'arr_{i}': leaf for i, leaf in enumerate(leaves)}}


def _assert_close(sharded, single):
  np.testing.assert_array_equal(sharded['dev'], single['dev'])
  assert sorted(sharded) == sorted(single)
  for key in single:
    if key != 'dev':
      a, b = sharded[key], single[key]
      assert np.linalg.norm(a - b) <= 1e-5 * np.linalg.norm(b), key


def test_seed_axis_is_sharded_over_devices_with_the_same_numbers(tmp_path):
  out4, sharded = _run(str(tmp_path / 'four.npz'), 4)
  assert 'devices 4 mesh 4 shards 4 on device 4 mode vmap' in out4
  _assert_close(sharded, _here())


@pytest.mark.full  # sharded: the test above; the mesh's sizes: the test below
def test_ten_seeds_on_eight_devices_use_all_eight_padded_to_sixteen(tmp_path):
  """Members that do not divide the devices are padded with copies of the last one
  (trained, then dropped): every device works, and the ten seeds' numbers are those
  of one device."""
  seeds = tuple(range(1, 11))
  out8, sharded = _run(str(tmp_path / 'eight.npz'), 8, seeds)
  assert 'devices 8 mesh 8 shards 8 on device 16 mode vmap' in out8
  assert len(sharded['dev']) == 10
  _assert_close(sharded, _here(seeds))


def test_the_mesh_takes_every_device_or_one_per_member():
  """Sharded over every device, or one per member when there are fewer, padded to a
  multiple of them, and always under vmap (map would serialise the sharded axis)."""
  script = textwrap.dedent(f'''
      import sys; sys.path.insert(0, {REPO!r})
      from seedsweep.config import base
      from seedsweep.run import pieces
      config = base.get_base_config()
      print([(p.devices, p.size, p.mode) for p in (pieces.place(config, n)
                                                   for n in (10, 3, 4, 7, 1))])
  ''')
  env = dict(os.environ, XLA_FLAGS='--xla_force_host_platform_device_count=4')
  proc = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                        env=env, timeout=300, check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  assert ("[(4, 12, 'vmap'), (3, 3, 'vmap'), (4, 4, 'vmap'), (4, 8, 'vmap'), "
          "(1, 1, 'map')]") in proc.stdout


DISTRIBUTED = textwrap.dedent('''
    import sys
    sys.path.insert(0, {repo!r})
    import jax
    jax.config.update('jax_cpu_collectives_implementation', 'gloo')
    jax.distributed.initialize(coordinator_address='localhost:{port}', num_processes=2,
                               process_id=int(sys.argv[1]))
    from tests.conftest import small_config
    from seedsweep.run import loop
    config = small_config(seeds=(1, 2, 3, 4), epochs=1, seed_parallel='vmap')
    config.data.num_buckets = 1
    results = loop.train(config, {workdir!r}, print_fn=lambda *a: None)
    print('process', jax.process_index(), 'of', jax.process_count(), 'devices',
          jax.device_count(), 'test', results['metrics']['test_accuracy'])
''')


@pytest.mark.full  # two hosts
def test_two_processes_train_one_run_over_a_global_mesh(tmp_path):
  """Two processes of 2 CPU devices each (jax.distributed, as on two hosts) share
  one run: the seeds are sharded over all 4 devices, both processes see every seed's
  numbers, process 0 alone writes the run's files, and the numbers are those of one
  process with one device."""
  with socket.socket() as s:
    s.bind(('localhost', 0))
    port = s.getsockname()[1]
  workdir = str(tmp_path / 'run')
  script = DISTRIBUTED.format(repo=REPO, port=port, workdir=workdir)
  env = dict(os.environ, XLA_FLAGS='--xla_force_host_platform_device_count=2')
  procs = [subprocess.Popen([sys.executable, '-c', script, str(i)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
           for i in range(2)]
  outs = [p.communicate(timeout=600) for p in procs]
  for p, (out, err) in zip(procs, outs):
    assert p.returncode == 0, err[-3000:]
  lines = [out.strip().splitlines()[-1] for out, _ in outs]
  assert lines[0].startswith('process 0 of 2 devices 4')
  assert lines[1].startswith('process 1 of 2 devices 4')
  assert lines[0].split('test')[1] == lines[1].split('test')[1]
  written = json.load(open(os.path.join(workdir, 'results.json')))
  rows = [json.loads(line) for line in open(os.path.join(workdir, 'metrics.jsonl'))]
  assert len(rows) == 4  # one row per seed, written once

  from seedsweep.run import loop  # pylint: disable=g-import-not-at-top
  config = small_config(seeds=(1, 2, 3, 4), epochs=1, seed_parallel='vmap')
  config.data.num_buckets = 1
  alone = loop.train(config, str(tmp_path / 'alone'), print_fn=lambda *a: None)  # 1 device
  assert written['metrics']['test_accuracy'] == alone['metrics']['test_accuracy']


def test_auto_takes_lanes_on_an_accelerator_and_map_on_one_cpu(monkeypatch):
  """On an H200 a lone seed and the seed among 10 differed under plain vmap and were
  equal under map (docs/gpu.md, Measured): auto takes lanes on a GPU or TPU (vmap at
  the fixed width train.lanes, padded) and map on one CPU; a user may still ask for
  either."""
  import jax  # pylint: disable=g-import-not-at-top
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  config = small_config()
  config.train.lanes = 16
  for backend in ('cpu', 'gpu', 'tpu'):
    monkeypatch.setattr(jax, 'default_backend', lambda b=backend: b)
    auto = ('map', 0, 10) if backend == 'cpu' else ('vmap', 16, 16)
    for asked, want in (('auto', auto), ('vmap', ('vmap', 0, 10)),
                        ('map', ('map', 0, 10)), ('lanes', ('vmap', 16, 16))):
      config.train.seed_parallel = asked
      placement = pieces.place(config, 10)
      assert (placement.mode, placement.lanes, placement.size) == want, (backend, asked)
      assert placement.form == ('lanes' if want[1] else want[0])

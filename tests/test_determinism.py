"""A seed's numbers on any machine: the pinned XLA:CPU thread pool, the determinism
record, ``--mode=verify`` and the report's warning (docs/design.md, determinism policy)."""
import json
import os
import subprocess

import jax
import numpy as np
import pytest

from seedsweep.config import checks as config_checks
from seedsweep.errors import UserError
from seedsweep import reports
from seedsweep.run import checkpoints as ckpt_lib
from seedsweep.run import loop
from seedsweep.run import outputs
from seedsweep.run import provenance
from seedsweep.run import runtime
from tests.conftest import DEFAULT_THREADS
from tests.conftest import REPO
from tests.conftest import built_once
from tests.conftest import on_cores
from tests.conftest import own_core
from tests.conftest import run_launch
from tests.conftest import small_config
from tests.conftest import user_environment
from tests.test_reports import make_run


LINUX = hasattr(os, 'sched_setaffinity')

# That every model gives the same bits on one core as on all (a user's NPROC sizing
# the pool) is tests/test_golden.py's: its runs train on one core under a pool of 3,
# the goldens were made on two under a pool of 2; other pools: tests/test_pool.py.


def test_the_pool_cannot_change_once_jax_has_started():
  jax.devices()  # the CPU client exists now, with the pool conftest pinned
  runtime.pin_cpu_threads(DEFAULT_THREADS)
  runtime.pin_cpu_threads(0)  # 0: whatever the process has
  other = runtime.cpu_threads() + 1
  with pytest.raises(UserError, match=rf'config.runtime.cpu_threads={other}.*new process'):
    runtime.pin_cpu_threads(other)
  # The default pool: NPROC where the environment sets it, else the cores, at least 2.
  assert runtime.cpu_threads() == (int(os.environ.get(runtime.THREADS_VARIABLE) or 0)
                                   or max(2, runtime.usable_cores()))


@pytest.mark.parametrize('bad', [-1, 2.0, True, '4'])
def test_a_bad_thread_count_is_refused_by_name(bad):
  import ml_collections  # pylint: disable=g-import-not-at-top
  config = ml_collections.ConfigDict({'runtime': {'cpu_threads': bad}})
  with pytest.raises(UserError, match=r'config.runtime.cpu_threads=.*expected an int '
                                      r'>= 0'):
    runtime.pin_for(config)


@pytest.mark.parametrize('backend, flags, warned', [
    ('cpu', '', False),
    ('gpu', '', True),
    ('gpu', '--xla_gpu_deterministic_ops=false', True),
    ('gpu', '--xla_gpu_deterministic_ops_x=true', True),
    ('gpu', '--xla_gpu_exclude_nondeterministic_ops=true', True),
    ('gpu', '--xla_gpu_deterministic_ops=true', False),
    ('gpu', '--xla_dump_to=/tmp/x --xla_gpu_deterministic_ops', False),
    ('rocm', '--xla_gpu_deterministic_ops=1 --xla_dump_to=/tmp/x', False),
])
def test_a_gpu_run_without_the_deterministic_flag_is_warned(backend, flags, warned):
  warning = runtime.gpu_determinism_warning(backend, flags)
  assert (warning is not None) == warned
  if warned:
    assert f'XLA_FLAGS={runtime.GPU_DETERMINISM_FLAG}' in warning


@pytest.mark.slow
@pytest.mark.full  # the warning: test_a_gpu_run_without_the_deterministic_flag_is_warned
def test_a_run_prints_the_gpu_warning_with_its_backend_and_flags(tmp_path, monkeypatch):
  # The CPU client runs (started here if no test before this one started it), so the
  # variable is only read here, never applied.
  jax.devices()
  monkeypatch.setenv('XLA_FLAGS', '--xla_dump_to=/nonexistent')
  seen, lines = [], []
  monkeypatch.setattr(runtime, 'gpu_determinism_warning',
                      lambda *args: seen.append(args) or 'warning: probe')
  loop.train(small_config(seeds=(1,), epochs=1), str(tmp_path), print_fn=lines.append)
  assert seen == [('cpu', '--xla_dump_to=/nonexistent')] and 'warning: probe' in lines


def test_record_names_what_decides_the_bits():
  record = provenance.determinism_record()
  for field in provenance.REPRODUCING + ('cpu_model', 'usable_cores', 'glibc_tunables'):
    assert field in record, field
  threads = record['cpu_threads']
  assert threads == runtime.cpu_threads() >= 2 and record['backend'] == 'cpu'
  changed = dict(record, cpu_threads=threads + 1, usable_cores=64)
  # Portable numerics: neither the pool nor the cores decide the bits; native: both.
  assert record['numerics'] == 'portable'
  assert provenance.record_differences(record, changed) == []
  native, native_changed = (dict(r, numerics='native') for r in (record, changed))
  assert provenance.record_differences(native, native_changed) == [
      f'usable_cores: {record["usable_cores"]} -> 64',
      f'cpu_threads: {threads} -> {threads + 1}']


ZEN4_CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512vl
"""


def test_record_tells_cpu_generations_apart_under_one_model_name(tmp_path):
  """Two AMD EPYC generations with the same SIMD flags gave the demo different bits:
  the record must differ where the marketing name and the flags do not."""
  old = tmp_path / 'zen4'
  old.write_text(ZEN4_CPUINFO)
  new = tmp_path / 'zen5'
  new.write_text(ZEN4_CPUINFO.replace(': 25', ': 26').replace(': 17', ': 2'))
  arm = tmp_path / 'arm'
  arm.write_text('processor\t: 0\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\n'
                 'CPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\n')
  model, arch, simd = provenance._cpuinfo(str(old))  # pylint: disable=protected-access
  assert (model, arch) == ('AMD EPYC', 'AuthenticAMD cpu family 25 model 17')
  assert simd == ['avx', 'avx2', 'avx512f', 'avx512vl', 'fma', 'sse4_2']
  assert provenance._cpuinfo(str(new))[1:] == (  # pylint: disable=protected-access
      'AuthenticAMD cpu family 26 model 2', simd)
  assert provenance._cpuinfo(str(arm))[1:] == (  # pylint: disable=protected-access
      'CPU implementer 0x41 CPU architecture 8 CPU part 0xd40', ['asimd', 'sve'])
  record = dict(provenance.determinism_record(), numerics='native')
  zen4 = dict(record, cpu_arch='AuthenticAMD cpu family 25 model 17')
  zen5 = dict(record, cpu_arch='AuthenticAMD cpu family 26 model 2')
  assert provenance.record_differences(zen4, zen5) == [
      "cpu_arch: 'AuthenticAMD cpu family 25 model 17' -> "
      "'AuthenticAMD cpu family 26 model 2'"]
  before = {k: v for k, v in zen5.items() if k not in ('cpu_arch', 'numerics')}
  assert provenance.record_differences(before, zen5) == [  # an older record
      "cpu_arch: (not recorded) -> 'AuthenticAMD cpu family 26 model 2'"]


def test_portable_records_compare_the_instruction_set_class_only():
  """Under portable numerics two CPU generations (and AVX2 against AVX-512) promise
  the same bits; a CPU without FMA, or a record of native numerics, does not."""
  record = dict(provenance.determinism_record(), numerics='portable',
                cpu_isa='x86-64 AVX2 FMA')
  zen3 = dict(record, cpu_arch='AuthenticAMD cpu family 25 model 1',
              cpu_simd=['avx', 'avx2', 'fma'])
  sapphire = dict(record, cpu_arch='GenuineIntel cpu family 6 model 143',
                  cpu_simd=['avx', 'avx2', 'avx512f', 'amx_tile', 'fma'])
  assert provenance.record_differences(zen3, sapphire) == []
  old = dict(sapphire, cpu_isa=provenance.cpu_isa(['avx', 'avx2'], 'x86_64'))
  assert provenance.record_differences(zen3, old) == [
      "cpu_isa: 'x86-64 AVX2 FMA' -> 'x86-64 without FMA'"]
  assert provenance.record_differences(dict(zen3, numerics='native'), sapphire)[:2] == [
      "numerics: 'native' -> 'portable'",
      "cpu_arch: 'AuthenticAMD cpu family 25 model 1' -> 'GenuineIntel cpu family 6 "
      "model 143'"]
  assert provenance.cpu_isa(['asimd'], 'aarch64') == 'aarch64'


def test_commit_is_dirty_only_when_code_differs(tmp_path):
  """Uncommitted records and READMEs (a campaign publishes before its next part
  starts) leave the commit clean; a changed or removed Python file marks it."""
  def git(*args):
    return subprocess.run(['git', '-C', str(tmp_path), *args], check=True,
                          capture_output=True, text=True).stdout.strip()
  git('init', '-q')
  (tmp_path / 'model.py').write_text('WIDTH = 1\n')
  (tmp_path / 'README.md').write_text('numbers\n')
  git('add', '.')
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first')
  head = git('rev-parse', 'HEAD')
  (tmp_path / 'README.md').write_text('new numbers\n')
  (tmp_path / 'scratch.py').write_text('x = 1\n')  # untracked: never counts
  assert provenance.git_commit(str(tmp_path)) == head
  (tmp_path / 'model.py').write_text('WIDTH = 2\n')
  assert provenance.git_commit(str(tmp_path)) == head + '+dirty'
  git('checkout', '-q', 'model.py')
  git('mv', 'model.py', 'model.txt')
  assert provenance.git_commit(str(tmp_path)) == head + '+dirty'
  assert provenance.git_commit(str(tmp_path / 'nowhere')) == ''


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
  """A finished two-epoch demo run (two checkpoints), via launch.py, made once per
  run of the suite (xdist workers share it: verify writes nothing)."""
  def build(folder):
    proc = run_launch('--config=experiments/demo.py:quick',
                      f'--workdir={os.path.join(folder, "run")}',
                      "--config.seeds=(3,5)", '--config.train.progress=False')
    assert proc.returncode == 0, proc.stderr
  return os.path.join(built_once(tmp_path_factory, 'determinism_trained', build), 'run')


def _verify(workdir, *extra, env=None):
  return run_launch('--config=experiments/demo.py:quick', f'--workdir={workdir}',
                    "--config.seeds=(3,5)", '--config.train.progress=False',
                    '--mode=verify', *extra, env=env)


@pytest.mark.slow
def test_results_and_checkpoints_carry_the_record(trained):
  record = outputs.read_json(os.path.join(trained, outputs.RESULTS))[
      'provenance']['determinism']
  # The pool that ran: the usable cores, at least 2 (launched without NPROC).
  assert record['cpu_threads'] == max(2, runtime.usable_cores())
  assert len(record['program']) == 16
  meta = json.load(open(os.path.join(trained, 'checkpoints', '2', 'meta', 'metadata')))
  assert meta['determinism'] == record
  rows = outputs.MetricsLog(trained).rows()
  assert all(len(r['params_sha256']) == 16 for r in rows)


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason='sets the process affinity (Linux)')
def test_verify_reproduces_an_untouched_run_on_one_core(trained):
  proc = subprocess.run(
      on_cores({own_core()}, os.path.join(REPO, 'launch.py'),
               '--config=experiments/demo.py:quick', f'--workdir={trained}',
               "--config.seeds=(3,5)", '--mode=verify', '--verify_epochs=2'),
      cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
      env=user_environment())
  assert proc.returncode == 0, proc.stderr
  assert 'reproduced: epochs 1..2 of 2 members bitwise' in proc.stdout
  assert '2 checkpoint(s) intact' in proc.stdout


@pytest.mark.slow
@pytest.mark.full  # verify: the two tests above
def test_verify_names_the_changed_environment(trained):
  """Eigen's dot kernels instead of YNNPACK's: other rounding, other bits."""
  proc = _verify(trained, env={'XLA_FLAGS': '--xla_cpu_experimental_ynn_fusion_type='})
  assert proc.returncode == 1, proc.stdout + proc.stderr
  assert 'NOT reproduced' in proc.stdout and 'params_sha256 recorded' in proc.stdout
  pinned = ' '.join(f'{flag}={value}' for flag, value in runtime.portable_flags())
  assert (f"xla_flags: '{pinned}' -> '--xla_cpu_experimental_ynn_fusion_type= "
          f"{pinned}'") in proc.stdout


@pytest.mark.slow
def test_verify_finds_a_changed_checkpoint(trained, tmp_path):
  import shutil  # pylint: disable=g-import-not-at-top
  from seedsweep.run import pieces  # pylint: disable=g-import-not-at-top
  from seedsweep.run import verify  # pylint: disable=g-import-not-at-top
  workdir = str(tmp_path / 'changed')
  shutil.copytree(trained, workdir)
  config = outputs.read_json(os.path.join(workdir, outputs.CONFIG))
  config = config_checks.from_dict(config)
  exp = pieces.build(config)
  ckpts = ckpt_lib.Checkpoints(workdir)
  state, meta = ckpts.restore(2, exp.init_state())
  ckpts.manager.delete(2)
  nudged = state.replace(params=jax.tree.map(lambda x: x * np.float32(1.0001),
                                             state.params))
  ckpts.save(2, nudged, meta)
  ckpts.close()
  lines = []
  result = verify.verify(config, workdir, print_fn=lines.append)
  assert not result['reproduced']
  assert any('checkpoint of epoch 2: seed_3 holds parameters' in d
             for d in result['differences'])
  assert lines[0].endswith('NOT reproduced: 2 difference(s)')


@pytest.mark.slow
@pytest.mark.full  # verify: the two tests above
def test_verify_refuses_more_epochs_than_were_recorded(trained):
  from seedsweep.run import verify  # pylint: disable=g-import-not-at-top
  config = config_checks.from_dict(outputs.read_json(os.path.join(trained,
                                                                  outputs.CONFIG)))
  with pytest.raises(UserError, match=r'records no epoch 3; --verify_epochs=5 needs '
                     r'epochs 1\.\.5'):  # launch.py prints it as its one error line
    verify.verify(config, trained, epochs=5, print_fn=lambda *a: None)


def test_report_warns_when_a_table_mixes_records(tmp_path):
  root = str(tmp_path)
  record = provenance.determinism_record()
  for name, threads in (('a', 1), ('b', 1), ('c', 0)):
    run_dir = make_run(root, name, {'test_accuracy': [80.0, 82.0],
                                    'dev_accuracy': [81.0, 83.0]})
    path = os.path.join(run_dir, outputs.RESULTS)
    results = outputs.read_json(path)
    # Native numerics: the pool decides the bits (portable: tests/test_pool.py).
    results['provenance'] = {'determinism': dict(record, numerics='native',
                                                 cpu_threads=threads)}
    outputs.write_json(path, results)
  echoed = []
  reports.write_report(root, plots=False, print_fn=echoed.append)
  text = open(os.path.join(root, reports.REPORT_MD)).read()
  assert '**Warning:** the rows of this table were produced under different' in text
  assert '- c differs from a: cpu_threads: 1 -> 0' in text
  assert 'b differs' not in text
  assert any('c differs from a' in e for e in echoed)


@pytest.mark.slow
@pytest.mark.full  # a stop and resume: test_faults.py; verify: above
def test_a_run_continued_elsewhere_records_which_epochs_each_machine_trained(tmp_path):
  """Native numerics, epoch 1 under other dot kernels (as another CPU would give),
  epoch 2 here: the record says which machine trained which epochs, and verify
  checks what this machine can reproduce and explains the rest."""
  workdir = str(tmp_path / 'run')
  args = ('--config=experiments/demo.py:quick', f'--workdir={workdir}',
          "--config.seeds=(3,5)", '--config.train.progress=False',
          '--config.runtime.numerics=native', '--config.data.num_buckets=1')
  elsewhere = {'XLA_FLAGS': '--xla_cpu_experimental_ynn_fusion_type='}
  proc = run_launch(*args, env=dict(elsewhere, SEEDSWEEP_FAULT='metrics_row:2@TERM'))
  assert proc.returncode == 128 + 15, proc.stderr  # stopped after epoch 1
  proc = run_launch(*args)
  assert proc.returncode == 0, proc.stderr
  machines = outputs.read_json(os.path.join(workdir, outputs.RESULTS))[
      'provenance']['machines']
  assert [(m['from_epoch'], m['determinism']['xla_flags']) for m in machines] == [
      (1, elsewhere['XLA_FLAGS']), (2, '')]

  there = run_launch(*args, '--mode=verify', '--verify_epochs=2', env=elsewhere)
  assert there.returncode == 0, there.stdout + there.stderr
  assert 'reproduced: epochs 1..1 of 2 members bitwise' in there.stdout
  assert ('not checked here: epochs 2..2 were trained on' in there.stdout
          and "xla_flags: '' -> '--xla_cpu_experimental_ynn_fusion_type='" in there.stdout)
  here = run_launch(*args, '--mode=verify', '--verify_epochs=2')
  assert here.returncode == 1, here.stdout + here.stderr
  assert 'NOT reproduced' in here.stdout
  assert 'expected: epochs 1..1 were trained on' in here.stdout

"""benchmarks/lane_micro.py: the kernels' lane-independence check, on the CPU.

What XLA:CPU gives (this process's numerics, W=4, small shapes) is printed, not
asserted: the check is for an accelerator's batched kernels. What is asserted is
that the comparison sees: the control, and a kernel planted here that mixes the
lanes, read different; the same program on the same inputs reads equal.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from benchmarks import lane_micro
from tests.conftest import REPO

LANES = 4


@pytest.fixture(scope='module')
def report():
  return lane_micro.run(LANES, lane_micro.SMALL_SHAPES)


def test_every_kernel_is_compared_three_ways_forward_and_gradients(report):
  assert report['lanes'] == LANES and report['backend'] == 'cpu'
  assert [k['name'] for k in report['kernels']] == list(lane_micro.KERNELS) + ['control']
  gradients = {'lstm_dot': {'grad h', 'grad W'}, 'conv1d': {'grad input', 'grad filter'},
               'loss_rows': {'grad logits', 'grad bias (sum over rows)',
                             'column sum of a cotangent'},
               'embedding': {'grad table (scatter-add)'}}
  for k in report['kernels']:
    assert gradients.get(k['name'], set()) <= set(k['outputs'])
    for key in ('other_lanes', 'lane_position', 'again'):
      c = k[key]
      assert isinstance(c['equal'], bool) and c['max_abs_diff'] >= 0
      assert set(c['per_output']) == set(k['outputs'])
      assert c['equal'] == (not c['differing']) == (c['max_abs_diff'] == 0)
    assert k['lane_position']['lane'] == LANES - 1
    # The same compiled program on the same inputs: the comparison's floor.
    assert k['again']['equal'], k['name']
  found = {k['name']: (k['other_lanes']['equal'], k['other_lanes']['max_abs_diff'],
                       k['lane_position']['equal'], k['lane_position']['max_abs_diff'])
           for k in report['kernels']}
  print(f"XLA:CPU, W={LANES}, XLA_FLAGS={report['xla_flags']!r}: (other lanes equal, "
        f'max diff, lane {LANES - 1} equal, max diff) {found}')
  json.dumps(report)  # JSON-ready, as device_check's child prints it


def test_the_control_that_mixes_lanes_reads_different(report):
  [control] = [k for k in report['kernels'] if k['name'] == 'control']
  for key in ('other_lanes', 'lane_position'):
    assert not control[key]['equal'] and control[key]['max_abs_diff'] > 0
    assert control[key]['differing'] == control['outputs']
  lines = lane_micro.markdown_lines(report)
  assert lines[0].startswith('**Lane independence of single kernels** '
                             '(benchmarks/lane_micro.py, one process on cpu (cpu)')
  assert f'W={LANES} lanes' in lines[0] and report['xla_flags'] in lines[0]
  rows = [l for l in lines
          if l.startswith('| ') and not l.startswith(('| kernel', '| ---'))]
  assert len(rows) == len(report['kernels'])
  assert rows[-1].startswith('| control:') and '| DIFFER |' in rows[-1]


def test_a_planted_kernel_that_adds_a_sum_over_lanes_is_caught():
  """A kernel whose gradient gains a tiny sum over the lane axis (one ulp's worth at
  the scale of the data): reported different, per output, the others equal."""
  import jax  # pylint: disable=g-import-not-at-top

  def leaky(x):
    out = lane_micro.KERNELS['lstm_dot'].fn(x)
    leak = jax.lax.psum(jax.numpy.sum(x['h']), 'lanes')
    out['grad W'] = out['grad W'] + 1e-6 * leak
    return out
  planted = lane_micro.Kernel('lstm_dot with a psum in its W gradient',
                              lane_micro.KERNELS['lstm_dot'].inputs, leaky)
  report = lane_micro.run(LANES, lane_micro.SMALL_SHAPES, [('planted', planted)],
                          control=False)
  [k] = report['kernels']
  for key in ('other_lanes', 'lane_position'):
    assert not k[key]['equal'] and k[key]['differing'] == ['grad W']
    assert 0 < k[key]['max_abs_diff'] < 1e-3
    assert k[key]['per_output']['h @ W'] == 0.0
  assert k['again']['equal']
  assert '| planted: ' in '\n'.join(lane_micro.markdown_lines(report))


def test_the_comparison_is_bitwise():
  a = {'x': np.float32([1.0, 2.0]), 'y': np.float32([np.nan])}
  assert lane_micro.compare(a, {k: v.copy() for k, v in a.items()})['equal']
  ulp = {'x': np.float32([1.0, np.nextafter(np.float32(2), np.float32(3))]),
         'y': a['y']}
  c = lane_micro.compare(a, ulp)
  assert (c['equal'], c['differing']) == (False, ['x'])
  assert c['max_abs_diff'] == pytest.approx(2.0 ** -22)
  shape = lane_micro.compare(a, {'x': np.float32([1.0]), 'y': a['y']})
  assert not shape['equal'] and shape['max_abs_diff'] == float('inf')
  with pytest.raises(ValueError, match='at least two lanes'):
    lane_micro.run(1)


def test_it_runs_by_itself():
  script = os.path.join(REPO, 'benchmarks', 'lane_micro.py')
  proc = subprocess.run([sys.executable, script, '--lanes=3', '--small',
                         '--kernels=loss_rows,embedding', '--json'], cwd=REPO,
                        capture_output=True, text=True, timeout=300,
                        check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  report = json.loads(proc.stdout.splitlines()[-1])
  assert [k['name'] for k in report['kernels']] == ['loss_rows', 'embedding', 'control']
  assert report['lanes'] == 3 and report['kernels'][0]['lane_position']['lane'] == 2
  # Pinned as the program is: portable numerics' flags, the GPU's deterministic ops.
  assert '--xla_gpu_deterministic_ops=true' in report['xla_flags']

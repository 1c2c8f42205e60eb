r"""Lane independence of single kernels: does one lane's result depend on the others?

Under ``config.train.seed_parallel='lanes'`` the members run under ``jax.vmap`` at a
fixed width W (``config.train.lanes``), so that the kernels never change with the
member count; a member's bits are then its own only if no batched kernel lets one
lane's numbers depend on another lane's data (a reduction over the lane axis, a
kernel whose blocking or summation order follows the values). This checks the
kernels the training step is made of, each alone, forward and gradients, at width
W, each ``jax.jit(jax.vmap(kernel, axis_name='lanes'))`` compiled once:

* ``lstm_dot``: the recurrent batched dot of an LSTM cell, ``h @ W`` (h ``[batch,
  hidden]``, W ``[hidden, 4 hidden]``, every lane its own W), and its gradients with
  respect to h and W (the vjp of a per-lane cotangent);
* ``conv1d``: ``jax.lax.conv_general_dilated`` over time (NWC, per-lane filters),
  and its gradients with respect to the input and the filter;
* ``loss_rows``: the loss's row reductions, the mean over rows of a log-softmax
  cross-entropy (logits ``[batch, classes]`` plus a bias), its gradients with
  respect to the logits and the bias (the bias's: a sum over rows), and the column
  sum of a ``[batch, classes]`` cotangent (a bias gradient as the backward pass
  forms it);
* ``embedding``: the embedding gather (``jnp.take`` of a per-lane table at token
  ids with repeats) and its gradient, a scatter-add into the table.

For each, lane 0 holds fixed data and the other lanes one fill, then another (two
runs of the same program): lane 0's outputs of the two are compared bit for bit
("other lanes"). Then lane 0's data goes to lane W-1, the others filled as in the
first run, and lane W-1's outputs are compared with the first run's lane 0's ("lane
W-1"). The first run made again gives "again" (the same program on the same inputs
twice: run-to-run). Each says equal or not and the largest absolute difference, per
output. ``control``, run with the others, mixes the lanes on purpose (``h @ W``
plus a ``psum`` over the lane axis): its "other lanes" must read different, or the
comparison would see nothing.

The kernels run under the program's numerics (``--numerics``, default 'portable':
seedsweep.run.runtime.pin_numerics, which on a GPU sets
``XLA_FLAGS=--xla_gpu_deterministic_ops=true``, on a CPU the portable CPU flags) and
its matmul precision off the CPU (``--precision``, default 'highest').

  python benchmarks/lane_micro.py                  # W=16, the Bi-LSTM's shapes
  python benchmarks/lane_micro.py --lanes=4 --small --json

benchmarks/device_check.py runs :func:`run` in a child process of its own (its first
row); tests/test_lane_micro.py runs it on the CPU.
"""
import argparse
import dataclasses
import json
import os
import sys
import time
from typing import Callable, Dict, Optional, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
  sys.path.insert(0, REPO)

# Per-lane shapes: the Bi-LSTM SST-2 experiment's (batch 50, 150 hidden units, 300-d
# embeddings, two classes; sentences padded to 40 here) and small ones for a CPU.
SHAPES = {'batch': 50, 'hidden': 150, 'length': 40, 'channels': 150, 'width': 3,
          'classes': 2, 'vocab': 5000, 'embed': 300}
SMALL_SHAPES = {'batch': 6, 'hidden': 8, 'length': 7, 'channels': 5, 'width': 3,
                'classes': 3, 'vocab': 11, 'embed': 4}
FIXED_SEED, FILL_SEEDS = 1000, (2000, 3000)  # lane 0's data, the two fills


@dataclasses.dataclass(frozen=True)
class Kernel:
  """One lane's computation: ``inputs(rng, shapes)`` -> ``{name: array}`` (numpy,
  one lane's), ``fn(inputs)`` -> ``{output name: array}`` (jax, one lane's; it may
  use the vmapped axis ``'lanes'``)."""
  what: str
  inputs: Callable
  fn: Callable


def _normal(rng, shape, scale=1.0):
  import numpy as np  # pylint: disable=g-import-not-at-top
  return (scale * rng.standard_normal(shape)).astype(np.float32)


def _dot_inputs(rng, s):
  return {'h': _normal(rng, (s['batch'], s['hidden'])),
          'w': _normal(rng, (s['hidden'], 4 * s['hidden']), s['hidden'] ** -0.5),
          'cot': _normal(rng, (s['batch'], 4 * s['hidden']))}


def _lstm_dot(x):
  import jax  # pylint: disable=g-import-not-at-top
  y, vjp = jax.vjp(lambda h, w: h @ w, x['h'], x['w'])
  dh, dw = vjp(x['cot'])
  return {'h @ W': y, 'grad h': dh, 'grad W': dw}


def _mixed_dot(x):
  """The control: ``h @ W`` plus a sum over the lanes (a kernel that mixes them)."""
  import jax  # pylint: disable=g-import-not-at-top
  y = x['h'] @ x['w']
  return {'h @ W + psum over lanes': y + 1e-3 * jax.lax.psum(y, 'lanes')}


def _conv_inputs(rng, s):
  c = s['channels']
  return {'x': _normal(rng, (s['batch'], s['length'], c)),
          'f': _normal(rng, (s['width'], c, c), (s['width'] * c) ** -0.5),
          'cot': _normal(rng, (s['batch'], s['length'], c))}


def _conv1d(x):
  import jax  # pylint: disable=g-import-not-at-top

  def conv(inputs, filters):
    return jax.lax.conv_general_dilated(inputs, filters, (1,), 'SAME',
                                        dimension_numbers=('NWC', 'WIO', 'NWC'))
  y, vjp = jax.vjp(conv, x['x'], x['f'])
  dx, df = vjp(x['cot'])
  return {'conv': y, 'grad input': dx, 'grad filter': df}


def _loss_inputs(rng, s):
  import numpy as np  # pylint: disable=g-import-not-at-top
  return {'logits': _normal(rng, (s['batch'], s['classes']), 2.0),
          'bias': _normal(rng, (s['classes'],), 0.1),
          'labels': rng.integers(0, s['classes'], s['batch']).astype(np.int32),
          'cot': _normal(rng, (s['batch'], s['classes']))}


def _loss_rows(x):
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

  def loss(logits, bias):
    logp = jax.nn.log_softmax(logits + bias, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, x['labels'][:, None], axis=-1))
  value, (dlogits, dbias) = jax.value_and_grad(loss, argnums=(0, 1))(x['logits'],
                                                                     x['bias'])
  return {'mean cross-entropy': value, 'grad logits': dlogits,
          'grad bias (sum over rows)': dbias,
          'column sum of a cotangent': jnp.sum(x['cot'], axis=0)}


def _embedding_inputs(rng, s):
  import numpy as np  # pylint: disable=g-import-not-at-top
  # Ids from a fifth of the table: many repeats, whose scatter-add sums in an order.
  ids = rng.integers(0, max(s['vocab'] // 5, 2), (s['batch'], s['length']))
  return {'table': _normal(rng, (s['vocab'], s['embed'])),
          'ids': ids.astype(np.int32),
          'cot': _normal(rng, (s['batch'], s['length'], s['embed']))}


def _embedding(x):
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  y, vjp = jax.vjp(lambda t: jnp.take(t, x['ids'], axis=0), x['table'])
  (dtable,) = vjp(x['cot'])
  return {'gather': y, 'grad table (scatter-add)': dtable}


KERNELS = {
    'lstm_dot': Kernel("an LSTM cell's recurrent dot h @ W, its grads w.r.t. h and W",
                       _dot_inputs, _lstm_dot),
    'conv1d': Kernel('conv1d (lax.conv_general_dilated, NWC), grads w.r.t. input and '
                     'filter', _conv_inputs, _conv1d),
    'loss_rows': Kernel('log-softmax cross-entropy, mean over rows; grads w.r.t. '
                        'logits and bias; a column sum', _loss_inputs, _loss_rows),
    'embedding': Kernel('embedding gather (jnp.take) and its grad (scatter-add)',
                        _embedding_inputs, _embedding),
}
CONTROL = Kernel('h @ W plus a psum over the lanes (mixes them on purpose; '
                 'must read different)', _dot_inputs, _mixed_dot)


def pin(numerics: str = 'portable', precision: Optional[str] = 'highest') -> None:
  """The program's numerics, before JAX starts its client: seedsweep's
  :func:`~seedsweep.run.runtime.pin_numerics` (portable: the GPU's deterministic
  ops, the CPU's portable flags), and off the CPU the matmul precision."""
  from seedsweep.run import runtime  # pylint: disable=g-import-not-at-top
  runtime.pin_numerics(numerics)
  import jax  # pylint: disable=g-import-not-at-top
  if precision and jax.default_backend() != 'cpu':
    jax.config.update('jax_default_matmul_precision', precision)


def _stack(kernel: Kernel, shapes: dict, lanes: int, fill_seed: int,
           fixed_lane: int):
  """``[lanes, ...]`` inputs: lane ``fixed_lane`` the fixed data, every other lane
  ``i`` the fill ``fill_seed``'s lane ``i``."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  per_lane = [kernel.inputs(np.random.default_rng(
      FIXED_SEED if i == fixed_lane else fill_seed + i), shapes) for i in range(lanes)]
  return {k: np.stack([x[k] for x in per_lane]) for k in per_lane[0]}


def compare(a: Dict, b: Dict) -> dict:
  """Two ``{output: array}`` of one lane: ``{'equal': bit for bit, 'max_abs_diff',
  'differing': [outputs], 'per_output': {output: max abs difference}}``."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  per_output, differing = {}, []
  for name in a:
    x, y = np.asarray(a[name]), np.asarray(b[name])
    same = x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()
    diff = 0.0
    if not same:
      differing.append(name)
      if x.shape == y.shape and x.size:
        diff = float(np.nanmax(np.abs(x.astype(np.float64) - y.astype(np.float64))))
        diff = diff if np.isfinite(diff) else float('inf')
      else:
        diff = float('inf')
    per_output[name] = diff
  return {'equal': not differing, 'max_abs_diff': max(per_output.values(), default=0.0),
          'differing': differing, 'per_output': per_output}


def check_kernel(name: str, kernel: Kernel, lanes: int, shapes: dict) -> dict:
  """One kernel's three comparisons (see the module's docstring)."""
  import jax  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  start = time.perf_counter()
  program = jax.jit(jax.vmap(kernel.fn, axis_name='lanes'))
  first = _stack(kernel, shapes, lanes, FILL_SEEDS[0], 0)
  compiled = program.lower(first).compile()  # one program for every run below

  def lane(inputs, i):
    out = jax.device_get(compiled(inputs))
    return {k: np.asarray(v)[i] for k, v in out.items()}
  a = lane(first, 0)
  again = lane(first, 0)
  b = lane(_stack(kernel, shapes, lanes, FILL_SEEDS[1], 0), 0)
  moved = lane(_stack(kernel, shapes, lanes, FILL_SEEDS[0], lanes - 1), lanes - 1)
  return {'name': name, 'what': kernel.what, 'outputs': list(a),
          'inputs': {k: list(v.shape[1:]) for k, v in first.items()},
          'again': compare(a, again), 'other_lanes': compare(a, b),
          'lane_position': dict(compare(a, moved), lane=lanes - 1),
          'seconds': time.perf_counter() - start}


def run(lanes: int = 16, shapes: Optional[dict] = None,
        kernels: Optional[Sequence] = None, control: bool = True) -> dict:
  """Every kernel of ``kernels`` (names of :data:`KERNELS` or ``(name, Kernel)``
  pairs; default all) at width ``lanes`` (at least 2), then the control: the
  report, JSON-ready. The numerics are this process's (:func:`pin` them first)."""
  import jax  # pylint: disable=g-import-not-at-top
  if lanes < 2:
    raise ValueError(f'lanes={lanes}: the check needs at least two lanes')
  shapes = dict(SHAPES, **(shapes or {}))
  chosen = [(k, KERNELS[k]) if isinstance(k, str) else tuple(k)
            for k in (kernels if kernels is not None else KERNELS)]
  if control:
    chosen.append(('control', CONTROL))
  start = time.perf_counter()
  results = [check_kernel(name, kernel, lanes, shapes) for name, kernel in chosen]
  device = jax.devices()[0]
  return {'lanes': lanes, 'shapes': shapes, 'kernels': results,
          'backend': jax.default_backend(), 'device_kind': device.device_kind,
          'jax': jax.__version__, 'xla_flags': os.environ.get('XLA_FLAGS', ''),
          'matmul_precision': ('highest (a CPU computes float32)'
                               if jax.default_backend() == 'cpu' else
                               str(jax.config.jax_default_matmul_precision
                                   or 'default')),
          'seconds': time.perf_counter() - start}


def _said(c: dict) -> str:
  return 'equal' if c['equal'] else 'DIFFER'


def _diff(c: dict) -> str:
  return f"{c['max_abs_diff']:.3g}"


def markdown_lines(report: dict) -> list:
  """The report's table (Markdown lines), with what was measured and where."""
  w = report['lanes']
  lines = [f"**Lane independence of single kernels** (benchmarks/lane_micro.py, one "
           f"process on {report['device_kind']} ({report['backend']}), jax "
           f"{report['jax']}, W={w} lanes, `jax.jit(jax.vmap(kernel))`, forward and "
           f"gradients; XLA_FLAGS `{report['xla_flags'] or '(none)'}`, matmul "
           f"precision {report['matmul_precision']}; per-lane shapes "
           + ', '.join(f'{k} {v}' for k, v in report['shapes'].items())
           + f"). Lane 0 holds fixed data: *other lanes*, its outputs with the other "
           f"lanes filled one way against another; *lane {w - 1}*, the same data in "
           f"lane {w - 1} against lane 0; *again*, the first run repeated. Bit for "
           f"bit; the largest absolute difference over the outputs.", '',
           f'| kernel | outputs compared | other lanes | max abs diff | lane {w - 1} | '
           'max abs diff | again | differing outputs | s |',
           '| --- | --- | --- | ---: | --- | ---: | --- | --- | ---: |']
  for k in report['kernels']:
    other, moved, again = k['other_lanes'], k['lane_position'], k['again']
    differing = sorted(set(other['differing']) | set(moved['differing'])
                       | set(again['differing']), key=k['outputs'].index)
    lines.append(f"| {k['name']}: {k['what']} | {', '.join(k['outputs'])} | "
                 f"{_said(other)} | {_diff(other)} | {_said(moved)} | {_diff(moved)} | "
                 f"{_said(again)} | {', '.join(differing) or 'none'} | "
                 f"{k['seconds']:.1f} |")
  return lines


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--lanes', type=int, default=16, help='the width W')
  parser.add_argument('--small', action='store_true', help='small shapes (a CPU)')
  parser.add_argument('--kernels', default=','.join(KERNELS),
                      help='of ' + ','.join(KERNELS))
  parser.add_argument('--numerics', default='portable', choices=('portable', 'native'),
                      help="the program's numerics (portable: deterministic ops on a "
                      'GPU)')
  parser.add_argument('--precision', default='highest',
                      help='matmul precision off the CPU')
  parser.add_argument('--json', action='store_true', help='print the report as JSON')
  args = parser.parse_args(argv)
  names = [k for k in args.kernels.split(',') if k]
  unknown = [k for k in names if k not in KERNELS]
  if unknown:
    parser.error(f'--kernels: unknown {unknown}; expected of {list(KERNELS)}')
  pin(args.numerics, args.precision)
  report = run(args.lanes, SMALL_SHAPES if args.small else None, names)
  print(json.dumps(report) if args.json else '\n'.join(markdown_lines(report)))
  return 0


if __name__ == '__main__':
  sys.exit(main())

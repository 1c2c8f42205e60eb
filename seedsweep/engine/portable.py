"""Programs in the form XLA:CPU computes alike on every x86-64 CPU with AVX2 and FMA.

Under portable numerics (``config.runtime.numerics``, seedsweep/run/runtime.py)
YNNPACK runs its dots with consistent arithmetic: the same bits on AVX2, AVX-512 and
AMX machines. But YNNPACK takes only a dot whose left operand is laid out ``[batch...,
rows..., contracted...]``, with m or n above 1 when batched and one of m, n, k at
least 8; XLA sends any other dot (a weight gradient ``x^T dy`` contracts the left
operand's leading axis) to Eigen, whose blocking of the contraction follows the
CPU's cache sizes, so its rounding does too (measured 2026-11-28: a ``[4, 300, 16]^T
[4, 300, 128]`` batched dot gave other bits on a Zen 3 than on a Sapphire Rapids, its
canonical form the same). And LAPACK's QR, behind orthogonal initialisers, runs in
OpenBLAS, whose kernels and thread count follow the CPU.

:func:`make_portable` rewrites a function's jaxpr: every ``dot_general`` takes its
left operand transposed into that layout, behind ``optimization_barrier``s (without
them XLA folds the transpose back into the dot), a matrix-vector or tiny dot becomes
a broadcast product that XLA sums itself, and ``qr`` becomes Householder reflections
in XLA ops. The values are the same up to rounding; a transpose costs a copy of the
operand. :func:`unportable_ops` reads a compiled program and names what is left to
kernels that follow the CPU (dots outside YNNPACK, LAPACK calls): every run records
it, and tests hold every model to none.
"""
import functools
import math
import re
from typing import Callable, List, Sequence

import jax
from jax.extend import core as jcore
import numpy as np

# Primitives that call a jaxpr once with their own operands: evaluated inline. The
# rewritten function is only run (never differentiated again), so the custom
# derivative rules these carry are not needed.
_INLINE = {'pjit': 'jaxpr', 'jit': 'jaxpr', 'closed_call': 'call_jaxpr',
           'core_call': 'call_jaxpr', 'remat': 'jaxpr', 'checkpoint': 'jaxpr',
           'custom_jvp_call': 'call_jaxpr', 'custom_vjp_call': 'call_jaxpr',
           'custom_vjp_call_jaxpr': 'fun_jaxpr'}
# Control flow: its jaxprs are rewritten and the primitive bound again.
_CONTROL_FLOW = ('scan', 'while', 'cond')


def make_portable(fun: Callable) -> Callable:
  """``fun`` with its dots and QRs in the portable form (module docstring).

  Arguments that are not arrays (Python numbers, strings, None) stay static, as
  ``fun`` saw them; use it inside ``jax.jit``."""
  @functools.wraps(fun)
  def wrapped(*args, **kwargs):
    leaves, tree = jax.tree.flatten((args, kwargs))
    traced = [isinstance(x, _ARRAYS) for x in leaves]

    def flat_fun(*arrays):
      it = iter(arrays)
      full = [next(it) if t else x for x, t in zip(leaves, traced)]
      a, k = jax.tree.unflatten(tree, full)
      return fun(*a, **k)

    arrays = [x for x, t in zip(leaves, traced) if t]
    closed, out_shape = jax.make_jaxpr(flat_fun, return_shape=True)(*arrays)
    out = _eval(closed.jaxpr, closed.consts, arrays)
    return jax.tree.unflatten(jax.tree.structure(out_shape), out)
  return wrapped


# What make_portable traces; any other argument stays static.
_ARRAYS = (jax.Array, np.ndarray, np.generic, jax.core.Tracer)


def _eval(jaxpr, consts: Sequence, args: Sequence) -> List:
  """Evaluates ``jaxpr`` (binding its primitives on the current trace), its dots and
  QRs in the portable form."""
  env = dict(zip(jaxpr.constvars, consts))
  env.update(zip(jaxpr.invars, args))
  for eqn in jaxpr.eqns:
    # A literal operand carries its value; any other is an earlier output.
    invals = [v.val if isinstance(v, jcore.Literal) else env[v] for v in eqn.invars]
    outvals = _eval_eqn(eqn, invals)
    if not eqn.primitive.multiple_results:
      outvals = [outvals]
    for var, value in zip(eqn.outvars, outvals):
      if not isinstance(var, jcore.DropVar):
        env[var] = value
  return [v.val if isinstance(v, jcore.Literal) else env[v] for v in jaxpr.outvars]


def _eval_eqn(eqn, invals):
  name = eqn.primitive.name
  if name == 'dot_general':
    return _canonical_dot(*invals, **eqn.params)
  if name == 'qr':
    return _householder_qr(*invals, **eqn.params)
  if name == 'reduce_sum' and _is_major_axis_sum(invals[0], **eqn.params):
    return _major_axis_sum(invals[0], eqn.params['axes'])
  if name in _INLINE:
    inner = eqn.params[_INLINE[name]]
    if isinstance(inner, jcore.ClosedJaxpr):
      out = _eval(inner.jaxpr, inner.consts, invals)
    else:
      out = _eval(inner, [], invals)
    return out if eqn.primitive.multiple_results else out[0]
  if name in _CONTROL_FLOW:  # its jaxprs (a cond's branches: a tuple) rewritten
    params = dict(eqn.params)
    for k, v in eqn.params.items():
      if isinstance(v, jcore.ClosedJaxpr):
        params[k] = _rewrite_closed(v)
      elif (isinstance(v, tuple) and v
            and all(isinstance(j, jcore.ClosedJaxpr) for j in v)):
        params[k] = tuple(_rewrite_closed(j) for j in v)
    return eqn.primitive.bind(*invals, **params)
  if any(_contains_rewritten(j) for j in jcore.jaxprs_in_params(eqn.params)):
    raise NotImplementedError(
        f'make_portable: primitive {name!r} holds a dot or a QR in a jaxpr it '
        f'carries, which is not rewritten '
        f'(seedsweep/engine/portable.py)')
  return eqn.primitive.bind(*invals, **eqn.params)


def _contains_rewritten(jaxpr) -> bool:
  """Whether a jaxpr (a scatter's combiner, say) holds a dot or a QR, at any depth."""
  return any(e.primitive.name in ('dot_general', 'qr')
             or any(_contains_rewritten(j) for j in jcore.jaxprs_in_params(e.params))
             for e in jaxpr.eqns)


def _rewrite_closed(closed: 'jcore.ClosedJaxpr') -> 'jcore.ClosedJaxpr':
  """The same computation traced again through :func:`_eval`; the same avals."""
  specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
           for a in closed.in_avals]
  rewritten = jax.make_jaxpr(lambda *a: _eval(closed.jaxpr, closed.consts, a))(*specs)
  # Weak types must survive the retrace; the avals' abstract meshes (all Auto axes
  # under a seed mesh) need not: they carry no layout.
  before, after = ([(a.shape, a.dtype, a.weak_type) for a in avals]
                   for avals in (closed.out_avals, rewritten.out_avals))
  if after != before:
    raise AssertionError(f'make_portable changed a jaxpr\'s outputs: '
                         f'{closed.out_avals} -> {rewritten.out_avals}')
  return rewritten


def _canonical_dot(lhs, rhs, *, dimension_numbers, **params):
  """``dot_general`` with ``lhs`` transposed to ``[batch, free, contracting]``; a
  matrix-vector product or a tiny dot, which YNNPACK declines, as a sum of products.

  Both operands and the result pass through barriers: XLA would otherwise fold the
  transpose back, or swap the operands of a dot whose result is transposed."""
  (lc, rc), (lb, rb) = dimension_numbers
  free = [d for d in range(np.ndim(lhs)) if d not in lc and d not in lb]
  rfree = [d for d in range(np.ndim(rhs)) if d not in rc and d not in rb]
  shape, rshape = np.shape(lhs), np.shape(rhs)
  m, n = math.prod(shape[d] for d in free), math.prod(rshape[d] for d in rfree)
  if m == 1 or n == 1 or max(m, n, math.prod(shape[d] for d in lc)) < _YNN_SMALLEST:
    return _sum_of_products(lhs, rhs, (lb, free, lc), (rb, rfree, rc),
                            params.get('preferred_element_type'))
  order = (*lb, *free, *lc)
  if order != tuple(range(np.ndim(lhs))):
    lhs = jax.lax.transpose(lhs, order)
    nb, nf = len(lb), len(free)
    lb = tuple(range(nb))
    lc = tuple(range(nb + nf, nb + nf + len(lc)))
  lhs, rhs = jax.lax.optimization_barrier((lhs, rhs))
  out = jax.lax.dot_general_p.bind(lhs, rhs, dimension_numbers=((lc, rc), (lb, rb)),
                                   **params)
  return jax.lax.optimization_barrier(out)


# YNNPACK declines a dot whose m, n and k are all below this (xla/backends/cpu).
_YNN_SMALLEST = 8


def _is_major_axis_sum(x, *, axes, out_sharding=None) -> bool:
  """Whether a ``reduce_sum`` is a float32 sum over axes before the last (a bias's
  gradient, a sum over time) that :func:`_major_axis_sum` rewrites."""
  shape, aval = np.shape(x), jax.typeof(x)
  return (out_sharding is None and aval.dtype == np.float32 and not aval.weak_type
          and bool(axes) and len(shape) - 1 not in axes and shape[-1] > 1
          and math.prod(shape[d] for d in axes) > 1)


def _major_axis_sum(x, axes):
  """``x.sum(axes)`` as a YNNPACK dot of ones ``[8, K]`` (8: YNNPACK takes it) and
  ``x`` laid out ``[kept..., K, last]``: row 0 of the product.

  YNNPACK splits a reduce's outer summed axis over the pool's threads once it is
  short, so the rounding followed the pool's size; its dots sum alike under any pool
  (docs/log.md, 2026-12-04).
  """
  shape = np.shape(x)
  kept = [d for d in range(len(shape) - 1) if d not in axes]
  order = (*kept, *sorted(axes), len(shape) - 1)
  if order != tuple(range(len(shape))):
    x = jax.lax.transpose(x, order)
  batch, k = math.prod(np.shape(x)[:len(kept)]), math.prod(np.shape(x)[len(kept):-1])
  x = x.reshape(batch, k, shape[-1])
  ones = jax.lax.broadcast(np.float32(1), (batch, _YNN_SMALLEST, k))
  ones, x = jax.lax.optimization_barrier((ones, x))
  out = jax.lax.dot_general(ones, x, (((2,), (1,)), ((0,), (0,))))
  out = jax.lax.optimization_barrier(out)[:, 0]
  return out.reshape(tuple(shape[d] for d in kept) + (shape[-1],))


def _sum_of_products(lhs, rhs, lhs_dims, rhs_dims, dtype):
  """``dot_general`` as a broadcast product summed over the contracted axes, which XLA
  emits itself: ``[batch, lhs free, rhs free]``."""
  (lb, lf, lc), (rb, rf, rc) = lhs_dims, rhs_dims
  if dtype is not None:
    lhs, rhs = lhs.astype(dtype), rhs.astype(dtype)
  nb, nl, nr, nc = len(lb), len(lf), len(rf), len(lc)
  lhs = jax.lax.transpose(lhs, (*lb, *lf, *lc))
  rhs = jax.lax.transpose(rhs, (*rb, *rf, *rc))
  lhs = jax.lax.expand_dims(lhs, tuple(range(nb + nl, nb + nl + nr)))
  rhs = jax.lax.expand_dims(rhs, tuple(range(nb, nb + nl)))
  product = lhs * rhs  # [batch, lhs free, rhs free, contracted]
  return product.sum(axis=tuple(range(nb + nl + nr, nb + nl + nr + nc)))


def _householder_qr(a, *, pivoting, full_matrices, **_):
  """``qr_p`` by Householder reflections in XLA ops: ``(q, r)`` with ``diag(r) >= 0``
  (a valid QR; flax's orthogonal initialiser, which flips ``q`` by the signs of
  ``diag(r)``, then gets the same matrix as from LAPACK up to rounding)."""
  if pivoting:
    raise NotImplementedError('portable numerics: QR with pivoting needs LAPACK '
                              "(config.runtime.numerics='native')")
  if a.ndim > 2:  # a batch of matrices: each one's own
    return jax.vmap(functools.partial(_householder_qr, pivoting=False,
                                      full_matrices=full_matrices))(a)
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  m, n = a.shape
  k = min(m, n)
  rows = jnp.arange(m)

  # Products by sums of elementwise products, not dots: a matrix-vector dot would
  # leave YNNPACK (unportable_ops).
  def reflect(j, carry):  # zero column j below the diagonal
    r, vs = carry
    x = jnp.where(rows >= j, r[:, j], 0.0)
    norm = jnp.sqrt(jnp.sum(x * x))
    # alpha = -sign(x_j) |x| keeps v = x - alpha e_j away from cancellation.
    alpha = jnp.where(x[j] >= 0, -norm, norm)
    v = x - jnp.where(rows == j, alpha, 0.0)
    v_norm = jnp.sqrt(jnp.sum(v * v))
    v = jnp.where(v_norm > 0, v / jnp.where(v_norm > 0, v_norm, 1.0), 0.0)
    r = r - 2.0 * v[:, None] * jnp.sum(v[:, None] * r, axis=0)[None, :]
    return r, vs.at[j].set(v)

  r, vs = jax.lax.fori_loop(0, k, reflect, (a, jnp.zeros((k, m), a.dtype)))
  cols = m if full_matrices else k

  def apply(i, q):  # q = H_0 ... H_{k-1} I[:, :cols], the last reflection first
    v = vs[k - 1 - i]
    return q - 2.0 * v[:, None] * jnp.sum(v[:, None] * q, axis=0)[None, :]

  q = jax.lax.fori_loop(0, k, apply, jnp.eye(m, cols, dtype=a.dtype))
  r = jnp.triu(r[:cols])
  # Flip the signs that make diag(r) negative, in q's columns and r's rows alike.
  flip = jnp.concatenate([jnp.where(jnp.diagonal(r) < 0, -1.0, 1.0),
                          jnp.ones((cols - k,))]).astype(a.dtype)
  return q * flip[None, :], r * flip[:, None]


# An instruction of optimised HLO text: `%name = type[dims]{layout} op(`.
_INSTRUCTION = re.compile(r'^\s*(?:ROOT )?%(\S+) = (\S+) (\w[\w-]*)\(')
_COMPUTATION = re.compile(r'^(?:ENTRY )?%(\S+) ')
_CALLS = re.compile(r'calls=%([\w.-]+)')
_LAPACK = re.compile(r'custom_call_target="(lapack_\w+)"')


def unportable_ops(hlo_text: str) -> List[str]:
  """What an optimised XLA:CPU program computes with kernels that follow the CPU: its
  dots outside YNNPACK fusions and its LAPACK calls, each as ``'name: shape'`` ([]
  for a program of the portable form)."""
  computation, dots, ynn_bodies, calls = None, [], set(), []
  for line in hlo_text.splitlines():
    header = _COMPUTATION.match(line)
    if header and line.rstrip().endswith('{'):
      computation = header.group(1)
      continue
    op = _INSTRUCTION.match(line)
    if not op:
      continue
    if op.group(3) == 'dot':
      dots.append((computation, f'{op.group(1)}: {op.group(2)}'))
    if '"__ynn_fusion"' in line:
      ynn_bodies.update(_CALLS.findall(line))
    lapack = _LAPACK.search(line)
    if lapack:
      calls.append(f'{op.group(1)}: {lapack.group(1)}')
  return [dot for comp, dot in dots if comp not in ynn_bodies] + calls

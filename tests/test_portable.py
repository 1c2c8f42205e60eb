"""seedsweep/engine/portable.py: every dot of a program in YNNPACK's form, QR without
LAPACK, and the audit of what a compiled program still computes with kernels that
follow the CPU. Every model's compiled train step passes the audit under vmap in
tests/test_experiments.py and under map in the golden runs (tests/test_golden.py)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import linen as nn

from seedsweep.engine import portable

# (einsum, left shape, right shape): weight gradients (contracted leading axes, with
# and without a batch axis), a matrix-vector product, a batched one with m = 1, a tiny
# dot, the forward projections.
DOTS = [('bk,bn->kn', (300, 16), (300, 12)), ('sbk,sbn->skn', (4, 30, 16), (4, 30, 12)),
        ('nd,d->n', (50, 16), (16,)), ('bt,btd->bd', (16, 20), (16, 20, 32)),
        ('ij,jk->ik', (3, 4), (4, 5)), ('btk,kn->btn', (5, 7, 16), (16, 24)),
        ('ne,ref->rnf', (9, 5), (3, 5, 7))]


def _compiled_text(fn, *args):
  return jax.jit(fn).lower(*args).compile().as_text()


@pytest.mark.parametrize('spec, left, right', DOTS)
def test_every_dot_and_its_gradients_run_in_ynnpack_with_the_same_values(
    spec, left, right):
  keys = jax.random.split(jax.random.key(0), 2)
  a, b = jax.random.normal(keys[0], left), jax.random.normal(keys[1], right)
  loss = lambda a, b: jnp.sum(jnp.sin(jnp.einsum(spec, a, b)))
  grads = jax.grad(loss, argnums=(0, 1))
  for fn in (lambda a, b: jnp.einsum(spec, a, b), grads):
    want, got = fn(a, b), jax.jit(portable.make_portable(fn))(a, b)
    for w, g in zip(jax.tree.leaves(want), jax.tree.leaves(got)):
      np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
  assert portable.unportable_ops(_compiled_text(portable.make_portable(grads), a, b)) == []


def test_a_weight_gradient_leaves_ynnpack_unless_rewritten():
  """The audit sees what the rewrite fixes: x^T dy contracts x's leading axis."""
  x, dy = jnp.ones((300, 16)), jnp.ones((300, 12))
  fn = lambda x, dy: x.T @ dy
  assert portable.unportable_ops(_compiled_text(fn, x, dy)) != []
  assert portable.unportable_ops(_compiled_text(portable.make_portable(fn), x, dy)) == []


# (shape, axes): a bias gradient over batch and time, the same with members in front,
# a sum over time keeping batch and features, a lone summed axis.
MAJOR_SUMS = [((50, 6, 120), (0, 1)), ((3, 6, 50, 120), (1, 2)),
              ((4, 9, 5, 16), (2,)), ((300, 12), (0,))]


@pytest.mark.parametrize('shape, axes', MAJOR_SUMS)
def test_a_sum_over_major_axes_is_a_ynnpack_dot_with_the_same_values(shape, axes):
  x = jax.random.normal(jax.random.key(2), shape)
  fn = jax.jit(portable.make_portable(lambda x: x.sum(axes)))
  np.testing.assert_allclose(fn(x), np.asarray(x, np.float64).sum(axes), atol=1e-4)
  text = fn.lower(x).compile().as_text()
  assert ' dot(' in text and portable.unportable_ops(text) == []


def test_sums_over_the_last_axis_and_integer_sums_stay_reduces():
  """Only float32 sums that keep the minor axis take the dot form."""
  fn = lambda x, n: (x.sum(-1), x.sum(), n.sum(0))
  x, n = jnp.ones((6, 40)), jnp.ones((6, 40), jnp.int32)
  eqns = jax.make_jaxpr(portable.make_portable(fn))(x, n).eqns
  assert [e.primitive.name for e in eqns] == ['reduce_sum'] * 3


@pytest.mark.parametrize('shape', [(150, 600), (600, 150), (50, 50), (7, 3)])
def test_orthogonal_initialisers_get_lapacks_matrix_without_lapack(shape):
  init = lambda key: nn.initializers.orthogonal()(key, shape)
  key = jax.random.key(3)
  assert any('lapack_' in op for op in portable.unportable_ops(_compiled_text(init, key)))
  assert portable.unportable_ops(_compiled_text(portable.make_portable(init), key)) == []
  np.testing.assert_allclose(jax.jit(portable.make_portable(init))(key), init(key),
                             atol=2e-6)


@pytest.mark.parametrize('mode', ['reduced', 'complete'])
def test_qr_is_a_factorisation_with_a_positive_diagonal(mode):
  x = jax.random.normal(jax.random.key(1), (3, 6, 4))  # batched, tall
  q, r = jax.jit(portable.make_portable(lambda x: jnp.linalg.qr(x, mode=mode)))(x)
  cols = 4 if mode == 'reduced' else 6
  assert q.shape == (3, 6, cols) and r.shape == (3, cols, 4)
  np.testing.assert_allclose(q @ r, x, atol=1e-5)
  np.testing.assert_allclose(jnp.swapaxes(q, 1, 2) @ q, np.broadcast_to(np.eye(cols),
                                                                         (3, cols, cols)),
                             atol=1e-5)
  assert bool((jnp.diagonal(r, axis1=1, axis2=2) >= 0).all())
  np.testing.assert_array_equal(np.tril(np.asarray(r)[:, :, :4], -1), 0)


def test_control_flow_and_static_arguments_survive_the_rewrite():
  def fn(w, xs, n, *, scale):
    h, _ = jax.lax.scan(lambda h, x: (jnp.tanh(x @ w + h), None), jnp.zeros(4), xs)
    return jax.lax.cond(n > 2, lambda: h * scale, lambda: h)
  w, xs = jnp.ones((3, 4)) * 0.1, jnp.ones((5, 3))
  got = jax.jit(portable.make_portable(fn), static_argnames='scale')(w, xs, 3, scale=2.0)
  np.testing.assert_allclose(got, fn(w, xs, 3, scale=2.0), rtol=1e-6)


def test_a_dot_hidden_in_an_unknown_jaxpr_is_refused_by_name():
  call = jax.extend.core.Primitive('my_call')
  call.def_impl(lambda x, *, jaxpr: jax.core.eval_jaxpr(jaxpr.jaxpr, [], x)[0])
  call.def_abstract_eval(lambda x, *, jaxpr: x)
  inner = jax.make_jaxpr(lambda x: x @ x)(jnp.ones((2, 2)))
  fn = lambda x: call.bind(x, jaxpr=inner)
  with pytest.raises(NotImplementedError, match="'my_call' holds a dot or a QR"):
    jax.make_jaxpr(portable.make_portable(fn))(jnp.ones((2, 2)))

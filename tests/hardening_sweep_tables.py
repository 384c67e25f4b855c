"""The tables of tests/test_hardening_sweep_vs_jax.py (issue 12's sweep for silently wrong
classes): each is a setup and a list of expressions, run under laminax and real JAX.

`JAX_ACCIDENTS` lists the inputs left out, with why: JAX answers them with an error that comes
from its own internals (a ZeroDivisionError, an IndexError from a tuple lookup, an MLIRError,
an UnexpectedTracerError, an AssertionError) where laminax raises a clear error of the type
the same mistake gets elsewhere, or JAX's value is an artifact of a refused input (NumPy raises
for it).
"""

# ruff: noqa: E501, E701 (tables of expressions read best one per line)

import textwrap


def axes():

    SETUP = """
    a = jnp.arange(6.0).reshape(2, 3); v = jnp.arange(4.0); i = jnp.arange(6).reshape(2, 3)
    """
    EXPRS = []
    for fn in ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "cumsum", "sort", "argsort", "flip", "std", "var", "any", "all", "nanmax", "median", "ptp", "count_nonzero", "cumprod", "diff", "squeeze", "expand_dims", "take_along_axis_skip", "softmax_skip"]:
        for ax in ["2", "-3", "(0, 0)", "(0, -2)", "1.5", "'a'", "(0, 2)", "np.int64(1)", "[0, 1]", "None", "(0, 1)", "()"]:
            if fn.endswith("_skip"): continue
            EXPRS.append(f"jnp.{fn}(a, axis={ax})")
    for fn in ["jax.nn.softmax", "jax.nn.log_softmax", "jax.scipy.special.logsumexp", "jnp.linalg.norm", "jnp.trapezoid", "jnp.gradient", "jnp.roll", "jnp.moveaxis", "jnp.stack", "jnp.concatenate", "jnp.split", "jnp.take", "jnp.repeat", "jnp.apply_along_axis", "jnp.average", "jnp.unique", "jnp.delete", "jnp.insert"]:
        for ax in ["2", "-3", "(0, 0)", "1.5", "None"]:
            if fn == "jnp.roll": EXPRS.append(f"jnp.roll(a, 1, axis={ax})")
            elif fn == "jnp.moveaxis": EXPRS += [f"jnp.moveaxis(a, {ax}, 0)", f"jnp.moveaxis(a, 0, {ax})"]
            elif fn in ("jnp.stack", "jnp.concatenate"): EXPRS.append(f"{fn}([a, a], axis={ax})")
            elif fn == "jnp.split": EXPRS.append(f"jnp.split(a, 1, axis={ax})")
            elif fn == "jnp.take": EXPRS.append(f"jnp.take(a, jnp.array([0]), axis={ax})")
            elif fn == "jnp.repeat": EXPRS.append(f"jnp.repeat(a, 2, axis={ax})")
            elif fn == "jnp.apply_along_axis": EXPRS.append(f"jnp.apply_along_axis(jnp.sum, {ax}, a)")
            elif fn == "jnp.delete": EXPRS.append(f"jnp.delete(a, 0, axis={ax})")
            elif fn == "jnp.insert": EXPRS.append(f"jnp.insert(a, 0, 1.0, axis={ax})")
            else: EXPRS.append(f"{fn}(a, axis={ax})")
    return textwrap.dedent(SETUP), EXPRS


def shapes_dtypes_control():

    SETUP = """
    a = jnp.arange(6.0).reshape(2, 3); v = jnp.arange(4.0); k = jax.random.PRNGKey(0)
    def isarr(t): return isinstance(t, jax.Array)
    """
    EXPRS = [
     # reshape / split / concat / broadcast
     "a.reshape(4, 2)", "a.reshape(-1, -1)", "a.reshape(5)", "a.reshape((2, -1, 1))", "a.reshape(7, -1)", "a.reshape(0, -1)", "jnp.reshape(a, (3, 2), order='F')", "jnp.reshape(a, (3, 2), order='A')", "jnp.reshape(a, (3, 2), order='X')", "a.reshape((-2, 3))", "a.reshape(np.int64(6))", "a.reshape([6])", "a.reshape(jnp.array(6))", "a.reshape(6.0)",
     "jnp.split(v, 3)", "jnp.split(v, [1, 3])", "jnp.split(v, [3, 1])", "jnp.split(v, 0)", "jnp.split(v, -2)", "jnp.split(v, [5])", "jnp.array_split(v, 3)", "jnp.array_split(v, 0)", "jnp.split(v, 2.0)", "jnp.hsplit(a, 2)", "jnp.vsplit(v, 2)",
     "jnp.concatenate([a, v])", "jnp.concatenate([a, a.T])", "jnp.concatenate([])", "jnp.concatenate(a)", "jnp.concatenate([a, a], axis=None)", "jnp.concatenate([v, 1.0])", "jnp.stack([a, a.T])", "jnp.stack([])", "jnp.hstack([a, v])", "jnp.vstack([a, v])", "jnp.concatenate((v, v), dtype='int32')",
     "jnp.broadcast_to(a, (3, 3))", "jnp.broadcast_to(a, (2,))", "jnp.broadcast_to(a, (-1, 3))", "jnp.broadcast_to(a, (4, 2, 3))", "jnp.broadcast_to(v, 4.0)", "jnp.broadcast_to(v, (1, 4))", "jnp.broadcast_arrays(a, v)", "jnp.broadcast_shapes((2, 3), (3, 2))", "jnp.broadcast_shapes((2, 3), (-1,))",
     "jnp.tile(a, -1)", "jnp.tile(a, (2, 0))", "jnp.repeat(v, -1)", "jnp.repeat(v, [1, 2])", "jnp.repeat(v, jnp.array([1, 2, 0, 1]))", "jnp.zeros(-1)", "jnp.zeros((2, -1))", "jnp.ones(2.5)", "jnp.full((2,), [1, 2, 3])", "jnp.eye(-1)", "jnp.arange(0, 10, 0)", "jnp.linspace(0, 1, -1)", "jnp.zeros((2,), dtype='foo')", "jnp.zeros((2,), dtype=object)", "jnp.ones(3, dtype=str)",
     # dtype args
     "jnp.sum(a, dtype='foo')", "a.astype('foo')", "a.astype(None)", "jnp.array(1, dtype='int128')", "jnp.arange(3, dtype='complex512')", "jnp.asarray([1, 2], dtype=jnp.bfloat16)", "a.astype(jnp.float0)", "jnp.zeros(2, dtype=jnp.float0)", "lax.convert_element_type(a, 'foo')", "jnp.mean(a, dtype=int)", "jnp.cumsum(a, dtype='bool')",
     # dot_general / conv
     "lax.dot_general(a, a, (((1,), (1,)), ((), ())))", "lax.dot_general(a, a, (((1,), (0,)), ((), ())))", "lax.dot_general(a, a, (((2,), (1,)), ((), ())))", "lax.dot_general(a, a, (((1, 1), (1, 1)), ((), ())))", "lax.dot_general(a, a, (((1,), (1,)), ((0,), (0,))))", "lax.dot_general(a, a, (((0,), (0,)), ((0,), (0,))))", "lax.dot_general(a, a, ((1, 1), ((), ())))", "lax.dot_general(a, a, (((1,), (1,)), ((0,), ())))", "lax.dot_general(a, a.T, (((1,), (0,)), ((), ())), preferred_element_type='int32')", "lax.dot(a, v)", "jnp.dot(a, v)", "jnp.matmul(a, v)", "a @ v", "jnp.einsum('ij,jk', a, a)", "jnp.einsum('ij,ij->k', a, a)", "jnp.einsum('ii', a)", "jnp.tensordot(a, a, axes=3)", "jnp.tensordot(a, a, axes=-1)", "jnp.tensordot(a, a, axes=([1], [0]))",
     "lax.conv(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (1, 1), 'VALID')", "lax.conv(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 2, 2, 2)), (1, 1), 'VALID')", "lax.conv(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (0, 1), 'VALID')", "lax.conv(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (1,), 'VALID')", "lax.conv(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (1, 1), 'BAD')", "lax.conv(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 9, 9)), (1, 1), 'VALID')", "lax.conv(jnp.ones((1, 1, 5)), jnp.ones((1, 1, 2, 2)), (1, 1), 'VALID')", "lax.conv_general_dilated(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (1, 1), 'VALID', dimension_numbers=('NCHW', 'OIHW', 'NCHW'))", "lax.conv_general_dilated(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (1, 1), 'VALID', dimension_numbers=('NCHW', 'OIHW', 'NCXW'))", "lax.conv_general_dilated(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (1, 1), 'VALID', dimension_numbers=('NCHW', 'OIHW'))", "lax.conv_general_dilated(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (1, 1), 'VALID', dimension_numbers=('NCHH', 'OIHW', 'NCHW'))", "lax.conv_general_dilated(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (1, 1), 'VALID', lhs_dilation=(0, 1))", "lax.conv_general_dilated(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (1, 1), 'VALID', rhs_dilation=(-1, 1))", "lax.conv_general_dilated(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (1, 1), [(1, 1)])", "lax.conv_general_dilated(jnp.ones((2, 2, 5, 5)), jnp.ones((2, 1, 2, 2)), (1, 1), 'VALID', feature_group_count=3)", "lax.conv_general_dilated(jnp.ones((2, 2, 5, 5)), jnp.ones((2, 1, 2, 2)), (1, 1), 'VALID', feature_group_count=2)", "lax.conv_general_dilated(jnp.ones((2, 2, 5, 5)), jnp.ones((2, 1, 2, 2)), (1, 1), 'VALID', batch_group_count=2)", "lax.conv_general_dilated(jnp.ones((2, 2, 5, 5)), jnp.ones((3, 2, 2, 2)), (1, 1), 'VALID', batch_group_count=2)", "jnp.convolve(v, jnp.ones(2), mode='foo')", "jnp.convolve(a, v)", "jnp.convolve(v, jnp.ones(0))",
     # random
     "jax.random.normal(k, (2, -1))", "jax.random.normal(k, 3.0)", "jax.random.normal(k, (2,), dtype='int32')", "jax.random.uniform(k, (2,), dtype='int32')", "jax.random.randint(k, (2,), 0, 10, dtype='float32')", "jax.random.normal(jnp.array([1, 2, 3], 'uint32'), (2,))", "jax.random.normal(jnp.zeros(2), (2,))", "jax.random.normal(1, (2,))", "jax.random.split(k, -1)", "jax.random.split(k, 2.0)", "jax.random.split(k, (2, 2))", "jax.random.choice(k, 3, (5,), replace=False)", "jax.random.choice(k, v, (2,), p=jnp.ones(3))", "jax.random.permutation(k, 2.5)", "jax.random.bernoulli(k, 1.5, (2,))", "jax.random.categorical(k, a, axis=2)", "jax.random.randint(k, (2,), 5, 0)", "jax.random.uniform(k, (2,), minval=1.0, maxval=0.0)", "jax.random.fold_in(k, 2**40)", "jax.random.fold_in(k, -1)", "jax.random.PRNGKey(2**70)", "jax.random.PRNGKey(-1)", "jax.random.PRNGKey(1.5)", "jax.random.normal(jax.random.key(0), (2,))", "jax.random.normal(jax.random.split(k), (2,))", "jax.random.gamma(k, -1.0)", "jax.random.truncated_normal(k, 1.0, -1.0, (2,))", "jax.random.multivariate_normal(k, jnp.zeros(2), jnp.eye(3))", "jax.random.dirichlet(k, jnp.ones(3), (2,))", "jax.random.shuffle(k, v)",
     # scan / control flow
     "lax.scan(lambda c, x: (c + x, x), 0.0, v)", "lax.scan(lambda c, x: (c.astype('int32'), x), 0.0, v)", "lax.scan(lambda c, x: ((c, c), x), 0.0, v)", "lax.scan(lambda c, x: (jnp.ones(2), x), 0.0, v)", "lax.scan(lambda c, x: c, 0.0, v)", "lax.scan(lambda c, x: (c, x), 0.0, v, length=5)", "lax.scan(lambda c, x: (c, x), 0.0, None)", "lax.scan(lambda c, x: (c, x), 0.0, [v, jnp.ones(3)])", "lax.scan(lambda c, x: (c, x), 0.0, v, unroll=0)", "lax.scan(lambda c, x: (c, x), 0.0, v, unroll=-1)", "lax.scan(lambda c, x: (c, x), 0.0, 1.0)",
     "lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0)", "lax.while_loop(lambda c: jnp.array([True]), lambda c: c, 0)", "lax.while_loop(lambda c: c, lambda c: c, 0.0)", "lax.fori_loop(0, 3, lambda i, c: c + 1.0, 0)", "lax.fori_loop(0, 3, lambda i, c: (c, c), 0)", "lax.cond(True, lambda: 1.0, lambda: 1)", "lax.cond(jnp.array([True, False]), lambda: 1.0, lambda: 2.0)", "lax.cond(1.5, lambda: 1.0, lambda: 2.0)", "lax.switch(5, [lambda: 1.0, lambda: 2.0])", "lax.switch(-1, [lambda: 1.0, lambda: 2.0])", "lax.switch(1.0, [lambda: 1.0, lambda: 2.0])", "lax.switch(0, [])", "lax.map(lambda x: x * 2, v, batch_size=0)", "lax.map(lambda x: x * 2, v, batch_size=3)",
     # vmap sizes / has_aux
     "jax.vmap(lambda x, y: x + y)(v, jnp.ones(3))", "jax.vmap(lambda x, y: x + y, in_axes=(0, 1))(v, jnp.ones((2, 4)))", "jax.grad(lambda x: (x.sum(), 1.0), has_aux=True)(v)", "jax.grad(lambda x: x.sum(), has_aux=True)(v)", "jax.grad(lambda x: (x.sum(), 1.0, 2.0), has_aux=True)(v)", "jax.grad(lambda x: [x.sum(), 1.0], has_aux=True)(v)", "jax.value_and_grad(lambda x: x.sum(), has_aux=True)(v)", "jax.jacfwd(lambda x: x, has_aux=True)(v)", "jax.jacrev(lambda x: (x, {'a': x}), has_aux=True)(v)", "jax.vjp(lambda x: x, v, has_aux=True)", "jax.jvp(lambda x: x, (v,), (v,), has_aux=True)", "jax.linearize(lambda x: x, v, has_aux=True)", "jax.linearize(lambda x: (x, 1), v, has_aux=True)[2]", "jax.vjp(lambda x: (x, 2), v, has_aux=True)[2]",
     # convert_element_type 0-d and tracer isinstance
     "type(lax.convert_element_type(1.0, 'int32')).__name__", "type(lax.convert_element_type(np.float32(1), 'int32')).__name__", "type(lax.convert_element_type(jnp.float32(1), 'int32')).__name__", "type(lax.convert_element_type(np.ones(()), 'int32')).__name__", "type(jnp.asarray(1.0).astype('int32')).__name__", "type(lax.convert_element_type(np.ones(2), 'int32')).__name__", "type(lax.convert_element_type(True, 'float32')).__name__", "type(lax.add(1.0, 2.0)).__name__", "type(lax.neg(np.float32(1))).__name__", "type(jnp.float32(1)).__name__", "type(jnp.int32(2) + 1).__name__",
     "jax.jit(lambda x: isarr(x))(1.0)", "jax.grad(lambda x: x * isarr(x))(1.0)", "jax.vmap(lambda x: isarr(x))(v)", "jax.make_jaxpr(lambda x: isarr(x))(1.0) and 1", "isinstance(jnp.ones(2), jax.Array)", "isinstance(np.ones(2), jax.Array)", "isinstance(1.0, jax.Array)",
    ]
    return textwrap.dedent(SETUP), EXPRS


def slicing_linalg_misc():

    SETUP = """
    a = jnp.arange(6.0).reshape(2, 3); v = jnp.arange(4.0); i = jnp.arange(4)
    """
    EXPRS = [
     "lax.slice(a, (0, 0), (3, 3))", "lax.slice(a, (0, 0), (1,))", "lax.slice(a, (1, 0), (0, 3))", "lax.slice(a, (0, 0), (2, 3), (0, 1))", "lax.slice(a, (-1, 0), (2, 3))", "lax.slice(a, (0, 0), (2, 3), (2, 2))",
     "lax.dynamic_slice(a, (0, 0), (3, 3))", "lax.dynamic_slice(a, (5, 5), (1, 1))", "lax.dynamic_slice(a, (0,), (1, 1))", "lax.dynamic_slice(a, (0, 0), (1,))", "lax.dynamic_slice(a, (0.5, 0), (1, 1))", "lax.dynamic_slice(a, (-1, -1), (1, 1))", "lax.dynamic_update_slice(a, jnp.ones((3, 3)), (0, 0))", "lax.dynamic_update_slice(a, jnp.ones((1, 1)), (5, 5))", "lax.dynamic_update_slice(a, jnp.ones((1,)), (0, 0))", "lax.dynamic_update_slice(a, jnp.ones((1, 1), 'int32'), (0, 0))", "lax.dynamic_slice_in_dim(a, 1, 2, axis=2)", "lax.dynamic_index_in_dim(a, 5, axis=0)",
     "lax.pad(v, 0.0, [(1, 1, 0)])", "lax.pad(v, 0.0, [(-1, -1, 0)])", "lax.pad(v, 0.0, [(-3, -3, 0)])", "lax.pad(v, 0.0, [(0, 0, -1)])", "lax.pad(v, 0.0, [(0, 0)])", "lax.pad(v, 0, [(1, 1, 0)])", "lax.pad(v, jnp.zeros(2), [(1, 1, 0)])", "jnp.pad(v, -1)", "jnp.pad(v, (1, 2, 3))", "jnp.pad(v, 1, mode='foo')", "jnp.pad(v, 1, mode='reflect')", "jnp.pad(jnp.ones(0), 1, mode='reflect')", "jnp.pad(v, 10, mode='reflect')", "jnp.pad(v, 1, constant_values=(1, 2, 3))", "jnp.pad(v, 1.5)", "jnp.pad(v, ((1, 1), (1, 1)))",
     "lax.sort(a, dimension=2)", "lax.sort(a, dimension=-1)", "lax.sort((a, a.T))", "lax.sort((a, a), num_keys=3)", "lax.sort((a, a), num_keys=0)", "lax.top_k(v, 5)", "lax.top_k(v, -1)", "lax.top_k(v, 0)", "lax.top_k(jnp.float32(1), 1)", "jnp.sort(a, kind='foo')", "jnp.argsort(a, stable=False)", "jnp.argsort(a, descending=True)", "jnp.lexsort((v, v), axis=2)", "jnp.searchsorted(a, 1.0)", "jnp.searchsorted(v, 1.0, side='middle')", "jnp.searchsorted(v, 1.0, method='foo')", "jnp.partition(v, 5)", "jnp.argpartition(v, -5)",
     "jnp.take(v, jnp.array([5]), mode='raise')", "jnp.take(v, jnp.array([5]), mode='foo')", "jnp.take(v, jnp.array([5]))", "jnp.take(v, jnp.array([5]), mode='clip')", "jnp.take(v, jnp.array([-5]), mode='wrap')", "jnp.take(v, jnp.array([5]), mode='fill', fill_value=-1)", "jnp.take(v, 1.5)", "jnp.take_along_axis(a, jnp.array([[0]]), axis=2)", "jnp.take_along_axis(a, jnp.array([0]), axis=1)", "jnp.take_along_axis(a, jnp.array([[0.5]]), axis=1)", "v.at[5].get()", "v.at[5].get(mode='fill', fill_value=7.0)", "v.at[5].set(1.0)", "v.at[5].set(1.0, mode='promise_in_bounds')", "v.at[1.5].set(1.0)", "v.at[0].set(jnp.ones(2))", "v.at[:2].set(jnp.ones(3))", "v.at[0].add('a')", "v.at[0].set(1.0, mode='foo')", "v.at[0].divide(0.0)", "i.at[0].divide(0)", "i.at[0].power(-1)", "i.at[0].set(2**40)", "i.at[0].set(1.5)", "v.at[None].set(1.0)", "v.at[...].set(2.0)", "a.at[0, 0, 0].set(1.0)",
     "lax.gather(v, jnp.array([[0]]), lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)), (1,))", "lax.gather(v, jnp.array([[0]]), lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)), (2,))", "lax.gather(v, jnp.array([[0]]), lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(0,)), (1,))", "lax.gather(v, jnp.array([[0]]), lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)), (5,))",
     "jnp.linalg.inv(a)", "jnp.linalg.inv(v)", "jnp.linalg.solve(a, v)", "jnp.linalg.solve(jnp.eye(2), v)", "jnp.linalg.det(a)", "jnp.linalg.cholesky(a)", "jnp.linalg.eigh(a)", "jnp.linalg.svd(v)", "jnp.linalg.qr(v)", "jnp.linalg.qr(a, mode='foo')", "jnp.linalg.norm(a, ord='foo')", "jnp.linalg.norm(a, ord=3)", "jnp.linalg.norm(v, ord='fro')", "jnp.linalg.matrix_power(a, 2)", "jnp.linalg.matrix_power(jnp.eye(2), 1.5)", "jnp.linalg.matrix_power(jnp.eye(2), -1)", "jnp.linalg.pinv(v)", "jnp.linalg.lstsq(a, v)", "jnp.linalg.eig(jnp.eye(2))", "jnp.linalg.slogdet(a)", "jnp.linalg.inv(jnp.eye(2, dtype='int32'))", "jnp.linalg.cholesky(jnp.eye(2, dtype='int32'))", "jnp.trace(v)", "jnp.diagonal(v)", "jnp.diagonal(a, axis1=0, axis2=0)", "jnp.diag(jnp.ones((2, 2, 2)))", "jnp.outer(a, v)", "jnp.cross(v, v)", "jnp.kron(a, 1.0)", "jnp.vdot(a, v)", "jnp.inner(a, v)",
     "jax.nn.one_hot(i, -1)", "jax.nn.one_hot(i, 2.5)", "jax.nn.one_hot(v, 3)", "jax.nn.one_hot(i, 3, axis=2)", "jax.nn.one_hot(i, 3, dtype='int32')", "jax.nn.gelu(i)", "jax.nn.relu('a')", "jax.nn.softmax(i)", "jax.nn.standardize(a, axis=2)", "jax.nn.glu(v, axis=1)", "jax.nn.glu(jnp.ones(3))", "jax.nn.dot_product_attention(jnp.ones((1, 2, 1, 4)), jnp.ones((1, 2, 1, 3)), jnp.ones((1, 2, 1, 4)))",
     "jnp.clip(v, 3, 1)", "jnp.clip(v, min=1)", "jnp.clip(v, a_min=1, min=1)", "jnp.round(v, 1.5)", "jnp.around(i, -1)", "jnp.round(i, 1)", "jnp.histogram(v, bins=-1)", "jnp.histogram(v, bins=2, range=(3, 1))", "jnp.bincount(i, length=2)", "jnp.bincount(-i)", "jnp.bincount(v)", "jnp.digitize(v, jnp.array([3.0, 1.0]))", "jnp.interp(v, jnp.array([1.0]), jnp.array([1.0, 2.0]))", "jnp.polyfit(v, v, -1)", "jnp.polyval(v, 'a')", "jnp.convolve(v, jnp.ones(2), mode='full')", "jnp.correlate(v, jnp.ones(0))", "jnp.meshgrid(v, v, indexing='foo')", "jnp.tri(-1)", "jnp.tril(v)", "jnp.triu(v, k=1.5)", "jnp.arange(3, dtype='bool')", "jnp.arange(1.5, dtype='int32')", "jnp.linspace(0, 1, 5, dtype='int32')", "jnp.linspace(0, 1, 2.5)", "jnp.logspace(0, 1, -1)", "jnp.geomspace(0, 1, 3)", "jnp.full((2,), jnp.ones(3))", "jnp.full_like(v, 1, shape=(-1,))", "jnp.zeros_like(v, shape=2.5)", "jnp.identity(2.5)", "jnp.eye(2, k=1.5)",
    ]
    return textwrap.dedent(SETUP), EXPRS


def broadcast():

    SETUP = """
    a3 = jnp.ones(3); a2 = jnp.ones(2); m23 = jnp.ones((2, 3)); m32 = jnp.ones((3, 2)); i3 = jnp.arange(3)
    """
    EXPRS = []
    pairs = [("a3", "a2"), ("m23", "m32"), ("m23", "a2"), ("a2", "m23"), ("m23", "jnp.ones((4, 2, 2))"), ("i3", "a2"), ("np.ones(3)", "a2"), ("a3", "np.ones(2)"), ("jnp.ones((2,1))", "m32")]
    for a, b in pairs:
        for op in ["{a} * {b}", "{a} + {b}", "{a} - {b}", "{a} / {b}", "{a} < {b}", "{a} == {b}", "jnp.maximum({a}, {b})", "jnp.where({a} > 0, {a}, {b})", "lax.mul({a}, {b})", "lax.add({a}, {b})", "jnp.arctan2({a}, {b})", "{a} & {b}" , "jnp.hypot({a}, {b})", "jax.jit(lambda p, q: p * q)({a}, {b})", "jnp.logaddexp({a}, {b})", "{a} ** {b}", "{a} % {b}"]:
            EXPRS.append(op.format(a=a, b=b))
    return textwrap.dedent(SETUP), EXPRS


def broadcast_functions():

    SETUP = """
    a3 = jnp.ones(3); a2 = jnp.ones(2); m23 = jnp.ones((2, 3)); m32 = jnp.ones((3, 2))
    """
    EXPRS = []
    for a, b in [("a3", "a2"), ("m23", "m32"), ("m23", "a2")]:
        EXPRS += [f"jnp.clip({a}, {b})", f"jnp.clip({a}, {b}, 2.0)", f"jnp.clip({a}, 0.0, {b})", f"jnp.where({a} > 0, {b}, 0.0)", f"jnp.where(True, {a}, {b})",
                  f"jnp.select([{a} > 0], [{b}])", f"jnp.polyval({a}, {b})", f"jnp.dot({a}, {b})", f"jnp.add.outer({a}, {b})", f"jnp.copysign({a}, {b})", f"jnp.nextafter({a}, {b})",
                  f"jnp.ldexp({a}, {b}.astype(int))", f"jnp.heaviside({a}, {b})", f"jnp.isclose({a}, {b})", f"jnp.allclose({a}, {b})", f"jnp.array_equal({a}, {b})",
                  f"jnp.lerp({a}, {b}, 0.5)" , f"jnp.float_power({a}, {b})", f"jnp.divmod({a}, {b})", f"jnp.gcd({a}.astype(int), {b}.astype(int))", f"jnp.left_shift({a}.astype(int), {b}.astype(int))",
                  f"jnp.logical_and({a}, {b})", f"jnp.fmax({a}, {b})", f"jnp.inner({a}, {b})", f"jnp.matmul({a}, {b})", f"jnp.cross({a}, {b})", f"jnp.kron({a}, {b})", f"jnp.average({a}, weights={b})", f"jnp.searchsorted({a}, {b})", f"jnp.interp({a}, {b}, {b})"]
    return textwrap.dedent(SETUP), EXPRS


def at_divide_power():

    SETUP = """
    v = jnp.arange(4.0); i = jnp.arange(4); m = jnp.arange(6).reshape(2, 3)
    """
    EXPRS = []
    for arr in ["v", "i", "m", "i.astype('uint8')", "i.astype(bool)"]:
        for idx in ["0", "-1", "jnp.array([0, 0])", "jnp.array([1, 2])", ":2", "5", "jnp.array([True, False, True, False])"]:
            for op in ["divide(2)", "divide(0)", "divide(2.5)", "power(2)", "power(-1)", "power(0.5)", "divide(jnp.array(3))", "power(jnp.array([2, 3]))", "divide(2, mode='drop')", "power(2, mode='clip')"]:
                EXPRS.append(f"{arr}.at[{idx}].{op}")
    return textwrap.dedent(SETUP), EXPRS


def int_power():

    SETUP = """
    i = jnp.array([0, 1, 2, 3, -2, -1], 'int32'); e = jnp.array([0, 1, 2, 63, 64, 65], 'int32'); n = jnp.array([-1, -2, -64, 100, 31, 7], 'int32')
    b = jnp.array([True, False, True, False, True, False])
    """
    EXPRS = []
    for x in ["i", "i.astype('uint8')", "i.astype('int8')", "b", "i.astype('int16')"]:
        for y in ["e", "n", "b", "e.astype('uint32')", "jnp.int32(70)", "jnp.array(-3)", "2", "True"]:
            EXPRS += [f"jnp.power({x}, {y})", f"{x} ** {y}", f"jax.jit(jnp.power)({x}, {y})"]
    return textwrap.dedent(SETUP), EXPRS


def index_types():

    SETUP = """
    v = jnp.arange(4.0); m = jnp.arange(6.0).reshape(2, 3)
    """
    EXPRS = []
    for idx in ["1.5", "jnp.float32(1)", "jnp.array([0.5, 1.0])", "np.array([1.0])", "(0, 1.5)", "np.float64(1.0)", "jnp.array(1.0)", "[1.5]", "slice(0.5, 2)", "'a'", "(0, jnp.array([1.0]))", "jnp.array([1, 2], 'uint8')", "jnp.array(1+0j)"]:
        EXPRS += [f"v[{idx}]", f"m[{idx}]", f"v.at[{idx}].set(1.0)", f"v.at[{idx}].get()", f"m.at[{idx}].add(1.0)", f"jnp.take(v, {idx})", f"jnp.take(m, {idx}, axis=1)", f"jax.jit(lambda a: a[{idx}])(v)"]
    return textwrap.dedent(SETUP), EXPRS


def linalg_shapes():

    SETUP = """
    v = jnp.arange(4.0); a = jnp.arange(6.0).reshape(2, 3); s = jnp.ones(())
    """
    EXPRS = []
    for fn in ["cholesky", "cond", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matrix_rank", "pinv", "qr", "slogdet", "svd", "svdvals", "matrix_power", "tensorinv", "lstsq", "solve", "norm", "matrix_norm", "trace", "diagonal", "multi_dot", "outer", "cross", "vecdot", "matrix_transpose"]:
        for x in ["v", "a", "s", "jnp.ones((2, 2, 3))", "jnp.ones((0, 0))"]:
            if fn == "matrix_power": EXPRS.append(f"jnp.linalg.matrix_power({x}, 2)")
            elif fn in ("lstsq", "solve"): EXPRS.append(f"jnp.linalg.{fn}({x}, v)")
            elif fn == "tensorinv": EXPRS.append(f"jnp.linalg.tensorinv({x}, 1)")
            elif fn in ("multi_dot",): EXPRS.append(f"jnp.linalg.multi_dot([{x}, {x}])")
            elif fn in ("outer", "cross", "vecdot"): EXPRS.append(f"jnp.linalg.{fn}({x}, {x})")
            else: EXPRS.append(f"jnp.linalg.{fn}({x})")
    return textwrap.dedent(SETUP), EXPRS


def shard_map_specs():
    SETUP = """
    from functools import partial
    P = jax.sharding.PartitionSpec
    mesh = jax.make_mesh((1,), ('i',))
    x = jnp.arange(4.0)
    def sm(**kw): return jax.shard_map(lambda a: a * 2, mesh=mesh, **kw)
    """
    EXPRS = []
    for ins in ["P('i')", "P()", "(P('i'),)", "P('j')", "P('i', 'i')", "'i'", "0", "None", "[P('i')]", "(P('i'), P('i'))", "P(None)", "P(('i',))", "P('i', None)"]:
        for outs in ["P('i')", "P()", "P('j')", "'i'", "None", "(P('i'),)"]:
            EXPRS.append(f"sm(in_specs={ins}, out_specs={outs})(x)")
    return textwrap.dedent(SETUP), EXPRS


def unique_axis():
    SETUP = """
a = jnp.array([[1, 2], [3, 4], [1, 2], [0, 9]]); f = jnp.array([[0., jnp.nan], [0., jnp.nan], [1., 2.]])
c = jnp.array([[[1, 1], [2, 2]], [[1, 1], [2, 2]], [[0, 1], [2, 2]]]); e = jnp.zeros((3, 0)); z = jnp.zeros((0, 2))
"""
    EXPRS = []
    flags = ["", ", return_index=True", ", return_inverse=True", ", return_counts=True",
             ", return_index=True, return_inverse=True, return_counts=True"]
    for x, axes in [("a", ["0", "1", "-1", "-2"]), ("f", ["0", "1"]), ("c", ["0", "1", "2", "-1"]),
                    ("e", ["0"]), ("z", ["0", "1"]), ("a.T", ["1"]), ("a.astype(bool)", ["0"])]:
        for ax in axes:
            for flag in flags:
                EXPRS.append(f"jnp.unique({x}, axis={ax}{flag})")
            EXPRS += [f"jnp.unique({x}, axis={ax}, size=6, return_counts=True, return_index=True)",
                      f"jnp.unique({x}, axis={ax}, size=2)",
                      f"jnp.unique({x}, axis={ax}, size=6, fill_value=7)",
                      f"jax.jit(lambda v: jnp.unique(v, axis={ax}, size=5, return_inverse=True))({x})"]
    EXPRS += [f"jnp.unique(f, axis=0, equal_nan=False{flag})" for flag in flags]
    EXPRS += [f"jnp.unique(a, axis={ax})" for ax in ("2", "-3", "(0, 0)", "1.5", "'a'", "None")]
    EXPRS += ["jax.jit(lambda v: jnp.unique(v, axis=0))(a)"]
    return SETUP, EXPRS


def lax_structural():
    SETUP = """
    a = jnp.arange(6.0).reshape(2, 3); v = jnp.arange(4.0); i = jnp.arange(4)
    """
    EXPRS = [
     "lax.reduce_sum(a, (2,))", "lax.reduce_sum(a, (0, 0))", "lax.reduce_sum(a, (-1,))", "lax.reduce_max(a, (1, 0))", "lax.reduce_sum(a, 1)", "lax.argmax(a, 2, 'int32')", "lax.argmax(a, 1, 'float32')", "lax.argmax(a, -1, 'int32')", "lax.argmin(a, 0, jnp.int8)",
     "lax.transpose(a, (0, 0))", "lax.transpose(a, (1,))", "lax.transpose(a, (1, 2))", "lax.transpose(a, (-1, 0))", "lax.transpose(a, [1, 0])",
     "lax.squeeze(a, (0,))", "lax.squeeze(jnp.ones((1, 2)), (0, 0))", "lax.squeeze(jnp.ones((1, 2)), (-2,))", "lax.squeeze(jnp.ones((1, 2)), (2,))", "lax.expand_dims(v, (0, 0))", "lax.expand_dims(v, (3,))", "lax.expand_dims(v, (-1,))", "lax.expand_dims(v, (-3,))",
     "lax.broadcast_in_dim(v, (4, 2), (0,))", "lax.broadcast_in_dim(v, (2, 4), (0,))", "lax.broadcast_in_dim(v, (2, 4), (1, 1))", "lax.broadcast_in_dim(v, (2, 4), ())", "lax.broadcast_in_dim(v, (4,), (1,))", "lax.broadcast_in_dim(a, (3, 2), (1, 0))", "lax.broadcast(v, (2,))", "lax.broadcast(v, (-1,))",
     "lax.reshape(a, (3, 2))", "lax.reshape(a, (4, 2))", "lax.reshape(a, (3, 2), (1, 0))", "lax.reshape(a, (3, 2), (0, 0))", "lax.reshape(a, (-1,))",
     "lax.rev(a, (2,))", "lax.rev(a, (0, 0))", "lax.rev(a, (-1,))",
     "lax.concatenate([a, a], 2)", "lax.concatenate([a, v], 0)", "lax.concatenate([], 0)", "lax.concatenate([a, a.astype('int32')], 0)", "lax.concatenate([a, a], -1)",
     "lax.select(jnp.array([True]), v, v)", "lax.select(True, v, v)", "lax.select(v > 1, v, i)", "lax.select_n(jnp.array(2), v, v)", "lax.select_n(i, v, v)", "lax.select_n(jnp.array([0, 1, 0, 1]), v, v)",
     "lax.clamp(0.0, v, 2.0)", "lax.clamp(jnp.zeros(3), v, 2.0)", "lax.clamp(0, v, 2)", "lax.clamp(2.0, v, 0.0)",
     "lax.cumsum(a, axis=2)", "lax.cumsum(a, axis=-1)", "lax.cummax(a, axis=1, reverse=True)", "lax.cumlogsumexp(i)",
     "lax.reduce_window(a, 0.0, lax.add, (1, 2), (1, 1), 'VALID')", "lax.reduce_window(a, 0.0, lax.add, (1,), (1, 1), 'VALID')", "lax.reduce_window(a, 0.0, lax.add, (1, 2), (0, 1), 'VALID')", "lax.reduce_window(a, 0.0, lax.add, (3, 2), (1, 1), 'VALID')", "lax.reduce_window(a, 0.0, lax.add, (1, 2), (1, 1), 'FOO')",
     "lax.top_k(a, 2)", "lax.top_k(a, 4)", "lax.sort(a, dimension=2)", "lax.sort((a, a), num_keys=2)",
     "lax.add(v, i)", "lax.add(v, 1)", "lax.add(v, jnp.ones(3))", "lax.add(1, 2)", "lax.shift_left(i, 40)", "lax.shift_left(i, -1)", "lax.shift_right_logical(i, 33)", "lax.div(i, 0)", "lax.rem(i, 0)", "lax.integer_pow(v, 1.5)", "lax.integer_pow(i, -1)", "lax.pow(i, 2)", "lax.pow(v, i)", "lax.exp(i)", "lax.sqrt(i)", "lax.abs(jnp.array([True]))", "lax.neg(jnp.array([True]))", "lax.bitwise_and(v, v)", "lax.population_count(v)", "lax.nextafter(i, i)",
     "lax.iota('int32', -1)", "lax.iota('int32', 2.5)", "lax.iota('bool', 2)", "lax.full((2,), jnp.ones(2))", "lax.full((-1,), 1.0)", "lax.full((2,), 1.0, dtype='foo')",
     "lax.dynamic_update_slice(v, jnp.ones(2), (3,))", "lax.dynamic_update_slice(v, jnp.ones(2), (-1,))", "lax.dynamic_slice(v, (jnp.array(3),), (2,))", "lax.dynamic_slice(v, (jnp.array([1]),), (2,))",
     "lax.reduce(v, 0.0, lax.add, (0,))", "lax.reduce(v, 0.0, lax.add, (1,))", "lax.reduce((v, v), (0.0, 0.0), lambda x, y: (x[0] + y[0], x[1] + y[1]), (0,))",
     "lax.cond(jnp.array(True), lambda x: x, lambda x: x + 1, v)", "lax.cond(True, lambda x: x, lambda x: x.astype('int32'), v)", "lax.cond(True, lambda x: x, lambda x: x[:2], v)", "lax.cond(0, lambda: 1.0, lambda: 2.0)", "lax.cond(v, lambda: 1.0, lambda: 2.0)", "lax.cond(True, lambda: 1.0)", "lax.switch(jnp.array(5), [lambda: 1.0, lambda: 2.0])", "lax.switch(jnp.array(-3), [lambda: 1.0, lambda: 2.0])", "lax.switch(2.0, [lambda: 1.0, lambda: 2.0])",
     "lax.fori_loop(0, 3.5, lambda i, c: c + 1, 0)", "lax.fori_loop(0, 3, lambda i, c: c + 1.5, 0)", "lax.fori_loop(jnp.int32(0), jnp.int64(3) if False else 3, lambda i, c: c + i, 0)", "lax.fori_loop(5, 0, lambda i, c: c + 1, 0)", "lax.while_loop(lambda c: c < 3, lambda c: (c, c), 0)",
     "lax.associative_scan(jnp.add, v)", "lax.associative_scan(jnp.add, v, axis=1)", "lax.associative_scan(lambda x, y: x, [v, i])", "lax.associative_scan(jnp.add, v, reverse=True)",
    ]
    return textwrap.dedent(SETUP), EXPRS


# left out, by table (see the module docstring); each entry: JAX's error and laminax's
JAX_ACCIDENTS = {
    # axis out of range: JAX's IndexError from a tuple lookup in these reductions; laminax
    # raises ValueError as jnp.sum and NumPy (AxisError) do. A named axis ('a'): JAX's
    # collective NameError / NotImplementedError; laminax TypeError (no named axes in jnp).
    # A list axis: JAX's "non-hashable static argument" ValueError; laminax reads the list.
    "axes": {
        *[f"jnp.{fn}(a, axis={ax})" for fn in ("mean", "argmax", "argmin", "std", "var")
          for ax in ("2", "-3", "(0, 2)")],
        *[f"jnp.{fn}(a, axis='a')" for fn in ("sum", "mean", "max", "min", "prod", "std", "var",
                                              "any", "all", "nanmax", "ptp", "count_nonzero")],
        *[f"jnp.{fn}(a, axis=[0, 1])" for fn in ("cumsum", "sort", "argsort", "nanmax", "median",
                                                 "count_nonzero", "cumprod", "diff")],
        "jnp.trapezoid(a, axis=(0, 0))", "jnp.split(a, 1, axis=2)", "jnp.split(a, 1, axis=-3)",
    },
    # ZeroDivisionError (reshape to a 0 dimension with -1, 0 sections), MLIRError (negative
    # sizes reaching the compiler), RuntimeError for an unknown padding name, IndexError from
    # categorical's shape lookup, UnexpectedTracerError for a has_aux function returning a
    # bare output; jnp.broadcast_shapes with -1 (JAX TypeError, laminax ValueError as
    # broadcast_to); reshape order='A' (JAX NotImplementedError; laminax reads it as NumPy
    # does for a C-contiguous array, 'C')
    "shapes_dtypes_control": {
        "a.reshape(0, -1)", "jnp.reshape(a, (3, 2), order='A')", "jnp.split(v, 0)",
        "jnp.array_split(v, 0)", "jnp.broadcast_shapes((2, 3), (-1,))", "jnp.tile(a, -1)",
        "lax.conv(jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 2, 2)), (1, 1), 'BAD')",
        "jax.random.normal(k, (2, -1))", "jax.random.split(k, -1)",
        "jax.random.categorical(k, a, axis=2)", "jax.jacfwd(lambda x: x, has_aux=True)(v)",
        "jax.jvp(lambda x: x, (v,), (v,), has_aux=True)",
    },
    # lax.slice/dynamic_slice with too few indices (JAX zips them short and answers, or fails
    # in safe_map), a zero stride (ZeroDivisionError), IndexError from internal lookups
    # (dynamic_slice_in_dim, standardize, glu, histogram bins=-1), glu's AssertionError,
    # diagonal(axis1 == axis2)'s transpose TypeError; clip's removed a_min keyword (laminax
    # still reads it); histogram over a reversed range (NumPy raises; JAX's count is an
    # artifact of decreasing edges)
    "slicing_linalg_misc": {
        "lax.slice(a, (0, 0), (1,))", "lax.slice(a, (0, 0), (2, 3), (0, 1))",
        "lax.dynamic_slice(a, (0, 0), (1,))", "lax.dynamic_slice_in_dim(a, 1, 2, axis=2)",
        "jnp.diagonal(a, axis1=0, axis2=0)", "jax.nn.standardize(a, axis=2)",
        "jax.nn.glu(v, axis=1)", "jax.nn.glu(jnp.ones(3))", "jnp.clip(v, a_min=1, min=1)",
        "jnp.histogram(v, bins=-1)", "jnp.histogram(v, bins=2, range=(3, 1))",
    },
    # jnp.cross of mismatched vectors: JAX's TypeError from an inner multiply, laminax the
    # ValueError of its shape check
    "broadcast_functions": {"jnp.cross(m23, m32)"},
    # repeated indices with a float divisor on an int array: JAX multiplies the divisors in
    # float before casting (2.5 * 2.5 -> 6), laminax casts each first (2 * 2)
    "at_divide_power": {"m.at[jnp.array([0, 0])].divide(2.5)"},
    # unique slices of an empty array or of empty slices with `size`: JAX ignores the size
    # there (one slice, or an error for no rows); laminax pads to `size` as everywhere else
    "unique_axis": {
        *[f"jnp.unique({x}, axis={ax}, size=6, return_counts=True, return_index=True)"
          for x, ax in (("e", 0), ("z", 0), ("z", 1))],
        *[f"jnp.unique({x}, axis={ax}, size=2)" for x, ax in (("e", 0), ("z", 0), ("z", 1))],
        *[f"jax.jit(lambda v: jnp.unique(v, axis={ax}, size=5, return_inverse=True))({x})"
          for x, ax in (("e", 0), ("z", 0), ("z", 1))],
    },
    # lax.reshape to another size (JAX's ValueError comes from the MLIR verifier; laminax's
    # shape rule raises TypeError, as JAX's own rule does for reshape's other mistakes),
    # cumlogsumexp of ints (JAX: OverflowError converting -inf), an unknown padding name
    # (JAX: RuntimeError). NOT matched yet: reduce_window with a window larger than the
    # padded operand gives an empty result in JAX, laminax raises TypeError.
    "lax_structural": {
        "lax.reshape(a, (4, 2))", "lax.cumlogsumexp(i)",
        "lax.reduce_window(a, 0.0, lax.add, (3, 2), (1, 1), 'VALID')",
        "lax.reduce_window(a, 0.0, lax.add, (1, 2), (1, 1), 'FOO')",
    },
    # matrix_rank of 0x0 (JAX's empty-reduction ValueError; laminax 0, as NumPy), lstsq of a
    # scalar or a stack (JAX IndexError / ValueError; laminax TypeError, 2-d only), vecdot
    # of scalars (JAX IndexError)
    "linalg_shapes": {
        "jnp.linalg.matrix_rank(jnp.ones((0, 0)))", "jnp.linalg.lstsq(s, v)",
        "jnp.linalg.lstsq(jnp.ones((2, 2, 3)), v)", "jnp.linalg.vecdot(s, s)",
    },
}

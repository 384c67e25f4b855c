"""Typed PRNG keys (`random.key`) as arrays of the extended dtype `key<fry>`, against real JAX
0.10.2: one pytree leaf per key array, avals and dtype predicates, key data through jit, vmap,
scan, cond and while, the structural operations on keys, and the errors JAX raises."""

import laminax as jax
import laminax.numpy as jnp
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax import lax

# The same program under both libraries (`jax`, `jnp`, `lax`, `np` in scope); `result` holds
# only plain data: key data as uint32 arrays, avals and dtypes as strings.
PROGRAM = """
import pickle
data = jax.random.key_data
k = jax.random.key(42)
ks = jax.random.split(k, 4)
tree = {'k': k, 'x': jnp.zeros(2), 'ks': ks}
step = lambda c, _: (jax.random.split(c)[0], jax.random.uniform(c))
result = {
    'dtype': str(k.dtype), 'typeof': str(jax.typeof(ks)), 'itemsize': k.dtype.itemsize,
    'leaves': len(jax.tree.leaves(tree)),
    'leaf_dtypes': sorted(str(d) for d in jax.tree.leaves(jax.tree.map(lambda t: t.dtype, tree))),
    'is_array': isinstance(k, jax.Array),
    'prng_key': bool(jnp.issubdtype(k.dtype, jax.dtypes.prng_key)),
    'extended': bool(jnp.issubdtype(ks.dtype, jax.dtypes.extended)),
    'not_float': bool(jnp.issubdtype(k.dtype, jnp.floating)),
    'shape': (ks.shape, ks.ndim, ks.size, len(ks)),
    'impl': str(jax.random.key_impl(k)),
    'split': data(ks),
    'fold_in': data(jax.random.fold_in(k, 7)),
    'wrap': data(jax.random.wrap_key_data(np.array([[0, 1], [2, 3]], np.uint32))),
    'jit_identity': data(jax.jit(lambda k: k)(ks)),
    'jit_split': data(jax.jit(lambda k: jax.random.split(k, 3))(k)),
    'jit_wrap': data(jax.jit(jax.random.wrap_key_data)(np.array([5, 6], np.uint32))),
    'jit_index': data(jax.jit(lambda ks, i: ks[i])(ks, 2)),
    'jaxpr_avals': str(jax.make_jaxpr(lambda k: (k, k[None]))(k).out_avals),
    'vmap_normal': np.asarray(jax.vmap(jax.random.normal)(ks)),
    'vmap_split': data(jax.vmap(lambda k: jax.random.split(k))(ks)),
    'jit_vmap_fold_in': data(jax.jit(jax.vmap(lambda k: jax.random.fold_in(k, 3)))(ks)),
    'scan': [data(c) if i == 0 else np.asarray(c) for i, c in enumerate(
        lax.scan(step, k, None, length=3))],
    'vmap_scan': np.asarray(jax.vmap(lambda k: lax.scan(step, k, None, length=2)[1])(ks)),
    'cond': data(lax.cond(False, lambda k: k, lambda k: jax.random.split(k)[1], k)),
    'vmap_cond': data(jax.vmap(lambda p, k: lax.cond(p, lambda k: k,
                                                      lambda k: jax.random.fold_in(k, 1), k))(
        jnp.array([True, False, True, False]), ks)),
    'while': data(lax.while_loop(lambda c: c[0] < 3,
                                 lambda c: (c[0] + 1, jax.random.split(c[1])[0]), (0, k))[1]),
    'grad': float(jax.grad(lambda x, k: x * jax.random.normal(k))(2.0, k)),
    'index': [data(ks[1]), data(ks[::-1]), data(ks[np.array([3, 0])]), data(ks[1:3])],
    'reshape': data(ks.reshape(2, 2).T),
    'broadcast': data(jnp.broadcast_to(k, (2, 3))),
    'concatenate': data(jnp.concatenate([ks, ks[:1]])),
    'stack': data(jnp.stack([k, ks[0]])),
    'where': data(jnp.where(jnp.array([True, False, True, False]), ks, ks[::-1])),
    'select': data(lax.select(jnp.array([True, False, True, False]), ks, ks[::-1])),
    'equal': [np.asarray(ks == ks[::-1]), np.asarray(ks != ks[0]),
              bool(jnp.array_equal(ks, ks)), bool(jnp.array_equal(ks, ks[::-1]))],
    'device_put': data(jax.device_put(ks)),
    'scatter': [data(ks.at[1].set(k)),
                data(jax.jit(lambda ks, k: ks.at[jnp.array([0, 2])].set(k))(ks, k)),
                data(jax.vmap(lambda ks, k: ks.at[0].set(k))(jnp.stack([ks, ks]), ks[:2]))],
    'dynamic': [data(lax.dynamic_slice(ks, (jnp.int32(1),), (2,))),
                data(lax.dynamic_update_slice(ks, ks[:2], (jnp.int32(2),))),
                data(jax.jit(lambda ks, i: lax.dynamic_index_in_dim(ks, i, keepdims=False))(
                    ks, 3))],
    'misc': [data(jnp.asarray(k)), data(jnp.array(ks)), data(jax.device_get(ks)),
             data(pickle.loads(pickle.dumps(ks))), data(ks.copy()),
             data(jax.lax.stop_gradient(ks)), data(jnp.take(ks, jnp.array([3, 0]))),
             str(jax.eval_shape(lambda k: jax.random.split(k), k)),
             np.asarray(jax.jit(jax.random.normal).lower(
                 jax.ShapeDtypeStruct((), k.dtype)).compile()(k)),
             float(jax.grad(jax.checkpoint(lambda x, k: x * jax.random.normal(k)))(1.0, k)),
             [data(x) for x in ks[:2]], data(jnp.zeros_like(ks)),
             data(jax.jit(jnp.zeros_like)(k)), [ks.is_deleted(), ks.committed],
             [data(x) for x in jax.block_until_ready([k, ks])]],
    'closed_over': [data(jax.jit(lambda x: lax.cond(x > 0, lambda: jax.random.split(k)[0],
                                                     lambda: ks[1]))(1.0)),
                    data(lax.cond(True, lambda: jax.random.split(k)[1], lambda: k)),
                    np.asarray(lax.scan(lambda c, _: (c, data(ks[0])), 0, None, length=2)[1]),
                    data(jax.jit(lambda: ks)())],
    'jit_repeated': [type(jax.jit(jax.random.key)(3)).__name__ == type(k).__name__
                     for _ in range(3)],
}
errors = {}
for name, fn in [('add', lambda: k + 1), ('asarray', lambda: np.asarray(k)),
                 ('mul', lambda: ks * ks), ('neg', lambda: -k)]:
    try:
        fn()
        errors[name] = None
    except Exception as e:
        errors[name] = type(e).__name__
result['errors'] = errors
"""


def _compare(got, expected, where="result"):
    if isinstance(expected, dict):
        assert sorted(got) == sorted(expected), where
        for name in expected:
            _compare(got[name], expected[name], f"{where}[{name!r}]")
    elif isinstance(expected, list | tuple) and not isinstance(expected, str):
        assert len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            _compare(g, e, f"{where}[{i}]")
    elif isinstance(expected, np.ndarray):
        got = np.asarray(got)
        assert got.dtype == expected.dtype and got.shape == expected.shape, where
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-6, err_msg=where)
        else:
            np.testing.assert_array_equal(got, expected, err_msg=where)
    elif isinstance(expected, float):
        assert got == pytest.approx(expected, rel=2e-5), where
    else:
        assert got == expected, where


def _run_laminax() -> dict:
    scope = {"jax": jax, "jnp": jnp, "lax": lax, "np": np}
    exec(PROGRAM, scope)  # noqa: S102 (the shared test program)
    return scope["result"]


@requires_jax
def test_typed_keys_match_jax():
    expected = run_jax("from jax import lax\n" + PROGRAM)
    _compare(_run_laminax(), expected)


def test_key_is_one_leaf_with_float0_tangent():
    k = jax.random.key(0)
    assert [type(x) for x in jax.tree.leaves([k, (k,)])] == [type(k)] * 2
    out, tangent = jax.jvp(lambda x, k: (x, k), (1.0, k), (1.0, np.zeros((), jax.dtypes.float0)))
    assert str(out[1].dtype) == "key<fry>" and tangent[1].dtype == jax.dtypes.float0
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(k)


SHARDED = """
NamedSharding, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
data = jax.random.key_data
mesh = jax.make_mesh((8,), ('x',))
s = NamedSharding(mesh, P('x'))
ks = jax.random.split(jax.random.key(0), 8)
placed = jax.device_put(ks, s)
result = [data(placed), str(placed.sharding.spec),
          np.asarray(jax.jit(jax.vmap(jax.random.normal), in_shardings=s)(ks)),
          data(jax.jit(lambda k: k, out_shardings=s)(ks)),
          data(jax.jit(jax.vmap(lambda k: jax.random.fold_in(k, 1)))(placed))]
"""


@requires_jax
def test_sharded_keys_match_jax():
    # the key words are a replicated trailing dimension of the data: the keys split as arrays
    expected = run_jax(SHARDED, devices=8)
    scope = {"jax": jax, "jnp": jnp, "np": np}
    exec(SHARDED, scope)  # noqa: S102
    _compare(scope["result"], expected)

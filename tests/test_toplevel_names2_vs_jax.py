"""The rest of issue 17's top-level names against real JAX 0.10.2: `jax.ops`' segment
reductions, `jax.ds` indexing, `jax.fwd_and_bwd`, `jax.memory.Space`, `jax.version`, and the
config options `allow_f16_reductions`, `legacy_prng_key`, `enable_custom_prng` (and the ones
laminax only records). Each snippet runs unchanged under both, with `jax` bound to laminax here."""

from __future__ import annotations

import warnings

import laminax
import laminax.numpy as lnp
import laminax.experimental.mesh_utils  # noqa: F401  (imported by the JAX side too)
import laminax.ops  # noqa: F401
import numpy as np
import pytest
from jaxref import requires_jax, run_jax


def run_here(source: str, **inputs):
    scope = {"jax": laminax, "jnp": lnp, "np": np, "warnings": warnings, **inputs}
    exec(source, scope)
    return scope["result"]


def both(source: str, **inputs):
    return run_here(source, **inputs), run_jax("import warnings, jax.ops, jax.experimental.mesh_utils\n" + source, **inputs)


def assert_same(ours, theirs):
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    elif isinstance(theirs, dict):
        assert sorted(ours) == sorted(theirs)
        for k in theirs:
            assert_same(ours[k], theirs[k])
    elif isinstance(theirs, np.ndarray):
        ours = np.asarray(ours)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours, theirs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)
    else:
        assert ours == theirs


SEGMENTS = """
d = np.arange(12, dtype=np.float32).reshape(6, 2)
ids = np.array([0, 2, 2, -1, 5, 1])
result = []
for f in [jax.ops.segment_sum, jax.ops.segment_prod, jax.ops.segment_max, jax.ops.segment_min]:
    result += [f(d, ids, 4), f(d, ids, 4, mode='clip'), f(d, ids, 4, bucket_size=2),
               f(np.arange(6), np.array([0, 0, 1, 1, 1, 3])),
               f(d, np.array([0, 0, 1, 1, 2, 2]), 3, indices_are_sorted=True)]
result.append(jax.jit(jax.ops.segment_sum, static_argnums=2)(d, ids, 3))
result.append(jax.grad(lambda x: jax.ops.segment_max(x, ids, 3).sum())(d[:, 0]))
result.append(jax.vmap(lambda x: jax.ops.segment_sum(x, ids, 3))(d.T))
for bad in [lambda: jax.jit(lambda i: jax.ops.segment_sum(d, i))(ids),
            lambda: jax.ops.segment_sum(d, ids, -1)]:
    try:
        bad()
    except Exception as e:
        result.append(type(e).__name__)
"""


@requires_jax
def test_segment_reductions_match_jax():
    assert_same(*both(SEGMENTS))


DSLICE = """
x = jnp.arange(10)
y = jnp.arange(20).reshape(4, 5)
result = [str(jax.ds(1, 3)), str(jax.ds(2)), str(jax.ds(None, 3))]
for s in [jax.ds(8, 4), jax.ds(1, 3, 2), jax.ds(jnp.int32(-1), 2), jax.ds(-1, 2),
          jax.ds(jnp.int32(8), 3), jax.ds(5, 3, 3), jax.ds(jnp.int32(2), 3, 2), jax.ds(3),
          jax.ds(jnp.int32(-3), 3, 2)]:
    result.append(x[s])
result += [y[jax.ds(1, 2), 0], y[0, jax.ds(jnp.int32(3), 2)], y[..., jax.ds(1, 2)],
           y[jax.ds(1, 2), jnp.array([0, 2])], y[None, jax.ds(1, 2, 2), ..., jax.ds(0, 2)]]
result += [jax.jit(lambda x, i: x[jax.ds(i, 2, 2)])(x, 3),
           jax.jit(lambda x, i: x[jax.ds(i, 2)])(x, 9),
           jax.grad(lambda x, i: x[jax.ds(i, 2)].sum())(jnp.arange(5.0), 1),
           jax.vmap(lambda i: x[jax.ds(i, 2)])(jnp.arange(3))]
result.append(str(jax.make_jaxpr(lambda x, i: x[jax.ds(i, 2)])(x, 3)))
for bad in [lambda: jax.ds(1, 2, jnp.int32(1)), lambda: jax.ds(1, 2, -1)]:
    try:
        bad()
    except Exception as e:
        result.append((type(e).__name__, str(e)))
"""


@requires_jax
def test_ds_indexing_matches_jax():
    assert_same(*both(DSLICE))


FWD_AND_BWD = """
f = lambda x, y: (jnp.sin(x) * y).sum()
fwd, bwd = jax.fwd_and_bwd(f, argnums=(0, 1))
result = []
for x, y, ct in [(jnp.arange(3.0), 2.0, 1.0), (jnp.arange(3.0) + 1, 3.0, 2.0)]:
    out, res = fwd(x, y)
    result += [out, list(bwd(res, ct))]
fwd, bwd = jax.fwd_and_bwd(f, argnums=0, jitted=False)
out, res = fwd(jnp.arange(3.0), 2.0)
result += [out, bwd(res, 1.0)]
g = lambda x: ({'a': x ** 2, 'b': jnp.cos(x)}, x.sum())
fwd, bwd = jax.fwd_and_bwd(g, argnums=0, has_aux=True)
out, res, aux = fwd(jnp.arange(3.0))
result += [out, aux, bwd(res, {'a': jnp.ones(3), 'b': jnp.ones(3)})]
result.append(len(jax.tree_util.tree_leaves(res)) > 0)
"""


@requires_jax
def test_fwd_and_bwd_matches_jax():
    assert_same(*both(FWD_AND_BWD))


def test_fwd_and_bwd_compiles_the_backward_once():
    fwd, bwd = laminax.fwd_and_bwd(lambda x, w: lnp.tanh(x @ w).sum(), argnums=1)
    x = np.ones((2, 3), np.float32)
    for step in range(3):
        _, res = fwd(x, np.full((3, 2), step, np.float32))
        bwd(res, 1.0)
    assert bwd._cache_size() == 1 and fwd._cache_size() == 1


NAMESPACES = """
result = [[repr(s) for s in jax.memory.Space], repr(jax.memory.Space.Host),
          jax.memory.Space.Device == jax.memory.Space.Device, jax.version.__version__,
          jax.version._version, isinstance(jax.lib.__version__, str),
          type(jax.experimental).__name__]
"""


@requires_jax
def test_memory_version_lib_experimental_match_jax():
    assert_same(*both(NAMESPACES))


OPTIONS = """
result = []
names = ['jax_allow_f16_reductions', 'jax_legacy_prng_key', 'jax_enable_custom_prng',
         'jax2tf_associative_scan_reductions', 'jax_remove_size_one_mesh_axis_from_type',
         'jax_auto_pcast']
result.append([str(getattr(jax.config, n)) for n in names])
with jax.allow_f16_reductions(False):
    result.append(jax.config.jax_allow_f16_reductions)
    result.append(jnp.sum(jnp.ones(3, jnp.float16)))
    result.append(jnp.sum(jnp.ones((3, 1), jnp.float16), axis=1))
    try:
        jax.lax.reduce_sum_p.bind(jnp.ones(3, jnp.bfloat16), axes=(0,), out_sharding=None)
    except ValueError as e:
        result.append(str(e))
for opt in [jax.jax2tf_associative_scan_reductions, jax.remove_size_one_mesh_axis_from_type,
            jax.auto_pcast]:
    with opt(not opt.value):
        result.append(opt.value)
    result.append(opt.value)
with jax.enable_custom_prng(True):
    k = jax.random.PRNGKey(0)
    result.append(str(k.dtype))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = jax.random.split(jnp.array([0, 0], jnp.uint32))
        result += [str(s.dtype), [x.category.__name__ for x in w]]
for mode in ['allow', 'warn', 'error']:
    with jax.legacy_prng_key(mode):
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                result.append(jax.random.uniform(jax.random.PRNGKey(0)))
                result.append([str(x.message) for x in w])
        except ValueError as e:
            result.append(str(e))
        result.append(jax.random.uniform(jax.random.key(0)))
try:
    jax.config.update('jax_legacy_prng_key', 'bogus')
except ValueError as e:
    result.append('ValueError')
"""


@requires_jax
def test_config_options_match_jax():
    assert_same(*both(OPTIONS))


@pytest.mark.parametrize("name,value", [("jax_allow_f16_reductions", False),
                                        ("jax_legacy_prng_key", "error"),
                                        ("jax_auto_pcast", False)])
def test_options_set_by_config_update(name, value):
    before = getattr(laminax.config, name)
    laminax.config.update(name, value)
    try:
        assert getattr(laminax.config, name) == value
    finally:
        laminax.config.update(name, before)


TOTAL_ORDER = """
lax = jax.lax
x = jnp.array([-0.0, 0.0, jnp.nan, -jnp.nan, 1.0, -jnp.inf, jnp.inf, -jnp.nan], jnp.float32)
y = jnp.array([0.0, -0.0, jnp.nan, jnp.nan, 1.0, 2.0, jnp.nan, -jnp.inf], jnp.float32)
result = []
for p in [lax.eq_to_p, lax.le_to_p, lax.lt_to_p]:
    result += [p.bind(x, y), jax.jit(p.bind)(x, y),
               p.bind(x.astype(jnp.bfloat16), y.astype(jnp.bfloat16)),
               p.bind(jnp.arange(3), jnp.array([0, 2, 2])),
               p.bind(jnp.array([True, False]), jnp.array([False, False])),
               jax.jit(p.bind)(jnp.arange(3, dtype=jnp.uint8), jnp.array([0, 2, 2], jnp.uint8)),
               jax.vmap(p.bind)(x, y), p.bind(x, jnp.float32(0.0))]
result.append(str(jax.make_jaxpr(lambda a, b: lax.lt_to_p.bind(a, b))(x, y)))
result.append(jax.grad(lambda a: jnp.sum(jnp.where(lax.lt_to_p.bind(a, 0.5), a, 0.0)))(y[:2]))
for bad in [lambda: lax.lt_to_p.bind(jnp.ones(2, jnp.complex64), jnp.ones(2, jnp.complex64)),
            lambda: lax.le_to_p.bind(jnp.ones(2), jnp.ones(2, jnp.int32))]:
    try:
        bad()
    except TypeError as e:
        result.append(str(e)[:60])
"""


@requires_jax
def test_total_order_comparisons_match_jax():
    assert_same(*both(TOTAL_ORDER))


DCE_SINK = """
lax = jax.lax
x = jnp.arange(3.0)
f = lambda a: (lax.dce_sink(a), jnp.sum(a * 2))[1]
result = [str(jax.make_jaxpr(g)(x)) for g in [
    lambda a: lax.dce_sink(a), jax.jit(lambda a: lax.dce_sink(a)), f, jax.grad(f),
    lambda a: jax.jvp(f, (a,), (a,)),
    lambda a: jax.lax.cond(True, lambda: lax.dce_sink(a), lambda: None),
    lambda a: lax.dce_sink((a, 2 * a, 3))]]
result += [jax.jit(lambda a: lax.dce_sink(a, prevent_mlir_dce=True))(x) is None,
           jax.jit(lambda a: lax.dce_sink(a))(x) is None, lax.dce_sink(x) is None,
           jax.grad(f)(x), jax.vmap(f)(jnp.ones((2, 3))),
           len(jax.make_jaxpr(jax.vmap(f))(jnp.ones((2, 3))).eqns),
           lax.dce_sink_p.bind(x, prevent_mlir_dce=True),
           "custom_call @dce_sink" in jax.jit(
               lambda a: lax.dce_sink(a, prevent_mlir_dce=True)).lower(x).as_text()]
"""


@requires_jax
def test_dce_sink_matches_jax():
    assert_same(*both(DCE_SINK))


DEVICE_PUT_P = """
x = jnp.arange(3.0)
p = jax.lax.device_put_p
result = [str(p), p.multiple_results,
          str(jax.make_jaxpr(lambda a: jax.device_put(a, jax.devices()[0]))(x)),
          str(jax.make_jaxpr(lambda a: jax.device_put(a))(x)),
          p.bind(x, devices=(None,), srcs=(None,),
                 copy_semantics=(jax.make_jaxpr(jax.device_put)(x).eqns[0].params[
                     'copy_semantics'][0],))]
"""


@requires_jax
def test_device_put_p_matches_jax():
    assert_same(*both(DEVICE_PUT_P))


SCALED_DOT = """
lax = jax.lax
lhs = jnp.arange(24.0, dtype=jnp.float32).reshape(2, 3, 4).astype(jnp.float8_e4m3fn)
rhs = (jnp.arange(40.0, dtype=jnp.float32).reshape(2, 4, 5) / 10).astype(jnp.float8_e4m3fn)
ls = jnp.full((2, 3, 2), 2.0, jnp.float32).astype(jnp.float8_e8m0fnu)
rs = (jnp.arange(20.0, dtype=jnp.float32).reshape(2, 2, 5) / 4).astype(jnp.float8_e8m0fnu)
f32 = lambda a, b, c, d: lax.scaled_dot(a, b, lhs_scale=c, rhs_scale=d,
                                        preferred_element_type=jnp.float32)
result = [lax.scaled_dot(lhs, rhs, lhs_scale=ls, rhs_scale=rs).astype(np.float32),
          str(jax.make_jaxpr(f32)(lhs, rhs, ls, rs)),
          lax.scaled_dot(lhs, rhs).astype(np.float32),
          jax.jit(lax.scaled_dot)(lhs[0], rhs[0]).astype(np.float32),
          jax.vmap(f32)(lhs, rhs, ls, rs),
          lax.scaled_dot(lhs.astype(jnp.float32), rhs.astype(jnp.float32),
                         dimension_numbers=(((2,), (1,)), ((0,), (0,))),
                         preferred_element_type=jnp.float32)]
text = jax.jit(lax.scaled_dot).lower(lhs, rhs).as_text()
result += ['stablehlo.composite "xla.scaled_dot"' in text, "preferred_element_type = bf16" in text]
for bad in [lambda: lax.scaled_dot(lhs[0, 0], rhs[0, 0]),
            lambda: lax.scaled_dot(lhs, rhs, lhs_scale=lhs),
            lambda: lax.scaled_dot(lhs, rhs, lhs_scale=ls[:, :2, :1]),
            lambda: lax.scaled_dot(lhs, rhs[:, :3]),
            lambda: jax.grad(lambda x: f32(x, rhs[0], None, None).sum())(jnp.ones((3, 4)))]:
    try:
        bad()
    except Exception as e:
        result.append((type(e).__name__, str(e)[:50]))
"""


@requires_jax
def test_scaled_dot_matches_jax():
    assert_same(*both(SCALED_DOT))


SELECT_AND_SCATTER = """
result = []
p = jax.lax.select_and_scatter_p
sel = jax.make_jaxpr(lambda a, b: a >= b)(np.float32(0), np.float32(0))
sca = jax.make_jaxpr(lambda a, b: a + b)(np.float32(0), np.float32(0))
x = jnp.array([[1., 5., 2., 0.], [3., 4., 8., 1.], [7., 0., 6., 9.]], jnp.float32)
src = jnp.arange(1., 7.).reshape(3, 2).astype(jnp.float32)
kw = dict(select_jaxpr=sel.jaxpr, select_consts=(), scatter_jaxpr=sca.jaxpr, scatter_consts=(), window_dimensions=(2, 2), window_strides=(1, 2), padding=((1, 0), (0, 0)))
result.append(p.bind(x, src, np.float32(0), **kw))
result.append(jax.jit(lambda *a: p.bind(*a, **kw))(x, src, np.float32(0.5)))
sel2 = jax.make_jaxpr(lambda a, b: a < b)(np.float32(0), np.float32(0))
sca2 = jax.make_jaxpr(lambda a, b: jnp.maximum(a, b) * 2)(np.float32(0), np.float32(0))
result.append(p.bind(x, src, np.float32(1), **{**kw, 'select_jaxpr': sel2.jaxpr, 'scatter_jaxpr': sca2.jaxpr}))
result.append(jax.make_jaxpr(lambda *a: p.bind(*a, **kw))(x, src, np.float32(0)).eqns[0].primitive.name)
try: p.bind(x, src, np.float32(0), **{**kw, 'window_strides': (1,)})
except Exception as e: result.append((type(e).__name__, str(e)))
"""


@requires_jax
def test_select_and_scatter_p_matches_jax():
    assert_same(*both(SELECT_AND_SCATTER))


def test_select_and_scatter_reference_agrees_with_the_compiled_op():
    # the NumPy reference (core without an executor) against the lowering checked above
    from laminax_core._interpreters.eval import reference_rules

    scope = {"jax": laminax, "jnp": lnp, "np": np}
    exec(SELECT_AND_SCATTER, scope)
    p, kw, x, src = scope["p"], scope["kw"], scope["x"], scope["src"]
    ours = reference_rules[p](np.asarray(x), np.asarray(src), np.float32(0), **kw)
    np.testing.assert_array_equal(ours, np.asarray(p.bind(x, src, np.float32(0), **kw)))


NARROW_DTYPES = """
result = []
for t in [jnp.float6_e2m3fn, jnp.float6_e3m2fn, jnp.int1, jnp.uint1]:
    floating = bool(jnp.issubdtype(t, jnp.floating))
    info = jnp.finfo(t).max if floating else jnp.iinfo(t).max
    result += [t.__name__, str(t.dtype), str(jnp.dtype(t)), floating, float(info),
               str(jax.eval_shape(lambda: jnp.zeros(3, t)).dtype),
               isinstance(np.zeros(2, t.dtype)[0], t)]
    try:
        t(1.5)  # XLA's CPU runtime has none of these types
    except Exception as e:
        result.append(type(e).__name__)
result += [jnp.object_ is np.object_, str(jax.dtypes.canonicalize_dtype(jnp.int1))]
try:
    jnp.array([1], jnp.object_)
except TypeError:
    result.append("TypeError")
"""


@requires_jax
def test_narrow_dtypes_and_object_match_jax():
    assert_same(*both(NARROW_DTYPES))


STAGES = """
f = jax.jit(lambda x, y, z=1.0: x + y * z, donate_argnums=1)
args = (jnp.ones(3), 2.0)
result = []
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the donated scalar has no output to alias
    stages = [f.trace(*args, z=jnp.float32(3)), f.lower(*args, z=jnp.float32(3)),
              f.lower(*args, z=jnp.float32(3)).compile()]
for stage in stages:
    info = stage.args_info
    leaves = jax.tree_util.tree_leaves(info)
    result += [type(leaves[0]).__name__, [(l.shape, str(l.dtype), l.donated) for l in leaves],
               str(jax.tree_util.tree_structure(info)), stage.donate_argnums,
               str(jax.tree_util.tree_map(str, stage.in_avals))]
result += [isinstance(f, jax.stages.Wrapped), isinstance(lambda x: x, jax.stages.Wrapped),
           jax.stages.CompilerOptions.__origin__ is dict]
a = jax.stages.ArgInfo(jax.ShapeDtypeStruct((2,), jnp.float32), False)
result += [a.shape, str(a.dtype), a.donated]
try:
    jax.stages.ArgInfo(object(), True).shape
except TypeError:
    result.append("TypeError")
"""


@requires_jax
def test_stages_names_match_jax():
    assert_same(*both(STAGES))


MESH_HANDLERS = """
mesh_utils = jax.experimental.mesh_utils
registry = mesh_utils.device_kind_handler_dict
kind = jax.devices()[-1].device_kind
calls = []

def handler(shape, devices, contiguous_submeshes):
    calls.append((tuple(shape), len(devices), contiguous_submeshes))
    return None if shape == (1,) else np.array(devices[::-1], dtype=object).reshape(shape)

result = [isinstance(registry, dict), kind in registry]
registry[kind] = handler
try:
    one = jax.devices()[:1]
    mesh = mesh_utils.create_device_mesh((1, 1), one)
    result.append([d.id for d in mesh.flat])
    result.append(mesh_utils.create_device_mesh((1,), one, contiguous_submeshes=True).shape)
finally:
    del registry[kind]
result.append(calls)
"""


@requires_jax
def test_mesh_utils_device_kind_handlers_match_jax():
    assert_same(*both(MESH_HANDLERS))


LINEAR_CALL = """
from functools import partial
linear_call = jax.custom_derivatives.linear_call
f = lambda r, x: x / r
t = lambda r, ct: ct / r

def div_add(x, denom):
    return x + linear_call(f, t, denom, x)

def transpose(fn, x_example):
    return lambda y: jax.linear_transpose(fn, x_example)(y)[0]

def custom_id(x):
    return linear_call(lambda _, x: x, lambda _, t: 7.0, (), x)

g = lambda r, xy: {'s': r['a'] * xy[0] + xy[1], 'd': xy[0] - xy[1] * r['b']}
gt = lambda r, ct: (r['a'] * ct['s'] + ct['d'], ct['s'] - r['b'] * ct['d'] + 100.0)
res = {'a': jnp.float32(2), 'b': jnp.float32(3)}
xy = (jnp.arange(3.0), jnp.ones(3))
jaxpr = jax.make_jaxpr(lambda x: linear_call(f, t, 2.0, x))(3.0)
result = [div_add(9.0, 3.0), transpose(partial(div_add, denom=3.0), 1.0)(18.0),
          custom_id(1.0), transpose(custom_id, 1.0)(1.0),
          transpose(transpose(custom_id, 1.0), 1.0)(1.0),
          jax.grad(lambda x: custom_id(x) * 2)(3.0),
          jax.jit(jax.grad(lambda x: custom_id(x) * 2))(3.0),
          [float(v) for v in jax.jvp(custom_id, (1.0,), (5.0,))],
          linear_call(g, gt, res, xy),
          jax.vjp(lambda xy: linear_call(g, gt, res, xy), xy)[1](
              {'s': jnp.ones(3), 'd': jnp.full(3, 2.0)}),
          jax.jit(lambda r, xy: linear_call(g, gt, r, xy))(res, xy),
          jax.grad(lambda a: linear_call(g, gt, res, (a, a))['s'].sum())(jnp.arange(3.0)),
          str(jaxpr.eqns[0].primitive), jaxpr.eqns[0].params['num_res'],
          jax.jit(lambda d: jax.grad(lambda x: div_add(x, d))(2.0))(4.0)]
# (a transpose returning a Python constant gives it back as a Python float in JAX, as a float32
# array in laminax: every value is float32 here, compared as such)
result = [r if isinstance(r, (str, int)) else
          jax.tree_util.tree_map(lambda v: np.asarray(v, np.float32), r) for r in result]
for bad in [lambda: jax.vmap(lambda x: linear_call(f, t, 2.0, x))(jnp.ones(2)),
            lambda: jax.linear_transpose(
                lambda x: linear_call(f, lambda r, ct: (ct, ct), 2.0, x), 1.0)(1.0)]:
    try:
        bad()
    except Exception as e:
        result.append((type(e).__name__, str(e)[:45]))
"""


@requires_jax
def test_linear_call_matches_jax():
    assert_same(*both(LINEAR_CALL))


def test_linear_call_refuses_residual_tangents():
    # (JAX fails an internal assertion here)
    linear_call = laminax.custom_derivatives.linear_call
    with pytest.raises(TypeError, match="residual"):
        laminax.grad(lambda d: linear_call(lambda r, x: x / r, lambda r, c: c / r, d, 2.0))(3.0)


# JAX runs block-scaled matmuls only through cuDNN (its CPU lowering fails): the JAX side swaps
# the cuDNN kernel for the math it computes, keeping JAX's own quantization, shape handling and
# custom gradient, which laminax's must match.
SCALED_PATCH = """
import jax._src.cudnn.scaled_matmul_stablehlo as sm
import jax._src.nn.functions as fns

def matmul_math(a, b, sa, sb, preferred_element_type=jnp.float32):
    wa = jnp.repeat(sa.astype(jnp.float32), a.shape[2] // sa.shape[2], axis=2)
    wb = jnp.repeat(sb.astype(jnp.float32), b.shape[2] // sb.shape[2], axis=2)
    return jnp.einsum('bmk,bnk->bmn', a.astype(jnp.float32) * wa, b.astype(jnp.float32) * wb,
                      preferred_element_type=jnp.float32).astype(preferred_element_type)

sm.scaled_matmul_wrapper = fns.cudnn_scaled_matmul = matmul_math
quantize = sm.quantize
"""

SCALED = """
a = jnp.array([1.0, 2, 3, 4]).reshape((1, 1, 4))
b = jnp.array([4.0, 5, 6, 7]).reshape((1, 1, 4))
s = jnp.array([0.5, 2.0]).reshape((1, 1, 2))
result = [jax.nn.scaled_matmul(a, b, s, s), str(jax.nn.scaled_matmul(a, b, s, s, jnp.bfloat16).dtype)]
for bad in [lambda: jax.nn.scaled_matmul(a[0], b, s, s),
            lambda: jax.nn.scaled_matmul(a, b[..., :2], s, s),
            lambda: jax.nn.scaled_matmul(a, b, s, s[..., :1]),
            lambda: jax.nn.scaled_matmul(a, b, jnp.ones((1, 2, 2)), s),
            lambda: jax.nn.get_scaled_dot_general_config('x')]:
    try:
        bad()
    except ValueError as e:
        result.append(str(e))
cm = jax.nn.get_scaled_dot_general_config('mxfp8')
cn = jax.nn.get_scaled_dot_general_config('nvfp4', jnp.array([0.5], jnp.float32))
result += [repr(cm), [cn.mode, cn.block_size, str(np.dtype(cn.data_type)),
                      str(np.dtype(cn.scale_type)), np.asarray(cn.global_scale), cn.infer_only],
           np.asarray(jax.nn.get_scaled_dot_general_config('nvfp4').global_scale)]
x = X * 3
# (few jitted programs: one compilation each instead of one per operation)
for q, sc in jax.jit(lambda x: [quantize(x, cm), quantize(x, cn)])(x):
    result += [str(q.dtype), str(sc.dtype), q.astype(jnp.float32), sc.astype(jnp.float32)]
lhs, rhs = jnp.asarray(LHS), jnp.asarray(RHS)
dn = (((2,), (2,)), ((0,), (0,)))
result.append(jax.nn.scaled_dot_general(lhs, rhs, dn))
for c in [cm, cn]:
    f = lambda l, r: jax.nn.scaled_dot_general(l, r, dn, configs=[c] * 3)
    grads = jax.grad(lambda l, r: (f(l, r) ** 2).sum(), argnums=(0, 1))
    result += list(jax.jit(lambda l, r: (f(l, r), *grads(l, r)))(lhs, rhs))
l2, r2 = lhs[0], rhs[1].T
f2 = lambda l, r: jax.nn.scaled_dot_general(l, r, (((1,), (0,)), ((), ())), configs=[cm] * 3,
                                            preferred_element_type=jnp.bfloat16)
grad2 = jax.grad(lambda l: f2(l, r2).astype(jnp.float32).sum())
result += list(jax.jit(lambda l: (f2(l, r2).astype(jnp.float32), grad2(l)))(l2))
try:
    jax.nn.scaled_dot_general(l2, r2, (((1,), (0,)), ((), ())), configs=[cm] * 3,
                              preferred_element_type=jnp.int32)
except TypeError:
    result.append("TypeError")
"""


@requires_jax
def test_block_scaled_matmuls_match_jax_math():
    from laminax_core.nn._scaled import _quantize

    rng = np.random.default_rng(0)
    inputs = {"X": rng.standard_normal((2, 3, 64), np.float32),
              "LHS": rng.standard_normal((2, 32, 64), np.float32),
              "RHS": rng.standard_normal((2, 32, 64), np.float32)}
    ours = run_here(SCALED, quantize=_quantize, **inputs)
    assert_same(ours, run_jax("import warnings\n" + SCALED_PATCH + SCALED, **inputs))


RANDOM_GAMMA = """
k = jax.random.key(0)
p = jax.random.random_gamma_p
keys = jax.random.split(k, 2)
# (one program: each compiled gamma sampler costs seconds of XLA time)
both = jax.jit(lambda a: (p.bind(keys, a, log_space=True),
                          jax.grad(lambda a: p.bind(k, a, log_space=False).sum())(a[0]),
                          jax.vmap(lambda kk, a: p.bind(kk, a, log_space=False))(keys, a)))
result = [both(jnp.array([[0.5, 2.0], [1.0, 3.0]])),
          str(jax.make_jaxpr(lambda k, a: p.bind(k, a, log_space=False))(k, jnp.array([1.0])))]
try:
    p.bind(jax.random.split(k, 3), jnp.ones((2, 3)), log_space=False)
except ValueError:
    result.append("ValueError")
"""


@requires_jax
def test_random_gamma_p_matches_jax():
    assert_same(*both(RANDOM_GAMMA))


API_UTIL = """
result = []
au = jax.api_util
result.append([str(au.shaped_abstractify(v)) for v in (1.0, np.ones(2, np.int64), jnp.ones(3), jax.ShapeDtypeStruct((2,), jnp.float32))])
result.append(list(au.safe_map(lambda a, b: a + b, [1, 2], [3, 4])))
for bad in [lambda: au.safe_map(lambda a, b: a, [1], [1, 2]), lambda: au.safe_map(lambda a, b: a, [1, 2], [1]), lambda: au.rebase_donate_argnums((1,), (1,))]:
    try: bad()
    except Exception as e: result.append((type(e).__name__, str(e)))
tree = jax.tree_util.tree_structure(((1, (2, 3)), {'a': 4}))
result.append((au.flatten_axes('vmap in_axes', tree, ((0, None), {'a': 1})), au.flatten_axes('vmap in_axes', tree, 0)))
try: au.flatten_axes('vmap in_axes', tree, (0, 1, 2))
except Exception as e: result.append(type(e).__name__)
result.append((au.donation_vector((0,), ('b',), jax.tree_util.tree_structure(((1, (2, 3)), {'a': 4, 'b': (5, 6)})))))
result.append((au.donation_vector((1,), (), jax.tree_util.tree_structure((1, (2, 3))), kws=False)))
result.append((au.rebase_donate_argnums((3, 4), (0, 1)), au.rebase_donate_argnums((), ()), au.rebase_donate_argnums((5, 2), (3,))))
"""


@requires_jax
def test_api_util_matches_jax():
    assert_same(*both(API_UTIL))


RAGGED = """
P = jax.sharding.PartitionSpec
mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ('x',))

def f(operand, output, in_off, send, out_off, recv):
    return jax.lax.ragged_all_to_all(operand, output, in_off, send, out_off, recv,
                                     axis_name='x')

args = (jnp.arange(8.0), jnp.zeros(8), jnp.array([0, 2, 0, 1], jnp.int32),
        jnp.array([2, 2, 1, 3], jnp.int32), jnp.array([0, 0, 2, 2], jnp.int32),
        jnp.array([2, 1, 2, 3], jnp.int32))
g = jax.shard_map(f, mesh=mesh, in_specs=P('x'), out_specs=P('x'))
result = []
try:
    jax.jit(g)(*args)
except Exception as e:  # XLA:CPU has no RaggedAllToAll
    result.append((type(e).__name__, "ragged-all-to-all" in str(e)))
result.append(str(jax.make_jaxpr(g)(*args)))
text = jax.jit(g).lower(*args).as_text()
result += ['custom_call @ragged_all_to_all' in text, 'replica_groups = dense<[[0, 1]]>' in text]
bad_args = [(args[0], args[1], args[2].astype(jnp.float32), *args[3:]),
            (args[0], args[1], args[2].reshape(2, 2), *args[3:])]
for bad in bad_args:
    try:
        jax.make_jaxpr(g)(*bad)
    except ValueError as e:
        result.append(str(e))
try:
    f(*args)
except Exception as e:
    result.append((type(e).__name__, str(e)))
grad_jaxpr = jax.make_jaxpr(jax.grad(lambda o: g(o, *args[1:]).sum()))(args[0])
result.append(str(grad_jaxpr).count("ragged_all_to_all"))
"""


@requires_jax
def test_ragged_all_to_all_matches_jax():
    assert_same(run_here(RAGGED), run_jax(RAGGED, devices=8))


# with jax_auto_pcast off, shard_map bodies get no pvary inserted: mismatches are JAX's errors
AUTO_PCAST = """
result = []
P = jax.sharding.PartitionSpec
mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ('x',))
f = jax.shard_map(lambda x, y: x + y, mesh=mesh, in_specs=(P('x'), P()), out_specs=P('x'))
for v in [True, False]:
    with jax.auto_pcast(v):
        try: result.append((v, str(jax.make_jaxpr(f)(jnp.ones(4), jnp.ones(2))).count('pvary')))
        except Exception as e: result.append((type(e).__name__, str(e)))
for name, fn in [('psum', lambda x: jax.lax.psum(x, 'x')), ('pmax', lambda x: jax.lax.pmax(x, 'x')), ('ppermute', lambda x: jax.lax.ppermute(x, 'x', [(0, 1), (1, 0)])), ('all_gather', lambda x: jax.lax.all_gather(x, 'x')), ('psum_scatter', lambda x: jax.lax.psum_scatter(x, 'x')), ('all_to_all', lambda x: jax.lax.all_to_all(x, 'x', 0, 0)), ('select', lambda x: jnp.where(x > 0, x, 1.)), ('mul2', lambda x: x * 2), ('axis_index', lambda x: x + jax.lax.axis_index('x'))]:
    g = jax.shard_map(fn, mesh=mesh, in_specs=(P(),), out_specs=P('x'))
    with jax.auto_pcast(False):
        try: jax.make_jaxpr(g)(jnp.ones(2)); result.append((name, 'ok'))
        except Exception as e: result.append((name, type(e).__name__, str(e)))
"""


@requires_jax
def test_auto_pcast_off_matches_jax():
    assert_same(run_here(AUTO_PCAST), run_jax(AUTO_PCAST, devices=8))

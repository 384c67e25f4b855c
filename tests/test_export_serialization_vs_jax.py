"""laminax_export against real JAX 0.10.2: the same functions exported by both have the same
signature and module attributes, and artifacts cross between them in both directions (bytes
written by one are deserialized, called and differentiated by the other, with equal results).
"""

import dataclasses

import laminax_core as lc
import laminax_export as le
import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax_core import numpy as lnp
from laminax_dispatch import jit

X3 = np.array([0.5, -1.0, 2.0], np.float32)
Y3 = np.array([1.5, 0.25, -3.0], np.float32)
M23 = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2) / 4
BIG = (np.arange(64, dtype=np.float32) / 7).reshape(8, 8)  # larger than an embedded constant

# name -> (source defining f over `jnp`, argument values, kwargs values)
CASES = {
    "tuple_dict_out": ("def f(x, y):\n    return jnp.sin(x) * y + 1.0, {'a': x.sum()}",
                       (X3, Y3), {}),
    "kwargs_and_list": ("def f(x, *, ys):\n    return [jnp.tanh(x @ ys[0]), ys[1] * 2.0]",
                        (M23,), {"ys": [M23.T, X3]}),
    "unused_arg": ("def f(x, unused, y):\n    return jnp.exp(x) - y", (X3, M23, Y3), {}),
    "closed_over_constant": ("def f(m):\n    return jnp.sum(jnp.tanh(m @ BIG), axis=0)",
                             (BIG[:3],), {}),
    "int_input": ("def f(x, n):\n    return x * n.astype(x.dtype), n + 1",
                  (X3, np.array([2, -1, 3], np.int32)), {}),
    "scalar_out": ("def f(x):\n    return jnp.dot(x, x) * 0.5", (X3,), {}),
}


def _laminax_fun(source):
    scope = {"jnp": lnp, "BIG": BIG}
    exec(source, scope)
    return scope["f"]


def _sds(args):
    from laminax_pytree import tree_map

    return tree_map(lambda a: lc.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype), args)


def _loss_of_first_leaf(out):
    from laminax_pytree import tree_leaves

    return lnp.sum(tree_leaves(out)[0])


JAX_EXPORT = """
scope = {"jnp": jnp, "BIG": BIG}
exec(src, scope)
f = scope["f"]
specs = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype),
                               (args, kwargs))
exp = jax.export.export(jax.jit(f))(*specs[0], **specs[1])
result = dict(
    fields=dict(fun_name=exp.fun_name, in_tree=str(exp.in_tree), out_tree=str(exp.out_tree),
                in_avals=[repr(a) for a in exp.in_avals], out_avals=[repr(a) for a in exp.out_avals],
                nr_devices=exp.nr_devices, platforms=exp.platforms,
                ccv=exp.calling_convention_version, kept=exp.module_kept_var_idx,
                uses_global_constants=exp.uses_global_constants,
                ordered=len(exp.ordered_effects), unordered=len(exp.unordered_effects)),
    module_head=next(l for l in exp.mlir_module().split("\\n") if l.startswith("module")),
    blob=bytes(exp.serialize(vjp_order=1)),
    value=jax.tree_util.tree_leaves(f(*args, **kwargs)),
)
"""

JAX_CALL = """
exp = jax.export.deserialize(bytearray(blob))
out = exp.call(*args, **kwargs)
def loss(a0):
    return jnp.sum(jax.tree_util.tree_leaves(exp.call(a0, *args[1:], **kwargs))[0])
result = dict(value=jax.tree_util.tree_leaves(out), grad=jax.grad(loss)(args[0]),
              jit_value=jax.tree_util.tree_leaves(jax.jit(exp.call)(*args, **kwargs)),
              fields=dict(fun_name=exp.fun_name, in_tree=str(exp.in_tree),
                          out_tree=str(exp.out_tree), kept=exp.module_kept_var_idx,
                          in_avals=[repr(a) for a in exp.in_avals],
                          out_avals=[repr(a) for a in exp.out_avals]))
"""


def _fields(exp):
    return dict(fun_name=exp.fun_name, in_tree=str(exp.in_tree), out_tree=str(exp.out_tree),
                in_avals=[repr(a) for a in exp.in_avals], out_avals=[repr(a) for a in exp.out_avals],
                nr_devices=exp.nr_devices, platforms=exp.platforms,
                ccv=exp.calling_convention_version, kept=exp.module_kept_var_idx,
                uses_global_constants=exp.uses_global_constants,
                ordered=len(exp.ordered_effects), unordered=len(exp.unordered_effects))


def _close(a, b):
    from laminax_pytree import tree_leaves

    a, b = tree_leaves(a), tree_leaves(b)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=2e-6, atol=2e-6)


def _laminax_export(name):
    source, args, kwargs = CASES[name]
    f = _laminax_fun(source)
    exp = le.export(jit(f))(*_sds(args), **_sds(kwargs))
    return f, exp, args, kwargs


@requires_jax
@pytest.mark.parametrize("name", sorted(CASES))
def test_signature_and_module_attributes_match_jax(name):
    source, args, kwargs = CASES[name]
    _, exp, _, _ = _laminax_export(name)
    ref = run_jax(JAX_EXPORT, src=source, args=args, kwargs=kwargs, BIG=BIG)
    assert _fields(exp) == ref["fields"]
    assert exp.mlir_module().split("\n")[0] == ref["module_head"]


@requires_jax
@pytest.mark.parametrize("name", sorted(CASES))
def test_laminax_artifact_runs_in_jax(name):
    f, exp, args, kwargs = _laminax_export(name)
    blob = bytes(exp.serialize(vjp_order=1))
    got = run_jax(JAX_CALL, blob=blob, args=args, kwargs=kwargs)
    assert got["fields"] == {k: v for k, v in _fields(exp).items() if k in got["fields"]}
    want = f(*args, **kwargs)
    _close(got["value"], want)
    _close(got["jit_value"], want)
    want_grad = lc.grad(lambda a0: _loss_of_first_leaf(f(a0, *args[1:], **kwargs)))(args[0])
    _close(got["grad"], want_grad)


@requires_jax
@pytest.mark.parametrize("name", sorted(CASES))
def test_jax_artifact_runs_in_laminax(name):
    source, args, kwargs = CASES[name]
    ref = run_jax(JAX_EXPORT, src=source, args=args, kwargs=kwargs, BIG=BIG)
    exp = le.deserialize(ref["blob"])
    assert _fields(exp) == ref["fields"]
    assert exp.has_vjp()
    _close(exp.call(*args, **kwargs), ref["value"])
    _close(jit(exp.call)(*args, **kwargs), ref["value"])
    f = _laminax_fun(source)

    def loss(a0):
        return _loss_of_first_leaf(exp.call(a0, *args[1:], **kwargs))

    want_grad = lc.grad(lambda a0: _loss_of_first_leaf(f(a0, *args[1:], **kwargs)))(args[0])
    _close(lc.grad(loss)(args[0]), want_grad)


@requires_jax
def test_unsupported_versions_are_refused():
    _, exp, args, kwargs = _laminax_export("scalar_out")
    old = dataclasses.replace(exp, calling_convention_version=8)
    blob = bytes(old.serialize())
    with pytest.raises(ValueError, match=r"supported range \[9\.\.10\]"):
        le.deserialize(blob)
    # the serialization version field (the first scalar of the root table): 1 predates JAX's
    # oldest readable format, 12 is newer than JAX 0.10.2's
    good = bytes(exp.serialize())
    assert _fields(le.deserialize(good)) == _fields(exp)
    for version in (1, 12, 40000):
        with pytest.raises(ValueError, match="serialization versions 2 to 11"):
            le.deserialize(_with_version(good, version))


def _with_version(blob, version):
    import struct

    root = struct.unpack_from("<I", blob, 0)[0]
    vtable = root - struct.unpack_from("<i", blob, root)[0]
    field = struct.unpack_from("<H", blob, vtable + 4)[0]
    out = bytearray(blob)
    struct.pack_into("<H", out, root + field, version)
    return bytes(out)


@requires_jax
def test_call_errors_match_jax():
    _, exp, _, _ = _laminax_export("tuple_dict_out")
    blob = bytes(exp.serialize())
    bad_calls = {"rank": (M23, Y3), "dtype": (X3.astype(np.int32), Y3),
                 "shape": (X3[:2], Y3)}
    for kind, args in bad_calls.items():
        got = run_jax("""
try:
    jax.export.deserialize(bytearray(blob)).call(*args)
    result = None
except Exception as e:
    result = (type(e).__name__, str(e))
""", blob=blob, args=args)
        with pytest.raises(ValueError) as info:
            le.deserialize(blob).call(*args)
        assert got[0] == "ValueError", kind
        assert str(info.value).split(":")[0] == got[1].split(":")[0], kind
        assert got[1] in str(info.value), kind


@requires_jax
def test_static_and_donated_arguments_match_jax():
    import re

    got = run_jax("""
f = jax.jit(lambda x, n, y: (x * n + y, y.sum()), static_argnums=1, donate_argnums=0)
spec = jax.ShapeDtypeStruct((3,), np.float32)
e = jax.export.export(f)(spec, 3, spec)
main = next(l for l in e.mlir_module().split("\\n") if "func.func public @main" in l)
result = dict(main=main, in_tree=str(e.in_tree), kept=e.module_kept_var_idx,
              value=[np.asarray(v) for v in e.call(x, y)], blob=bytes(e.serialize()))
""", x=X3, y=Y3)
    f = jit(lambda x, n, y: (x * n + y, y.sum()), static_argnums=1, donate_argnums=0)
    spec = lc.ShapeDtypeStruct((3,), np.float32)
    exp = le.export(f)(spec, 3, spec)
    main = next(line for line in exp.mlir_module().split("\n") if "func.func public @main" in line)
    assert re.sub(r' loc\("\w+"\)', "", got["main"]) == main  # JAX names arguments' locations
    assert str(exp.in_tree) == got["in_tree"] and exp.module_kept_var_idx == got["kept"]
    _close(exp.call(X3, Y3), got["value"])
    _close(le.deserialize(got["blob"]).call(X3, Y3), got["value"])


@requires_jax
def test_vmap_and_second_order_grad_match_jax():
    src = "def f(x):\n    return jnp.sin(x) * x"
    f = _laminax_fun(src)
    exp = le.export(jit(f))(lc.ShapeDtypeStruct((3,), np.float32))
    got = run_jax("""
scope = {"jnp": jnp}
exec(src, scope)
e = jax.export.export(jax.jit(scope["f"]))(jax.ShapeDtypeStruct((3,), np.float32))
back = jax.export.deserialize(bytearray(blob))
try:
    jax.vmap(back.call)(np.stack([x, x]))
    vmap_error = None
except Exception as err:
    vmap_error = type(err).__name__
gg = jax.grad(lambda a: jax.grad(lambda z: back.call(z).sum())(a).sum())(x)
theirs = jax.export.deserialize(bytearray(e.serialize(vjp_order=2)))
result = dict(vmap_error=vmap_error, gg=gg, blob=bytes(e.serialize(vjp_order=2)))
""", src=src, x=X3, blob=bytes(exp.serialize(vjp_order=2)))
    back = le.deserialize(bytes(exp.serialize(vjp_order=2)))
    with pytest.raises(NotImplementedError) as info:
        lc.vmap(back.call)(np.stack([X3, X3]))
    assert type(info.value).__name__ == got["vmap_error"]
    want = lc.grad(lambda a: lc.grad(lambda z: f(z).sum())(a).sum())(X3)
    _close(got["gg"], want)
    theirs = le.deserialize(got["blob"])
    _close(lc.grad(lambda a: lc.grad(lambda z: theirs.call(z).sum())(a).sum())(X3), want)

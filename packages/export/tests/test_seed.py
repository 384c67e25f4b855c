"""The seed's API (`laminax_export.seed`, 2023's `jax.experimental.export`), checked against
NumPy and against today's API underneath."""

import laminax_core as lc
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from laminax_core import numpy as lnp
from laminax_dispatch import jit
from laminax_export import seed

X = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2) / 3
V = np.array([1.0, -2.0, 0.5], np.float32)


def f(x, v):
    return {"y": lnp.sin(x) * v, "s": (x ** 2).sum()}


@pytest.mark.parametrize("wrap", [lambda g: g, jit], ids=["plain", "jitted"])
def test_export_fields_and_call(wrap):
    exp = seed.export(wrap(f))(X, lc.ShapeDtypeStruct((3,), np.float32))
    assert exp.fun_name == "f"
    assert str(exp) == "Exported(fun_name=f, ...)"
    assert exp.lowering_platform == seed.default_lowering_platform() == "cpu"
    assert exp.strict_checks is True and exp.module_uses_dim_vars is False
    assert exp.xla_call_module_version == 5
    assert exp.module_kept_var_idx == (0, 1)
    assert exp.in_shardings == (None, None) and exp.out_shardings == (None, None)
    assert [a.shape for a in exp.in_avals] == [(2, 3), (3,)]
    assert "func.func public @main" in str(exp.mlir_module())
    call = seed.call_exported(exp)
    out = call(X, V)
    np.testing.assert_allclose(out["y"], np.sin(X) * V, rtol=1e-6)
    np.testing.assert_allclose(out["s"], (X ** 2).sum(), rtol=1e-6)
    np.testing.assert_allclose(jit(call)(X, V)["y"], np.sin(X) * V, rtol=1e-6)
    g = lc.grad(lambda x: call(x, V)["s"] + call(x, V)["y"].sum())(X)
    np.testing.assert_allclose(g, 2 * X + np.cos(X) * V, rtol=1e-5)
    vjp = exp.vjp()
    cts = vjp.in_avals[2:]
    assert [a.shape for a in cts] == [(), (2, 3)]  # one cotangent per output leaf, in order


def test_call_errors():
    exp = seed.export(f)(X, V)
    call = seed.call_exported(exp)
    with pytest.raises(ValueError, match="same pytree structure"):
        call(X, v=V)
    with pytest.raises(ValueError, match="Rank mismatch"):
        call(X[0], V)
    import dataclasses

    elsewhere = dataclasses.replace(exp, lowering_platform="tpu")
    with pytest.raises(ValueError, match="was lowered for platform 'tpu' but it is used on 'cpu'"):
        seed.call_exported(elsewhere)(X, V)
    lax_checks = dataclasses.replace(exp, lowering_platform="tpu", strict_checks=False)
    np.testing.assert_allclose(seed.call_exported(lax_checks)(X, V)["y"], np.sin(X) * V,
                               rtol=1e-6)


def test_vjp_missing_is_the_seeds_error():
    import dataclasses

    exp = dataclasses.replace(seed.export(f)(X, V), _get_vjp=None)
    with pytest.raises(ValueError, match="No VJP is available"):
        exp.vjp()


def test_specs_must_have_shape_and_dtype():
    with pytest.raises(TypeError, match="shape and .dtype"):
        seed.export(f)(X, "not an array")


@pytest.mark.parametrize("spec, shape", [
    (None, (2, 3, 4)), ("_, _, _", (2, 3, 4)), ("(_, _, _)", (2, 3, 4)), ("...", (2, 3, 4)),
    ("(2, ...)", (2, 3, 4)), ("_, 3, ...", (2, 3, 4)), ("(2, 3, 4)", (2, 3, 4)),
    (" ( _ , ... ) ", (2, 3, 4)),
])
def test_poly_spec_constant_dims(spec, shape):
    out = seed.poly_spec((2, 3, 4), np.float32, spec)
    assert out.shape == shape and out.dtype == np.float32


def test_poly_spec_dimension_variables():
    out = seed.poly_spec((2, 3, 4), np.float32, "(2*b, ...)")
    assert str(out.shape) == "(2*b, 3, 4)"
    x, y = seed.poly_specs((np.zeros((2, 3)), np.zeros(2)), ("b, _", "b"))
    assert x.shape[0] is not y.shape[0] and x.shape[0] == y.shape[0]  # one shared scope
    exp = seed.export(lambda a, v: a.sum(axis=1) + v)(x, y)
    assert exp.module_uses_dim_vars and repr(exp.in_avals[0]) == "ShapedArray(float32[b,3])"
    np.testing.assert_allclose(seed.call_exported(exp)(np.ones((4, 3)), np.ones(4)), 4.0)


def test_poly_spec_fills_unknown_dims_from_constants():
    assert seed.poly_spec((None, 3), np.int32, "(5, _)").shape == (5, 3)


@pytest.mark.parametrize("spec, match", [
    ("_, _", "rank 2 must match the rank 3"), ("_, _, _, _", "rank 4"),
    ("_, 7, _", "7 does not match"), ("..., _", "only be the last"), ("_, ?, _", "cannot parse"),
    (3, "must be a string"),
])
def test_poly_spec_errors(spec, match):
    with pytest.raises(ValueError, match=match):
        seed.poly_spec((2, 3, 4), np.float32, spec)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=0, max_size=4), st.data())
def test_poly_spec_matches_the_given_shape(shape, data):
    # any mix of '_' and the true constants, with an optional '...' tail, gives the shape back
    parts = [data.draw(st.sampled_from(["_", str(d)])) for d in shape]
    cut = data.draw(st.integers(0, len(parts)))
    text = ", ".join(parts[:cut] + (["..."] if cut < len(parts) else []))
    paren = data.draw(st.booleans())
    out = seed.poly_spec(tuple(shape), np.float32, f"({text})" if paren else text)
    assert out.shape == tuple(shape)


def test_poly_specs_prefix_and_errors():
    args = (X, {"a": V, "b": [V, X]})
    specs = seed.poly_specs(args, "...")
    assert lc.tree_util.tree_structure(specs) == lc.tree_util.tree_structure(args) \
        if hasattr(lc, "tree_util") else True
    specs = seed.poly_specs(args, ["_, 3", {"a": None, "b": "..."}])
    assert specs[1]["b"][1].shape == (2, 3)
    assert seed.poly_specs(args, None)[0].shape == (2, 3)
    with pytest.raises(ValueError, match="pytree structure error.*polymorphic_shapes"):
        seed.poly_specs(args, ("_, _", "...", None))
    with pytest.raises(ValueError, match="pytree structure error.*'\\[1\\]"):
        seed.poly_specs(args, ("_, _", {"a": None}))
    with pytest.raises(ValueError, match="rank"):
        seed.poly_specs(args, ("_", None))

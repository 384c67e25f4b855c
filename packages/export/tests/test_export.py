"""laminax_export on its own (pytree, core, dispatch, pjit installed): results checked against
NumPy, round trips through bytes, errors, and robustness of `deserialize` on damaged bytes."""

import collections
import dataclasses
import random

import laminax_core as lc
import laminax_export as le
import numpy as np
import pytest
from laminax_core import numpy as lnp
from laminax_dispatch import jit

X = np.array([0.5, -1.0, 2.0], np.float32)
Y = np.array([1.5, 0.25, -3.0], np.float32)


def f(x, y):
    return lnp.sin(x) * y + 1.0, {"a": x.sum()}


def spec(a):
    return lc.ShapeDtypeStruct(a.shape, a.dtype)


@pytest.fixture(scope="module")
def exp():
    return le.export(jit(f))(spec(X), spec(Y))


def check_f(out, x=X, y=Y):
    np.testing.assert_allclose(out[0], np.sin(x) * y + 1, rtol=1e-6)
    np.testing.assert_allclose(out[1]["a"], x.sum(), rtol=1e-6)


def test_fields(exp):
    assert exp.fun_name == "f"
    assert exp.in_avals == (lc.internal.ShapedArray((3,), np.float32),) * 2 \
        if hasattr(lc, "internal") else True
    assert exp.nr_devices == 1 and exp.platforms == ("cpu",)
    assert exp.calling_convention_version == le.maximum_supported_calling_convention_version
    assert exp.module_kept_var_idx == (0, 1)
    assert str(exp) == "Exported(fun_name=f, ...)"
    assert "jax.uses_shape_polymorphism = false" in exp.mlir_module()


def test_call_eager_jit_and_grad_against_numpy(exp):
    check_f(exp.call(X, Y))
    check_f(jit(exp.call)(X, Y))
    g = lc.grad(lambda x: exp.call(x, Y)[0].sum() + exp.call(x, Y)[1]["a"])(X)
    np.testing.assert_allclose(g, np.cos(X) * Y + 1, rtol=1e-6)


@pytest.mark.parametrize("vjp_order", [0, 1, 2])
def test_round_trip(exp, vjp_order):
    back = le.deserialize(exp.serialize(vjp_order=vjp_order))
    for field in ("fun_name", "in_tree", "out_tree", "in_avals", "out_avals", "platforms",
                  "module_kept_var_idx", "calling_convention_version", "nr_devices"):
        assert getattr(back, field) == getattr(exp, field), field
    check_f(back.call(X, Y))
    assert back.has_vjp() == (vjp_order > 0)
    if vjp_order == 0:
        with pytest.raises(ValueError, match="No VJP is available"):
            back.vjp()
    else:
        g = lc.grad(lambda x: back.call(x, Y)[0].sum())(X)
        np.testing.assert_allclose(g, np.cos(X) * Y, rtol=1e-6)
    if vjp_order == 1:
        with pytest.raises(ValueError, match="No VJP is available"):
            lc.grad(lambda x: lc.grad(lambda z: back.call(z, Y)[0].sum())(x).sum())(X)
    if vjp_order == 0:
        with pytest.raises(ValueError, match="No VJP is available"):
            lc.grad(lambda x: back.call(x, Y)[0].sum())(X)
    if vjp_order == 2:
        gg = lc.grad(lambda x: lc.grad(lambda z: back.call(z, Y)[0].sum())(x).sum())(X)
        np.testing.assert_allclose(gg, -np.sin(X) * Y, rtol=1e-5)
        args = (X, Y, Y, np.float32(1), X, Y)  # primals, output cotangents, input cotangents
        for a, b in zip(back.vjp().vjp().call(*args), exp.vjp().vjp().call(*args)):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    with pytest.raises(ValueError, match="high-enough order"):
        back.serialize(vjp_order=vjp_order + 1)


def test_unused_argument_is_dropped_and_kept_index_recorded():
    e = le.export(jit(lambda a, b, c: a * c))(spec(X), spec(np.zeros((2, 2), np.int32)), spec(Y))
    assert e.module_kept_var_idx == (0, 2)
    np.testing.assert_allclose(le.deserialize(e.serialize()).call(X, np.zeros((2, 2), np.int32), Y),
                               X * Y)


def test_named_tuple_and_custom_node_trees_need_registration():
    Point = collections.namedtuple("Point", "x y")
    e = le.export(jit(lambda p: Point(p.y, p.x)))(Point(spec(X), spec(Y)))
    with pytest.raises(ValueError, match="unregistered type"):
        e.serialize()
    le.register_namedtuple_serialization(Point, serialized_name="test.Point")
    with pytest.raises(ValueError, match="Duplicate serialization"):
        le.register_namedtuple_serialization(Point, serialized_name="test.Point2")
    back = le.deserialize(e.serialize())
    assert back.in_tree == e.in_tree and back.out_tree == e.out_tree
    out = back.call(Point(X, Y))
    assert isinstance(out, Point)
    np.testing.assert_array_equal(out.x, Y)


@pytest.mark.parametrize("bad", [lambda x: x, np.sin, 3])
def test_export_needs_a_jitted_function(bad):
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        le.export(bad)


def test_call_errors(exp):
    with pytest.raises(ValueError, match="Rank mismatch for args\\[0\\]"):
        exp.call(X.reshape(3, 1), Y)
    with pytest.raises(ValueError, match="Dtype mismatch for args\\[1\\]"):
        exp.call(X, Y.astype(np.int32))
    with pytest.raises(ValueError, match="Shape mismatch for args\\[0\\].shape\\[0\\]"):
        exp.call(X[:2], Y)
    with pytest.raises(ValueError, match="same pytree structure"):
        exp.call(X, y=Y)
    wrong_platform = dataclasses.replace(exp, platforms=("tpu",))
    with pytest.raises(ValueError, match="was exported for platforms"):
        wrong_platform.call(X, Y)
    lifted = dataclasses.replace(exp, platforms=("tpu",),
                                 disabled_safety_checks=(le.DisabledSafetyCheck.platform(),))
    check_f(lifted.call(X, Y))


def test_unsupported_calling_convention_is_refused(exp):
    for ccv in (0, 8, 11, 65535):
        blob = dataclasses.replace(exp, calling_convention_version=ccv).serialize()
        with pytest.raises(ValueError, match=r"supported range \[9\.\.10\]"):
            le.deserialize(blob)


def test_deserialize_rejects_non_bytes():
    with pytest.raises(TypeError):
        le.deserialize("not bytes")


def _artifacts():
    e1 = le.export(jit(f))(spec(X), spec(Y))
    e2 = le.export(jit(lambda d: [d["k"] * 2, None]))({"k": spec(np.zeros((2, 3), np.int8))})
    return [bytes(e1.serialize(vjp_order=1)), bytes(e2.serialize())]


def test_truncated_bytes_raise_value_error():
    """Every cut raises ValueError, except a cut of trailing zero bytes that no field reads
    (a flatbuffer's last string terminator): that one must give back the same Exported. The
    artifacts' length depends on the checkout path (source locations), so every cut of the
    last 16 bytes is tried besides every 7th."""
    for blob in _artifacts():
        whole = le.deserialize(blob)
        for n in sorted({*range(0, len(blob), 7), *range(max(len(blob) - 16, 0), len(blob))}):
            try:
                part = le.deserialize(blob[:n])
            except ValueError:
                continue
            assert not any(blob[n:]), f"a cut at {n} of {len(blob)} dropped data silently"
            assert part.mlir_module_serialized == whole.mlir_module_serialized
            assert (part.in_tree, part.out_tree) == (whole.in_tree, whole.out_tree)
            assert (part.in_avals, part.out_avals) == (whole.in_avals, whole.out_avals)


def test_fuzzed_bytes_raise_value_error_or_deserialize():
    """3,000 mutated artifacts (byte flips, overwrites with extreme values, insertions and
    deletions): each either deserializes into a well-formed Exported or raises ValueError;
    nothing else escapes and nothing hangs."""
    rng = random.Random(1234)
    outcomes = collections.Counter()
    for blob in _artifacts():
        for _ in range(1500):
            data = bytearray(blob)
            for _ in range(rng.choice([1, 1, 2, 4, 16])):
                pos = rng.randrange(len(data))
                op = rng.random()
                if op < 0.5:
                    data[pos] = rng.randrange(256)
                elif op < 0.7:
                    data[pos:pos + 4] = rng.choice([b"\xff\xff\xff\xff", b"\0\0\0\0",
                                                   b"\xff\xff\xff\x7f", b"\x04\0\0\0"])
                elif op < 0.85:
                    del data[pos:pos + rng.randrange(1, 9)]
                else:
                    data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
            try:
                back = le.deserialize(bytes(data))
            except ValueError:
                outcomes["refused"] += 1
                continue
            outcomes["read"] += 1
            assert back.in_tree.num_leaves == len(back.in_avals)
            assert back.out_tree.num_leaves == len(back.out_avals)
    assert outcomes["refused"] > 1000


def _module_with_custom_call(target):
    from jaxlib.mlir import ir
    from laminax_dispatch.internal import make_ir_context

    text = (
        "module @m {\n  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {\n"
        f'    %0 = stablehlo.custom_call @{target}(%arg0) : (tensor<3xf32>) -> tensor<3xf32>\n'
        "    return %0 : tensor<3xf32>\n  }\n}\n")
    return ir.Module.parse(text, make_ir_context())


@pytest.mark.parametrize("target", ["my_kernel", "tpu_custom_call_v2", "lapack_sgetrf"])
def test_unstable_custom_calls_are_refused_unless_allowed(target):
    from laminax_export._export import _check_custom_calls

    module = _module_with_custom_call(target)
    with pytest.raises(ValueError, match=f"no compatibility guarantees: \\['{target}'\\]"):
        _check_custom_calls(module, ())
    _check_custom_calls(module, (le.DisabledSafetyCheck.custom_call(target),))


@pytest.mark.parametrize("target", ["lapack_sgetrf_ffi", "Sharding", "mhlo.erf"])
def test_stable_custom_calls_are_allowed(target):
    from laminax_export._export import _check_custom_calls

    _check_custom_calls(_module_with_custom_call(target), ())


def test_disabled_safety_check_values():
    c = le.DisabledSafetyCheck.custom_call("foo")
    assert c.is_custom_call() == "foo" and str(c) == "custom_call:foo"
    assert le.DisabledSafetyCheck.platform().is_custom_call() is None
    assert c == le.DisabledSafetyCheck.custom_call("foo") and hash(c) == hash(
        le.DisabledSafetyCheck.custom_call("foo"))
    assert c != le.DisabledSafetyCheck.platform()


def test_damaged_module_bytes_raise_value_error_not_crash():
    """jaxlib's artifact reader can corrupt memory on damaged bytes; the first parse of module
    bytes from outside this process is checked in a forked child, so 200 damaged modules give
    ValueErrors (or parse), and the process survives to run the undamaged one."""
    exp = le.deserialize(le.export(jit(f))(spec(X), spec(Y)).serialize())
    rng = random.Random(99)
    refused = 0
    for _ in range(200):
        data = bytearray(exp.mlir_module_serialized)
        for _ in range(rng.choice([1, 2, 8])):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            data = data[:rng.randrange(len(data))]
        damaged = dataclasses.replace(exp, mlir_module_serialized=bytes(data))
        try:
            damaged.mlir_module()
        except ValueError as e:
            assert "not a valid StableHLO portable artifact" in str(e)
            refused += 1
    assert refused > 100
    check_f(exp.call(X, Y))

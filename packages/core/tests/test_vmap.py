"""vmap: in_axes/out_axes pytrees, None and negative axes, axis_size, errors, collectives."""

import numpy as np
import pytest
from laminax_core import lax, make_jaxpr, vmap

XS = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_vmap_maps_leading_axis():
    np.testing.assert_array_equal(vmap(lambda x: x.sum())(XS), XS.sum(1))


def test_in_axes_none_negative_and_pytrees():
    out = vmap(lambda x, y: x * y, in_axes=(1, None))(XS, np.float32(2))
    np.testing.assert_array_equal(out, (XS * 2).T)
    out = vmap(lambda x: x.sum(), in_axes=-1)(XS)
    np.testing.assert_array_equal(out, XS.sum(0))
    out = vmap(lambda p: p["a"] + p["b"], in_axes=({"a": 0, "b": None},))(
        {"a": XS, "b": np.ones(3, np.float32)}
    )
    np.testing.assert_array_equal(out, XS + 1)


def test_out_axes_positions_and_none():
    out = vmap(lambda x: x * 2.0, out_axes=1)(XS)
    np.testing.assert_array_equal(out, (XS * 2).T)
    y, c = vmap(lambda x: (x, np.float32(1)), out_axes=(0, None))(XS)
    assert c == 1 and y.shape == (2, 3)
    out = vmap(lambda x: {"v": x}, out_axes={"v": -1})(XS)
    np.testing.assert_array_equal(out["v"], XS.T)


def test_unmapped_output_is_broadcast():
    out = vmap(lambda x: np.float32(5))(XS)
    np.testing.assert_array_equal(out, np.full(2, 5.0))


def test_axis_size_without_mapped_inputs():
    out = vmap(lambda x: x + 1.0, in_axes=None, axis_size=3)(np.float32(1))
    np.testing.assert_array_equal(out, np.full(3, 2.0))


def test_inconsistent_sizes_list_each_argument():
    def f(x, y):
        return x + y

    with pytest.raises(ValueError) as info:
        vmap(f)(np.ones(2, np.float32), {"a": np.ones(3, np.float32)})
    assert str(info.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 2: axis 0 of argument x of type float32[2];\n"
        "  * one axis had size 3: axis 0 of argument y['a'] of type float32[3]"
    )
    with pytest.raises(ValueError, match=r"most axes \(3 of them\) had size 3, e.g. axis 0 of "):
        vmap(lambda *a: a[0])(*[np.ones(n, np.float32) for n in (2, 3, 3, 3)])


def test_top_level_list_in_axes_acts_as_a_tuple():
    out = vmap(lambda x, y: x + y, in_axes=[0, None])(XS, np.float32(1))
    np.testing.assert_array_equal(out, XS + 1)


def test_keyword_arguments_are_mapped_over_axis_0():
    out = vmap(lambda x, *, y: x * y, in_axes=None)(np.float32(2), y=np.arange(3.0))
    np.testing.assert_array_equal(out, 2 * np.arange(3.0))


def test_in_axes_errors():
    with pytest.raises(ValueError, match="len\\(in_axes\\) = 2, len\\(args\\) = 1"):
        vmap(lambda x: x, in_axes=(0, 0))(XS)
    with pytest.raises(ValueError, match="at least one non-None"):
        vmap(lambda x: x, in_axes=None)(XS)
    with pytest.raises(ValueError, match="rank should be at least 3"):
        vmap(lambda x: x, in_axes=2)(XS)


def test_nested_vmap():
    out = vmap(vmap(lambda a, b: a * b, in_axes=(0, None)), in_axes=(None, 0))(
        np.arange(3, dtype=np.float32), np.arange(2, dtype=np.float32)
    )
    np.testing.assert_array_equal(out, np.outer(np.arange(2), np.arange(3)))


def test_vmap_of_matmul_and_transpose_matches_loop():
    a = np.random.RandomState(0).standard_normal((4, 2, 3)).astype(np.float32)
    b = np.random.RandomState(1).standard_normal((4, 3, 5)).astype(np.float32)
    out = vmap(lambda x, y: (x @ y).T)(a, b)
    np.testing.assert_allclose(
        out, np.stack([(x @ y).T for x, y in zip(a, b, strict=True)]), rtol=1e-5
    )


def test_vmap_jaxpr_matches_jax():
    closed = make_jaxpr(vmap(lambda x, y: lax.add(x, y), in_axes=(0, None)))(
        XS, np.ones(3, np.float32)
    )
    assert str(closed) == (
        "{ lambda ; a:f32[2,3] b:f32[3]. let\n"
        "    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
        "    d:f32[2,3] = add a c\n"
        "  in (d,) }"
    )


# ----- collectives ----------------------------------------------------------------------------


def test_psum_pmean_pmax_pmin():
    x = np.array([1.0, 4.0, 2.0], np.float32)
    np.testing.assert_array_equal(vmap(lambda v: lax.psum(v, "i"), axis_name="i")(x), [7] * 3)
    np.testing.assert_allclose(vmap(lambda v: lax.pmean(v, "i"), axis_name="i")(x), [7 / 3] * 3)
    np.testing.assert_array_equal(vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(x), [4] * 3)
    np.testing.assert_array_equal(vmap(lambda v: lax.pmin(v, "i"), axis_name="i")(x), [1] * 3)


def test_psum_of_unmapped_value_multiplies_by_axis_size():
    out = vmap(lambda v: lax.psum(np.float32(2), "i"), axis_name="i")(np.ones(4, np.float32))
    np.testing.assert_array_equal(out, [8] * 4)


def test_psum_of_pytree_and_nested_axes():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = vmap(vmap(lambda v: lax.psum(v, "i"), axis_name="j"), axis_name="i")(x)
    np.testing.assert_array_equal(out, np.broadcast_to(x.sum(0), (2, 3)))
    out = vmap(vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(x)
    np.testing.assert_array_equal(out, np.full((2, 3), x.sum()))
    out = vmap(lambda v: lax.psum({"a": v, "b": v * 2}, "i"), axis_name="i")(x[0])
    np.testing.assert_array_equal(out["b"], [6] * 3)


def test_all_gather_and_axis_index():
    x = np.array([1.0, 4.0, 2.0], np.float32)
    out = vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(x)
    np.testing.assert_array_equal(out, np.broadcast_to(x, (3, 3)))
    out = vmap(lambda v: lax.axis_index("i"), axis_name="i")(x)
    np.testing.assert_array_equal(out, [0, 1, 2])
    rows = np.arange(6, dtype=np.float32).reshape(3, 2)
    out = vmap(lambda v: lax.all_gather(v, "i", axis=1), axis_name="i")(rows)
    np.testing.assert_array_equal(out[0], rows.T)


def test_unbound_axis_name_raises_name_error():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(np.float32(1), "i")
    with pytest.raises(NameError, match="unbound axis name: k"):
        vmap(lambda v: lax.psum(v, "k"), axis_name="i")(np.ones(2, np.float32))


def test_grad_through_collectives():
    from laminax_core import grad

    x = np.array([1.0, 4.0, 2.0], np.float32)
    out = vmap(grad(lambda v: lax.psum(v * v, "i")), axis_name="i")(x)
    np.testing.assert_allclose(out, 2 * x * 3)  # d/dv_k sum_i of (sum_j v_j^2) = 3 * 2 v_k
    out = vmap(grad(lambda v: lax.pmean(v * v, "i")), axis_name="i")(x)
    np.testing.assert_allclose(out, 2 * x)
    out = vmap(grad(lambda v: lax.all_gather(v * v, "i").sum()), axis_name="i")(x)
    np.testing.assert_allclose(out, 2 * x * 3)
    # (JAX has no pmax jvp; ours follows psum's convention: each of the 3 outputs counts)
    out = vmap(grad(lambda v: lax.pmax(v * v, "i")), axis_name="i")(x)
    np.testing.assert_allclose(out, [0, 24, 0])

"""jax.debug.visualize_sharding / visualize_array_sharding draw the same picture as JAX 0.10.2
(ruled tables: stdout is not a terminal, so neither draws colours)."""

import contextlib
import io

import laminax_dispatch as ld
import laminax_pjit as lp
import numpy as np
import pytest
from jaxref import JaxReferenceError, requires_jax, run_jax

CASES = {
    "1d_split": ((8,), (8,), ("x",), ("x",)),
    "1d_replicated": ((8,), (8,), ("x",), ()),
    "2d_rows": ((8, 8), (4, 2), ("x", "y"), ("x",)),
    "2d_grid": ((8, 16), (4, 2), ("x", "y"), ("x", "y")),
    "2d_columns_swapped": ((16, 8), (4, 2), ("x", "y"), (None, ("y", "x"))),
    "2d_wide": ((4, 32), (2, 4), ("x", "y"), ("x", "y")),
    "2d_partial": ((8, 8), (2, 4), ("x", "y"), (None, "y")),
}

SNIPPET = """
import contextlib, io
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(mesh_shape), names)
x = jax.device_put(np.zeros(shape, np.float32), NamedSharding(mesh, P(*spec)))
buffer = io.StringIO()
with contextlib.redirect_stdout(buffer):
    jax.debug.visualize_array_sharding(x, **kwargs)
result = buffer.getvalue()
"""


@requires_jax
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("kwargs", [{}, {"scale": 0.5, "min_width": 4}], ids=["default", "small"])
def test_picture_matches_jax(name, kwargs):
    shape, mesh_shape, names, spec = CASES[name]
    try:
        expected = run_jax(
            SNIPPET, devices=8, shape=shape, mesh_shape=mesh_shape, names=names, spec=spec, kwargs=kwargs
        )
    except JaxReferenceError as err:
        if "rich" in err.message:
            pytest.skip("the real-JAX environment lacks rich")
        raise
    mesh = lp.Mesh(np.array(ld.devices()).reshape(mesh_shape), names)
    x = ld.device_put(np.zeros(shape, np.float32), lp.NamedSharding(mesh, lp.P(*spec)))
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        lp.visualize_array_sharding(x, **kwargs)
    assert buffer.getvalue() == expected


def test_bad_shapes_and_traced_values_raise():
    sharding = lp.NamedSharding(lp.Mesh(np.array(ld.devices()), ("x",)), lp.P())
    with pytest.raises(ValueError, match="1 and 2 dimensions"):
        lp.visualize_sharding((2, 2, 2), sharding)
    with pytest.raises(TypeError, match="has no sharding"):
        lp.visualize_array_sharding(np.zeros(3))


INSIDE_JIT = """
import contextlib, io
Mesh, NamedSharding, P = jax.sharding.Mesh, jax.sharding.NamedSharding, jax.sharding.PartitionSpec
mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ('x', 'y'))
x = jax.device_put(np.arange(64.0, dtype=np.float32).reshape(8, 8), NamedSharding(mesh, P('x', 'y')))
specs = []
@jax.jit
def f(x):
    jax.debug.visualize_array_sharding(x)
    y = x * 2
    jax.debug.visualize_array_sharding(y.sum(0))
    jax.debug.inspect_array_sharding(y, callback=lambda s: specs.append(str(s.spec)))
    return y
buffer = io.StringIO()
with contextlib.redirect_stdout(buffer):
    print("lower"); lowered = f.lower(x)
    print("compile"); lowered.compile()
    print("call"); f(x)
    print("eager"); jax.debug.visualize_array_sharding(f(x))
    jax.debug.inspect_array_sharding(x, callback=lambda s: specs.append(str(s.spec)))
text = str(jax.make_jaxpr(f)(x))
result = [buffer.getvalue(), specs, [l.strip() for l in text.splitlines() if 'callback' in l]]
"""


@requires_jax
def test_pictures_inside_jit_are_drawn_at_compile_time_as_jax():
    # JAX draws when XLA has laid the value out (compiling), not when tracing or calling
    import laminax

    try:
        expected = run_jax(INSIDE_JIT, devices=8)
    except JaxReferenceError as err:
        if "rich" in err.message:
            pytest.skip("the real-JAX environment lacks rich")
        raise
    scope = {"jax": laminax, "np": np}
    exec(INSIDE_JIT, scope)
    assert scope["result"] == expected

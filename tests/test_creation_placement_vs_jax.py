"""`device=` and `out_sharding=` of the array-creation functions (`jnp.zeros`, `ones`, `full`,
`empty`, the `*_like`s, `arange`, `linspace`, `eye`, `array`, `asarray`) against real JAX 0.10.2
on 8 CPU devices: where the result lives (sharding class, devices, spec, committed), its type
under an Explicit mesh, its values and dtype, eagerly and under jit (where JAX ignores
`device=`), and JAX's error types for bad combinations.

Deliberate differences, not compared: `jnp.array(x, device=NamedSharding(explicit mesh))` places
the array (JAX 0.10.2 raises a with_sharding_constraint error), `jnp.asarray(x,
out_sharding=...)` types the result as `jnp.array` does (JAX ignores it), and a string or int
`device` is a TypeError naming what to pass (JAX's is an AttributeError from inside). Under jit,
a `device_put` to one device (`jnp.arange(8, device=devs[2])`) leaves the program on the default
device in laminax, where JAX 0.10.2 moves the whole program to that device (except for
`jnp.eye`), and JAX lays out a jitted `arange`/`eye` with a mesh `device=` replicated where
laminax keeps the requested split: compared on the other cases."""

import laminax
import laminax.numpy as lnp
import numpy as np
import pytest
from jaxref import JaxReferenceError, requires_jax, run_jax

JAX_PRELUDE = "from jax.sharding import NamedSharding, PartitionSpec as P, AxisType\n"

SETUP = """
devs = jax.devices()
auto = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Auto,))
expl = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Explicit,) * 2)
ans = NamedSharding(auto, P('x'))
ens = NamedSharding(expl, P('x', 'y'))
def where(v):
    s = v.sharding
    spec = tuple(s.spec) if hasattr(s, 'spec') else None
    t = jax.typeof(v).sharding
    typed = tuple(t.spec) if t is not None else ()
    typed = typed + (None,) * (v.ndim - len(typed))  # JAX types unsplit arrays P(None, ...)
    return (type(s).__name__, sorted(d.id for d in s.device_set), spec, typed,
            bool(getattr(v, 'committed', True)), str(v.dtype), jax.typeof(v).weak_type,
            np.asarray(v).tolist())
"""

# (id, statements assigning `result`)
EAGER = {
    "zeros_device": "result = where(jnp.zeros((8, 2), device=devs[3]))",
    "zeros_auto_mesh": "result = where(jnp.zeros((8, 2), jnp.int8, device=ans))",
    "zeros_explicit_mesh": "result = where(jnp.zeros((4, 8), device=ens))",
    "ones_device": "result = where(jnp.ones(5, jnp.int32, device=devs[7]))",
    "ones_auto_mesh": "result = where(jnp.ones((16,), device=ans))",
    "full_device_weak": "result = where(jnp.full((3,), 2.5, device=devs[1]))",
    "full_array_fill": "result = where(jnp.full((8, 3), np.arange(3.0), device=devs[1]))",
    "empty_device": "result = where(jnp.empty((2,), device=devs[2]))",
    "zeros_like_device": "result = where(jnp.zeros_like(np.arange(8), device=devs[6]))",
    "ones_like_mesh": "result = where(jnp.ones_like(np.ones((8, 8)), device=ens))",
    "full_like_shape": "result = where(jnp.full_like(np.ones(3), 7, shape=(8,), device=ans))",
    "empty_like_device": "result = where(jnp.empty_like(np.ones(3, np.float16), device=devs[5]))",
    "arange_device": "result = where(jnp.arange(2, 11, 3, device=devs[4]))",
    "arange_mesh": "result = where(jnp.arange(16.0, device=ans))",
    "linspace_device": "result = where(jnp.linspace(0, 1, 5, device=devs[2]))",
    "linspace_retstep": "o, s = jnp.linspace(0, 2, 8, retstep=True, device=ans)\n"
                        "result = (where(o), float(s))",
    "eye_device": "result = where(jnp.eye(3, 4, k=1, device=devs[1]))",
    "eye_mesh": "result = where(jnp.eye(8, device=ans))",
    "array_device": "result = where(jnp.array([[1, 2], [3, 4]], device=devs[4]))",
    "array_scalar": "result = where(jnp.array(3.5, device=devs[2]))",
    "array_auto_mesh": "result = where(jnp.array(np.arange(8.0), device=ans))",
    "asarray_device": "result = where(jnp.asarray(np.arange(6).reshape(2, 3), device=devs[5]))",
    "asarray_array_input": "result = where(jnp.asarray(jnp.arange(4), device=devs[3]))",
    "no_device": "result = where(jnp.zeros(3))",
}

TRACED = {
    # under jit JAX ignores device= of the filled arrays; the computed ones (arange, linspace,
    # eye, array, asarray) stage a device_put
    "jit_zeros_device": "result = where(jax.jit(lambda: jnp.zeros((8,), device=devs[1]))())",
    "jit_ones_mesh": "result = where(jax.jit(lambda: jnp.ones((8,), device=ans))())",
    "jit_full_weak": "result = where(jax.jit(lambda: jnp.full((8,), 2.0, device=ans))())",
    "jit_zeros_like": "result = where(jax.jit(lambda x: jnp.zeros_like(x, device=ans))(np.ones(8)))",
    "jit_linspace": "result = where(jax.jit(lambda: jnp.linspace(0, 1, 16, device=ans))())",
    "jit_array": "result = where(jax.jit(lambda x: jnp.array(x, device=ans) + 1)(np.ones(8)))",
    "jit_asarray": "result = where(jax.jit(lambda x: jnp.asarray(x, device=ans))(np.ones(8)))",
    "jit_full_vector_fill_auto_mesh": "result = where(jax.jit(lambda: jnp.full((8, 2), "
                                      "np.ones(2), device=ans))())",
    "jaxpr_zeros": "result = str(jax.make_jaxpr(lambda: jnp.zeros((8,), device=ans))())",
    "jaxpr_full_like": "result = str(jax.make_jaxpr(lambda x: jnp.full_like(x, 2, device=devs[1]))"
                       "(np.ones(3)))",
}

EXPLICIT = {
    # out_sharding: the type of the result under an all-Explicit mesh
    "zeros_P": "result = where(jnp.zeros((8, 4), out_sharding=P('x', 'y')))",
    "ones_P_row": "result = where(jnp.ones((8, 4), jnp.int32, out_sharding=P('x')))",
    "full_P": "result = where(jnp.full((4, 8), 1.5, out_sharding=P(None, 'y')))",
    "full_array_fill_P": "result = where(jnp.full((8, 4), np.arange(4.0), out_sharding=P('x')))",
    "empty_P": "result = where(jnp.empty((2, 4), out_sharding=P('x', 'y')))",
    "zeros_like_P": "result = where(jnp.zeros_like(np.ones((8, 4)), out_sharding=P(None, 'y')))",
    "full_like_P": "result = where(jnp.full_like(np.ones((8, 4)), 3, out_sharding=P('x', 'y')))",
    "ones_like_P_unsplit": "result = where(jnp.ones_like(np.ones((8, 4)), out_sharding=P()))",
    "arange_P": "result = where(jnp.arange(8, out_sharding=P('y')))",
    "arange_step_P": "result = where(jnp.arange(1, 17, 2, out_sharding=P('x')))",
    "array_P": "result = where(jnp.array(np.arange(8), out_sharding=P('x')))",
    "named_sharding": "result = where(jnp.zeros((8, 4), out_sharding=NamedSharding(expl, P('y'))))",
    "jit_zeros_P": "result = where(jax.jit(lambda: jnp.zeros((8, 4), out_sharding=P('x')))())",
    "jit_arange_P": "result = where(jax.jit(lambda: jnp.arange(8.0, out_sharding=P('y')) + 1)())",
    "jaxpr_zeros_P": "result = str(jax.make_jaxpr(lambda: jnp.zeros((8,), out_sharding=P('x')))())",
    "jaxpr_ones_like_P": "result = str(jax.make_jaxpr(lambda x: jnp.ones_like(x, out_sharding="
                         "P('y')))(np.ones(8)))",
}

ERRORS = {
    "full_vector_fill_auto_mesh": "jnp.full((8, 2), np.ones(2), device=ans)",
    "full_like_vector_fill_auto_mesh": "jnp.full_like(np.ones((8, 2)), np.ones(2), device=ans)",
    "scalar_on_a_split_sharding": "jnp.array(2.5, device=ans)",
    "both_given": "jnp.zeros(8, device=devs[0], out_sharding=P('x'))",
    "both_given_like": "jnp.ones_like(np.ones(8), device=ans, out_sharding=P('x'))",
    "spec_without_mesh": "jnp.zeros(8, out_sharding=P('x'))",
    "arange_spec_without_mesh": "jnp.arange(8, out_sharding=P('x'))",
    "matmul_spec_without_mesh": "jnp.matmul(np.ones((8, 2)), np.ones((2, 2)), out_sharding=P('x'))",
    "auto_axis_out_sharding": "jnp.zeros(8, out_sharding=NamedSharding(auto, P('x')))",
    "indivisible_device": "jnp.zeros(7, device=ans)",
    "indivisible_explicit": "jnp.zeros((7, 4), device=ens)",
}


def _run_laminax(source: str):
    scope = {
        "jax": laminax, "jnp": lnp, "np": np,
        "NamedSharding": laminax.sharding.NamedSharding,
        "P": laminax.sharding.PartitionSpec,
        "AxisType": laminax.sharding.AxisType,
    }
    try:
        exec(SETUP + source, scope)
    except Exception as err:  # noqa: BLE001 - compared with JAX's exception type
        return ("error", _kind(type(err).__name__))
    return ("ok", scope["result"])


def _run_jax(source: str):
    try:
        return ("ok", run_jax(JAX_PRELUDE + SETUP + source, devices=8))
    except JaxReferenceError as err:
        return ("error", _kind(err.type_name))


def _kind(name: str) -> str:
    # JAX raises IndivisibleError (a ValueError) on one path and ValueError on the other
    return "ValueError" if name == "IndivisibleError" else name


def _normalize(result):
    return result.replace("jax.", "") if isinstance(result, str) else result


def _check(source: str):
    actual, expected = _run_laminax(source), _run_jax(source)
    if actual[0] == expected[0] == "ok":
        assert _normalize(actual[1]) == _normalize(expected[1])
    else:
        assert actual == expected


def _under(mesh: str, body: str) -> str:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"with jax.set_mesh({mesh}):\n{lines}\n"


@requires_jax
@pytest.mark.parametrize("name", sorted(EAGER))
def test_device_places_the_result_as_jax(name):
    _check(EAGER[name])


@requires_jax
@pytest.mark.parametrize("name", sorted(TRACED))
def test_device_is_ignored_while_tracing_as_in_jax(name):
    _check(TRACED[name])


@requires_jax
@pytest.mark.parametrize("name", sorted(EXPLICIT))
def test_out_sharding_types_the_result_as_jax(name):
    _check(_under("expl", EXPLICIT[name]))


@requires_jax
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_bad_placement_raises_jax_error_type(name):
    source = f"result = where({ERRORS[name]})"
    actual, expected = _run_laminax(source), _run_jax(source)
    assert expected[0] == "error", expected
    assert actual == expected


@requires_jax
@pytest.mark.parametrize("source", [
    _under("expl", "result = where(jnp.zeros((7,), out_sharding=P('x')))"),
    _under("auto", "result = where(jnp.zeros((8,), out_sharding=P('x')))"),
    _under("auto", "result = where(jnp.arange(8, out_sharding=P('x')))"),
])
def test_bad_out_sharding_under_a_mesh_raises_jax_error_type(source):
    actual, expected = _run_laminax(source), _run_jax(source)
    assert expected[0] == "error", expected
    assert actual == expected


def test_a_device_that_is_not_a_device_is_a_type_error_naming_it():
    for bad in ("cpu", 1, [laminax.devices()[0]]):
        with pytest.raises(TypeError, match="device must be a Device or a Sharding"):
            lnp.zeros(3, device=bad)

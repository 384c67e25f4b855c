"""pmap against real JAX 0.10.2 on 8 CPU devices: values, output shardings, the traced program
(jit of a shard_map), and error types."""

import re

import laminax as lx
import numpy as np
import pytest
from jaxref import JaxReferenceError, requires_jax, run_jax

# JAX raises IndivisibleError (a ValueError) where laminax checks the mapped size first
_SAME_ERROR = {"IndivisibleError": "ValueError"}


def run_both(source: str):
    try:
        expected = run_jax(source, devices=8)
    except JaxReferenceError as err:
        expected = ("error", _SAME_ERROR.get(err.type_name, err.type_name))
    scope = {"jax": lx, "jnp": lx.numpy, "np": np}
    try:
        exec(source, scope)
        got = scope["result"]
    except Exception as err:  # noqa: BLE001 (compared with JAX's exception type)
        got = ("error", type(err).__name__)
    return got, expected


def _same(got, expected):
    if isinstance(expected, tuple) and expected[:1] == ("error",):
        assert got == expected
    elif isinstance(expected, (list, tuple)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            _same(g, e)
    elif isinstance(expected, np.ndarray):
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)
    else:
        assert got == expected


PROGRAMS = {
    "psum": "f = jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i'); out = f(x8)",
    "pmean_tree": "f = jax.pmap(lambda d: jax.tree.map(lambda v: jax.lax.pmean(v, 'i'), d), "
                  "axis_name='i'); out = f({'a': x8, 'b': x8 * 2})['b']",
    "in_out_axes": "f = jax.pmap(lambda x, y: x * y, in_axes=(1, None), out_axes=1); "
                   "out = f(np.ones((3, 4), np.float32), np.float32(2))",
    "out_axes_none": "f = jax.pmap(lambda x: jax.lax.psum(x, 'i'), 'i', out_axes=None); "
                     "out = f(x8[:4])",
    "static": "f = jax.pmap(lambda x, n: x * n, static_broadcasted_argnums=1); out = f(x8, 3)",
    "devices": "f = jax.pmap(lambda x: x + 1, devices=jax.devices()[2:4]); out = f(x8[:2])",
    "all_gather": "f = jax.pmap(lambda x: jax.lax.all_gather(x, 'i'), 'i'); out = f(x8[:4])",
    "ppermute": "f = jax.pmap(lambda x: jax.lax.ppermute(x, 'i', [(0, 1), (1, 2), (2, 0)]), "
                "'i'); out = f(x8[:3])",
    "axis_index": "f = jax.pmap(lambda x: x * jax.lax.axis_index('i'), 'i'); out = f(x8)",
    "grad": "out = jax.grad(lambda x: jax.pmap(lambda v: jnp.sin(v) ** 2)(x).sum())(x8)",
    "kwargs": "f = jax.pmap(lambda x, y: x - y); out = f(x8, y=x8 * 3)",
}


@requires_jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_shardings(name):
    source = ("x8 = np.arange(8, dtype=np.float32) / 3\n" + PROGRAMS[name] + "\n"
              "result = [np.asarray(out), str(getattr(out, 'sharding', None) and "
              "out.sharding.spec) if name != 'grad' else '']")
    _same(*run_both(f"name = {name!r}\n" + source))


def _primitives(jaxpr_text: str) -> list[str]:
    return re.findall(r"= (\w+)\[|= (\w+) ", jaxpr_text)


@requires_jax
def test_traced_program_is_jit_of_shard_map():
    source = ("f = jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')\n"
              "result = str(jax.make_jaxpr(f)(np.arange(8.0, dtype=np.float32)))")
    got, expected = run_both(source)
    assert _primitives(got) == _primitives(expected)
    for fragment in ("name=_fun", "in_specs=(P('i',),)", "newly_manual_axes=frozenset({'i'})",
                     "psum[axes=('i',) axis_index_groups=None]", "check_vma=False"):
        assert fragment in got and fragment in expected


ERRORS = {
    "too_many": "jax.pmap(lambda x: x)(np.ones(9))",
    "in_axes_type": "jax.pmap(lambda x: x, in_axes='a')",
    "out_axes_type": "jax.pmap(lambda x: x, out_axes=1.5)",
    "empty_devices": "jax.pmap(lambda x: x, devices=[])",
    "static_missing": "jax.pmap(lambda x, n: x, static_broadcasted_argnums=1)(np.ones(2))",
    "axis_size": "jax.pmap(lambda x: x, axis_size=3)(np.ones(2))",
    "not_callable": "jax.pmap(3)",
    "in_axes_prefix": "jax.pmap(lambda x, y: x, in_axes=(0, 0, 0))(np.ones(2), np.ones(2))",
}


@requires_jax
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    _same(*run_both(ERRORS[name] + "\nresult = None"))


@requires_jax
@pytest.mark.parametrize("call", [
    "jax.pmap(lambda x: jax.lax.psum(x, 'i', axis_index_groups=[[0, 1], [2, 3]]), 'i')(x4)",
    "jax.pmap(lambda x: jax.lax.pmean(x, 'i', axis_index_groups=[[0, 2], [1, 3]]), 'i')(x4)",
    "jax.pmap(lambda x: jax.lax.pmax(x, 'i', axis_index_groups=[[3, 0], [1, 2]]), 'i')(x4)",
    "jax.vmap(lambda x: jax.lax.psum(x, 'i', axis_index_groups=[[0, 1], [2, 3]]), "
    "axis_name='i')(x4)",
])
def test_axis_index_groups(call):
    _same(*run_both(f"x4 = np.arange(4.0, dtype=np.float32) ** 2\nresult = np.asarray({call})"))


@requires_jax
@pytest.mark.parametrize("call", [
    "jax.pmap(lambda x: jax.lax.all_gather(x, 'i', axis_index_groups=[[0, 1], [2, 3]]), "
    "'i')(x4)",
    "jax.pmap(lambda x: jax.lax.all_gather(x, 'i', axis_index_groups=[[3, 1], [0, 2]], "
    "tiled=True), 'i')(x4.reshape(4, 1))",
    "jax.grad(lambda v: (jax.pmap(lambda x: jax.lax.all_gather(x, 'i', axis_index_groups="
    "[[0, 2], [1, 3]]), 'i')(v) * jnp.arange(8.0).reshape(4, 2)).sum())(x4)",
    "jax.pmap(lambda x: jax.lax.all_gather(x, 'i', axis_index_groups=None), 'i')(x4)",
])
def test_all_gather_groups(call):
    _same(*run_both(f"x4 = np.arange(4.0, dtype=np.float32) ** 2\nresult = np.asarray({call})"))


@requires_jax
@pytest.mark.parametrize("call", [
    "jax.pmap(lambda x: jax.lax.psum_scatter(x, 'i', axis_index_groups=[[0, 1], [2, 3]]), "
    "'i')(x44[:, :2])",
    "jax.pmap(lambda x: jax.lax.psum_scatter(x, 'i', axis_index_groups=[[0, 2], [1, 3]], "
    "tiled=True), 'i')(x44)",
    "jax.pmap(lambda x: jax.lax.all_to_all(x, 'i', 0, 0, axis_index_groups=[[0, 3], [1, 2]], "
    "tiled=True), 'i')(x44)",
    "jax.grad(lambda v: (jax.pmap(lambda x: jax.lax.psum_scatter(x, 'i', axis_index_groups="
    "[[0, 1], [2, 3]], tiled=True), 'i')(v) ** 2).sum())(x44)",
])
def test_scatter_and_all_to_all_groups(call):
    _same(*run_both("x44 = np.arange(16.0, dtype=np.float32).reshape(4, 4)\n"
                    f"result = np.asarray({call})"))

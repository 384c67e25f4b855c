"""The `import jax` mode (`laminax.install_as_jax`, `python -m laminax`, the pytest plugin) and
the extension API libraries use through it (`jax.core`, `jax.extend`, `jax.interpreters`), each
program run under real JAX 0.10.2 and under laminax in that mode, with the results compared."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from aliasrun import AliasRunError, assert_same, run_as_jax
from jaxref import JaxReferenceError, requires_jax, run_jax


def _both(source, **tolerance):
    expected = run_jax(source, fresh=True)
    got = run_as_jax(source)
    assert_same(got, expected, **tolerance)
    return got


# ----- the alias itself ------------------------------------------------------------------


def test_jax_resolves_to_laminax_modules_and_reports_the_jax_api_version():
    result = run_as_jax(
        """
        import laminax, importlib
        import jax.numpy, jax.lax, jax.core, jax.extend.core, jax.interpreters.ad
        from jax import tree_util
        result = dict(
            version=jax.__version__,
            laminax_version=laminax.__version__,
            version_info=jax.__version_info__,
            same_numpy=jax.numpy is laminax.numpy and jnp is laminax.numpy,
            same_lax=jax.lax is laminax.lax,
            same_tree_util=tree_util is laminax.tree_util,
            spec_kept=laminax.numpy.__spec__.name,
            array_type=jax.Array is laminax.Array,
            primitive=jax.extend.core.Primitive is laminax.extend.core.Primitive,
            jit_works=float(jax.jit(lambda x: x * 2)(3.0)),
        )
        """
    )
    assert result["version"] == "0.10.2"
    assert result["version_info"] == (0, 10, 2)
    assert result["laminax_version"] != "0.10.2"
    assert result["spec_kept"] == "laminax.numpy"
    assert all(result[k] for k in ("same_numpy", "same_lax", "same_tree_util", "array_type"))
    assert result["primitive"] and result["jit_works"] == 6.0


@pytest.mark.parametrize(
    "module", ["jax.no_such_module", "jax.numpy.no_such_module", "jax._src.no_such_module"]
)
def test_a_module_laminax_lacks_fails_to_import_as_in_jax(module):
    with pytest.raises(AliasRunError) as info:
        run_as_jax(f"import {module}")
    assert info.value.type_name == "ModuleNotFoundError"


def test_missing_attribute_is_an_attribute_error_naming_laminax():
    with pytest.raises(AliasRunError) as info:
        run_as_jax("jax.no_such_name")
    assert info.value.type_name == "AttributeError"
    assert "no_such_name" in info.value.message and "laminax" in info.value.message


def test_install_refuses_when_real_jax_was_imported_first():
    code = textwrap.dedent(
        """
        import sys, types
        sys.modules["jax"] = types.ModuleType("jax")  # stands for the real JAX
        import laminax
        try:
            laminax.install_as_jax()
        except RuntimeError as err:
            print("refused:", err)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "refused: install_as_jax: the real JAX is already imported" in out.stdout


def test_install_is_idempotent_and_never_imports_on_plain_laminax_import():
    code = textwrap.dedent(
        """
        import sys
        import laminax
        assert "jax" not in sys.modules, "importing laminax must not create the alias"
        a = laminax.install_as_jax(); b = laminax.install_as_jax()
        import jax
        print(a is b is jax, sum(type(f).__name__ == "_JaxAliasFinder" for f in sys.meta_path))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "1"]


def test_python_m_laminax_run_runs_an_unmodified_jax_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\nimport jax, jax.numpy as jnp\n"
        "print(jax.__version__, sys.argv[1:], float(jax.grad(lambda x: x * x)(3.0)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "laminax", "run", str(script), "a", "--b"],
        capture_output=True, text=True, check=True,
    )
    assert out.stdout.split("\n")[0] == "0.10.2 ['a', '--b'] 6.0"


def test_pytest_plugin_runs_a_jax_test_suite_on_laminax(tmp_path):
    (tmp_path / "test_uses_jax.py").write_text(
        "import jax, jax.numpy as jnp, laminax\n"
        "def test_it():\n"
        "    assert jnp is laminax.numpy and jax.__version__ == '0.10.2'\n"
        "    assert float(jax.jit(jnp.sum)(jnp.ones(3))) == 3.0\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "laminax.pytest_plugin", "-p", "no:xdist",
         "-p", "no:cacheprovider", "-q", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 passed" in out.stdout


def test_jax_src_shims_are_the_listed_ones_only():
    result = run_as_jax(
        """
        import jax._src.traceback_util as tu
        from jax._src.dtypes import TypePromotionError
        import jax._src.xla_bridge as xb
        before = dict(xb._backends)
        jnp.ones(2).block_until_ready()
        result = (callable(tu.register_exclusion), issubclass(TypePromotionError, ValueError),
                  before, sorted(xb._backends))
        """
    )
    assert result == (True, True, {}, ["cpu"])


def test_jax_src_shim_modules_are_reachable_as_attributes():
    # chex reads `jax._src.xla_bridge._backends` after a plain `import jax`
    result = run_as_jax(
        """
        backends = jax._src.xla_bridge._backends
        jnp.ones(1).block_until_ready()
        result = (type(backends).__name__, sorted(jax._src.xla_bridge._backends))
        """
    )
    assert result == ("dict", ["cpu"])


def test_jax_src_compiler_compiles_for_chex():
    result = run_as_jax(
        """
        from jax._src import compiler
        from jaxlib import _jax
        from laminax_dispatch.internal import compile_options
        backend = jax.extend.backend.get_backend()
        devices = backend.devices()[:1]
        text = jax.jit(lambda x: x * 3.0).lower(np.float32(1)).as_text()
        exe = compiler.backend_compile_and_load(
            backend, text, _jax.DeviceList(tuple(devices)), compile_options(devices))
        result = "multiply" in exe.hlo_modules()[0].to_string()
        """
    )
    assert result is True


# ----- behaviour through jax.core ---------------------------------------------------------


@requires_jax
def test_isinstance_tracer_jax_array_under_every_transformation():
    _both(
        """
        seen = []
        def f(x):
            seen.append(isinstance(x, jax.Array) and isinstance(x, jax.core.Tracer))
            return x * 2.0
        jax.jit(f)(1.0); jax.grad(f)(1.0); jax.vmap(f)(jnp.ones(2)); jax.jvp(f, (1.0,), (1.0,))
        result = seen + [isinstance(jnp.ones(2), jax.Array), isinstance(np.ones(2), jax.Array),
                         isinstance(1.0, jax.Array)]
        """
    )


@requires_jax
def test_core_avals_and_eval_jaxpr():
    _both(
        """
        closed = jax.make_jaxpr(lambda x, y: jnp.sin(x) * y)(1.0, 2.0)
        aval = jax.core.ShapedArray((2, 3), jnp.float32)
        result = (
            np.asarray(jax.core.eval_jaxpr(closed.jaxpr, closed.consts, 0.5, 3.0)[0]),
            isinstance(aval, jax.core.AbstractValue), aval.shape, str(aval.dtype),
            [(a.shape, str(a.dtype), a.weak_type) for a in closed.in_avals],
        )
        """
    )


# ----- a library's own primitive through jax.extend and jax.interpreters -----------------

# An equinox-style primitive: `scaled_sin(x, scale=s) = s * sin(x)`, with every rule given
# through JAX's extension tables (jvp, transpose of its linear tangent companion, batching,
# lowering by lax composition).
_PRIMITIVE = """
import jax.extend.core
from jax.interpreters import ad, batching, mlir
from jax import lax

scaled_sin_p = jax.extend.core.Primitive("scaled_sin")
scaled_mul_p = jax.extend.core.Primitive("scaled_mul")  # t -> scale * cos(x) * t, linear in t

def scaled_sin_impl(x, *, scale):
    return scale * jnp.sin(x)

scaled_sin_p.def_impl(scaled_sin_impl)
scaled_sin_p.def_abstract_eval(lambda x, *, scale: jax.core.ShapedArray(x.shape, x.dtype))

def scaled_mul_impl(x, t, *, scale):
    return scale * jnp.cos(x) * t

scaled_mul_p.def_impl(scaled_mul_impl)
scaled_mul_p.def_abstract_eval(lambda x, t, *, scale: jax.core.ShapedArray(t.shape, t.dtype))

def scaled_sin_jvp(primals, tangents, *, scale):
    (x,), (t,) = primals, tangents
    out = scaled_sin_p.bind(x, scale=scale)
    if type(t) is ad.Zero:
        return out, ad.Zero(jax.core.ShapedArray(x.shape, x.dtype))
    return out, scaled_mul_p.bind(x, t, scale=scale)

def scaled_mul_transpose(ct, x, t, *, scale):
    assert ad.is_undefined_primal(t) and not ad.is_undefined_primal(x)
    if type(ct) is ad.Zero:
        return [None, None]
    return [None, scaled_mul_p.bind(x, ct, scale=scale)]

def scaled_mul_jvp(primals, tangents, *, scale):
    x, t = primals
    dx, dt = tangents
    out = scaled_mul_p.bind(x, t, scale=scale)
    dx = ad.instantiate_zeros(dx)
    dt = ad.instantiate_zeros(dt)
    return out, scaled_mul_p.bind(x, dt, scale=scale) - scale * jnp.sin(x) * dx * t

def scaled_sin_batch(args, dims, *, scale):
    return scaled_sin_p.bind(args[0], scale=scale), dims[0]

def scaled_mul_batch(args, dims, *, scale):
    x, t = args
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    x, t = (batching.bdim_at_front(a, d, size) for a, d in zip(args, dims))
    return scaled_mul_p.bind(x, t, scale=scale), 0

ad.primitive_jvps[scaled_sin_p] = scaled_sin_jvp
ad.primitive_jvps[scaled_mul_p] = scaled_mul_jvp
ad.primitive_transposes[scaled_mul_p] = scaled_mul_transpose
batching.primitive_batchers[scaled_sin_p] = scaled_sin_batch
batching.primitive_batchers[scaled_mul_p] = scaled_mul_batch
mlir.register_lowering(scaled_sin_p, mlir.lower_fun(scaled_sin_impl, multiple_results=False))
mlir.register_lowering(scaled_mul_p, mlir.lower_fun(scaled_mul_impl, multiple_results=False))

def f(x):
    return jnp.sum(scaled_sin_p.bind(x, scale=3.0) ** 2)
"""

_PRIMITIVE_USES = {
    "eager": "scaled_sin_p.bind(x, scale=3.0)",
    "jit": "jax.jit(lambda x: scaled_sin_p.bind(x, scale=3.0))(x)",
    "grad": "jax.grad(f)(x)",
    "jit_grad": "jax.jit(jax.grad(f))(x)",
    "vmap": "jax.vmap(lambda r: scaled_sin_p.bind(r, scale=3.0))(x.reshape(2, 2))",
    "vmap_grad": "jax.vmap(jax.grad(f))(x.reshape(2, 2))",
    "jvp": "jax.jvp(f, (x,), (jnp.ones_like(x),))",
    "linearize": "jax.linearize(f, x)[1](jnp.ones_like(x))",
    "hessian": "jax.hessian(f)(x)",
    "jit_vmap_grad": "jax.jit(jax.vmap(jax.grad(f)))(x.reshape(2, 2))",
    "grad_of_scan": (
        "jax.grad(lambda x: lax.scan(lambda c, _: (scaled_sin_p.bind(c, scale=0.5), None),"
        " x, None, length=3)[0].sum())(x)"
    ),
    "jaxpr": "str(jax.make_jaxpr(f)(x))",
}


@requires_jax
@pytest.mark.parametrize("use", sorted(_PRIMITIVE_USES))
def test_library_primitive_works_under_every_transformation_as_in_jax(use):
    source = (
        _PRIMITIVE
        + "\nx = jnp.array([0.1, 0.5, 1.0, 2.0], jnp.float32)\n"
        + f"result = {_PRIMITIVE_USES[use]}\n"
    )
    _both(source, rtol=2e-6, atol=1e-6)


@requires_jax
def test_primitive_without_batching_rule_fails_as_in_jax():
    source = (
        "import jax.extend.core\n"
        "p = jax.extend.core.Primitive('unbatchable')\n"
        "p.def_impl(lambda x: x)\n"
        "p.def_abstract_eval(lambda x: x)\n"
        "result = jax.vmap(p.bind)(jnp.ones(3))\n"
    )
    with pytest.raises(JaxReferenceError) as jax_err:
        run_jax(source, fresh=True)
    with pytest.raises(AliasRunError) as ours:
        run_as_jax(source)
    assert ours.value.type_name == jax_err.value.type_name == "NotImplementedError"
    assert "Batching rule for 'unbatchable' not implemented" in ours.value.message


@requires_jax
def test_mapped_and_unmapped_avals():
    _both(
        """
        from jax.extend.core import mapped_aval, unmapped_aval
        a = jax.core.ShapedArray((2, 5, 3), jnp.float32)
        result = [b.shape for b in (mapped_aval(5, 1, a), unmapped_aval(4, 0, a),
                                    unmapped_aval(4, 3, a), mapped_aval(5, None, a))]
        """
    )


def test_equal_numbers_check_is_not_vacuous():
    # the comparison helper itself fails on different results
    with pytest.raises(AssertionError):
        assert_same([np.float32(1.0)], [np.float32(2.0)])


@requires_jax
def test_extend_linear_util_wraps_transforms_stores_and_caches_as_jax():
    _both("""
import jax.extend.linear_util as lu
def f(x, y=1):
    return x * 10 + y
w = lu.wrap_init(f, {"y": 2})
out = [w.call_wrapped(3), w.params, len(w.transforms), len(w.stores), w == lu.wrap_init(f, {"y": 2})]

@lu.transformation2
def scale(g, k, *a):
    return g(*a) * k
w2 = scale(w, 5)
out += [w2.call_wrapped(1), w2 == scale(lu.wrap_init(f, {"y": 2}), 5), w2 == scale(w, 6)]

@lu.transformation_with_aux2
def aux(g, store, *a):
    r = g(*a)
    store.store(r + 1)
    return r
w3, get = aux(w)
out += [w3.call_wrapped(1), get()]
for bad in (lambda: w3.call_wrapped(1), aux(w)[1]):
    try:
        bad()
    except lu.StoreException as e:
        out.append(str(e))

@lu.transformation
def old(k, *a):
    ans = yield a, {}
    yield ans * k

@lu.transformation_with_aux
def old_aux(*a):
    ans = yield a, {}
    yield ans, "aux"
w5, g5 = old_aux(w)
out += [old(w, 3).call_wrapped(1), w5.call_wrapped(1), g5()]

calls = []
@lu.cache
def c(fun, n):
    calls.append(n)
    return fun.call_wrapped(n)
out += [c(w, 1), c(w, 1), c(lu.wrap_init(f, {"y": 2}), 1), list(calls)]
w6, g6 = aux(w)
w7, g7 = aux(w)
out += [c(w6, 1), g6(), c(w7, 1), g7(), list(calls)]
a1, a2 = aux(w)[1], aux(w)
a2[0].call_wrapped(1)
out += [lu.merge_linear_aux(a1, a2[1]), lu.merge_linear_aux(a2[1], a1)]
result = out
""")


@requires_jax
def test_jax_lib_reports_the_jaxlib_version():
    _both("import jax.lib\nresult = (jax.lib.__version__, sorted(n for n in vars(jax.lib) if not n.startswith('_')))")

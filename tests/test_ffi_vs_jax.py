"""`jax.ffi` against real JAX 0.10.2: a small C++ kernel written against XLA's FFI headers
(`tests/ffi_kernels/affine.cc`) is compiled with the system compiler, registered through
`pycapsule`/`register_ffi_target`, and called with `ffi_call` eagerly, under jit and under vmap
with each `vmap_method`; the errors (no vmap_method, grad, an unregistered target) must match."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from jaxref import requires_jax, run_jax

import laminax
import laminax.numpy as lnp

SOURCE = Path(__file__).parent / "ffi_kernels" / "affine.cc"
COMPILER = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


@pytest.fixture(scope="module")
def kernel_library(tmp_path_factory) -> str:
    if COMPILER is None:
        pytest.skip("no C++ compiler (c++, g++ or clang++) on PATH to build the FFI kernel")
    library = tmp_path_factory.mktemp("ffi") / "libaffine.so"
    subprocess.run([COMPILER, "-std=c++17", "-O1", "-shared", "-fPIC", "-w",
                    f"-I{laminax.ffi.include_dir()}", str(SOURCE), "-o", str(library)],
                   check=True, capture_output=True)
    return str(library)


SNIPPET = """
import ctypes
library = ctypes.cdll.LoadLibrary(LIB)
jax.ffi.register_ffi_target("laminax_test_affine", jax.ffi.pycapsule(library.Affine),
                            platform="cpu")

def affine(x, offset, factor=np.float32(2), vmap_method="sequential"):
    out = (jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct((), x.dtype))
    return jax.ffi.ffi_call("laminax_test_affine", out, vmap_method=vmap_method)(
        x, offset, factor=factor if isinstance(factor, np.generic) else np.float32(factor))

def outcome(thunk):
    try:
        return ("ok", jax.tree_util.tree_map(lambda l: np.asarray(l).tolist(), thunk()))
    except Exception as e:
        return (type(e).__name__,)

x = np.arange(4, dtype=np.float32)
o = np.linspace(0, 1, 4).astype(np.float32)
X = np.arange(12, dtype=np.float32).reshape(3, 4)
O = X[::-1] / 10
result = {
    "eager": outcome(lambda: affine(x, o, 3.0)),
    "jit": outcome(lambda: jax.jit(affine)(x, o)),
    "jit in a program": outcome(lambda: jax.jit(
        lambda a: jnp.sum(affine(jnp.sin(a), o)[0] ** 2))(x)),
    "jaxpr": str(jax.make_jaxpr(affine)(x, o).eqns[0].primitive),
    "vmap input": outcome(lambda: jax.vmap(lambda a: affine(a, o))(X)),
    "vmap both": outcome(lambda: jax.vmap(affine)(X, O)),
    "vmap axis 1": outcome(lambda: jax.vmap(lambda a: affine(a, o), 1)(X.T)),
    "vmap unrolled": outcome(lambda: jax.vmap(
        lambda a: affine(a, o, vmap_method="sequential_unrolled"))(X)),
    "vmap nested": outcome(lambda: jax.vmap(jax.vmap(lambda a, b: affine(a, b)))(
        X.reshape(3, 2, 2), O.reshape(3, 2, 2))),
    "jit vmap": outcome(lambda: jax.jit(jax.vmap(affine))(X, O)),
    # the kernel sees the whole batch at once: its elementwise result is right, its total
    # sums over the batch (so only the first result is compared)
    "broadcast_all": outcome(lambda: jax.vmap(
        lambda a: affine(a, o, vmap_method="broadcast_all"))(X)[0]),
    "expand_dims": outcome(lambda: jax.vmap(
        lambda a: affine(a, o, vmap_method="expand_dims"))(X)),
    "no vmap_method": outcome(lambda: jax.vmap(lambda a: affine(a, o, vmap_method=None))(X)),
    # attributes are typed exactly (a Python float is float64, whatever the x64 mode)
    "python float attribute": outcome(lambda: jax.ffi.ffi_call("laminax_test_affine", (
        jax.ShapeDtypeStruct((4,), np.float32), jax.ShapeDtypeStruct((), np.float32)))(
        x, o, factor=2.0)),
    "float64 attribute": outcome(lambda: affine(x, o, np.float64(2))),
    "grad": outcome(lambda: jax.grad(lambda a: affine(a, o)[1])(x)),
    "unregistered": outcome(lambda: jax.ffi.ffi_call(
        "laminax_test_missing", jax.ShapeDtypeStruct((4,), np.float32))(x)),
    "not a capsule": outcome(lambda: jax.ffi.register_ffi_target(
        "laminax_test_bad", library.Affine, platform="cpu")),
}
"""


@requires_jax
def test_ffi_kernel_matches_jax(kernel_library):
    expected = run_jax(SNIPPET, LIB=kernel_library)
    scope = {"jax": laminax, "jnp": lnp, "np": np, "LIB": kernel_library}
    exec(SNIPPET, scope)
    got = scope["result"]
    mismatched = {k: (got[k], expected[k]) for k in expected if got[k] != expected[k]}
    assert not mismatched
    assert got["eager"] == ("ok", ([0.0, 3.3333332538604736, 6.666666507720947, 10.0], 6.0))
    assert got["vmap both"][1][1] == [6.0, 22.0, 38.0]
    assert got["python float attribute"] == got["float64 attribute"] == ("JaxRuntimeError",)


def test_include_dir_holds_the_ffi_headers():
    assert (Path(laminax.ffi.include_dir()) / "xla" / "ffi" / "api" / "ffi.h").is_file()


LOWERING_SNIPPET = """
import ctypes, importlib
mlir = importlib.import_module(jax.__name__ + ".interpreters.mlir")
extend_core = importlib.import_module(jax.__name__ + ".extend.core")
library = ctypes.cdll.LoadLibrary(LIB)
jax.ffi.register_ffi_target("laminax_test_affine", jax.ffi.pycapsule(library.Affine),
                            platform="cpu")
# a primitive of the user's own, lowered to the kernel by ffi_lowering
affine_p = extend_core.Primitive("laminax_test_affine_p")
affine_p.multiple_results = True
affine_p.def_abstract_eval(lambda x, o, **params: (jax.core.ShapedArray(x.shape, x.dtype),
                                                    jax.core.ShapedArray((), x.dtype)))
mlir.register_lowering(affine_p, jax.ffi.ffi_lowering("laminax_test_affine"), platform="cpu")
x = np.arange(4, dtype=np.float32)
o = np.ones(4, np.float32)

def outcome(thunk):
    try:
        return ("ok", [np.asarray(v).tolist() for v in thunk()])
    except Exception as e:
        return (type(e).__name__,)

result = {
    "jit": outcome(lambda: jax.jit(lambda a, b: affine_p.bind(a, b, factor=np.float32(3)))(x, o)),
    "float64 param": outcome(lambda: jax.jit(lambda a, b: affine_p.bind(a, b, factor=3.0))(x, o)),
}
"""


@requires_jax
def test_ffi_lowering_of_a_user_primitive_matches_jax(kernel_library):
    # (JAX also refuses to run such a primitive outside jit, having no impl for it; laminax
    # runs every primitive eagerly through its lowering, so that is not compared)
    expected = run_jax(LOWERING_SNIPPET, LIB=kernel_library)
    scope = {"jax": laminax, "jnp": lnp, "np": np, "LIB": kernel_library}
    exec(LOWERING_SNIPPET, scope)
    assert scope["result"] == expected
    assert expected["jit"] == ("ok", [[1.0, 4.0, 7.0, 10.0], 6.0])


BUILD_SNIPPET = """
import ctypes, importlib
mlir = importlib.import_module(jax.__name__ + ".interpreters.mlir")
extend_core = importlib.import_module(jax.__name__ + ".extend.core")
library = ctypes.cdll.LoadLibrary(LIB)
jax.ffi.register_ffi_target("laminax_test_affine", jax.ffi.pycapsule(library.Affine),
                            platform="cpu")
build = jax.ffi.build_ffi_lowering_function
rules = {
    "typed": build("laminax_test_affine"),
    "explicit layouts": build("laminax_test_affine", operand_layouts=[(0,), (0,)],
                              result_layouts=[(0,), ()]),
    "skip layouts": build("laminax_test_affine", skip_ffi_layout_processing=True),
    "config": build("laminax_test_affine", backend_config={}),
    "bad config": build("laminax_test_affine", backend_config="opaque"),
    "legacy with params": build("laminax_test_affine", api_version=2),
}
x = np.arange(4, dtype=np.float32)
o = np.ones(4, np.float32)

def outcome(thunk):
    try:
        return ("ok", [np.asarray(v).tolist() for v in thunk()])
    except Exception as e:
        return (type(e).__name__,)

result = {}
for name, rule in rules.items():
    p = extend_core.Primitive("laminax_test_build_" + name.replace(" ", "_"))
    p.multiple_results = True
    p.def_abstract_eval(lambda x, o, **params: (jax.core.ShapedArray(x.shape, x.dtype),
                                                jax.core.ShapedArray((), x.dtype)))
    mlir.register_lowering(p, lambda ctx, *a, _rule=rule, **kw: _rule(ctx, *a, **kw).results,
                           platform="cpu")
    result[name] = outcome(lambda: jax.jit(lambda a, b: p.bind(a, b, factor=np.float32(3)))(x, o))
result["batch partitionable"] = jax.ffi.register_ffi_target_as_batch_partitionable(
    "laminax_test_affine")
try:
    jax.ffi.register_ffi_type_id("laminax_test_type", None)
except ValueError as e:
    result["type id"] = str(e)
try:
    jax.ffi.register_ffi_type("laminax_test_type", {"type_id": 3})
except Exception as e:
    result["bad type"] = type(e).__name__
"""


@requires_jax
def test_build_ffi_lowering_function_and_registrations_match_jax(kernel_library):
    expected = run_jax(BUILD_SNIPPET, LIB=kernel_library)
    scope = {"jax": laminax, "jnp": lnp, "np": np, "LIB": kernel_library}
    exec(BUILD_SNIPPET, scope)
    assert scope["result"] == expected
    assert expected["typed"] == ("ok", [[1.0, 4.0, 7.0, 10.0], 6.0])

"""Building StableHLO modules with jaxlib's MLIR bindings.

`build_module` makes a module whose public ``main`` takes and returns arrays of given avals
(plus runtime tokens for ordered effects, first); a body callback fills it with operations.
The lowering of jaxprs (next layer of this package) plugs its interpreter in as that callback.
Every operation carries a source location (file, line, column) when one is given, so XLA's
error messages and IR dumps point at the user's code.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, func, sdy
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core.internal import AbstractToken, ExtendedDType, ShapedArray
from laminax_core.dtypes import float0

__all__ = ["physical_aval", 
    "ModuleBody",
    "SourceInfo",
    "aval_to_ir_type",
    "build_module",
    "make_ir_context",
    "module_to_bytecode",
    "module_to_string",
    "safe_module_name",
    "token_type",
]

# Frames of these top-level packages are laminax's own, not the user's code.
_LAMINAX_PACKAGES = frozenset(
    {
        "laminax",
        "laminax_pytree",
        "laminax_core",
        "laminax_dispatch",
        "laminax_pjit",
        "laminax_hostcb",
        "laminax_export",
    }
)
_REGISTRY = ir.DialectRegistry()
_jax_mlir_ext.register_dialects(_REGISTRY)
_THREAD_POOL = ir.ThreadPool()


class _BareContext(ir.Context):
    # ir.Context.__init__ loads every dialect linked into jaxlib; skipping it keeps a context to
    # the dialects laminax registers below (JAX's contexts do the same).
    def __init__(self):
        super(ir.Context, self).__init__()


def make_ir_context() -> ir.Context:
    """A fresh MLIR context with the func, StableHLO, CHLO and Shardy dialects loaded."""
    context = _BareContext()
    context.append_dialect_registry(_REGISTRY)
    context.load_all_available_dialects()
    context.set_thread_pool(_THREAD_POOL)
    hlo.register_dialect(context)
    chlo.register_dialect(context)
    sdy.register_dialect(context)
    return context


_SIGNLESS_INTS = {np.dtype(f"int{n}"): n for n in (8, 16, 32, 64)}
_UNSIGNED_INTS = {np.dtype(f"uint{n}"): n for n in (8, 16, 32, 64)}
# the narrow integers of ml_dtypes (i2/i4 and ui2/ui4 in StableHLO)
_SIGNLESS_INTS.update({np.dtype(ml_dtypes.int2): 2, np.dtype(ml_dtypes.int4): 4})
_UNSIGNED_INTS.update({np.dtype(ml_dtypes.uint2): 2, np.dtype(ml_dtypes.uint4): 4})
# Element types of the floating dtypes, by NumPy dtype; built lazily (needs a live context).
_FLOAT_TYPES: dict[np.dtype, Callable[[], ir.Type]] = {
    np.dtype(np.float16): ir.F16Type.get,
    np.dtype(np.float32): ir.F32Type.get,
    np.dtype(np.float64): ir.F64Type.get,
    np.dtype(ml_dtypes.bfloat16): ir.BF16Type.get,
    np.dtype(ml_dtypes.float8_e4m3fn): ir.Float8E4M3FNType.get,
    np.dtype(ml_dtypes.float8_e5m2): ir.Float8E5M2Type.get,
    np.dtype(ml_dtypes.float8_e4m3fnuz): ir.Float8E4M3FNUZType.get,
    np.dtype(ml_dtypes.float8_e5m2fnuz): ir.Float8E5M2FNUZType.get,
    np.dtype(ml_dtypes.float8_e4m3b11fnuz): ir.Float8E4M3B11FNUZType.get,
    np.dtype(ml_dtypes.float8_e4m3): ir.Float8E4M3Type.get,
    np.dtype(ml_dtypes.float8_e3m4): ir.Float8E3M4Type.get,
    np.dtype(ml_dtypes.float8_e8m0fnu): ir.Float8E8M0FNUType.get,
    np.dtype(ml_dtypes.float4_e2m1fn): ir.Float4E2M1FNType.get,
}


def _element_type(dtype: np.dtype) -> ir.Type:
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or dtype == float0:  # float0 holds no data: passed as bool zeros
        return ir.IntegerType.get_signless(1)
    if dtype in _SIGNLESS_INTS:
        return ir.IntegerType.get_signless(_SIGNLESS_INTS[dtype])
    if dtype in _UNSIGNED_INTS:
        return ir.IntegerType.get_unsigned(_UNSIGNED_INTS[dtype])
    if dtype in _FLOAT_TYPES:
        return _FLOAT_TYPES[dtype]()
    if dtype == np.complex64:
        return ir.ComplexType.get(ir.F32Type.get())
    if dtype == np.complex128:
        return ir.ComplexType.get(ir.F64Type.get())
    raise TypeError(f"No StableHLO element type for dtype {dtype.name}.")


def physical_aval(aval: ShapedArray) -> ShapedArray:
    """The aval a value is stored as: an extended dtype's (typed keys') adds its trailing key
    dimensions and has their physical dtype; any other aval is its own."""
    dtype = aval.dtype
    if not isinstance(dtype, ExtendedDType):
        return aval
    return ShapedArray((*aval.shape, *dtype.key_shape), dtype.physical_dtype)


def aval_to_ir_type(aval: ShapedArray) -> ir.RankedTensorType:
    """The MLIR tensor type of an aval (``f32[3]`` -> ``tensor<3xf32>``; a token's is
    ``!stablehlo.token``); needs a context."""
    if isinstance(aval, AbstractToken):
        return token_type()
    aval = physical_aval(aval)
    shape = aval.shape
    if not all(type(d) is int for d in shape):  # symbolic dimensions are dynamic (`?`)
        shape = [d if type(d) is int else ir.ShapedType.get_dynamic_size() for d in shape]
    return ir.RankedTensorType.get(list(shape), _element_type(aval.dtype))


def token_type() -> ir.Type:
    """``!stablehlo.token``, the type that orders side effects."""
    return hlo.TokenType.get()


@dataclass(frozen=True)
class SourceInfo:
    """Where in the user's code an operation comes from: becomes its MLIR location."""

    file: str
    line: int
    column: int = 0
    name: str | None = None

    @classmethod
    def from_caller(cls, name: str | None = None) -> SourceInfo:
        """The innermost calling frame outside laminax's packages: the user's line.

        Args:
          name: the location's name, such as the primitive's.
        """
        frame = sys._getframe(1)
        while frame is not None and _is_laminax_frame(frame):
            frame = frame.f_back
        if frame is None:
            return cls("<unknown>", 0, 0, name)
        return cls(frame.f_code.co_filename, frame.f_lineno, 0, name)

    def location(self) -> ir.Location:
        """The MLIR location (a file location, named when `name` is set); needs a context."""
        loc = ir.Location.file(self.file, self.line, self.column)
        return ir.Location.name(self.name, childLoc=loc) if self.name else loc


def _is_laminax_frame(frame) -> bool:
    module = frame.f_globals.get("__name__", "")
    return module.partition(".")[0] in _LAMINAX_PACKAGES


def safe_module_name(name: str) -> str:
    """`name` with the characters that are unsafe in symbol and file names replaced."""
    return re.sub(r"[^\w.\-]", "_", name) or "module"


# body(token_args, args) -> (token_results, results), all ir.Values.
ModuleBody = Callable[
    [list[ir.Value], list[ir.Value]], tuple[Sequence[ir.Value], Sequence[ir.Value]]
]


def build_module(
    name: str,
    in_avals: Sequence[ShapedArray],
    out_avals: Sequence[ShapedArray],
    body: ModuleBody,
    *,
    num_tokens: int = 0,
    source: SourceInfo | None = None,
    on_module: Callable[[ir.Module], None] | None = None,
    arg_names: Sequence[str | None] | None = None,
) -> ir.Module:
    """Builds a module with a public ``main(tokens..., inputs...) -> (tokens..., outputs...)``.

    Args:
      name: the module's name (``jit_<fun>`` by JAX's convention); used by caches and dumps.
      in_avals: the avals of main's array arguments.
      out_avals: the avals main must return.
      body: called inside main with the token and array arguments as MLIR values; returns the
        token results and the array results.
      num_tokens: how many runtime tokens main threads through (one per ordered effect).
      source: the location operations get unless the body sets its own.
      on_module: called with the new module before main is built (the body may then add
        private functions to it).
      arg_names: a name (or None) per array argument, main's argument locations: XLA names
        the HLO parameters after them, as JAX does with the Python arguments' names.

    Returns:
      The module, in a fresh context (`module.context`).

    Raises:
      TypeError: the body returned the wrong number or types of results.

    Example:
      >>> import numpy as np
      >>> from jaxlib.mlir.dialects import stablehlo as hlo
      >>> from laminax_core import ShapedArray
      >>> aval = ShapedArray((3,), np.float32)
      >>> module = build_module(
      ...     "jit_add", [aval, aval], [aval], lambda tokens, args: (tokens, [hlo.add(*args)])
      ... )
      >>> print(module_to_string(module, enable_debug_info=False).splitlines()[1].strip())
      func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> tensor<3xf32> {
    """
    context = make_ir_context()
    location = source.location if source else ir.Location.unknown
    with context, location():
        module = ir.Module.create()
        module.operation.attributes["sym_name"] = ir.StringAttr.get(safe_module_name(name))
        if on_module is not None:
            on_module(module)
        tokens = [token_type()] * num_tokens
        arg_types = tokens + [aval_to_ir_type(a) for a in in_avals]
        result_types = tokens + [aval_to_ir_type(a) for a in out_avals]
        with ir.InsertionPoint(module.body):
            main = func.FuncOp("main", ir.FunctionType.get(arg_types, result_types))
            main.attributes["sym_visibility"] = ir.StringAttr.get("public")
            names = [None] * num_tokens + list(arg_names or [None] * len(in_avals))
            block = main.add_entry_block(
                [ir.Location.name(n) if n else location() for n in names])
            with ir.InsertionPoint(block):
                args = list(block.arguments)
                token_outs, outs = body(args[:num_tokens], args[num_tokens:])
                results = [*token_outs, *outs]
                _check_results(name, results, result_types)
                func.ReturnOp(results)
    return module


def _check_results(name: str, results: Sequence[ir.Value], expected: Sequence[ir.Type]) -> None:
    got = [r.type for r in results]
    if len(got) != len(expected) or any(g != e for g, e in zip(got, expected, strict=False)):
        raise TypeError(
            f"build_module({name!r}): the body returned {[str(t) for t in got]}, but main "
            f"declares {[str(t) for t in expected]}; return the tokens first, then one value "
            "per output aval."
        )


def module_to_string(module: ir.Module, enable_debug_info: bool = True) -> str:
    """The module's text form; with `enable_debug_info`, each operation's source location."""
    out = io.StringIO()
    module.operation.print(file=out, enable_debug_info=enable_debug_info)
    return out.getvalue()


def module_to_bytecode(module: ir.Module) -> bytes:
    """The module as MLIR bytecode: what laminax hands to XLA and hashes for caches."""
    out = io.BytesIO()
    module.operation.write_bytecode(file=out)
    return out.getvalue()

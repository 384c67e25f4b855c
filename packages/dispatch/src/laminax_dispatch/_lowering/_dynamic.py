"""Lowering with symbolic dimensions (shape polymorphism): a function being lowered knows the
values of its dimension variables (scalar `ir.Value`s, main's or a private function's leading
arguments), and shapes that hold `DimExpr`s become `stablehlo.dynamic_*` operations on shape
tensors computed from them, as JAX emits them. Static shapes take none of these paths."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import config as core_config
from laminax_core.internal import DimExpr

__all__ = [
    "ir_ops",
    "broadcast_in_dim", "dim_value_dtype", "dim_values", "eval_dim", "is_static", "reshape",
    "shape_tensor", "using_dim_values",
    "PLATFORM_INDEX", "lowering_platforms", "platform_of", "using_platforms",
]

# The name under which a module lowered for several platforms keeps its platform index
# argument among the dimension values: it is threaded into private functions as they are.
PLATFORM_INDEX = "_platform_index"

_state = threading.local()


def is_static(shape) -> bool:
    return all(type(d) is int for d in shape)


def dim_value_dtype() -> np.dtype:
    """The integer type dimension values are computed in: int64 with x64, else int32 (JAX's)."""
    return np.dtype(np.int64 if core_config.config.read("jax_enable_x64") else np.int32)


def dim_values() -> dict:
    """Variable name -> scalar value, in the function being lowered."""
    return getattr(_state, "values", None) or {}


@contextlib.contextmanager
def using_dim_values(values: dict):
    previous = getattr(_state, "values", None)
    _state.values = values
    try:
        yield
    finally:
        _state.values = previous


def lowering_platforms() -> tuple[str, ...]:
    """The platforms the code being lowered may run on (several for a multi-platform export;
    narrowed inside a `platform_dependent` branch to those that select it)."""
    found = getattr(_state, "platforms", None)
    if found is None:
        from laminax_dispatch._backends import get_backend

        found = (_canonical(get_backend()),)
    return found


@contextlib.contextmanager
def using_platforms(platforms: tuple[str, ...]):
    previous = getattr(_state, "platforms", None)
    _state.platforms = tuple(platforms)
    try:
        yield
    finally:
        _state.platforms = previous


def platform_of(devices) -> str:
    """The lowering platform of a device assignment (`cpu`, `cuda`, `rocm`, `tpu`), or of the
    default backend when there are no devices."""
    if devices:
        return _canonical(devices[0].client)
    from laminax_dispatch._backends import get_backend

    return _canonical(get_backend())


def _canonical(client) -> str:
    platform = client.platform
    if platform == "gpu":  # a PJRT GPU client names its kind in its version
        return "rocm" if "rocm" in client.platform_version.lower() else "cuda"
    return platform


def _scalar_type():
    bits = dim_value_dtype().itemsize * 8
    return ir.RankedTensorType.get([], ir.IntegerType.get_signless(bits))


def _const(v: int) -> ir.Value:
    t = _scalar_type()
    return hlo.constant(ir.DenseElementsAttr.get(
        np.asarray(v, dtype=dim_value_dtype()), type=t.element_type, shape=[]))


class _IrOps:
    const = staticmethod(_const)
    add = staticmethod(hlo.add)
    mul = staticmethod(hlo.multiply)
    max = staticmethod(hlo.maximum)
    min = staticmethod(hlo.minimum)

    @staticmethod
    def floordiv(a, b):
        # floor division of signed integers: the truncated quotient, one less where the
        # operands' signs differ and the division is inexact
        q = hlo.divide(a, b)
        r = hlo.remainder(a, b)
        zero = _const(0)
        inexact = _cmp(r, zero, "NE")
        signs = _cmp(_cmp(a, zero, "LT"), _cmp(b, zero, "LT"), "NE")
        return hlo.select(hlo.and_(inexact, signs), hlo.subtract(q, _const(1)), q)

    @staticmethod
    def mod(a, b):
        r = hlo.remainder(a, b)
        zero = _const(0)
        fix = hlo.and_(_cmp(r, zero, "NE"), _cmp(_cmp(r, zero, "LT"), _cmp(b, zero, "LT"), "NE"))
        return hlo.select(fix, hlo.add(r, b), r)


def _cmp(a, b, direction: str):
    elt = ir.RankedTensorType(a.type).element_type
    kind = "UNSIGNED" if ir.IntegerType(elt).width == 1 else "SIGNED"
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction),
                       compare_type=hlo.ComparisonTypeAttr.get(kind))


def eval_dim(d) -> ir.Value:
    """A dimension's value as a scalar tensor of `dim_value_dtype()`."""
    if isinstance(d, DimExpr):
        return d.evaluate(dim_values(), _IrOps)
    return _const(int(d))


def shape_tensor(shape) -> ir.Value:
    """A 1-D tensor holding the dimensions (JAX: each reshaped to 1 element, concatenated)."""
    elt = _scalar_type().element_type
    one = ir.RankedTensorType.get([1], elt)
    pieces, pending = [], []

    def flush():
        if pending:
            pieces.append(hlo.constant(ir.DenseElementsAttr.get(
                np.asarray(pending, dtype=dim_value_dtype()), type=elt, shape=[len(pending)])))
            pending.clear()

    for d in shape:
        if isinstance(d, DimExpr):
            flush()
            pieces.append(hlo.reshape(one, eval_dim(d)))
        else:
            pending.append(int(d))
    flush()
    if not pieces:
        return hlo.constant(ir.DenseElementsAttr.get(np.zeros((0,), dim_value_dtype()), type=elt, shape=[0]))
    return pieces[0] if len(pieces) == 1 else hlo.concatenate(pieces, 0)


def broadcast_in_dim(result_type, x: ir.Value, shape, dims) -> ir.Value:
    """`broadcast_in_dim` to `shape`, dynamic when the shape is symbolic."""
    if is_static(shape):
        return hlo.broadcast_in_dim(result_type, x, list(dims))
    return hlo.dynamic_broadcast_in_dim(result_type, x, shape_tensor(shape), list(dims))


def reshape(result_type, x: ir.Value, shape) -> ir.Value:
    if is_static(shape):
        return hlo.reshape(result_type, x)
    return hlo.dynamic_reshape(result_type, x, shape_tensor(shape))


def ir_ops():
    """The operations `DimExpr.evaluate` combines MLIR scalar values with."""
    return _IrOps

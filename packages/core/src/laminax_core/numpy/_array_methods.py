"""The NumPy-style methods and operators of traced arrays, backed by `laminax_core.numpy`.

`install()` puts them on `Tracer` when this package is imported, which importing `laminax_core`
does; the layers above copy them from `Tracer` onto their array classes.
"""

from __future__ import annotations

import functools

import numpy as np

from laminax_core import _trace, errors
from laminax_core.numpy import (
    _creation,
    _indexing,
    _linalg_products,
    _logic,
    _reductions,
    _selection,
    _shape,
    _sorting,
    _ufuncs,
)
from laminax_core.numpy._operands import is_arraylike

__all__ = ["METHODS", "OPERATORS", "PROPERTIES", "install", "lookup"]


def _astype(x, dtype, copy: bool = False, device=None):
    return _shape.astype(x, dtype)


def _reshape(x, *args, order: str = "C", **kwargs):
    if "shape" in kwargs or "newshape" in kwargs:
        shape = kwargs.get("shape", kwargs.get("newshape"))
    elif len(args) == 1 and not isinstance(args[0], int):
        shape = args[0]
    else:
        shape = args
    return _shape.reshape(x, shape, order)


def _transpose(x, *axes):
    if not axes or axes == (None,):
        return _shape.transpose(x)
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = tuple(axes[0])
    return _shape.transpose(x, axes)


def _flatten(x, order: str = "C"):
    return _shape.ravel(x, order)


def _item(x, *args):
    value = x.to_concrete_value() if isinstance(x, _trace.Tracer) else x
    if value is None:
        raise errors.ConcretizationTypeError(x, "The item() method was called")

    return np.asarray(value).item(*args)


def _nonzero(x, *, size=None, fill_value=None):
    return _indexing.nonzero(x, size=size, fill_value=fill_value)


def _sort(x, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    return _sorting.sort(x, axis, kind=kind, order=order, stable=stable, descending=descending)


def _argsort(x, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    return _sorting.argsort(x, axis, kind=kind, order=order, stable=stable,
                            descending=descending)


METHODS = {
    "all": _reductions.all, "any": _reductions.any, "argmax": _reductions.argmax,
    "argmin": _reductions.argmin, "argsort": _argsort, "astype": _astype,
    "clip": _selection.clip, "conj": _ufuncs.conjugate, "conjugate": _ufuncs.conjugate,
    "cumprod": _reductions.cumprod, "cumsum": _reductions.cumsum,
    "diagonal": _linalg_products.diagonal, "dot": _linalg_products.dot,
    "flatten": _flatten, "item": _item, "max": _reductions.max, "mean": _reductions.mean,
    "min": _reductions.min, "nonzero": _nonzero, "prod": _reductions.prod,
    "ptp": _reductions.ptp, "ravel": _shape.ravel, "repeat": _shape.repeat,
    "reshape": _reshape, "round": _ufuncs.round, "searchsorted": _sorting.searchsorted,
    "sort": _sort, "squeeze": _shape.squeeze, "std": _reductions.std, "sum": _reductions.sum,
    "swapaxes": _shape.swapaxes, "take": _indexing.take, "trace": _linalg_products.trace,
    "transpose": _transpose, "var": _reductions.var, "copy": _creation.copy,
}  # fmt: skip


def _reflected(fn):
    return lambda x, y: fn(y, x)


def _builtin_round(x, ndigits=None):
    """Python's `round(x[, ndigits])`: as `round(float)`, no `ndigits` gives an integer array."""
    out = _ufuncs.round(x, decimals=ndigits or 0)
    # asarray: eagerly, a 0-d conversion gives a NumPy value; round(Array) is an Array in JAX
    return _creation.asarray(out.astype(int)) if ndigits is None else out


OPERATORS = {
    "__add__": _ufuncs.add, "__radd__": _reflected(_ufuncs.add),
    "__sub__": _ufuncs.subtract, "__rsub__": _reflected(_ufuncs.subtract),
    "__mul__": _ufuncs.multiply, "__rmul__": _reflected(_ufuncs.multiply),
    "__truediv__": _ufuncs.true_divide, "__rtruediv__": _reflected(_ufuncs.true_divide),
    "__floordiv__": _ufuncs.floor_divide, "__rfloordiv__": _reflected(_ufuncs.floor_divide),
    "__mod__": _ufuncs.remainder, "__rmod__": _reflected(_ufuncs.remainder),
    "__divmod__": _ufuncs.divmod, "__rdivmod__": _reflected(_ufuncs.divmod),
    "__pow__": _ufuncs.power, "__rpow__": _reflected(_ufuncs.power),
    "__matmul__": _linalg_products.matmul, "__rmatmul__": _reflected(_linalg_products.matmul),
    "__and__": _logic.bitwise_and, "__rand__": _reflected(_logic.bitwise_and),
    "__or__": _logic.bitwise_or, "__ror__": _reflected(_logic.bitwise_or),
    "__xor__": _logic.bitwise_xor, "__rxor__": _reflected(_logic.bitwise_xor),
    "__lshift__": _logic.left_shift, "__rlshift__": _reflected(_logic.left_shift),
    "__rshift__": _logic.right_shift, "__rrshift__": _reflected(_logic.right_shift),
    "__eq__": _logic.equal, "__ne__": _logic.not_equal, "__lt__": _logic.less,
    "__le__": _logic.less_equal, "__gt__": _logic.greater, "__ge__": _logic.greater_equal,
    "__neg__": _ufuncs.negative, "__pos__": _ufuncs.positive, "__abs__": _ufuncs.absolute,
    "__invert__": _logic.invert, "__getitem__": _indexing.getitem,
    "__round__": _builtin_round,
}  # fmt: skip

PROPERTIES = {
    "at": _indexing.IndexUpdateHelper,
    "T": _shape.transpose,
    "mT": _linalg_products.matrix_transpose,
    "real": _ufuncs.real,
    "imag": _ufuncs.imag,
}


def _returns_not_implemented(fn):
    """Binary operators give NotImplemented for operands that are not arrays (Python then
    tries the other operand, then raises its own TypeError)."""

    @functools.wraps(fn)
    def operator(x, y):
        if not is_arraylike(y) and not isinstance(y, (list, tuple)):
            return NotImplemented
        return fn(x, y)

    return operator


def lookup(name: str):
    """The numpy-backed method or property getter `name`, or None (for `Tracer.__getattr__`)."""
    if name in METHODS:
        return METHODS[name]
    return PROPERTIES.get(name)


def install(cls=_trace.Tracer) -> None:
    """Puts the numpy-backed methods, operators and properties on `cls`."""
    for name, fn in METHODS.items():
        setattr(cls, name, fn)
    unary = {"__neg__", "__pos__", "__abs__", "__invert__", "__getitem__", "__round__"}
    for name, fn in OPERATORS.items():
        setattr(cls, name, fn if name in unary else _returns_not_implemented(fn))
    for name, fn in PROPERTIES.items():
        setattr(cls, name, property(fn))


"""Function transformations from NumPy's API, built on core's `vmap`: `vectorize`,
`apply_along_axis`, `apply_over_axes`, `fromfunction`."""

from __future__ import annotations

import functools
import re

import numpy as np

from laminax_core import _api
from laminax_core._avals import get_aval
from laminax_core.numpy._index_tricks import indices
from laminax_core.numpy._operands import (
    as_array,
    broadcast_to_shape,
    canonicalize_axis,
    check_arraylike,
)
from laminax_core.numpy._shape import expand_dims

__all__ = ["apply_along_axis", "apply_over_axes", "fromfunction", "vectorize"]

_DIMS = r"\w+"
_ARGUMENT = rf"\((?:{_DIMS}(?:,{_DIMS})*)?\)"
_SIGNATURE = re.compile(rf"^{_ARGUMENT}(?:,{_ARGUMENT})*->{_ARGUMENT}(?:,{_ARGUMENT})*$")


def _parse_signature(signature: str):
    signature = signature.replace(" ", "")
    if not _SIGNATURE.match(signature):
        raise ValueError(f"jnp.vectorize: not a valid gufunc signature: {signature!r}.")
    inputs, outputs = signature.split("->")

    def parse(part):
        return [tuple(d for d in arg.split(",") if d) for arg in re.findall(r"\(([^)]*)\)",
                                                                             part)]

    return parse(inputs), parse(outputs)


def vectorize(pyfunc, *, excluded=frozenset(), signature: str | None = None):
    """`pyfunc` made to broadcast over leading dimensions, with `vmap` (each call sees the
    core dimensions given by the gufunc `signature`, or scalars).

    Args:
      pyfunc: the function of arrays.
      excluded: positions or names of arguments passed through unvectorized.
      signature: e.g. "(n),(n)->()" for a function of two vectors returning a scalar.

    Returns:
      The vectorized function.

    Example:
      >>> dot = vectorize(lambda a, b: (a * b).sum(), signature="(n),(n)->()")
      >>> dot(np.ones((4, 3)), np.ones(3)).shape
      (4,)
    """
    in_core, out_core = _parse_signature(signature) if signature else (None, None)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        static = {i: a for i, a in enumerate(args) if i in excluded}
        dynamic = [as_array(a) for i, a in enumerate(args) if i not in excluded]
        kw_static = {k: v for k, v in kwargs.items() if k in excluded}
        kw_dynamic = {k: v for k, v in kwargs.items() if k not in excluded}
        if kw_dynamic:
            raise ValueError("jnp.vectorize: pass vectorized arguments by position (keyword "
                             f"arguments {sorted(kw_dynamic)} are not excluded).")
        cores = in_core or [()] * len(dynamic)
        if len(cores) != len(dynamic):
            raise TypeError(f"jnp.vectorize: the signature has {len(cores)} inputs, the call "
                            f"passed {len(dynamic)}.")
        loop_shapes = [get_aval(a).shape[:get_aval(a).ndim - len(c)] for a, c in
                       zip(dynamic, cores, strict=True)]
        batch = tuple(np.broadcast_shapes(*loop_shapes)) if loop_shapes else ()

        dynamic = [broadcast_to_shape(a, batch + get_aval(a).shape[len(s):])
                   for a, s in zip(dynamic, loop_shapes, strict=True)]

        def call(*dyn):
            full, it = [], iter(dyn)
            for i in range(len(args)):
                full.append(static[i] if i in static else next(it))
            return pyfunc(*full, **kw_static)

        fn = call
        for _ in batch:
            fn = _api.vmap(fn)
        return fn(*dynamic)

    return wrapped


def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    """`func1d` applied to the 1-d slices of `arr` along `axis` (with `vmap`).

    Example:
      >>> apply_along_axis(lambda v: v[0] + v[-1], 1, np.arange(6).reshape(2, 3))
      array([2, 8], dtype=int32)
    """
    check_arraylike("apply_along_axis", arr)
    arr = as_array(arr)
    ndim = get_aval(arr).ndim
    axis = canonicalize_axis(axis, ndim, "jnp.apply_along_axis")
    fn = (lambda slice_: func1d(slice_, *args, **kwargs)) if (args or kwargs) else func1d
    for _ in range(axis + 1, ndim):
        fn = _api.vmap(fn, in_axes=-1, out_axes=-1)
    for _ in range(axis):
        fn = _api.vmap(fn, in_axes=0, out_axes=0)
    return fn(arr)


def apply_over_axes(func, a, axes):
    """`func(a, axis)` applied for each axis in turn, keeping the reduced axes.

    Example:
      >>> from laminax_core.numpy._reductions import sum as jsum
      >>> apply_over_axes(jsum, np.ones((2, 3)), [0, 1])
      array([[6.]], dtype=float32)
    """
    check_arraylike("apply_over_axes", a)
    a = as_array(a)
    for axis in axes:
        out = func(a, axis)
        if get_aval(out).ndim == get_aval(a).ndim - 1:
            out = expand_dims(out, axis)
        a = out
    return a


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """`function(*indices(shape))`: an array whose entries are a function of their indices.

    Example:
      >>> fromfunction(lambda i, j: i + 10 * j, (2, 2), dtype=np.int32)
      array([[ 0, 10],
             [ 1, 11]], dtype=int32)
    """
    grids = indices(shape, dtype=dtype)
    return function(*[grids[k] for k in range(len(shape))], **kwargs)

"""`jnp.ufunc`: functions with NumPy's ufunc methods (`reduce`, `accumulate`, `at`, `outer`,
`reduceat`), `frompyfunc` to make one from a scalar function, and the ufunc objects JAX
exposes (`jnp.add`, `jnp.maximum`, ... : 14 of them).

A ufunc calls its function (broadcasting as `vectorize` does for a scalar function). The
methods run generic programs over the function, in the order NumPy defines: `reduce` a
`fori_loop` folding slices along the axis, `accumulate` a `scan`, `at` a `scan` over the
index positions (so repeated indices apply the function repeatedly); the built-in ufuncs
use faster equivalents where JAX does (`add.reduce` is `sum`, `add.at` a scatter-add).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from laminax_core import lax
from laminax_core._avals import get_aval
from laminax_core.numpy import _logic, _reductions, _ufuncs
from laminax_core.numpy._creation import arange
from laminax_core.numpy._indexing import IndexUpdateHelper
from laminax_core.numpy._operands import (
    as_array,
    canonicalize_axis,
    check_arraylike,
    concrete_array,
)
from laminax_core.numpy._selection import where as select_where
from laminax_core.numpy._shape import broadcast_to, moveaxis, ravel, stack
from laminax_core.numpy._vectorize import vectorize

__all__ = [
    "add", "bitwise_and", "bitwise_or", "bitwise_xor", "frompyfunc", "logaddexp",
    "logaddexp2", "logical_and", "logical_or", "logical_xor", "maximum", "minimum",
    "multiply", "negative", "subtract", "ufunc",
]  # fmt: skip


class ufunc:  # noqa: N801 (NumPy's and JAX's name)
    """A function with NumPy's ufunc methods.

    Args:
      func: the function (of `nin` arrays, returning `nout`); a scalar function is
        vectorized.
      nin, nout: numbers of inputs and outputs.
      name: the name shown in reprs (default `func.__name__`).
      nargs: accepted for JAX compatibility (`nin` otherwise).
      identity: the reduction identity (used by `reduce` without `initial`).
      call, reduce, accumulate, at, reduceat: faster implementations of the methods.

    Example:
      >>> mul = ufunc(lambda a, b: a * b, 2, 1, identity=1)
      >>> mul.reduce(np.array([1, 2, 3, 4], np.int32))
      array(24, dtype=int32)
    """

    def __init__(self, func: Callable, /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity=None, call=None, reduce=None,
                 accumulate=None, at=None, reduceat=None):
        self._func = func
        self.nin, self.nout = operator.index(nin), operator.index(nout)
        self.nargs = self.nin if nargs is None else operator.index(nargs)
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self.__doc__ = getattr(func, "__doc__", None) or ufunc.__doc__
        self._call, self._reduce, self._accumulate = call, reduce, accumulate
        self._at, self._reduceat = at, reduceat

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        if len(args) != self.nin:
            raise TypeError(f"{self} takes {self.nin} positional arguments, got {len(args)}.")
        check_arraylike(self.__name__, *args)
        if self._call is not None:
            return self._call(*args)

        out = vectorize(self._func)(*args)
        return tuple(out) if self.nout > 1 else out

    # ----- reduce ---------------------------------------------------------------------------

    def _check_binary(self, method: str) -> None:
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims: bool = False, initial=None,
               where=None):
        """Folds `a` along `axis` (an int, or None for all) with the ufunc, from the left,
        starting from `initial` (or the identity, or the first element).

        Example:
          >>> subtract.reduce(np.array([10, 1, 2], np.int32))
          array(7, dtype=int32)
        """
        check_arraylike(f"{self.__name__}.reduce", a)
        self._check_binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if where is not None and self.identity is None and initial is None:
            raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                             "identity, so to use a where mask one has to specify 'initial'.")
        if self._reduce is not None:
            return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                                where=where)
        return self._reduce_by_loop(as_array(a), axis, dtype, keepdims, initial, where)

    def _reduce_by_loop(self, arr, axis, dtype, keepdims, initial, where):
        if initial is None:
            initial = self.identity
        if dtype is None:
            one = np.ones((), get_aval(arr).dtype)
            dtype = get_aval(as_array(self(one, one))).dtype
        if where is not None:
            where = broadcast_to(as_array(where), arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError(f"{self.__name__}.reduce over a tuple of axes")
        if axis is None:
            final_shape = (1,) * arr.ndim if keepdims else ()
            arr, where = ravel(arr), None if where is None else ravel(where)
            axis = 0
        else:
            axis = canonicalize_axis(axis, arr.ndim, f"{self.__name__}.reduce")
            final_shape = arr.shape[:axis] + ((1,) if keepdims else ()) + arr.shape[axis + 1:]
            arr = moveaxis(arr, axis, 0)
            where = None if where is None else moveaxis(where, axis, 0)
        if initial is None and arr.shape[0] == 0:
            raise ValueError(f"zero-size array to reduction operation {self.__name__} which "
                             "has no identity")

        def body(i, total):
            step = self(total, lax.dynamic_index_in_dim(arr, i, 0, False).astype(dtype))
            if where is None:
                return step
            return select_where(lax.dynamic_index_in_dim(where, i, 0, False), step, total)

        start = arr[0] if initial is None else initial
        start = broadcast_to(as_array(start).astype(dtype), arr.shape[1:])
        result = lax.fori_loop(0 if initial is not None else 1, arr.shape[0], body, start)
        return lax.reshape(result, final_shape) if keepdims else result

    # ----- accumulate -----------------------------------------------------------------------

    def accumulate(self, a, axis: int = 0, dtype=None, out=None):
        """The running `reduce` along `axis`: element `i` folds elements `0..i`.

        Example:
          >>> subtract.accumulate(np.array([10, 1, 2], np.int32))
          array([10,  9,  7], dtype=int32)
        """
        check_arraylike(f"{self.__name__}.accumulate", a)
        self._check_binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype)
        arr = as_array(a)
        axis = canonicalize_axis(axis, arr.ndim, f"{self.__name__}.accumulate")
        arr = moveaxis(arr, axis, 0)
        if dtype is None:
            one = np.ones((), get_aval(arr).dtype)
            dtype = get_aval(as_array(self(one, one))).dtype
        if arr.shape[0] == 0:
            return moveaxis(arr.astype(dtype), 0, axis)
        first = arr[0].astype(dtype)

        def step(total, x):
            total = self(total, x.astype(dtype))
            return total, total

        _, rest = lax.scan(step, first, arr[1:])
        out = lax.concatenate([lax.broadcast_in_dim(first, (1, *first.shape),
                                                    tuple(range(1, first.ndim + 1))), rest], 0)
        return moveaxis(out, 0, axis)

    # ----- at -------------------------------------------------------------------------------

    def at(self, a, indices, b=None, /, *, inplace: bool = True):
        """`a` with the ufunc applied at `indices` (with operand `b` for binary ufuncs), one
        application per index occurrence; `inplace=False` is required (arrays are immutable).

        Example:
          >>> add.at(np.zeros(3, np.float32), np.array([0, 0, 2]), 1.0, inplace=False)
          array([2., 0., 1.], dtype=float32)
        """
        if inplace:
            raise NotImplementedError(
                "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate in place like "
                "np.ufunc.at(). Pass inplace=False and use the result, e.g.\n"
                ">>> arr = jnp.add.at(arr, ind, val, inplace=False)")
        check_arraylike(f"{self.__name__}.at", a, indices)
        if b is None:
            if self.nin != 1:
                raise ValueError(f"{self.__name__}.at needs the second operand b.")
        elif self.nin != 2:
            raise ValueError(f"{self.__name__}.at takes no operand b for a unary ufunc.")
        if self._at is not None:
            return self._at(a, indices, b)
        return self._at_by_scan(as_array(a), indices, b)

    def _at_by_scan(self, arr, indices, b):
        flat_positions = ravel(IndexUpdateHelper(_positions(arr))[indices].get())
        n = flat_positions.shape[0]
        flat = ravel(arr)
        operands = () if b is None else (ravel(broadcast_to(as_array(b), (n,))),)

        def step(values, item):
            position, *operand = item
            current = lax.dynamic_index_in_dim(values, position, 0, False)
            updated = as_array(self(current, *operand)).astype(values.dtype)
            return IndexUpdateHelper(values)[position].set(updated), None

        out, _ = lax.scan(step, flat, (flat_positions, *operands))
        return lax.reshape(out, arr.shape)

    # ----- outer, reduceat ------------------------------------------------------------------

    def outer(self, A, B, /):  # noqa: N803 (NumPy's names)
        """The ufunc of every pair: `out[i..., j...] = ufunc(A[i...], B[j...])`.

        Example:
          >>> multiply.outer(np.arange(3, dtype=np.int32), np.arange(2, dtype=np.int32)).shape
          (3, 2)
        """
        check_arraylike(f"{self.__name__}.outer", A, B)
        self._check_binary("outer")
        a, b = as_array(A), as_array(B)
        a = lax.reshape(a, (*a.shape, *(1,) * b.ndim))
        return self(a, b)

    def reduceat(self, a, indices, axis: int = 0, dtype=None, out=None):
        """Reductions over the slices `a[indices[i]:indices[i + 1]]` along `axis` (the last
        to the end; where `indices[i] >= indices[i + 1]`, just `a[indices[i]]`), as NumPy
        defines it. `indices` must be concrete.

        Example:
          >>> add.reduceat(np.arange(8, dtype=np.int32), np.array([0, 4, 1, 5]))
          array([ 6,  4, 10, 18], dtype=int32)
        """
        check_arraylike(f"{self.__name__}.reduceat", a, indices)
        self._check_binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        arr = as_array(a)
        axis = canonicalize_axis(axis, arr.ndim, f"{self.__name__}.reduceat")
        starts = [int(i) for i in np.ravel(concrete_array(f"{self.__name__}.reduceat", indices))]
        arr = moveaxis(arr, axis, 0)
        ends = [*starts[1:], arr.shape[0]]
        pieces = [self.reduce(arr[s:e], axis=0, dtype=dtype) if s < e else arr[s]
                  for s, e in zip(starts, ends, strict=True)]
        return moveaxis(stack(pieces), 0, axis)


def _positions(arr):
    return lax.reshape(arange(arr.size, dtype=np.int32), arr.shape)


def frompyfunc(func: Callable, /, nin: int, nout: int, *, identity=None) -> ufunc:
    """A `ufunc` from a scalar function of `nin` arguments returning `nout` values.

    Example:
      >>> f = frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=1)
      >>> f.accumulate(np.array([1, 2, 3], np.int32))
      array([ 1,  3, 10], dtype=int32)
    """
    return ufunc(func, nin, nout, identity=identity)


# ----- JAX's ufunc objects ------------------------------------------------------------------


def _fast_reduce(reduction):
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        kwargs = {} if initial is None else {"initial": initial}
        if where is not None:
            kwargs["where"] = where
        if dtype is not None:
            kwargs["dtype"] = dtype
        return reduction(a, axis=axis, keepdims=keepdims, **kwargs)

    return reduce


def _fast_at(method: str):
    return lambda a, indices, b: getattr(IndexUpdateHelper(as_array(a))[indices], method)(b)


def _make(func, nin, identity, **fast):
    return ufunc(func, nin, 1, name=func.__name__, identity=identity, call=func, **fast)


add = _make(_ufuncs.add, 2, 0, reduce=_fast_reduce(_reductions.sum), at=_fast_at("add"))
multiply = _make(_ufuncs.multiply, 2, 1, reduce=_fast_reduce(_reductions.prod),
                 at=_fast_at("multiply"))
maximum = _make(_ufuncs.maximum, 2, None, reduce=_fast_reduce(_reductions.max),
                at=_fast_at("max"))
minimum = _make(_ufuncs.minimum, 2, None, reduce=_fast_reduce(_reductions.min),
                at=_fast_at("min"))
subtract = _make(_ufuncs.subtract, 2, None)
negative = _make(_ufuncs.negative, 1, None)
bitwise_and = _make(_logic.bitwise_and, 2, -1)
bitwise_or = _make(_logic.bitwise_or, 2, 0)
bitwise_xor = _make(_logic.bitwise_xor, 2, 0)
logical_and = _make(_logic.logical_and, 2, True, reduce=_fast_reduce(_reductions.all))
logical_or = _make(_logic.logical_or, 2, False, reduce=_fast_reduce(_reductions.any))
logical_xor = _make(_logic.logical_xor, 2, False)
logaddexp = _make(_ufuncs.logaddexp, 2, -np.inf)
logaddexp2 = _make(_ufuncs.logaddexp2, 2, -np.inf)

"""The array operators of tracers (`x + 1`, `x[1:]`, `x.sum()` ...), with NumPy-style dtype
promotion (JAX's rules, weak types included) and rank promotion.

The numpy layer will grow these into `jnp`; here they are the minimum that lets traced Python
code read like array code. `install()` puts them on `Tracer`.
"""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import _trace, dtypes
from laminax_core._avals import get_aval, weak_array
from laminax_core.lax import _dot
from laminax_core.lax import _elementwise as ew
from laminax_core.lax import _structural as st
from laminax_core.lax._helpers import is_python_scalar

__all__ = ["getitem", "install", "promote_args"]


def _convert(x, dtype, weak: bool):
    if is_python_scalar(x):
        dtypes.check_python_int(x)
        return weak_array(x, dtype) if weak else np.asarray(x, dtype)
    aval = get_aval(x)
    if aval.dtype == dtype and aval.weak_type == weak:
        return x
    if not isinstance(x, _trace.Tracer):
        return weak_array(x, dtype) if weak else np.asarray(x, dtype)
    return ew.convert_element_type(x, dtype, weak_type=weak)


def _promote_ranks(args):
    ndim = max(get_aval(a).ndim for a in args)
    out = []
    for a in args:
        aval = get_aval(a)
        if 0 < aval.ndim < ndim:
            lead = ndim - aval.ndim
            a = st.broadcast_in_dim(a, (1,) * lead + aval.shape, tuple(range(lead, ndim)))
        out.append(a)
    return out


def promote_args(name: str, *args, broadcast: bool = True):
    """`args` converted to their common dtype (JAX's promotion, weak types included) and, if
    `broadcast`, to a common rank (NumPy broadcasting; incompatible shapes raise ValueError)."""
    avals = [get_aval(a) for a in args]  # raises TypeError for non-arrays
    first = avals[0]
    # The common case, operands already alike (`x + y` of two float32[8]), needs no work. The
    # dtype test excludes Python scalars and uncanonical NumPy values (float64 with x64 off).
    if all(aval == first for aval in avals) and all(
        getattr(a, "dtype", None) == first.dtype for a in args
    ):
        return list(args)
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    converted = [_convert(a, dtype, weak and dtypes.is_weakly_typed(a)) for a in args]
    if not broadcast:
        return converted
    shapes = [get_aval(a).shape for a in converted]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError as err:
        raise ValueError(f"{name}: operands of shapes {', '.join(map(str, shapes))} cannot be "
                         "broadcast together.") from err
    return _promote_ranks(converted)


def _binary(lax_fn, name):
    def forward(x, y):
        return lax_fn(*promote_args(name, x, y))

    def backward(x, y):
        return lax_fn(*promote_args(name, y, x))

    return forward, backward


def _true_divide(x, y):
    x, y = promote_args("true_divide", x, y)
    if not dtypes.issubdtype(get_aval(x).dtype, np.inexact):
        x, y = (ew.convert_element_type(v, dtypes.default_float_dtype()) for v in (x, y))
    return ew.div(x, y)


def _power(x, y):
    if type(y) is int:
        return ew.integer_pow(x, y)
    return ew.pow(*promote_args("power", x, y))


def _matmul(x, y):
    x, y = promote_args("matmul", x, y, broadcast=False)
    xa, ya = get_aval(x), get_aval(y)
    if xa.ndim == 0 or ya.ndim == 0:
        raise TypeError("matmul: operands must have at least one dimension; use * for scalars.")
    if xa.ndim > 2 or ya.ndim > 2:
        if xa.ndim != ya.ndim:
            raise TypeError(f"matmul: batched operands must have equal rank, got {xa.shape} and "
                            f"{ya.shape}.")
        batch = tuple(range(xa.ndim - 2))
        numbers = (((xa.ndim - 1,), (ya.ndim - 2,)), (batch, batch))
    else:
        numbers = (((xa.ndim - 1,), (0 if ya.ndim == 1 else ya.ndim - 2,)), ((), ()))
    return _dot.dot_general(x, y, numbers, preferred_element_type=xa.dtype)


def _reduce_axes(x, axis):
    ndim = get_aval(x).ndim
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in ((axis,) if isinstance(axis, int) else axis)))


def _reshape(x, *shape):
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    size = get_aval(x).size
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1]))
        shape = tuple(size // known if d == -1 else d for d in shape)
    return st.reshape(x, shape)


def _transpose(x, *axes):
    ndim = get_aval(x).ndim
    if not axes or axes == (None,):
        axes = tuple(reversed(range(ndim)))
    elif len(axes) == 1 and not isinstance(axes[0], int):
        axes = tuple(axes[0])
    return st.transpose(x, tuple(a % ndim for a in axes))


def _squeeze(x, axis=None):
    shape = get_aval(x).shape
    axes = [i for i, d in enumerate(shape) if d == 1] if axis is None else _reduce_axes(x, axis)
    return st.squeeze(x, tuple(axes))


def _astype(x, dtype):
    return ew.convert_element_type(x, dtypes.canonicalize_dtype(dtype))


# ----- indexing -----------------------------------------------------------------------------


def _expand_index(idx, ndim):
    idx = idx if isinstance(idx, tuple) else (idx,)
    consumed = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"Too many indices: an array of rank {ndim} was indexed with "
                         f"{consumed} indices.")
    if sum(i is Ellipsis for i in idx) > 1:
        raise IndexError("an index can only have a single ellipsis ('...').")
    out = []
    for i in idx:
        if i is Ellipsis:
            out += [slice(None)] * (ndim - consumed)
        else:
            out.append(i)
    if not any(i is Ellipsis for i in idx):
        out += [slice(None)] * (ndim - consumed)
    return out


def _is_int_index(i) -> bool:
    if isinstance(i, int | np.integer) and not isinstance(i, bool):
        return True
    return (isinstance(i, _trace.Tracer) and i.ndim == 0
            and dtypes.issubdtype(i.dtype, np.integer))


def _needs_jnp(idx) -> bool:
    entries = idx if isinstance(idx, tuple) else (idx,)
    return not all(i is None or i is Ellipsis or _is_int_index(i)
                   or (isinstance(i, slice) and (i.step is None or i.step > 0)) for i in entries)


def getitem(x, idx):
    """`x[idx]` for ints (static or traced scalars), slices, None and Ellipsis; other indices
    (arrays, boolean masks, negative steps) go to `laminax_core.numpy`'s indexing."""
    if _needs_jnp(idx):
        from laminax_core.numpy import _indexing  # numpy sits above lax: imported on first use

        return _indexing.getitem(x, idx)
    shape = get_aval(x).shape
    entries = _expand_index(idx, len(shape))
    start, limit, strides, squeezed, new_axes, dynamic = [], [], [], [], [], {}
    dim = 0
    for i in entries:
        if i is None:
            new_axes.append(dim - len(squeezed) + len(new_axes))
            continue
        size = shape[dim]
        if isinstance(i, slice):
            lo, hi, step = i.indices(size)
            if step < 0:
                raise IndexError("slices with a negative step are not supported yet; use "
                                 "lax.rev once it exists, or a positive step.")
            start.append(lo)
            limit.append(max(lo, hi))
            strides.append(step)
        elif _is_int_index(i):
            if isinstance(i, _trace.Tracer):
                dynamic[dim] = i
                lo = 0
            else:
                lo = operator.index(i)
                if not -size <= lo < size:
                    raise IndexError(f"index {lo} is out of bounds for axis {dim} with size "
                                     f"{size}")
                lo %= size
            start.append(lo)
            limit.append(lo + 1 if dim not in dynamic else size)
            strides.append(1)
            squeezed.append(dim)
        else:
            raise TypeError(f"Indexing with {type(i).__name__} is not supported here: use ints, "
                            "slices, None or Ellipsis (advanced indexing comes with jnp).")
        dim += 1
    out = x
    if (tuple(start), tuple(limit)) != ((0,) * len(shape), shape) or set(strides) - {1}:
        out = st.slice(out, start, limit, None if set(strides) <= {1} else strides)
    if dynamic:
        out = _dynamic_index(out, dynamic)
    if squeezed:
        out = st.squeeze(out, tuple(squeezed))
    if new_axes:
        out = st.expand_dims(out, tuple(new_axes))
    return out


def _dynamic_index(x, dynamic):
    aval = get_aval(x)
    starts, sizes = [], []
    for d, size in enumerate(aval.shape):
        if d in dynamic:
            i = dynamic[d]
            starts.append(ew.select_n(ew.lt(i, 0), i, ew.add(i, size)))
            sizes.append(1)
        else:
            starts.append(np.int32(0))
            sizes.append(size)
    return st.dynamic_slice(x, starts, sizes, allow_negative_indices=False)  # normalized above


# ----- installation -------------------------------------------------------------------------


def install(cls=_trace.Tracer) -> None:
    """Puts the array operators and methods on `cls`."""
    ops = {
        "add": ew.add, "sub": ew.sub, "mul": ew.mul, "lt": ew.lt, "le": ew.le, "gt": ew.gt,
        "ge": ew.ge, "eq": ew.eq, "ne": ew.ne,
    }
    for name, fn in ops.items():
        forward, backward = _binary(fn, name)
        setattr(cls, f"__{name}__", forward)
        if name in ("add", "sub", "mul"):
            setattr(cls, f"__r{name}__", backward)
    cls.__truediv__ = _true_divide
    cls.__rtruediv__ = lambda x, y: _true_divide(y, x)
    cls.__pow__ = _power
    cls.__rpow__ = lambda x, y: ew.pow(*promote_args("power", y, x))
    cls.__matmul__ = _matmul
    cls.__rmatmul__ = lambda x, y: _matmul(y, x)
    cls.__neg__ = ew.neg
    cls.__pos__ = lambda x: x
    cls.__abs__ = ew.abs
    cls.__getitem__ = getitem
    cls.T = property(lambda x: _transpose(x))
    methods = {
        "astype": _astype, "reshape": _reshape, "transpose": _transpose, "squeeze": _squeeze,
    }
    # reductions follow jnp's dtype rules (float16 sums accumulate in float32, ...)
    for name in ("sum", "max", "mean", "argmax"):
        methods[name] = _jnp_method(name)
    for name, fn in methods.items():
        setattr(cls, name, fn)
    for dunder, jnp_name in _JNP_OPERATORS.items():
        forward, backward = _jnp_operator(jnp_name)
        setattr(cls, f"__{dunder}__", forward)
        if dunder not in ("invert",):
            setattr(cls, f"__r{dunder}__", backward)
    cls.__getattr__ = _jnp_attribute


# operators whose NumPy semantics (floor modulo, bitwise ops) live in laminax_core.numpy
_JNP_OPERATORS = {
    "mod": "remainder", "floordiv": "floor_divide", "divmod": "divmod", "and": "bitwise_and",
    "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift", "rshift": "right_shift",
    "invert": "invert",
}  # fmt: skip


def _jnp_method(jnp_name):
    def method(x, *args, **kwargs):
        from laminax_core import numpy as jnp  # numpy sits above lax: imported on first use

        return getattr(jnp, jnp_name)(x, *args, **kwargs)

    method.__name__ = jnp_name
    return method


def _jnp_operator(jnp_name):
    def forward(x, *other):
        from laminax_core import numpy as jnp  # numpy sits above lax: imported on first use

        return getattr(jnp, jnp_name)(x, *other)

    def backward(x, y):
        from laminax_core import numpy as jnp

        return getattr(jnp, jnp_name)(y, x)

    return forward, backward


def _jnp_attribute(x, name):
    """The rest of jnp's array methods and properties (`x.at`, `x.var()` ...), looked up in
    `laminax_core.numpy` (imported on first use: it sits above lax)."""
    if name.startswith("__"):
        raise AttributeError(f"{type(x).__name__!r} object has no attribute {name!r}")
    from laminax_core.numpy import _array_methods

    found = _array_methods.lookup(name)
    if found is None:
        raise AttributeError(f"{type(x).__name__!r} object has no attribute {name!r}")
    if name in _array_methods.PROPERTIES:
        return found(x)
    return lambda *args, **kwargs: found(x, *args, **kwargs)

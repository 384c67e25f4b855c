"""Array creation: `array`, `asarray`, `zeros`/`ones`/`full`/`empty` (and `*_like`), `arange`,
`linspace`, `logspace`, `geomspace`, `eye`, `identity`, `tri`, `tril`, `triu`, `meshgrid`."""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import _shape_poly, _trace, dtypes, errors, lax
from laminax_core._avals import canonicalize_shape, get_aval, weak_array
from laminax_core._manual_axes import vary_like
from laminax_core._interpreters.eval import eager_array
from laminax_core.numpy import _ufuncs as uf
from laminax_core.numpy._placement import check_placement, place, typed_sharding
from laminax_core.numpy._operands import (
    as_array,
    check_arraylike,
    convert_dtype,
    install_array,
    is_arraylike,
    promote_dtypes,
)
from laminax_core.numpy._shape import broadcast_arrays, broadcast_to, moveaxis
from laminax_core.numpy._ufuncs import floor, power

__all__ = [
    "array", "asarray", "copy", "empty", "empty_like", "eye", "full", "full_like", "geomspace",
    "identity", "linspace", "logspace", "meshgrid", "ones", "ones_like", "arange", "tri",
    "tril", "triu", "zeros", "zeros_like",
    "iota",
]  # fmt: skip


def iota(dtype, shape, dimension: int, sharding=None):
    """`lax.broadcasted_iota`: the index along `dimension` at each position of `shape`."""
    dtype = dtypes.canonicalize_dtype(dtype)
    return lax.iota_p.bind(dtype=dtype, shape=tuple(shape), dimension=dimension,
                           sharding=sharding)


def _user_dtype(dtype, name):
    return dtypes.check_user_dtype_supported(dtype, name)


def _shape(shape, name):
    return canonicalize_shape(shape, f"jnp.{name}")


def _has_traced_leaf(obj) -> bool:
    if isinstance(obj, (list, tuple)):
        return any(_has_traced_leaf(o) for o in obj)
    return is_arraylike(obj) and not isinstance(obj, (np.ndarray, np.generic, bool, int,
                                                      float, complex))


def _stack_nested(obj):
    """A nested list holding tracers or device arrays, stacked with lax (JAX's dtype rules)."""
    if not isinstance(obj, (list, tuple)):
        return as_array(obj)
    if not obj:
        raise ValueError("jnp.array: cannot stack an empty list that holds traced values.")
    parts = promote_dtypes(*[_stack_nested(o) for o in obj])
    shapes = {get_aval(p).shape for p in parts}
    if len(shapes) > 1:
        raise ValueError(f"jnp.array: the list holds arrays of different shapes {sorted(shapes)}; "
                         "a rectangular nested list is required.")
    parts = [lax.expand_dims(p, (0,)) for p in parts]
    return lax.concatenate(parts, 0)


def array(object, dtype=None, copy: bool = True, order: str | None = "K", ndmin: int = 0, *,  # noqa: A002
          device=None, out_sharding=None):
    """Creates an array from an array, a scalar, or a (nested) list of them.

    Args:
      object: the value; lists may hold tracers.
      dtype: the dtype of the result; by default the dtype of `object` by JAX's rules (Python
        floats become float32 unless x64 is enabled).
      copy: whether a concrete array comes back in a new buffer (JAX's default: a donated
        argument and its copy are different buffers); False or None may return `object`.
      order: only "K", "C" or None are supported.
      ndmin: the minimum number of dimensions (leading size-1 axes are added).
      device: a Device or Sharding to put the (concrete) result on; ignored while tracing.
      out_sharding: the result's typed sharding (a NamedSharding, or a PartitionSpec under a
        mesh); only one of `device` and `out_sharding` may be given.

    Returns:
      An array. A Python scalar without `dtype` gives a weakly typed 0-d array.

    Example:
      >>> array([1, 2.5])
      array([1. , 2.5], dtype=float32)
    """
    check_placement("array", device, out_sharding)
    if order not in (None, "K", "C"):
        raise NotImplementedError(f"jnp.array: only order='K' or 'C' is supported, got {order!r}.")
    dtype = _user_dtype(dtype, "array")
    if isinstance(object, np.ma.MaskedArray):
        object = object.data  # noqa: A001 (jnp.array copies the data, as JAX's does)
    if isinstance(object, range):
        object = list(object)  # noqa: A001
    elif isinstance(object, (memoryview, bytearray)):
        object = np.frombuffer(object, np.uint8) if isinstance(object, bytearray) else (  # noqa: A001
            np.asarray(object))
    if isinstance(object, (list, tuple)) and _has_traced_leaf(object):
        out = _stack_nested(object)
    elif isinstance(object, (list, tuple)):
        try:
            out = np.asarray(object, dtype=dtype or _list_dtype(object))
        except (TypeError, ValueError) as err:
            raise ValueError(f"jnp.array: the list is ragged or holds non-numeric values "
                             f"({err}); nested lists must be rectangular and numeric.") from err
        if out.dtype == object_dtype:
            raise ValueError("jnp.array: the list is ragged or holds non-numeric values; "
                             "nested lists must be rectangular and numeric.")
    elif hasattr(object, "__jax_array__"):
        out = as_array(object.__jax_array__())
    elif dtype is not None and type(object) in (int, float, complex, bool):
        out = object  # converted to `dtype` below, not to the default dtype of its type
    else:
        if not is_arraylike(object):
            get_aval(object)  # an array of an unsupported dtype says so (TypeError)
            raise TypeError(f"jnp.array: cannot convert a {type(object).__name__} to an array; "
                            "pass an array, a scalar, or a nested list of them.")
        out = as_array(object)
    if dtype is not None and type(object) in (int, float, complex, bool):
        out = np.asarray(object, dtype)  # out-of-range Python ints raise, as in JAX
    elif dtype is not None:
        out = convert_dtype(out, dtype)
    ndim = get_aval(out).ndim
    if ndmin > ndim:
        out = lax.expand_dims(out, tuple(range(ndmin - ndim)))
    if copy and out is object and not isinstance(out, (np.ndarray, np.generic, _trace.Tracer)):
        out = lax.copy_p.bind(out)  # a laminax Array: a new buffer, as JAX's copy
    out = out if isinstance(out, _trace.Tracer) else eager_array(out)
    return place(out, device, out_sharding, traced=True)


object_dtype = np.dtype(object)


def _leaves(obj):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _leaves(o)
    else:
        yield obj


def _list_dtype(obj):
    """The dtype of a nested list: JAX's promotion of its leaves (Python scalars are weak, so
    `[np.int8(1), 2]` is int8 and `[1, 2.5]` the default float)."""
    leaves = list(_leaves(obj))
    if not leaves:
        return dtypes.default_float_dtype()
    if any(isinstance(v, (str, bytes)) or v is None for v in leaves):
        return None
    try:
        return dtypes.result_type(*leaves)
    except (TypeError, ValueError):
        return None


def asarray(a, dtype=None, order: str | None = None, *, copy: bool | None = None, device=None,
            out_sharding=None):
    """Converts `a` to an array, without copying arrays that already have `dtype`.

    Args:
      a: an array, scalar, or nested list.
      dtype: the dtype of the result (default: `a`'s).
      order, copy: accepted for NumPy compatibility.
      device, out_sharding: where the result lives, as for `array`.

    Returns:
      An array.

    Example:
      >>> asarray(3, dtype=np.float32)
      array(3., dtype=float32)
    """
    if isinstance(a, np.ma.MaskedArray):
        get_aval(a)  # ValueError: the mask would be dropped
    return array(a, dtype=dtype, copy=bool(copy), order=order, device=device,
                 out_sharding=out_sharding)


def copy(a, order: str | None = None):
    """A copy of `a` (a concrete array in a new buffer).

    Example:
      >>> copy(np.arange(2))
      array([0, 1], dtype=int32)
    """
    return array(a, order=order)


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    """An array of `shape` filled with `fill_value`.

    Args:
      shape: an int or a sequence of ints.
      fill_value: a scalar, or an array broadcastable to `shape`.
      dtype: the result dtype (default: `fill_value`'s; a Python scalar stays weakly typed).
      device, out_sharding: where the result lives, as for `array`.

    Returns:
      The array.

    Example:
      >>> full((2,), 7)
      array([7, 7], dtype=int32)
    """
    check_placement("full", device, out_sharding)
    shape = _shape(shape, "full")
    dtype = _user_dtype(dtype, "full")
    check_arraylike("full", fill_value)
    value = as_array(fill_value)
    if dtype is not None:
        value = convert_dtype(value, dtype)
    aval = get_aval(value)
    if aval.ndim == 0:
        out = lax.broadcast_in_dim(value, shape, (), typed_sharding(out_sharding, len(shape)))
        return place(out, device)
    return _place_broadcast(broadcast_to(value, shape), device, out_sharding)


def _place_broadcast(x, device, out_sharding):
    # an array fill_value is broadcast with the mesh sharding as its out_sharding (JAX's
    # ValueError when it names Auto axes), or placed on a single device
    if out_sharding is None and hasattr(device, "spec"):
        device, out_sharding = None, device
    return place(x, device, out_sharding)


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of zeros (default dtype float32, or float64 with x64).

    Example:
      >>> zeros((2, 1))
      array([[0.],
             [0.]], dtype=float32)
    """
    check_placement("zeros", device, out_sharding)
    dtype = _user_dtype(dtype, "zeros") or dtypes.default_float_dtype()
    shape = _shape(shape, "zeros")
    sharding = typed_sharding(out_sharding, len(shape))
    return place(lax.broadcast_in_dim(np.zeros((), dtype), shape, (), sharding), device)


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of ones (default dtype float32, or float64 with x64).

    Example:
      >>> ones(2, dtype=np.int32)
      array([1, 1], dtype=int32)
    """
    check_placement("ones", device, out_sharding)
    dtype = _user_dtype(dtype, "ones") or dtypes.default_float_dtype()
    shape = _shape(shape, "ones")
    sharding = typed_sharding(out_sharding, len(shape))
    return place(lax.broadcast_in_dim(np.ones((), dtype), shape, (), sharding), device)


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    """Like `zeros`: arrays are never uninitialised.

    Example:
      >>> empty(1)
      array([0.], dtype=float32)
    """
    return zeros(shape, dtype, device=device, out_sharding=out_sharding)


def _like(name, a, dtype, shape, device=None, out_sharding=None):
    check_placement(name, device, out_sharding)
    check_arraylike(name, a)
    aval = get_aval(a)
    dtype = _user_dtype(dtype, name)
    weak = dtype is None and aval.weak_type
    dtype = aval.dtype if dtype is None else dtype
    # same shape: split as `a` is along Explicit mesh axes (its typed sharding, usually None)
    sharding = aval.sharding if shape is None else None
    shape = aval.shape if shape is None else _shape(shape, name)
    if out_sharding is not None:
        sharding = typed_sharding(out_sharding, len(shape))
    return dtype, weak, shape, sharding


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    """An array like `a` (its shape and dtype unless given) filled with `fill_value`.

    Example:
      >>> full_like(np.arange(3), 2.5)
      array([2, 2, 2], dtype=int32)
    """
    dtype, weak, shape, sharding = _like("full_like", a, dtype, shape, device, out_sharding)
    check_arraylike("full_like", fill_value)
    value = convert_dtype(as_array(fill_value), dtype, weak)
    if get_aval(value).ndim == 0:
        return place(vary_like(a, lax.broadcast_in_dim(value, shape, (), sharding)), device)
    return _place_broadcast(vary_like(a, broadcast_to(value, shape)), device, out_sharding)


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Zeros with the shape and dtype of `a` (weakly typed if `a` is).

    Example:
      >>> zeros_like(np.ones(2, np.int8))
      array([0, 0], dtype=int8)
    """
    dtype, weak, shape, sharding = _like("zeros_like", a, dtype, shape, device, out_sharding)
    if dtypes.issubdtype(dtype, dtypes.extended):  # keys: zero key data
        return place(vary_like(a, dtype.zeros(shape)), device)
    return place(vary_like(a, lax.broadcast_in_dim(_scalar(0, dtype, weak), shape, (), sharding)),
                 device)


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Ones with the shape and dtype of `a` (weakly typed if `a` is).

    Example:
      >>> ones_like(np.zeros(2, np.float32))
      array([1., 1.], dtype=float32)
    """
    dtype, weak, shape, sharding = _like("ones_like", a, dtype, shape, device, out_sharding)
    return place(vary_like(a, lax.broadcast_in_dim(_scalar(1, dtype, weak), shape, (), sharding)),
                 device)


def empty_like(prototype, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Like `zeros_like`: arrays are never uninitialised.

    Example:
      >>> empty_like(np.ones(1))
      array([0.], dtype=float32)
    """
    return zeros_like(prototype, dtype, shape, device=device, out_sharding=out_sharding)


def _scalar(value, dtype, weak: bool = False):
    if np.dtype(dtype) == dtypes.float0:  # no data: zeros whatever the value (JAX's)
        return np.zeros((), dtypes.float0)
    return weak_array(value, dtype) if weak else np.asarray(value, dtype)


def _concrete_scalar(name, arg, value):
    if isinstance(value, _trace.Tracer):
        concrete = value.to_concrete_value()
        if concrete is None:
            raise errors.ConcretizationTypeError(
                value, f"The {arg} argument of jnp.{name} must be a concrete value")
        value = concrete
    if value is not None and np.ndim(value) != 0:
        raise ValueError(f"jnp.{name}: {arg} must be a scalar, got shape {np.shape(value)}.")
    return value


def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Evenly spaced values in `[start, stop)` with spacing `step` (static arguments).

    Args:
      start: the first value (or `stop`, when `stop` is None).
      stop: the end (excluded).
      step: the spacing (default 1).
      dtype: the result dtype (default: the arguments' promoted dtype, not weakly typed).
      device, out_sharding: where the result lives, as for `array`.

    Returns:
      A 1-d array.

    Raises:
      ConcretizationTypeError: an argument is a traced value.

    Example:
      >>> arange(1.0, 3.0, 0.5)
      array([1. , 1.5, 2. , 2.5], dtype=float32)
    """
    check_placement("arange", device, out_sharding)
    if any(isinstance(v, _shape_poly.DimExpr) for v in (start, stop, step)):
        return place(_symbolic_arange(start, stop, step, dtype), device, out_sharding,
                     traced=True)
    start = _concrete_scalar("arange", "start", start)
    stop = _concrete_scalar("arange", "stop", stop)
    step = _concrete_scalar("arange", "step", step)
    dtype = _user_dtype(dtype, "arange")
    if stop is None and step is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise ZeroDivisionError("jnp.arange: step must not be zero (division by zero).")
    if dtype is None:
        dtype = dtypes.result_type(*(v for v in (start, stop, step)))
    size = len(np.arange(np.asarray(start).item(), np.asarray(stop).item(),
                         np.asarray(step).item()))
    values = iota(dtype, (size,), 0, typed_sharding(out_sharding, 1))
    if step != 1:
        values = lax.mul(values, np.asarray(step, dtype))
    if start != 0:
        values = lax.add(values, np.asarray(start, dtype))
    return place(values, device, traced=True)


def _symbolic_arange(start, stop, step, dtype):
    # a symbolic bound (shape polymorphism): integer values, the count a dimension expression
    if stop is None and step is None:
        start, stop = 0, start
    step = 1 if step is None else operator.index(step)
    if step <= 0 or any(isinstance(v, float) for v in (start, stop)):
        raise ValueError(
            f"jnp.arange with symbolic dimensions takes integer bounds and a positive step; got "
            f"start={start}, stop={stop}, step={step}.")
    dtype = _user_dtype(dtype, "arange") or dtypes.canonicalize_dtype(np.int64)
    size = _shape_poly.max_dim((stop - start + step - 1) // step, 0)
    values = iota(dtype, (size,), 0)
    if step != 1:
        values = lax.mul(values, np.asarray(step, dtype))
    if not (isinstance(start, int) and start == 0):
        values = lax.add(values, lax.convert_element_type(lax.dimension_as_value(start), dtype))
    return values


def _linspace_fraction(num: int, endpoint: bool, dtype):
    div = num - 1 if endpoint else num
    steps = iota(dtype, (num,), 0)
    return lax.div(steps, np.asarray(max(div, 1), dtype)), div


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0, *, device=None):
    """`num` evenly spaced values from `start` to `stop` (arrays broadcast along `axis`).

    Args:
      start, stop: scalars or arrays (broadcast together).
      num: the number of values (static).
      endpoint: whether `stop` is the last value.
      retstep: also return the spacing.
      dtype: the result dtype (default: the inexact promotion of `start` and `stop`).
      axis: where the new axis goes in the result.
      device: a Device or Sharding to put the (concrete) result on; ignored while tracing.

    Returns:
      The values, and the step if `retstep`.

    Example:
      >>> linspace(0, 1, 5)
      array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    check_placement("linspace", device, None)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"jnp.linspace: num must be non-negative, got {num}.")
    check_arraylike("linspace", start, stop)
    dtype = _user_dtype(dtype, "linspace")
    compute = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    start, stop = (convert_dtype(as_array(v), compute) for v in (start, stop))

    start, stop = broadcast_arrays(start, stop)
    lead = get_aval(start).shape
    fraction, div = _linspace_fraction(num, endpoint, compute)
    fraction = lax.broadcast_in_dim(fraction, (num, *lead), (0,))
    start_b = lax.broadcast_in_dim(start, (num, *lead), tuple(range(1, len(lead) + 1)))
    stop_b = lax.broadcast_in_dim(stop, (num, *lead), tuple(range(1, len(lead) + 1)))
    out = lax.add(lax.mul(start_b, lax.sub(np.asarray(1, compute), fraction)),
                  lax.mul(stop_b, fraction))
    if endpoint and num > 1:
        head = lax.slice(out, (0,) * (1 + len(lead)), (num - 1, *lead))
        out = lax.concatenate([head, lax.expand_dims(stop, (0,))], 0)
    out = moveaxis(out, 0, axis)
    out = _cast_result(out, dtype)
    if retstep:
        step = lax.div(lax.sub(stop, start), np.asarray(div, compute)) if div > 0 else \
            full_like(start, np.nan)
        return place(out, device, traced=True), _cast_result(step, dtype)
    return place(out, device, traced=True)


def _cast_result(x, dtype):
    if dtype is None:
        return x
    if dtypes.issubdtype(dtype, np.integer) and not dtypes.issubdtype(get_aval(x).dtype,
                                                                    np.integer):
        x = floor(x)
    return convert_dtype(x, dtype)


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             axis: int = 0):
    """`base ** linspace(start, stop, num)`.

    Example:
      >>> logspace(0, 2, 3)
      array([  1.,  10., 100.], dtype=float32)
    """
    exponents = linspace(start, stop, num, endpoint, dtype=None, axis=axis)
    compute = get_aval(exponents).dtype
    base = convert_dtype(as_array(base), compute)
    if get_aval(base).ndim:
        base = lax.expand_dims(base, (axis % (get_aval(base).ndim + 1),))
    return _cast_result(power(base, exponents), _user_dtype(dtype, "logspace"))


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """Values spaced evenly on a log scale from `start` to `stop` (same sign, non-zero).

    Example:
      >>> geomspace(1, 100, 3)
      array([  1.,  10., 100.], dtype=float32)
    """
    start, stop = (as_array(v) for v in (start, stop))
    sign = uf.sign(start)
    # dividing by start's sign (not taking absolute values) makes a zero start, or a stop of
    # the other sign, NaN, as in JAX: no geometric sequence joins them
    exponents = linspace(uf.log10(uf.divide(start, sign)), uf.log10(uf.divide(stop, sign)), num,
                         endpoint, axis=axis)
    out = uf.multiply(sign, uf.power(10.0, exponents))
    return _cast_result(out, _user_dtype(dtype, "geomspace"))


def eye(N: int, M: int | None = None, k: int = 0, dtype=None, *, device=None):  # noqa: N803
    """The `N x M` matrix with ones on the `k`-th diagonal.

    Example:
      >>> eye(2, dtype=np.int32)
      array([[1, 0],
             [0, 1]], dtype=int32)
    """
    check_placement("eye", device, None)
    for size in (N, M):  # JAX's type: ValueError (before the shape check's TypeError)
        if isinstance(size, int | np.integer) and size < 0:
            raise ValueError(f"jnp.eye: negative dimensions are not allowed, got N={N}, M={M}.")
    N, M = _shape((N, N if M is None else M), "eye")  # noqa: N806
    dtype = _user_dtype(dtype, "eye") or dtypes.default_float_dtype()
    try:
        k = operator.index(k)
    except TypeError:
        raise ValueError(f"jnp.eye: k must be a scalar integer; got {k!r}.") from None
    rows, cols = iota(np.int32, (N, M), 0), iota(np.int32, (N, M), 1)
    diagonal = lax.eq(lax.add(rows, np.int32(k)), cols)
    return place(lax.convert_element_type(diagonal, dtype), device, traced=True)


def identity(n: int, dtype=None):
    """The `n x n` identity matrix.

    Example:
      >>> identity(2)
      array([[1., 0.],
             [0., 1.]], dtype=float32)
    """
    return eye(n, dtype=dtype)


def _tri_mask(n: int, m: int, k: int):
    rows = lax.add(iota(np.int32, (n, m), 0), np.int32(k))
    return lax.ge(rows, iota(np.int32, (n, m), 1))


def tri(N: int, M: int | None = None, k: int = 0, dtype=None):  # noqa: N803 (NumPy's names)
    """Ones at and below the `k`-th diagonal of an `N x M` matrix, zeros above.

    Example:
      >>> tri(2, dtype=np.int32)
      array([[1, 0],
             [1, 1]], dtype=int32)
    """
    M = N if M is None else M  # noqa: N806
    dtype = _user_dtype(dtype, "tri") or dtypes.canonicalize_dtype(np.float32)  # JAX's default
    return lax.convert_element_type(_tri_mask(operator.index(N), operator.index(M),
                                              operator.index(k)), dtype)


def _triangle(name, m, k, lower: bool):
    check_arraylike(name, m)
    m = as_array(m)
    aval = get_aval(m)
    if aval.ndim < 2:
        raise ValueError(f"jnp.{name}: the input must have at least 2 dimensions, got shape "
                         f"{aval.shape}.")
    n_rows, n_cols = aval.shape[-2:]
    mask = _tri_mask(n_rows, n_cols, operator.index(k) if lower else operator.index(k) - 1)
    if not lower:
        mask = lax.eq(mask, False)
    mask = lax.broadcast_in_dim(mask, aval.shape, (aval.ndim - 2, aval.ndim - 1))
    zero = lax.broadcast_in_dim(_scalar(0, aval.dtype), aval.shape, ())
    return lax.select_n(mask, zero, m)


def tril(m, k: int = 0):
    """`m` with the entries above the `k`-th diagonal (of the last two axes) set to zero.

    Example:
      >>> tril(np.ones((2, 2), np.int32))
      array([[1, 0],
             [1, 1]], dtype=int32)
    """
    return _triangle("tril", m, k, lower=True)


def triu(m, k: int = 0):
    """`m` with the entries below the `k`-th diagonal (of the last two axes) set to zero.

    Example:
      >>> triu(np.ones((2, 2), np.int32))
      array([[1, 1],
             [0, 1]], dtype=int32)
    """
    return _triangle("triu", m, k, lower=False)


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    """Coordinate arrays from 1-d coordinate vectors.

    Args:
      *xi: 1-d arrays.
      copy: accepted for NumPy compatibility.
      sparse: return arrays with size-1 axes instead of full grids.
      indexing: "xy" (Cartesian, the default) or "ij" (matrix).

    Returns:
      A list of arrays.

    Example:
      >>> [g.shape for g in meshgrid(np.arange(3), np.arange(2))]
      [(2, 3), (2, 3)]
    """
    del copy
    if indexing not in ("xy", "ij"):
        raise ValueError(f"jnp.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}.")
    check_arraylike("meshgrid", *xi)
    xi = [as_array(x) for x in xi]
    for i, x in enumerate(xi):
        if get_aval(x).ndim != 1:
            raise ValueError(f"jnp.meshgrid: arguments must be 1-d, argument {i} has shape "
                             f"{get_aval(x).shape}.")
    shape = [get_aval(x).shape[0] for x in xi]
    if indexing == "xy" and len(xi) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xi):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(xi) >= 2 else i
        target = [1] * len(xi) if sparse else list(shape)
        target[axis] = shape[axis]
        out.append(lax.broadcast_in_dim(x, tuple(target), (axis,)))
    return out


install_array(array)

"""Windowed reductions: reduce_window (JAX's `reduce_window_sum_p`, `reduce_window_max_p`,
`reduce_window_min_p`, and the generic `reduce_window_p` holding a traced body), plus the two
primitives that differentiate max/min pooling: `select_and_gather_add` (the jvp picks the tangent
at each window's selected element) and `select_and_scatter_add` (its transpose).

Windows are described as XLA does: `window_dimensions`, `window_strides`, explicit `padding`
pairs (or 'SAME'/'VALID'), `base_dilation` (of the operand) and `window_dilation`.
"""

from __future__ import annotations

import operator

import numpy as np

from laminax_core import _shape_poly
from laminax_core._api import vmap
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.batching import bdim_at_front, move_bdim
from laminax_core._interpreters.eval import eval_jaxpr
from laminax_core._interpreters.jvp import Zero, instantiate_zeros
from laminax_core._interpreters.partial_eval import trace_to_jaxpr
from laminax_core._primitive import (
    NOT_LINEAR,
    NUMERIC,
    Primitive,
    check_dtype,
    define_primitive,
    linear,
)
from laminax_core._sharding_rules import sliced_sharding
from laminax_core.lax import _elementwise as ew
from laminax_core.lax._helpers import highest, lowest
from laminax_core.lax._slicing import pad

__all__ = [
    "padtype_to_pads", "reduce_window", "reduce_window_max", "reduce_window_min",
    "reduce_window_sum", "select_and_gather_add", "select_and_scatter_add",
    "dilate_shape",
    "conv_general_vjp_lhs_padding",
]  # fmt: skip
# the primitives, which lax exports beside their functions
__all__ += [
    "reduce_window_max_p", "reduce_window_min_p", "reduce_window_p", "reduce_window_sum_p",
    "select_and_gather_add_p", "select_and_scatter_add_p", "select_and_scatter_p",
]  # fmt: skip


def dilate_shape(shape, dilation):
    """The extent of `shape` with `dilation - 1` holes between elements."""
    return tuple(0 if s == 0 else 1 + d * (s - 1) for s, d in zip(shape, dilation, strict=True))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit `(low, high)` pads for 'SAME', 'SAME_LOWER' or 'VALID' (XLA's convention).

    Example:
      >>> padtype_to_pads((4,), (2,), (1,), "SAME")
      [(0, 1)]
    """
    if not isinstance(padding, str):
        return [tuple(operator.index(v) for v in pair) for pair in padding]
    mode = padding.upper()
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"Unknown padding type: {padding!r}; use 'SAME', 'SAME_LOWER', "
                         "'VALID' or explicit (low, high) pairs.")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides, strict=True):
        out = -(-size // stride)
        total = _shape_poly.max_dim((out - 1) * stride + window - size, 0)
        low = total // 2 if mode == "SAME" else total - total // 2
        pads.append((low, total - low))
    return pads


def _window_params(x_shape, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation, name="reduce_window"):
    ndim = len(x_shape)
    # windows and strides may be dimension expressions (shape polymorphism), as in JAX
    dims = tuple(_shape_poly.dim_index(d) for d in window_dimensions)
    strides = tuple(_shape_poly.dim_index(s) for s in window_strides)
    base = tuple(base_dilation) if base_dilation is not None else (1,) * ndim
    wdil = tuple(window_dilation) if window_dilation is not None else (1,) * ndim
    for what, value in (("window_dimensions", dims), ("window_strides", strides),
                        ("base_dilation", base), ("window_dilation", wdil)):
        if len(value) != ndim:
            raise TypeError(f"{name}: {what} {value} must have one entry per dimension of the "
                            f"operand shape {tuple(x_shape)}.")
        if any(_shape_poly.dim_index(v) < 1 for v in value):
            raise TypeError(f"{name} {what} must have every element be strictly positive, got "
                            f"{value}.")
    pads = padtype_to_pads(dilate_shape(x_shape, base), dilate_shape(dims, wdil), strides,
                           padding)
    return dict(window_dimensions=dims, window_strides=strides,
                padding=tuple(tuple(p) for p in pads), base_dilation=base, window_dilation=wdil)


def _window_out_shape(name, x_shape, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
    ndim = len(x_shape)
    for what, value in (("window_dimensions", window_dimensions),
                        ("window_strides", window_strides), ("padding", padding),
                        ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if len(value) != ndim:
            raise TypeError(f"{name}: {what} {value} must have one entry per dimension of the "
                            f"operand shape {x_shape}.")
    if any(v < 1 for v in (*window_dimensions, *window_strides, *base_dilation,
                           *window_dilation)):
        raise TypeError(f"{name}: window dimensions, strides and dilations must be positive, "
                        f"got {window_dimensions}, {window_strides}, {base_dilation}, "
                        f"{window_dilation}.")
    padded = [d + lo + hi for d, (lo, hi) in zip(dilate_shape(x_shape, base_dilation), padding,
                                                 strict=True)]
    extent = dilate_shape(window_dimensions, window_dilation)
    # a symbolic size is not compared (JAX does not either): the call's shapes decide
    if any(type(p) is int and type(e) is int and p < e for p, e in zip(padded, extent,
                                                                       strict=True)):
        raise TypeError(f"{name}: the window {extent} (dilated) is larger than the padded "
                        f"operand {tuple(padded)}.")
    return tuple((p - e) // s + 1 for p, e, s in zip(padded, extent, window_strides,
                                                     strict=True))


def _windows(x, init, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
    """The windows of `x` as an array `out_shape + (window size,)` (padding holds `init`)."""
    grown = dilate_shape(x.shape, base_dilation)
    padded_shape = [g + max(lo, 0) + max(hi, 0) for g, (lo, hi) in zip(grown, padding,
                                                                          strict=True)]
    padded = np.full(padded_shape, init, x.dtype)
    inner = tuple(np.s_[max(lo, 0):max(lo, 0) + g:b]
                  for g, (lo, _), b in zip(grown, padding, base_dilation, strict=True))
    padded[inner] = x
    crop = tuple(np.s_[max(-lo, 0):p - max(-hi, 0)]
                 for p, (lo, hi) in zip(padded_shape, padding, strict=True))
    padded = padded[crop]
    extent = dilate_shape(window_dimensions, window_dilation)
    view = np.lib.stride_tricks.sliding_window_view(padded, extent)
    ndim = x.ndim
    view = view[tuple(np.s_[::s] for s in window_strides)]
    view = view[(Ellipsis, *(np.s_[::d] for d in window_dilation))]
    return view.reshape(view.shape[:ndim] + (-1,))


# ----- reduce_window_sum, reduce_window_max, reduce_window_min -----------------------------


def _monoid_window_reduction(name, ufunc, identity_of, jvp_rule, transpose_rule):
    def abstract_eval(x, **params):
        check_dtype(name, x.dtype, NUMERIC if name == "reduce_window_sum" else (np.number,
                                                                                np.bool_))
        shape = _window_out_shape(name, x.shape, **params)
        return ShapedArray(shape, x.dtype, x.weak_type, sliced_sharding(x, shape, name))

    def reference(x, **params):
        windows = _windows(x, identity_of(x.dtype), **params)
        return ufunc.reduce(windows, axis=-1).astype(x.dtype)

    def batch(axis_data, args, dims, **params):
        x = move_bdim(args[0], dims[0], 0)
        return primitive.bind(x, **_batched_window(params)), 0

    primitive = define_primitive(name, abstract_eval=abstract_eval, reference=reference,
                                 jvp=jvp_rule, transpose=transpose_rule, batch=batch)
    return primitive


def _batched_window(params):
    """Window params for an operand with a new leading (batch) dimension."""
    return dict(window_dimensions=(1, *params["window_dimensions"]),
                window_strides=(1, *params["window_strides"]),
                padding=((0, 0), *params["padding"]),
                base_dilation=(1, *params["base_dilation"]),
                window_dilation=(1, *params["window_dilation"]))


def conv_general_vjp_lhs_padding(in_shape, window_dimensions, window_strides, out_shape,
                                 padding, lhs_dilation, rhs_dilation):
    """The padding that turns a strided windowed op's cotangent back into its input shape."""
    lhs = dilate_shape(in_shape, lhs_dilation)
    rhs = dilate_shape(window_dimensions, rhs_dilation)
    out = dilate_shape(out_shape, window_strides)
    before = [r - lo - 1 for r, (lo, _) in zip(rhs, padding, strict=True)]
    after = [a + r - 1 - o - b for a, r, o, b in zip(lhs, rhs, out, before, strict=True)]
    return list(zip(before, after, strict=True))


def _reduce_window_sum_transpose(ct, x, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    in_shape = x.aval.shape
    pads = conv_general_vjp_lhs_padding(in_shape, window_dimensions, window_strides,
                                        get_aval(ct).shape, padding, base_dilation,
                                        window_dilation)
    config = [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides, strict=True)]
    padded = pad(ct, np.zeros((), get_aval(ct).dtype), config)
    ones = (1,) * len(in_shape)
    out = reduce_window_sum_p.bind(padded, window_dimensions=window_dimensions,
                                   window_strides=base_dilation,
                                   padding=((0, 0),) * len(in_shape), base_dilation=ones,
                                   window_dilation=window_dilation)
    return [out]


reduce_window_sum_p = _monoid_window_reduction(
    "reduce_window_sum", np.add, lambda dtype: 0, linear, _reduce_window_sum_transpose)


def _extremum_jvp(select_prim, primitive_of):
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        ans = primitive_of().bind(x, **params)
        return ans, select_and_gather_add_p.bind(instantiate_zeros(t), x,
                                                 select_prim=select_prim(), **params)

    return rule


reduce_window_max_p = _monoid_window_reduction(
    "reduce_window_max", np.maximum, lowest,
    _extremum_jvp(lambda: ew.ge_p, lambda: reduce_window_max_p), NOT_LINEAR)
reduce_window_min_p = _monoid_window_reduction(
    "reduce_window_min", np.minimum, highest,
    _extremum_jvp(lambda: ew.le_p, lambda: reduce_window_min_p), NOT_LINEAR)


def _window_bind(primitive, operand, window_dimensions, window_strides, padding, base_dilation,
                 window_dilation):
    params = _window_params(get_aval(operand).shape, window_dimensions, window_strides, padding,
                            base_dilation, window_dilation, primitive.name)
    return primitive.bind(operand, **params)


def reduce_window_sum(operand, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None):
    """Sums over sliding windows (sum pooling).

    Example:
      >>> reduce_window_sum(np.arange(4, dtype=np.float32), (2,), (2,), "VALID")
      array([1., 5.], dtype=float32)
    """
    return _window_bind(reduce_window_sum_p, operand, window_dimensions, window_strides,
                        padding, base_dilation, window_dilation)


def reduce_window_max(operand, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None):
    """Maxima over sliding windows (max pooling); padding counts as -inf."""
    return _window_bind(reduce_window_max_p, operand, window_dimensions, window_strides,
                        padding, base_dilation, window_dilation)


def reduce_window_min(operand, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None):
    """Minima over sliding windows; padding counts as +inf."""
    return _window_bind(reduce_window_min_p, operand, window_dimensions, window_strides,
                        padding, base_dilation, window_dilation)


# ----- reduce_window: known monoids, else the generic primitive with a traced body ---------


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation=None, window_dilation=None):
    """Reduces sliding windows of `operand` with `computation(acc, x)` from `init_value`.
    `lax.add` with 0, `lax.max` with -inf and `lax.min` with +inf become the specialized
    primitives; any other body becomes `reduce_window` holding its jaxpr.

    Example:
      >>> reduce_window(np.arange(4, dtype=np.float32), -np.inf, ew.max, (2,), (1,), "VALID")
      array([1., 2., 3.], dtype=float32)
    """
    aval = get_aval(operand)
    specialized = _monoid_for(computation, init_value, aval.dtype)
    if specialized is not None:
        return _window_bind(specialized, operand, window_dimensions, window_strides, padding,
                            base_dilation, window_dilation)
    params = _window_params(aval.shape, window_dimensions, window_strides, padding,
                            base_dilation, window_dilation)
    scalar = ShapedArray((), aval.dtype)
    closed, _ = trace_to_jaxpr(lambda a, b: [computation(a, b)], [scalar, scalar],
                               transformation="reduce_window")
    init = np.asarray(init_value, aval.dtype) if not hasattr(init_value, "aval") else init_value
    return reduce_window_p.bind(operand, init, jaxpr=closed.jaxpr, consts=tuple(closed.consts),
                                **params)


def _init_as(init_value, dtype) -> np.ndarray:
    """A concrete init value in the operand's dtype, converted as JAX converts: a float going
    to an integer dtype saturates (-inf is the integer range's lowest value: equinox's max
    pooling of integer arrays starts from -inf) and NaN becomes 0, without NumPy's cast
    warning."""
    value = np.asarray(init_value)
    if np.issubdtype(dtype, np.integer) and np.issubdtype(value.dtype, np.floating):
        info = np.iinfo(dtype)
        value = np.clip(np.nan_to_num(value, nan=0.0), info.min, info.max)
        with np.errstate(invalid="ignore", over="ignore"):
            return value.astype(dtype)
    return value.astype(dtype)


def _monoid_for(computation, init_value, dtype):
    try:
        init = _init_as(init_value, dtype)
    except Exception:  # a traced init value: use the generic primitive
        return None
    table = {ew.add: (0, reduce_window_sum_p), ew.max: (lowest(dtype), reduce_window_max_p),
             ew.min: (highest(dtype), reduce_window_min_p)}
    found = table.get(computation)
    if found is None or init.ndim or init != np.asarray(found[0]).astype(dtype):
        return None
    return found[1]


def _reduce_window_abstract_eval(x, init, jaxpr, consts, **params):
    if init.shape != () or init.dtype != x.dtype:
        raise TypeError(f"reduce_window: init_value must be a scalar of the operand's dtype "
                        f"{x.dtype.name}, got {init.str_short()}.")
    shape = _window_out_shape("reduce_window", x.shape, **params)
    return ShapedArray(shape, x.dtype, sharding=sliced_sharding(x, shape, "reduce_window"))


def _reduce_window_reference(x, init, jaxpr, consts, **params):
    windows = _windows(x, init, **params)
    flat = windows.reshape(-1, windows.shape[-1])
    acc = np.full(flat.shape[0], init, x.dtype)
    if flat.shape[0]:
        step = vmap(lambda a, b: eval_jaxpr(jaxpr, consts, a, b)[0])
        for k in range(flat.shape[1]):
            acc = np.asarray(step(acc, flat[:, k]))
    return acc.reshape(windows.shape[:-1]).astype(x.dtype)


def _reduce_window_jvp(primals, tangents, **params):
    raise NotImplementedError("Differentiation rule for 'reduce_window' (with a general body) "
                              "not implemented; use reduce_window with lax.add, lax.max or "
                              "lax.min, which differentiate.")


def _reduce_window_batch(axis_data, args, dims, jaxpr, consts, **params):
    if dims[1] is not None:
        raise NotImplementedError("reduce_window: batching over the init value is not "
                                  "supported; pass an unbatched init value.")
    x = bdim_at_front(args[0], dims[0], axis_data.size)
    return reduce_window_p.bind(x, args[1], jaxpr=jaxpr, consts=consts,
                                **_batched_window(params)), 0


reduce_window_p = define_primitive(
    "reduce_window",
    abstract_eval=_reduce_window_abstract_eval,
    reference=_reduce_window_reference,
    jvp=_reduce_window_jvp,
    transpose=NOT_LINEAR,
    batch=_reduce_window_batch,
)


# ----- select_and_gather_add, select_and_scatter_add --------------------------------------


def _selected_positions(operand, select_prim, window_dimensions, window_strides, padding,
                        base_dilation=None, window_dilation=None):
    """For every window, the flat operand index of its selected element (-1: padding only)."""
    ndim = operand.ndim
    base = base_dilation or (1,) * ndim
    wdil = window_dilation or (1,) * ndim
    take_max = select_prim.name == "ge"
    fill = lowest(operand.dtype) if take_max else highest(operand.dtype)
    ids = np.arange(operand.size, dtype=np.int64).reshape(operand.shape)
    values = _windows(operand, fill, window_dimensions, window_strides, padding, base, wdil)
    where = _windows(ids, -1, window_dimensions, window_strides, padding, base, wdil)
    # the first element of the window that the select comparison keeps against all others
    ranked = np.where(where < 0, np.nan, values.astype(np.float64))
    pick = np.nanargmax(np.where(np.isnan(ranked), -np.inf, ranked), -1) if take_max else (
        np.nanargmin(np.where(np.isnan(ranked), np.inf, ranked), -1))
    chosen = np.take_along_axis(where, pick[..., None], -1)[..., 0]
    return chosen


def select_and_gather_add(tangents, operand, select_prim, window_dimensions, window_strides,
                          padding, base_dilation, window_dilation):
    """For every window, the entry of `tangents` where `operand` is selected (its maximum for
    `select_prim=ge_p`, minimum for `le_p`): the jvp of max/min pooling."""
    params = _window_params(get_aval(operand).shape, window_dimensions, window_strides,
                            padding, base_dilation, window_dilation)
    return select_and_gather_add_p.bind(tangents, operand, select_prim=select_prim, **params)


def _select_and_gather_add_abstract_eval(t, x, select_prim, **params):
    if t.shape != x.shape or t.dtype != x.dtype:
        raise TypeError(f"select_and_gather_add: tangents {t.str_short()} and operand "
                        f"{x.str_short()} must have the same shape and dtype.")
    return ShapedArray(_window_out_shape("select_and_gather_add", x.shape, **params), x.dtype)


def _select_and_gather_add_reference(t, x, select_prim, **params):
    chosen = _selected_positions(x, select_prim, **params)
    flat = t.reshape(-1)
    return np.where(chosen >= 0, flat[np.maximum(chosen, 0)], 0).astype(t.dtype)


def _select_and_gather_add_transpose(ct, t, x, select_prim, window_dimensions, window_strides,
                                     padding, base_dilation, window_dilation):
    if any(d != 1 for d in (*base_dilation, *window_dilation)):
        raise NotImplementedError("select_and_gather_add transpose with dilation is not "
                                  "implemented (JAX has none either).")
    if isinstance(ct, Zero):
        return [None, None]
    out = select_and_scatter_add_p.bind(ct, x, select_prim=select_prim,
                                        window_dimensions=window_dimensions,
                                        window_strides=window_strides, padding=padding)
    return [out, None]


def _select_and_gather_add_batch(axis_data, args, dims, select_prim, **params):
    t, x = (bdim_at_front(a, d, axis_data.size) for a, d in zip(args, dims, strict=True))
    return select_and_gather_add_p.bind(t, x, select_prim=select_prim,
                                        **_batched_window(params)), 0


def _select_and_gather_add_jvp(primals, tangents, **params):
    t, x = primals
    ans = select_and_gather_add_p.bind(t, x, **params)
    if isinstance(tangents[0], Zero):
        return ans, Zero.from_primal_value(ans)
    return ans, select_and_gather_add_p.bind(tangents[0], x, **params)


select_and_gather_add_p = define_primitive(
    "select_and_gather_add",
    abstract_eval=_select_and_gather_add_abstract_eval,
    reference=_select_and_gather_add_reference,
    jvp=_select_and_gather_add_jvp,
    transpose=_select_and_gather_add_transpose,
    batch=_select_and_gather_add_batch,
)


def select_and_scatter_add(source, operand, select_prim, window_dimensions, window_strides,
                           padding):
    """Adds each entry of `source` (one per window) into the position `operand` selects in
    that window: the gradient of max pooling (`ge_p`) or min pooling (`le_p`).

    Example:
      >>> select_and_scatter_add(np.ones(2, np.float32), np.array([1, 3, 2, 0], np.float32),
      ...                        ew.ge_p, (2,), (2,), "VALID")
      array([0., 1., 1., 0.], dtype=float32)
    """
    shape = get_aval(operand).shape
    params = _window_params(shape, window_dimensions, window_strides, padding, None, None)
    return select_and_scatter_add_p.bind(
        source, operand, select_prim=select_prim, window_dimensions=params["window_dimensions"],
        window_strides=params["window_strides"], padding=params["padding"])


def _select_and_scatter_add_abstract_eval(source, x, select_prim, window_dimensions,
                                          window_strides, padding):
    ones = (1,) * x.ndim
    out = _window_out_shape("select_and_scatter_add", x.shape, window_dimensions,
                            window_strides, padding, ones, ones)
    if source.shape != out or source.dtype != x.dtype:
        raise TypeError(f"select_and_scatter_add: source {source.str_short()} must have the "
                        f"windowed shape {out} and the operand's dtype {x.dtype.name}.")
    return ShapedArray(x.shape, x.dtype, sharding=x.sharding)


def _select_and_scatter_add_reference(source, x, select_prim, window_dimensions,
                                      window_strides, padding):
    chosen = _selected_positions(x, select_prim, window_dimensions, window_strides, padding)
    out = np.zeros(x.size, x.dtype)
    keep = chosen >= 0
    np.add.at(out, chosen[keep], source[keep])
    return out.reshape(x.shape)


def _select_and_scatter_add_jvp(primals, tangents, **params):
    source, x = primals
    ans = select_and_scatter_add_p.bind(source, x, **params)
    if isinstance(tangents[0], Zero):
        return ans, Zero.from_primal_value(ans)
    return ans, select_and_scatter_add_p.bind(tangents[0], x, **params)


def _select_and_scatter_add_transpose(ct, source, x, select_prim, window_dimensions,
                                      window_strides, padding):
    if isinstance(ct, Zero):
        return [None, None]
    ones = (1,) * len(window_dimensions)
    out = select_and_gather_add_p.bind(ct, x, select_prim=select_prim,
                                       window_dimensions=window_dimensions,
                                       window_strides=window_strides, padding=padding,
                                       base_dilation=ones, window_dilation=ones)
    return [out, None]


def _select_and_scatter_add_batch(axis_data, args, dims, select_prim, window_dimensions,
                                  window_strides, padding):
    source, x = (bdim_at_front(a, d, axis_data.size) for a, d in zip(args, dims, strict=True))
    return select_and_scatter_add_p.bind(
        source, x, select_prim=select_prim, window_dimensions=(1, *window_dimensions),
        window_strides=(1, *window_strides), padding=((0, 0), *padding)), 0


select_and_scatter_add_p = define_primitive(
    "select_and_scatter_add",
    abstract_eval=_select_and_scatter_add_abstract_eval,
    reference=_select_and_scatter_add_reference,
    jvp=_select_and_scatter_add_jvp,
    transpose=_select_and_scatter_add_transpose,
    batch=_select_and_scatter_add_batch,
)


# ----- select_and_scatter: the general form (jaxprs for select and scatter) ---------------
# JAX binds it only from its internal `_select_and_scatter`: XLA's SelectAndScatter with a
# `select(a, b) -> bool` jaxpr choosing one element per window (keep `a` while it says True) and
# a `scatter(acc, source) -> value` jaxpr combining the window's source value into the chosen
# element's output, which starts at `init_value`.


def _select_and_scatter_abstract_eval(operand, source, init_value, *, select_jaxpr,
                                      select_consts, scatter_jaxpr, scatter_consts,
                                      window_dimensions, window_strides, padding):
    if len(window_dimensions) != len(window_strides):
        raise TypeError("select_and_scatter got inconsistent window_strides and "
                        f"window_dimensions: got window_strides {tuple(window_strides)} and "
                        f"window_dimensions {tuple(window_dimensions)}.")
    return ShapedArray(operand.shape, operand.dtype)


def _select_and_scatter_reference(operand, source, init_value, *, select_jaxpr, select_consts,
                                  scatter_jaxpr, scatter_consts, window_dimensions,
                                  window_strides, padding):
    out = np.full(operand.shape, init_value, operand.dtype)
    for window in np.ndindex(*source.shape):
        chosen = None
        for offset in np.ndindex(*window_dimensions):
            index = tuple(w * s + o - lo for w, s, o, (lo, _) in
                          zip(window, window_strides, offset, padding))
            if not all(0 <= i < n for i, n in zip(index, operand.shape)):
                continue  # padding is never selected
            if chosen is None or not bool(eval_jaxpr(select_jaxpr, select_consts,
                                                     operand[chosen], operand[index])[0]):
                chosen = index
        if chosen is not None:
            out[chosen] = np.asarray(eval_jaxpr(scatter_jaxpr, scatter_consts, out[chosen],
                                                source[window])[0])
    return out


select_and_scatter_p = Primitive("select_and_scatter")
select_and_scatter_p.def_abstract_eval(_select_and_scatter_abstract_eval)
select_and_scatter_p.def_reference(_select_and_scatter_reference)


@select_and_scatter_p.def_batch
def _select_and_scatter_batch(axis_data, args, dims, *, window_dimensions, window_strides,
                              padding, **jaxprs):
    # (JAX has no rule) a leading window of size 1 over the batch: each example on its own
    if dims[2] is not None:
        raise NotImplementedError("select_and_scatter: batching over the init value is not "
                                  "supported; pass an unbatched init value.")
    operand, source = (bdim_at_front(x, d, axis_data.size) for x, d in zip(args[:2], dims))
    return select_and_scatter_p.bind(
        operand, source, args[2], window_dimensions=(1, *window_dimensions),
        window_strides=(1, *window_strides), padding=((0, 0), *padding), **jaxprs), 0

"""Elementwise primitives: arithmetic, transcendental functions, comparisons, selection and
dtype conversion. Each block holds the public wrapper, the rules, and the registration."""

from __future__ import annotations

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core import dtypes
from laminax_core._avals import ShapedArray, get_aval, weak_array
from laminax_core._interpreters.batching import bdim_at_front, move_bdim
from laminax_core._interpreters.jvp import Zero, zeros_like_aval
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._primitive import (
    ANY,
    INEXACT,
    NOT_LINEAR,
    NUMERIC,
    ZERO_TANGENT,
    batch_elementwise,
    broadcast_operand_shapes,
    check_dtype,
    define_primitive,
    jvp_from,
    linear,
    same_shape,
)
from laminax_core._trace import Tracer, current_trace, eval_trace
from laminax_core.lax import _hooks
from laminax_core.lax._helpers import as_operands, broadcast_to_shape, unbroadcast
from laminax_core.lax._structural import broadcast_in_dim, reshape

__all__ = [
    "abs", "add", "add_any", "convert_element_type", "cos", "div", "eq", "exp", "ge", "gt",
    "integer_pow", "le", "log", "logistic", "lt", "max", "min", "mul", "ne", "neg", "pow",
    "rsqrt", "select_n", "sign", "sin", "sqrt", "stop_gradient", "sub", "tanh",
    "broadcast_in_dim_for_select",
]  # fmt: skip
# the primitives, which lax exports beside their functions
__all__ += [
    "abs_p", "add_any_p", "add_p", "convert_element_type_p", "copy_p", "cos_p", "div_p", "eq_p",
    "exp_p", "ge_p", "gt_p", "integer_pow_p", "le_p", "log_p", "logistic_p", "lt_p", "max_p",
    "min_p", "mul_p", "ne_p", "neg_p", "pow_p", "rsqrt_p", "select_n_p", "sign_p", "sin_p",
    "sqrt_p", "stop_gradient_p", "sub_p", "tanh_p",
    "eq_to_p", "le_to_p", "lt_to_p",
]  # fmt: skip


def _hide_none(*names):
    """A `print_params` hiding the listed params when they are None (as JAX's jaxprs do)."""
    return lambda params: {k: v for k, v in params.items() if not (k in names and v is None)}


def _like_ans(t, ans):
    """A tangent contribution broadcast to the output's shape, as JAX's binary jvps do it: the
    size-1 dims dropped with a `reshape` (whose transpose is a reshape, not a broadcast) and
    the rest broadcast with `broadcast_in_dim`, so gradients lower to JAX's ops."""
    if type(t) in (int, float, complex):
        # JAX's jnp promotion converts a concrete tracer's tangent: a weak-typed array
        t = convert_element_type(t, get_aval(t).dtype, weak_type=True)
    shape = get_aval(ans).shape
    t_shape = get_aval(t).shape
    if t_shape == shape or len(t_shape) != len(shape):
        return broadcast_to_shape(t, shape)
    kept = tuple(i for i, (a, b) in enumerate(zip(t_shape, shape, strict=True)) if a == b)
    squeezed = reshape(t, tuple(t_shape[i] for i in kept))
    return broadcast_in_dim(squeezed, shape, kept)


# ----- add, sub, add_any, neg -------------------------------------------------------------


def _add_or_sub_jvp(op, primals, tangents):
    # As JAX's: with both tangents nonzero, one `op` of them (broadcasting implicitly, so the
    # transpose negates before it reduces); with one, that tangent broadcast to the output
    ans = op(*primals)
    x_dot, y_dot = tangents
    if isinstance(x_dot, Zero) and isinstance(y_dot, Zero):
        return ans, Zero.from_primal_value(ans)
    if isinstance(x_dot, Zero):
        return ans, _like_ans(y_dot if op is add else neg(y_dot), ans)
    if isinstance(y_dot, Zero):
        return ans, _like_ans(x_dot, ans)
    return ans, op(x_dot, y_dot)


def add(x, y):
    """Elementwise `x + y` (same dtypes; rank-0 and size-1 dims broadcast).

    Example:
      >>> add(np.float32(1), 2.0)
      array(3., dtype=float32)
    """
    return add_p.bind(*as_operands(x, y))


def _add_transpose(ct, x, y):
    return [
        unbroadcast(x.aval, ct) if undefined(x) else None,
        unbroadcast(y.aval, ct) if undefined(y) else None,
    ]


add_p = define_primitive(
    "add",
    abstract_eval=same_shape(dtypes=NUMERIC),
    reference=np.add,
    jvp=lambda primals, tangents: _add_or_sub_jvp(add, primals, tangents),
    transpose=_add_transpose,
    batch=batch_elementwise,
)


def add_any(x, y):
    """Adds two tangents or cotangents (the `add_any` primitive that autodiff emits)."""
    return add_any_p.bind(x, y)


def _add_any_batch(axis_data, args, dims):
    # JAX's rule: the result keeps y's batch dim; x is moved (or broadcast) to match it

    (x, y), (x_dim, y_dim) = args, dims
    if x_dim == y_dim:
        return add_any(x, y), x_dim
    if y_dim is None:
        x, y, x_dim, y_dim = y, x, y_dim, x_dim
    if x_dim is None:
        shape = get_aval(y).shape
        kept = tuple(d for d in range(len(shape)) if d != y_dim)
        return add_any(broadcast_in_dim(x, shape, kept), y), y_dim
    return add_any(move_bdim(x, x_dim, y_dim), y), y_dim


add_any_p = define_primitive(
    "add_any",
    abstract_eval=same_shape(dtypes=ANY),
    reference=np.add,
    jvp=linear,
    transpose=_add_transpose,
    batch=_add_any_batch,
)


def sub(x, y):
    """Elementwise `x - y`."""
    return sub_p.bind(*as_operands(x, y))


def _sub_transpose(ct, x, y):
    return [
        unbroadcast(x.aval, ct) if undefined(x) else None,
        unbroadcast(y.aval, neg(ct)) if undefined(y) else None,
    ]


sub_p = define_primitive(
    "sub",
    abstract_eval=same_shape(dtypes=NUMERIC),
    reference=np.subtract,
    jvp=lambda primals, tangents: _add_or_sub_jvp(sub, primals, tangents),
    transpose=_sub_transpose,
    batch=batch_elementwise,
)


def neg(x):
    """Elementwise `-x`."""
    return neg_p.bind(x)


neg_p = define_primitive(
    "neg",
    abstract_eval=same_shape(dtypes=NUMERIC),
    reference=np.negative,
    jvp=linear,
    transpose=lambda ct, x: [neg(ct)],
    batch=batch_elementwise,
)


# ----- mul, div -----------------------------------------------------------------------------


def mul(x, y):
    """Elementwise `x * y`."""
    return mul_p.bind(*as_operands(x, y), out_dtype=None)


def _mul_transpose(ct, x, y, out_dtype=None):
    if undefined(x) and undefined(y):
        raise TypeError(
            "mul is transposed with both operands linear: the function is not "
            "linear in its inputs (a bug in a jvp rule)."
        )
    if undefined(x):
        return [unbroadcast(x.aval, mul(ct, y)), None]
    return [None, unbroadcast(y.aval, mul(x, ct))]


mul_p = define_primitive(
    "mul",
    abstract_eval=same_shape(dtypes=NUMERIC),
    reference=lambda x, y, out_dtype=None: np.multiply(x, y),
    jvp=jvp_from(lambda t, ans, x, y, **_: mul(t, y), lambda t, ans, x, y, **_: mul(x, t)),
    transpose=_mul_transpose,
    batch=batch_elementwise,
    print_params=_hide_none("out_dtype"),
)


def div(x, y):
    """Elementwise `x / y` (integer division rounds toward zero, as in C)."""
    return div_p.bind(*as_operands(x, y))


def _div_reference(x, y):
    if np.issubdtype(x.dtype, np.integer):
        return (np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))).astype(x.dtype)
    return np.divide(x, y).astype(x.dtype)


def _div_transpose(ct, x, y):
    if undefined(y):
        raise TypeError("div is not linear in its divisor (a bug in a jvp rule).")
    return [unbroadcast(x.aval, div(ct, y)), None]


div_p = define_primitive(
    "div",
    abstract_eval=same_shape(dtypes=NUMERIC),
    reference=_div_reference,
    jvp=jvp_from(
        lambda t, ans, x, y: _like_ans(div(t, y), ans),
        lambda t, ans, x, y: mul(mul(neg(t), x), integer_pow(y, -2)),
    ),  # d(x/y)/dy = -x/y^2
    transpose=_div_transpose,
    batch=batch_elementwise,
)


# ----- max, min -----------------------------------------------------------------------------


def _balanced_eq(x, z, y):
    # 1 where x alone attains the extremum z, 1/2 where x and y tie (JAX splits the gradient)
    dtype = get_aval(z).dtype
    x_hits = convert_element_type(eq(x, z), dtype)
    y_hits = convert_element_type(eq(y, z), dtype)
    return div(x_hits, add(y_hits, 1.0))


def max(x, y):  # noqa: A001 (JAX's name)
    """Elementwise maximum (NaN-propagating)."""
    return max_p.bind(*as_operands(x, y))


max_p = define_primitive(
    "max",
    abstract_eval=same_shape(dtypes=NUMERIC),
    reference=np.maximum,
    jvp=jvp_from(
        lambda t, ans, x, y: mul(t, _balanced_eq(x, ans, y)),
        lambda t, ans, x, y: mul(t, _balanced_eq(y, ans, x)),
    ),
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


def min(x, y):  # noqa: A001 (JAX's name)
    """Elementwise minimum (NaN-propagating)."""
    return min_p.bind(*as_operands(x, y))


min_p = define_primitive(
    "min",
    abstract_eval=same_shape(dtypes=NUMERIC),
    reference=np.minimum,
    jvp=jvp_from(
        lambda t, ans, x, y: mul(t, _balanced_eq(x, ans, y)),
        lambda t, ans, x, y: mul(t, _balanced_eq(y, ans, x)),
    ),
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


# ----- transcendental functions (all take accuracy=None, hidden when None) -----------------


def _unary(name, reference, jvp_rule, dtypes_=INEXACT):
    return define_primitive(
        name,
        abstract_eval=same_shape(dtypes=dtypes_),
        reference=lambda x, accuracy=None: reference(x).astype(x.dtype),
        jvp=jvp_from(jvp_rule),
        transpose=NOT_LINEAR,
        batch=batch_elementwise,
        print_params=_hide_none("accuracy"),
    )


def exp(x, accuracy=None):
    """Elementwise `e ** x`."""
    return exp_p.bind(x, accuracy=accuracy)


exp_p = _unary("exp", np.exp, lambda t, ans, x, **_: mul(t, ans))  # d exp x = exp x


def log(x, accuracy=None):
    """Elementwise natural logarithm."""
    return log_p.bind(x, accuracy=accuracy)


log_p = _unary("log", np.log, lambda t, ans, x, **_: div(t, x))  # d log x = 1/x


def sin(x, accuracy=None):
    """Elementwise sine."""
    return sin_p.bind(x, accuracy=accuracy)


sin_p = _unary("sin", np.sin, lambda t, ans, x, **_: mul(t, cos(x)))  # d sin x = cos x


def cos(x, accuracy=None):
    """Elementwise cosine."""
    return cos_p.bind(x, accuracy=accuracy)


cos_p = _unary("cos", np.cos, lambda t, ans, x, **_: neg(mul(t, sin(x))))  # d cos x = -sin x


def tanh(x, accuracy=None):
    """Elementwise hyperbolic tangent."""
    return tanh_p.bind(x, accuracy=accuracy)


# d tanh x = 1 - tanh(x)^2 = (1 + tanh x)(1 - tanh x), written as JAX writes it
tanh_p = _unary("tanh", np.tanh, lambda t, ans, x, **_: mul(add(t, mul(t, ans)), sub(1.0, ans)))


def _logistic_reference(x):
    return 1 / (1 + np.exp(-x))


def logistic(x, accuracy=None):
    """Elementwise logistic sigmoid `1 / (1 + exp(-x))`."""
    return logistic_p.bind(x, accuracy=accuracy)


# d logistic x = logistic(x) * (1 - logistic(x))
logistic_p = _unary(
    "logistic", _logistic_reference, lambda t, ans, x, **_: mul(t, mul(ans, sub(1.0, ans)))
)


def sqrt(x, accuracy=None):
    """Elementwise square root."""
    return sqrt_p.bind(x, accuracy=accuracy)


# d sqrt x = 1 / (2 sqrt x), written 0.5 / sqrt x as JAX's rule
sqrt_p = _unary("sqrt", np.sqrt, lambda t, ans, x, **_: mul(t, div(0.5, ans)))


def rsqrt(x, accuracy=None):
    """Elementwise reciprocal square root `1 / sqrt(x)`."""
    return rsqrt_p.bind(x, accuracy=accuracy)


# d x^(-1/2) = -1/2 x^(-3/2) = -1/2 rsqrt(x) / x
rsqrt_p = _unary(
    "rsqrt", lambda x: 1 / np.sqrt(x), lambda t, ans, x, **_: mul(t, mul(-0.5, div(ans, x)))
)


# ----- pow, integer_pow -------------------------------------------------------------------


def pow(x, y):  # noqa: A001 (JAX's name)
    """Elementwise `x ** y` for a floating or complex `x`; `y` has `x`'s dtype or is an integer.

    Example:
      >>> pow(np.float32(2), np.int32(3))
      array(8., dtype=float32)
    """
    return pow_p.bind(*as_operands(x, y))


def _full_like(x, value):
    aval = get_aval(x)
    scalar = np.asarray(value, aval.dtype)
    if aval.shape == ():
        return scalar

    return broadcast_in_dim(scalar, aval.shape, ())


def _pow_abstract_eval(x, y):
    check_dtype("pow", x.dtype, INEXACT)
    if y.dtype != x.dtype and not np.issubdtype(y.dtype, np.integer):
        raise TypeError(
            f"lax.pow got a {x.dtype} base and a {y.dtype} exponent; the exponent must have the "
            f"base's dtype or an integer dtype. Convert it first, for example "
            f"y.astype(x.dtype)."
        )
    shape = broadcast_operand_shapes("pow", (x, y))
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


def _pow_jvp_x(t, ans, x, y):
    # d x^y / dx = y x^(y-1); for an integer y, 0 where y == 0 (so 0^0 has slope 0), as JAX
    dtype = get_aval(x).dtype
    if get_aval(y).dtype == dtype:
        slope = mul(y, pow(x, sub(y, _full_like(y, 1.0))))
    else:
        y = convert_element_type(y, dtype)
        x_shape, y_shape = get_aval(x).shape, get_aval(y).shape
        if x_shape != y_shape:  # both to the result's shape, so the y == 0 mask covers it

            shape = broadcast_operand_shapes("pow", [get_aval(x), get_aval(y)])
            x, y = (broadcast_in_dim(v, shape, tuple(range(len(s))) if s else ())
                    for v, s in ((x, x_shape), (y, y_shape)))
        is_zero = eq(y, _full_like(y, 0.0))
        # JAX tests y == 0 a second time for the replacement (the same equations as JAX's)
        nonzero_y = select_n(eq(y, _full_like(y, 0.0)), y, _full_like(y, 1.0))
        slope = mul(nonzero_y, pow(x, sub(y, _full_like(y, 1.0))))
        slope = select_n(is_zero, slope, _full_like(slope, 0.0))
    return _like_ans(mul(t, slope), ans)


def _pow_jvp_y(t, ans, x, y):
    # d x^y / dy = log(x) x^y, with log(1) = 0 standing in where x == 0
    safe_x = select_n(eq(x, 0.0), x, _full_like(x, 1.0))
    return _like_ans(mul(t, mul(log(safe_x), ans)), ans)


pow_p = define_primitive(
    "pow",
    abstract_eval=_pow_abstract_eval,
    reference=lambda x, y: np.power(x, y).astype(x.dtype),
    jvp=jvp_from(_pow_jvp_x, _pow_jvp_y),
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


def integer_pow(x, y: int):
    """Elementwise `x ** y` for a static Python int `y`.

    Raises:
      TypeError: `y` is not an integer (a float exponent is `lax.pow`'s), or `x` is an
        integer array and `y` is negative.
    """
    # an integral float (2.0) is accepted, as in JAX; 1.5 would silently become 1
    integral = isinstance(y, (int, np.integer)) or (
        isinstance(y, (float, np.floating)) and float(y).is_integer())
    if isinstance(y, (bool, np.bool_)) or not integral:
        raise TypeError(f"lax.integer_pow: the exponent must be an integer, got {y!r} of "
                        f"type {type(y).__name__}; use lax.pow for other exponents.")
    return integer_pow_p.bind(x, y=int(y))


_integer_pow_shape = same_shape(dtypes=NUMERIC)
_integer_pow_shape.primitive_name = "integer_pow"


def _integer_pow_abstract_eval(x, *, y):
    out = _integer_pow_shape(x, y=y)
    if y < 0 and dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(f"Integers cannot be raised to negative powers, got "
                        f"integer_pow({x.str_short()}, {y}); convert the base to a float "
                        "dtype first.")
    return out


def _integer_pow_reference(x, y):
    if y < 0:
        return (1 / np.power(x, -y)).astype(x.dtype)
    return np.power(x, y).astype(x.dtype)


def _integer_pow_jvp(t, ans, x, y):
    # d x^y = y x^(y-1)
    if y == 0:
        return mul(t, 0.0)
    factor = x if y == 2 else integer_pow(x, y - 1)
    # the exponent as a weak constant of x's dtype (complex x needs a complex constant)
    return mul(t, mul(weak_array(y, get_aval(x).dtype), factor))


integer_pow_p = define_primitive(
    "integer_pow",
    abstract_eval=_integer_pow_abstract_eval,
    reference=_integer_pow_reference,
    jvp=jvp_from(_integer_pow_jvp),
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


# ----- sign, abs ----------------------------------------------------------------------------


def sign(x):
    """Elementwise sign: -1, 0 or 1."""
    return sign_p.bind(x)


sign_p = define_primitive(
    "sign",
    abstract_eval=same_shape(dtypes=NUMERIC),
    reference=np.sign,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


def abs(x):  # noqa: A001 (JAX's name)
    """Elementwise absolute value; the modulus, of the matching real dtype, for complex input.

    Example:
      >>> abs(np.complex64(3 + 4j))
      array(5., dtype=float32)
    """
    return abs_p.bind(x)


def _abs_abstract_eval(x):
    check_dtype("abs", x.dtype, NUMERIC)
    dtype = np.empty((), x.dtype).real.dtype  # complex64 -> float32, complex128 -> float64
    return ShapedArray(x.shape, dtype, x.weak_type)


def _abs_jvp(t, ans, x):
    if np.issubdtype(get_aval(x).dtype, np.complexfloating):
        # d|z| = Re(conj(z) dz) / |z|, with |z| = 0 replaced by 1 (so 0/0 gives 0), as JAX.
        safe = select_n(eq(ans, _full_like(ans, 0)), ans, _full_like(ans, 1))
        conj_x = _hooks.conj(x)  # _math builds on this module: installed there
        return _hooks.real(mul(t, div(conj_x, convert_element_type(safe, get_aval(x).dtype))))
    return select_n(ge(x, _full_like(x, 0)), neg(t), t)  # slope +1 at 0, as JAX


abs_p = define_primitive(
    "abs",
    abstract_eval=_abs_abstract_eval,
    reference=np.abs,
    jvp=jvp_from(_abs_jvp),
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


# ----- comparisons --------------------------------------------------------------------------


def _comparison(name, reference):
    return define_primitive(
        name,
        abstract_eval=same_shape(dtypes=ANY, result_dtype=np.bool_),
        reference=reference,
        jvp=ZERO_TANGENT,
        transpose=NOT_LINEAR,
        batch=batch_elementwise,
    )


eq_p = _comparison("eq", np.equal)
ne_p = _comparison("ne", np.not_equal)
lt_p = _comparison("lt", np.less)
le_p = _comparison("le", np.less_equal)
gt_p = _comparison("gt", np.greater)
ge_p = _comparison("ge", np.greater_equal)


# ----- total-order comparisons (JAX's eq_to / le_to / lt_to, with no wrapper functions): floats
# compare by IEEE totalOrder, so -0.0 < 0.0, a NaN equals only a NaN of the same bits, and
# negative NaNs sort below -inf and positive ones above inf. Sorting's comparators use them.


def _total_order_key(x):
    """Integers that order as `x`'s floats do under IEEE totalOrder (sign-magnitude bits made
    two's complement)."""
    x = np.asarray(x)
    if not dtypes.issubdtype(x.dtype, np.floating):
        return x
    bits = x.view(np.dtype(f"i{x.dtype.itemsize}")).astype(np.int64)
    magnitude = (1 << (8 * x.dtype.itemsize - 1)) - 1
    return np.where(bits < 0, bits ^ magnitude, bits)


def _total_order(name, compare):
    def reference(x, y):
        if np.iscomplexobj(x):
            return np.logical_and(compare(_total_order_key(x.real), _total_order_key(y.real)),
                                  compare(_total_order_key(x.imag), _total_order_key(y.imag)))
        return compare(_total_order_key(x), _total_order_key(y))

    ordered = name != "eq_to"
    check = same_shape(dtypes=ANY, result_dtype=np.bool_)
    check.primitive_name = name

    def abstract_eval(x, y):
        for position, aval in enumerate((x, y)):
            if ordered and dtypes.issubdtype(aval.dtype, np.complexfloating):
                raise TypeError(f"{name} does not accept dtype {aval.dtype.name} at position "
                                f"{position}. Accepted dtypes at position {position} are "
                                "subtypes of integer, floating, bool.")
        return check(x, y)

    return define_primitive(name, abstract_eval=abstract_eval, reference=reference,
                            jvp=ZERO_TANGENT, transpose=NOT_LINEAR, batch=batch_elementwise)


eq_to_p = _total_order("eq_to", np.equal)
le_to_p = _total_order("le_to", np.less_equal)
lt_to_p = _total_order("lt_to", np.less)


def eq(x, y):
    """Elementwise `x == y` (bool)."""
    return eq_p.bind(*as_operands(x, y))


def ne(x, y):
    """Elementwise `x != y` (bool)."""
    return ne_p.bind(*as_operands(x, y))


def lt(x, y):
    """Elementwise `x < y` (bool)."""
    return lt_p.bind(*as_operands(x, y))


def le(x, y):
    """Elementwise `x <= y` (bool)."""
    return le_p.bind(*as_operands(x, y))


def gt(x, y):
    """Elementwise `x > y` (bool)."""
    return gt_p.bind(*as_operands(x, y))


def ge(x, y):
    """Elementwise `x >= y` (bool)."""
    return ge_p.bind(*as_operands(x, y))


# ----- select_n -----------------------------------------------------------------------------


def select_n(which, *cases):
    """Picks `cases[which]` elementwise; `which` is bool (two cases) or int32.

    Example:
      >>> select_n(np.array([True, False]), np.zeros(2, np.float32), np.ones(2, np.float32))
      array([1., 0.], dtype=float32)
    """
    return select_n_p.bind(which, *as_operands(*cases))


def _select_n_abstract_eval(which, *cases):
    if not cases:
        raise TypeError("select_n requires at least one case.")
    if which.dtype != np.bool_ and which.dtype != np.int32:
        raise TypeError(f"select_n: which must be bool or int32, got {which.dtype.name}.")
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError(f"select_n: a bool which selects between 2 cases, got {len(cases)}.")
    rule = same_shape(dtypes=ANY)
    rule.primitive_name = "select_n"
    out = rule(*cases)
    if which.shape not in ((), out.shape):
        raise TypeError(
            f"select_n: which has shape {which.shape}, cases have {out.shape}; "
            "which must be a scalar or have the cases' shape."
        )
    return out


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    ans = select_n(which, *cases)
    if all(isinstance(t, Zero) for t in tangents[1:]):
        return ans, Zero.from_primal_value(ans)
    # one zeros array serves every symbolic zero; JAX makes it even when none is zero, which
    # leaves a (dead) equation that jaxprs show, so we make it the same way
    nonzero = next(t for t in tangents[1:] if not isinstance(t, Zero))
    zeros = zeros_like_aval(get_aval(nonzero))
    return ans, select_n(which, *[zeros if isinstance(t, Zero) else t for t in tangents[1:]])


def _select_n_transpose(ct, which, *cases):
    zeros = zeros_like_aval(get_aval(ct))
    which_dtype = get_aval(which).dtype

    def routed(i):
        if which_dtype == np.bool_:
            return select_n(which, ct, zeros) if i == 0 else select_n(which, zeros, ct)
        # an integer `which` routes case i through `which == i`, as JAX's transpose does
        return select_n(eq(which, np.asarray(i, which_dtype)), zeros, ct)

    return [None] + [routed(i) if undefined(c) else None for i, c in enumerate(cases)]


def _select_n_batch(axis_data, args, dims):
    which, which_dim = args[0], dims[0]
    cases = [bdim_at_front(c, d, axis_data.size) for c, d in zip(args[1:], dims[1:], strict=True)]
    out_shape = get_aval(cases[0]).shape
    if which_dim is None and get_aval(which).ndim > 0:
        which = bdim_at_front(which, None, axis_data.size)
    elif which_dim is not None:
        which = bdim_at_front(which, which_dim, axis_data.size)
        if get_aval(which).ndim == 1 and len(out_shape) > 1:
            which = broadcast_in_dim_for_select(which, out_shape)
    return select_n(which, *cases), 0


def broadcast_in_dim_for_select(which, shape):
    return broadcast_in_dim(which, shape, (0,))


select_n_p = define_primitive(
    "select_n",
    abstract_eval=_select_n_abstract_eval,
    reference=lambda which, *cases: np.choose(which.astype(np.int32), cases),
    jvp=_select_n_jvp,
    transpose=_select_n_transpose,
    batch=_select_n_batch,
)


# ----- convert_element_type ---------------------------------------------------------------


def convert_element_type(x, new_dtype, weak_type: bool = False):
    """Casts `x` to `new_dtype` (canonicalized; float to int truncates toward zero).

    Example:
      >>> convert_element_type(np.float32(2.7), np.int32)
      array(2, dtype=int32)
    """
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if dtypes.issubdtype(new_dtype, dtypes.extended) or dtypes.issubdtype(
            getattr(x, "dtype", np.float32), dtypes.extended):
        if getattr(x, "dtype", None) != new_dtype:
            raise TypeError(f"convert_element_type: cannot convert {getattr(x, 'dtype', x)} to "
                            f"{new_dtype}: typed keys convert only through key_data / "
                            "wrap_key_data.")
        return x
    if not isinstance(x, Tracer) and np.ndim(x) == 0 and current_trace() is not eval_trace():
        # under a transformation a scalar constant is converted right away (it becomes a
        # literal), as in JAX; outside any, the conversion runs and gives an Array as JAX's
        value = _convert_reference(np.asarray(x), new_dtype, weak_type, None)
        return weak_array(value, new_dtype) if weak_type else value
    return convert_element_type_p.bind(
        x, new_dtype=new_dtype, weak_type=bool(weak_type), sharding=None
    )


def _convert_abstract_eval(x, new_dtype, weak_type, sharding):
    return ShapedArray(x.shape, new_dtype, weak_type, x.sharding)


def _convert_jvp(primals, tangents, new_dtype, weak_type, sharding):
    (x,), (t,) = primals, tangents
    ans = convert_element_type_p.bind(
        x, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding
    )
    differentiable = dtypes.issubdtype(get_aval(x).dtype, np.inexact) and dtypes.issubdtype(
        new_dtype, np.inexact
    )
    if isinstance(t, Zero) or not differentiable:
        return ans, Zero.from_primal_value(ans)
    return ans, convert_element_type_p.bind(
        t, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding
    )


def _convert_transpose(ct, x, new_dtype, weak_type, sharding):
    return [convert_element_type(ct, x.aval.dtype, x.aval.weak_type)]


def _convert_reference(x, new_dtype, weak_type, sharding):
    if np.issubdtype(x.dtype, np.complexfloating) and not np.issubdtype(
        new_dtype, np.complexfloating
    ):
        x = x.real
    return x.astype(new_dtype)


convert_element_type_p = define_primitive(
    "convert_element_type",
    abstract_eval=_convert_abstract_eval,
    reference=_convert_reference,
    jvp=_convert_jvp,
    transpose=_convert_transpose,
    batch=batch_elementwise,
    print_params=lambda params: {k: v for k, v in params.items() if k != "sharding"},
)


# ----- stop_gradient, copy ------------------------------------------------------------------


def stop_gradient(x):
    """The identity, with a zero derivative: gradients do not flow through it (applied to
    each leaf when `x` is a pytree).

    Example:
      >>> stop_gradient(np.float32(3))
      array(3., dtype=float32)
    """
    leaves, tree = tree_flatten(x)
    if tree.num_leaves == 1 and tree.num_nodes == 1:  # one array
        return stop_gradient_p.bind(x)
    return tree_unflatten(tree, [stop_gradient_p.bind(leaf) for leaf in leaves])


stop_gradient_p = define_primitive(
    "stop_gradient",
    abstract_eval=same_shape(dtypes=ANY),
    reference=lambda x: x,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=batch_elementwise,
)


copy_p = define_primitive(
    "copy",
    abstract_eval=same_shape(dtypes=ANY),
    reference=np.copy,
    jvp=linear,
    transpose=lambda ct, x: [copy_p.bind(ct)],
    batch=batch_elementwise,
)


_hooks.install(convert_element_type=convert_element_type)

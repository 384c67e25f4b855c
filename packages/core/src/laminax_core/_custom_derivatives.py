"""`custom_jvp` and `custom_vjp`: functions with user-supplied derivative rules.

Calling one traces the function into `call_jaxpr` and binds a higher-order primitive,
`custom_jvp_call` or `custom_vjp_call`, whose params also hold the user's rules. Every trace
treats it like any primitive: the eval trace evaluates `call_jaxpr`; the jvp trace runs the
user's jvp rule (custom_jvp) or the user's fwd and a `custom_lin` primitive (custom_vjp) whose
transpose calls the user's bwd; the batch trace rebinds the primitive with vmapped function and
rules. Values closed over that are tracers of outer transformations become leading operands
(`num_consts`); their derivatives through the function are not taken into account, as in JAX.

Internally a zero tangent or cotangent is a symbolic `Zero`. Rules defined with
`symbolic_zeros=True` see those as `SymbolicZero`s (and a custom_vjp fwd sees `CustomVJPPrimal`
arguments saying which are perturbed); other rules get zero arrays. A vmapped rule keeps
symbolic zeros symbolic: they are passed around the batching, never batched.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from laminax_pytree import tree_flatten, tree_map, tree_unflatten
from laminax_pytree.internal import flatten_axes

from laminax_core import _trace, dtypes
from laminax_core._argnums import check_argnums, resolve_argnums
from laminax_core._avals import get_aval
from laminax_core._interpreters import batching, lax_ops, partial_eval
from laminax_core._interpreters.eval import eval_jaxpr
from laminax_core._interpreters.jvp import Zero, instantiate_zeros
from laminax_core._interpreters.partial_eval import hoist_tracer_consts
from laminax_core._jaxpr import ClosedJaxpr
from laminax_core._primitive import (
    NOT_BATCHED,
    NOT_DIFFERENTIABLE,
    NOT_LINEAR,
    STAGED_WHOLE,
    define_higher_order_primitive,
)

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "custom_jvp",
    "custom_vjp",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]


class SymbolicZero:
    """A tangent or cotangent known to be zero, without an array: what custom rules defined
    with `symbolic_zeros=True` receive for inputs that are not differentiated (and may return
    for outputs whose derivative is zero). Attributes such as `shape` and `dtype` come from
    its abstract value `aval`.

    Args:
      aval: the abstract value (shape and dtype) of the zero.

    Example:
      >>> z = SymbolicZero.from_primal_value(np.zeros(2, np.float32))
      >>> z.shape, z.dtype
      ((2,), dtype('float32'))
    """

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self) -> str:
        return "SymbolicZero"

    def __getattr__(self, name):
        if name == "aval":  # not set yet (copy/pickle protocols probe before __init__)
            raise AttributeError(name)
        return getattr(self.aval, name)

    @staticmethod
    def from_primal_value(value) -> SymbolicZero:
        """The symbolic zero tangent of the primal `value`."""
        return SymbolicZero(get_aval(value).to_tangent_aval())


def zero_from_primal(value, symbolic_zeros: bool = False):
    """Zero tangents for the pytree `value`: `SymbolicZero`s, or zero arrays.

    Args:
      value: a pytree of arrays.
      symbolic_zeros: whether to return `SymbolicZero` leaves instead of arrays.

    Returns:
      A pytree of the structure of `value`.

    Example:
      >>> zero_from_primal(np.ones(2, np.float32))
      array([0., 0.], dtype=float32)
    """

    def leaf(x):
        zero = SymbolicZero.from_primal_value(x)
        return zero if symbolic_zeros else _tangent_zeros(x)

    return tree_map(leaf, value)


@dataclasses.dataclass
class CustomVJPPrimal:
    """What a `custom_vjp` fwd rule defined with `symbolic_zeros=True` receives for each
    argument leaf: the primal `value` and whether it is `perturbed` (differentiated).

    Example:
      >>> CustomVJPPrimal(np.float32(1), perturbed=False).perturbed
      False
    """

    value: Any
    perturbed: bool


def custom_vjp_primal_tree_values(tree):
    """The pytree `tree` of `CustomVJPPrimal` leaves with each replaced by its `value`.

    Args:
      tree: fwd rule arguments in `symbolic_zeros` mode.

    Returns:
      The primal values, in the same structure.

    Example:
      >>> custom_vjp_primal_tree_values((CustomVJPPrimal(np.float32(2), True),))
      (np.float32(2.0),)
    """

    def value(leaf):
        if not isinstance(leaf, CustomVJPPrimal):
            raise TypeError(f"custom_vjp_primal_tree_values expects CustomVJPPrimal leaves, got "
                            f"{type(leaf).__name__}; pass the arguments of a symbolic_zeros fwd "
                            f"rule.")
        return leaf.value

    return tree_map(value, tree)


def _to_symbolic(t):
    """An internal zero as the `SymbolicZero` users see."""
    return SymbolicZero(t.aval) if isinstance(t, Zero) else t


def _from_symbolic(t):
    """A `SymbolicZero` from a user rule as the internal zero."""
    return Zero(t.aval) if isinstance(t, SymbolicZero) else t


def _aval(x):
    return x.aval if isinstance(x, SymbolicZero | Zero) else get_aval(x)


class _Rule:
    """A flat-calling wrapper of a user rule; prints as the rule's name in jaxpr params."""

    def __init__(self, fn: Callable, name: str):
        self.fn = fn
        self.name = name

    def __call__(self, *args):
        return self.fn(*args)

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


def _name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _outside_transformations(leaves) -> bool:
    """True when no transformation is running and no argument is a tracer: the function then
    runs as plain Python on its arguments (its rules are never needed), as in JAX, so Python
    control flow on values works and the results are what the function returns."""
    if _trace._context.trace is not None or any(isinstance(x, _trace.Tracer) for x in leaves):
        return False
    for x in leaves:
        get_aval(x)  # arguments must still be arrays or scalars (TypeError otherwise)
    return True


def _canonical(leaves) -> list:
    # NumPy values take their canonical dtype (int64 -> int32 with x64 off), as JAX passes them
    return [np.asarray(x, dtype) if isinstance(x, np.ndarray | np.generic) and
            x.dtype != (dtype := dtypes.canonicalize_dtype(x.dtype)) else x for x in leaves]


def _resolve_args(fun, args, kwargs):
    if not kwargs:
        return tuple(args)
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as err:
        raise TypeError(f"custom derivative function {_name(fun)}: {err}") from err
    return tuple(bound.args) + tuple(bound.kwargs.values())


def _check_nondiff_argnums(kind: str, nondiff_argnums) -> tuple[int, ...]:
    # a collection of positions: JAX does not take a bare int (or NumPy integer) here
    try:
        operator.index(nondiff_argnums)
    except TypeError:
        return check_argnums(f"{kind} nondiff_argnums", nondiff_argnums)
    raise TypeError(f"{kind} nondiff_argnums must be a tuple of ints (argument positions), "
                    f"got {nondiff_argnums!r}; write ({nondiff_argnums!r},) for one.")


def _split_nondiff(args, nondiff_argnums):
    n = len(args)
    # negative positions count from the end of this call's arguments (as JAX); positions past
    # the end fail on the lookup below
    nums = [resolve_argnums((i,), n)[0] if i < 0 else i for i in nondiff_argnums]
    nondiff = {i: args[i] for i in nums}
    dyn = [a for i, a in enumerate(args) if i not in nondiff]
    return nondiff, dyn


def _rebuild(nondiff: dict, dyn: list) -> list:
    out, dyn_iter = [], iter(dyn)
    for i in range(len(nondiff) + len(dyn)):
        out.append(nondiff[i] if i in nondiff else next(dyn_iter))
    return out


class _StagedCall(NamedTuple):
    nondiff: dict
    dyn: list
    leaves: list
    in_tree: Any
    closed: ClosedJaxpr | None
    hoisted: list
    out_tree: Any
    outside_transformations: bool = False
    direct_result: Any = None


def _stage_call(wrapper, rule, kind: str, class_name: str, define: str, args, kwargs):
    """What a call of a custom_jvp or custom_vjp function does before binding its primitive:
    checks that the rule is defined, binds the arguments to the function's signature, sets
    the non-differentiable ones apart, flattens the rest and traces the function on them.
    Outside any transformation the function just runs (`direct_result`), as in JAX."""
    args = _resolve_args(wrapper.fun, args, kwargs)
    # negative positions are checked against the call first, as JAX does
    resolve_argnums([i for i in wrapper.nondiff_argnums if i < 0], len(args))
    if rule is None:
        raise AttributeError(
            f"No {kind} defined for {class_name} function {_name(wrapper.fun)} using {define}."
        )
    nondiff, dyn = _split_nondiff(args, wrapper.nondiff_argnums)
    leaves, in_tree = tree_flatten(dyn)
    if _outside_transformations(leaves):
        result = wrapper.fun(*_rebuild(nondiff, tree_unflatten(in_tree, _canonical(leaves))))
        return _StagedCall(nondiff, dyn, leaves, in_tree, None, [], None, True, result)
    out_trees: list = []
    closed, hoisted = _trace_call(wrapper.fun, nondiff, in_tree, leaves, out_trees)
    return _StagedCall(nondiff, dyn, leaves, in_tree, closed, hoisted, out_trees[0])


def _trace_call(fun, nondiff, in_tree, leaves, out_trees):
    """Traces `fun` on the avals of `leaves`; closed-over tracers become leading invars."""

    def flat(*xs):
        out = fun(*_rebuild(nondiff, tree_unflatten(in_tree, xs)))
        out_leaves, out_tree = tree_flatten(out)
        out_trees.append(out_tree)
        return out_leaves

    closed, _ = partial_eval.trace_to_jaxpr(
        flat, [get_aval(x) for x in leaves], "custom derivative tracing"
    )
    return hoist_tracer_consts(closed)


def _call_jaxpr_abstract_eval(*avals, call_jaxpr, **params):
    return call_jaxpr.out_avals, call_jaxpr.effects


def _call_jaxpr_impl(*args, call_jaxpr, **params):
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _print_params(params):
    # JAX prints the name first, then the rest sorted; num_consts only when there are some
    rest = sorted((k, v) for k, v in params.items() if k != "name" and (k != "num_consts" or v))
    return [("name", params["name"]), *rest]


def _tangent_zeros(x):
    aval = get_aval(x).to_tangent_aval()
    return (
        np.zeros(aval.shape, aval.dtype)
        if aval.dtype == dtypes.float0
        else (instantiate_zeros(Zero(aval)))
    )


def _vmapped(fn, in_dims, axis_data, n_out_fn):
    """`fn` (flat in, flat out) mapped over `in_dims`, every output batched at 0."""

    def mapped(*args):
        return batching.batch_flat(
            lambda *a: list(fn(*a)), list(args), list(in_dims), axis_data, lambda: [0] * n_out_fn()
        )

    return mapped


def _front(args, dims):
    moved = [
        x if d is None else batching.move_bdim(x, d, 0) for x, d in zip(args, dims, strict=True)
    ]
    return moved, [None if d is None else 0 for d in dims]


def _batched_jaxpr(call_jaxpr, args, dims, axis_data):
    n_out = len(call_jaxpr.out_avals)
    fun = _vmapped(
        lambda *a: eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *a),
        dims,
        axis_data,
        lambda: n_out,
    )
    closed, _ = partial_eval.trace_to_jaxpr(fun, [get_aval(x) for x in args], "vmap")
    return hoist_tracer_consts(closed)


# ----- custom_jvp ---------------------------------------------------------------------------


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts, symbolic_zeros, name):
    args = primals[num_consts:]
    arg_tangents = _rule_tangents(args, tangents[num_consts:], symbolic_zeros)
    outs, tangents_out = jvp(args, arg_tangents)
    return outs, [_from_symbolic(t) for t in tangents_out]


def _rule_tangents(args, tangents, symbolic_zeros: bool) -> list:
    """The tangents a user rule receives: zeros as `SymbolicZero`s, or as zero arrays."""
    if symbolic_zeros:
        return [_to_symbolic(t) for t in tangents]
    return [
        _tangent_zeros(x) if isinstance(t, Zero) else t for x, t in zip(args, tangents, strict=True)
    ]


def _is_zero(x) -> bool:
    return isinstance(x, SymbolicZero | Zero)


def _vmap_keeping_zeros(fn, args, dims, axis_data) -> list:
    """`fn(*args) -> list` mapped over `dims`. Zero arguments (`Zero`, `SymbolicZero`) reach
    `fn` as zeros of one example; zero results come back as zeros of the whole batch (at 0,
    like every other result)."""
    zero_in = [_is_zero(a) for a in args]
    inner = [
        type(a)(_unbatched(a.aval, d)) if z else None
        for a, d, z in zip(args, dims, zero_in, strict=True)
    ]
    zeros_out: list = []

    def per_example(*given):
        given = iter(given)
        outs = list(fn(*[i if z else next(given) for i, z in zip(inner, zero_in, strict=True)]))
        zeros_out[:] = [o if _is_zero(o) else None for o in outs]
        return [o for o in outs if not _is_zero(o)]

    flat = batching.batch_flat(
        per_example,
        [a for a, z in zip(args, zero_in, strict=True) if not z],
        [d for d, z in zip(dims, zero_in, strict=True) if not z],
        axis_data,
        lambda: [0] * zeros_out.count(None),
    )
    flat = iter(flat)
    return [
        next(flat) if z is None else type(z)(z.aval.update(shape=(axis_data.size, *z.aval.shape)))
        for z in zeros_out
    ]


def _vmapped_rule(rule, in_dims, axis_data, n_out):
    """`rule(primals, tangents) -> (outs, tangents_out)` mapped over `in_dims` (for the
    primals and, alike, their tangents), symbolic zero tangents kept symbolic."""

    def mapped(primals, tangents):
        n = len(primals)
        flat = _vmap_keeping_zeros(
            lambda *xs: [x for part in rule(list(xs[:n]), list(xs[n:])) for x in part],
            [*primals, *tangents], [*in_dims, *in_dims], axis_data,
        )
        return flat[:n_out], flat[n_out:]

    return mapped


def _unbatched(aval, dim):
    return aval if dim is None else aval.update(shape=aval.shape[:dim] + aval.shape[dim + 1 :])


def _custom_jvp_call_batch(
    axis_data, args, dims, *, call_jaxpr, jvp, num_consts, symbolic_zeros, name
):
    args, dims = _front(args, dims)
    closed, hoisted = _batched_jaxpr(call_jaxpr, args, dims, axis_data)
    n_out = len(call_jaxpr.out_avals)
    batched_jvp = _vmapped_rule(jvp, dims[num_consts:], axis_data, n_out)
    outs = custom_jvp_call_p.bind(
        *hoisted,
        *args,
        call_jaxpr=closed,
        jvp=_Rule(batched_jvp, str(jvp)),
        num_consts=len(hoisted) + num_consts,
        symbolic_zeros=symbolic_zeros,
        name=name,
    )
    return outs, [0] * n_out


class custom_jvp:  # noqa: N801 (JAX's name)
    """A function with a custom forward-mode derivative rule.

    Args:
      fun: the function.
      nondiff_argnums: positions of arguments that are not differentiated (Python values such
        as functions or flags); the jvp rule receives them first.

    Example:
      >>> @custom_jvp
      ... def f(x):
      ...     return lax.sin(x)
      >>> @f.defjvp
      ... def f_jvp(primals, tangents):
      ...     (x,), (t,) = primals, tangents
      ...     return f(x), t * 2.0
      >>> grad(f)(np.float32(1.0))
      array(2., dtype=float32)
    """

    def __init__(self, fun: Callable, nondiff_argnums: tuple[int, ...] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _check_nondiff_argnums(type(self).__name__, nondiff_argnums)
        self.jvp: Callable | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Sets the rule `jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`.

        Args:
          jvp: the rule.
          symbolic_zeros: whether the rule receives a `SymbolicZero` (instead of a zero
            array) for the tangent of each input that is not differentiated; it may return
            `SymbolicZero`s too.

        Returns:
          `jvp`, so that `defjvp` works as a decorator.
        """
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """Sets one rule per argument, `jvp_i(t_i, primal_out, *primals) -> tangent`, summed;
        None marks an argument with a zero contribution."""

        def jvp(primals, tangents):
            out = self(*primals)
            contributions = [
                rule(t, out, *primals)
                for rule, t in zip(jvps, tangents, strict=True)
                if rule is not None
            ]
            if not contributions:
                return out, tree_map(lambda o: _tangent_zeros(o), out)
            total = contributions[0]
            for c in contributions[1:]:
                total = tree_map(lambda a, b: a + b, total, c)
            return out, total

        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        call = _stage_call(self, self.jvp, "JVP", "custom_jvp", "defjvp", args, kwargs)
        if call.outside_transformations:
            return call.direct_result
        nondiff, in_tree, out_tree = call.nondiff, call.in_tree, call.out_tree
        rule = _Rule(self._flat_jvp(nondiff, in_tree, out_tree), _name(self.jvp))
        outs = custom_jvp_call_p.bind(
            *call.hoisted,
            *call.leaves,
            call_jaxpr=call.closed,
            jvp=rule,
            num_consts=len(call.hoisted),
            symbolic_zeros=self.symbolic_zeros,
            name=_name(self.fun),
        )
        return tree_unflatten(out_tree, outs)

    def _flat_jvp(self, nondiff, in_tree, out_tree):
        def flat_jvp(primal_leaves, tangent_leaves):
            primals = tree_unflatten(in_tree, primal_leaves)
            tangents = tree_unflatten(in_tree, tangent_leaves)
            nondiff_vals = [nondiff[i] for i in sorted(nondiff)]
            out, tangent_out = self.jvp(*nondiff_vals, tuple(primals), tuple(tangents))
            out_leaves, tree = tree_flatten(out)
            tangent_leaves_out, tangent_tree = tree_flatten(tangent_out)
            if tree != out_tree or tangent_tree != out_tree:
                raise TypeError(
                    f"Custom JVP rule {_name(self.jvp)} for function {_name(self.fun)} must "
                    f"produce primal and tangent outputs with equal container (pytree) "
                    f"structures matching the function's output {out_tree}, but got {tree} and "
                    f"{tangent_tree}."
                )
            for o, t in zip(out_leaves, tangent_leaves_out, strict=True):
                expected = get_aval(o).to_tangent_aval()
                found = _aval(t)
                if found.shape != expected.shape or (
                    found.dtype != expected.dtype and expected.dtype != dtypes.float0
                ):
                    raise TypeError(
                        f"Custom JVP rule {_name(self.jvp)} must produce primal and tangent "
                        f"outputs with corresponding shapes and dtypes; got primal "
                        f"{get_aval(o).str_short()} and tangent {found.str_short()}."
                    )
            return out_leaves, tangent_leaves_out

        return flat_jvp


# ----- custom_vjp ---------------------------------------------------------------------------


def _custom_lin_abstract_eval(*avals, num_res, bwd, out_avals):
    return list(out_avals), set()


def _custom_lin_impl(*args, num_res, bwd, out_avals):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals):
    # zero cotangents reach `bwd` as `Zero`s: the user's rule sees them as symbolic zeros or
    # zero arrays (its `symbolic_zeros`), and its zero results come back as `Zero`s
    cts_in = bwd(list(args[:num_res]), list(cts))
    return [None] * num_res + list(cts_in)


def _custom_vjp_call_jvp(
    primals, tangents, *, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros, name
):
    args = primals[num_consts:]
    outs, res = fwd(args, [not isinstance(t, Zero) for t in tangents[num_consts:]])
    arg_tangents = [
        _tangent_zeros(x) if isinstance(t, Zero) else t
        for x, t in zip(args, tangents[num_consts:], strict=True)
    ]
    out_avals = tuple(get_aval(o).to_tangent_aval() for o in outs)
    res, bwd = _python_scalar_residuals_kept(res, bwd)
    tangent_outs = custom_lin_p.bind(
        *res, *arg_tangents, num_res=len(res), bwd=bwd, out_avals=out_avals
    )
    return outs, tangent_outs


def _python_scalar_residuals_kept(res, bwd):
    """The residuals to bind, and a bwd rule that gets the Python scalars among `res` back as
    they were: JAX hands `bwd` a residual `True` as a Python bool (libraries branch on such
    flags: equinox's `perturbed`), where staging would make it an array."""
    is_scalar = [type(r) in (bool, int, float, complex) for r in res]
    if not any(is_scalar):
        return res, bwd
    kept = [r if scalar else None for r, scalar in zip(res, is_scalar, strict=True)]

    def bwd_with_scalars(dyn_res, cts):
        dyn = iter(dyn_res)
        return bwd([r if scalar else next(dyn) for r, scalar in zip(kept, is_scalar,
                                                                   strict=True)], cts)

    dyn = [r for r, scalar in zip(res, is_scalar, strict=True) if not scalar]
    return dyn, _Rule(bwd_with_scalars, str(bwd))


def _custom_vjp_call_batch(
    axis_data, args, dims, *, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros, name
):
    args, dims = _front(args, dims)
    closed, hoisted = _batched_jaxpr(call_jaxpr, args, dims, axis_data)
    n_out = len(call_jaxpr.out_avals)
    arg_dims = dims[num_consts:]
    counts = {}

    def batched_fwd(xs, perturbed):
        def fwd_flat(*xs):
            outs, res = fwd(xs, perturbed)
            counts["res"] = len(res)
            return [*outs, *res]

        flat = _vmapped(fwd_flat, arg_dims, axis_data, lambda: n_out + counts["res"])(*xs)
        return flat[:n_out], flat[n_out:]

    def batched_bwd(res, cts):
        cts_in = _vmap_keeping_zeros(
            lambda *rc: bwd(list(rc[: len(res)]), list(rc[len(res) :])),
            [*res, *cts], [0] * (len(res) + len(cts)), axis_data,
        )
        # an argument shared by the whole batch gets the sum of the per-example cotangents
        return [
            _shared_cotangent(ct) if d is None else ct
            for ct, d in zip(cts_in, arg_dims, strict=True)
        ]

    outs = custom_vjp_call_p.bind(
        *hoisted,
        *args,
        call_jaxpr=closed,
        fwd=_Rule(batched_fwd, str(fwd)),
        bwd=_Rule(batched_bwd, str(bwd)),
        num_consts=len(hoisted) + num_consts,
        symbolic_zeros=symbolic_zeros,
        name=name,
    )
    return outs, [0] * n_out


def _shared_cotangent(ct):
    if _is_zero(ct):
        return type(ct)(_unbatched(ct.aval, 0))
    if get_aval(ct).dtype == dtypes.float0:
        return np.zeros(get_aval(ct).shape[1:], dtypes.float0)
    return lax_ops.reduce_sum(ct, (0,))


class custom_vjp:  # noqa: N801 (JAX's name)
    """A function with a custom reverse-mode derivative rule.

    Args:
      fun: the function.
      nondiff_argnums: positions of arguments that are not differentiated; `bwd` receives
        them first.

    Example:
      >>> @custom_vjp
      ... def f(x):
      ...     return lax.sin(x)
      >>> f.defvjp(lambda x: (f(x), x), lambda x, ct: (ct * 3.0,))
      >>> print(grad(f)(np.float32(1.0)))
      3.0
    """

    def __init__(self, fun: Callable, nondiff_argnums: tuple[int, ...] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _check_nondiff_argnums(type(self).__name__, nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self.symbolic_zeros = False

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False) -> None:
        """Sets `fwd(*args) -> (output, residuals)` and
        `bwd(*nondiff_args, residuals, output_cotangent) -> tuple of argument cotangents`.

        Args:
          fwd: the forward rule.
          bwd: the backward rule; None for an argument (or a `SymbolicZero`) is a zero
            cotangent.
          symbolic_zeros: whether `fwd` receives each argument leaf as a `CustomVJPPrimal`
            (its `value`, and whether it is `perturbed`, i.e. differentiated) and `bwd` a
            `SymbolicZero` for each output cotangent known to be zero.
        """
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, symbolic_zeros

    def __call__(self, *args, **kwargs):
        call = _stage_call(self, self.fwd, "VJP", "custom_vjp", "defvjp", args, kwargs)
        if call.outside_transformations:
            return call.direct_result
        nondiff, in_tree, out_tree = call.nondiff, call.in_tree, call.out_tree
        res_trees: list = []
        fwd = _Rule(self._flat_fwd(nondiff, in_tree, out_tree, res_trees), _name(self.fwd))
        bwd = _Rule(
            self._flat_bwd(nondiff, in_tree, out_tree, res_trees, call.dyn), _name(self.bwd)
        )
        outs = custom_vjp_call_p.bind(
            *call.hoisted,
            *call.leaves,
            call_jaxpr=call.closed,
            fwd=fwd,
            bwd=bwd,
            num_consts=len(call.hoisted),
            symbolic_zeros=self.symbolic_zeros,
            name=_name(self.fun),
        )
        return tree_unflatten(out_tree, outs)

    def _flat_fwd(self, nondiff, in_tree, out_tree, res_trees):
        def flat_fwd(xs, perturbed):
            if self.symbolic_zeros:
                xs = [CustomVJPPrimal(x, p) for x, p in zip(xs, perturbed, strict=True)]
            result = self.fwd(*_rebuild(nondiff, tree_unflatten(in_tree, xs)))
            if not (isinstance(result, tuple) and len(result) == 2):
                raise TypeError(
                    f"Custom VJP fwd rule {_name(self.fwd)} must return a pair (output, residuals)."
                )
            out, res = result
            out_leaves, tree = tree_flatten(out)
            if tree != out_tree:
                raise TypeError(
                    f"Custom VJP fwd rule {_name(self.fwd)} for function {_name(self.fun)} "
                    f"must produce a pair (output, residuals) whose output has the function's "
                    f"structure {out_tree}, got {tree}."
                )
            res_leaves, res_tree = tree_flatten(res)
            res_trees[:] = [res_tree]
            return out_leaves, res_leaves

        return flat_fwd

    def _checked_ct(self, ct, zero: Zero, position: int):
        """A bwd output leaf checked against its input's cotangent type: None and
        `SymbolicZero` become the internal zero; an array must have the input's shape (and
        dtype, unless the input is inexact), else the gradient would be silently wrong."""
        if ct is None or zero.aval.dtype == dtypes.float0:
            return zero
        if isinstance(ct, SymbolicZero):
            return self._checked_zero(ct, zero)
        try:
            got = get_aval(ct)
        except TypeError:
            raise TypeError(
                f"Custom VJP bwd rule {_name(self.bwd)} produced a {type(ct).__name__} as the "
                f"cotangent of argument {position}; cotangents must be arrays or None."
            ) from None
        want = zero.aval
        if got.shape != want.shape or (got.dtype != want.dtype and not dtypes.issubdtype(
                want.dtype, np.inexact)):
            raise ValueError(
                f"Custom VJP bwd rule {_name(self.bwd)} must produce an output with the same "
                f"type as the args tuple of the primal function, but for argument {position} "
                f"it produced an output of type {got.str_short()} corresponding to an input of "
                f"type {want.str_short()}."
            )
        return ct

    def _checked_zero(self, ct, zero: Zero):
        """A `SymbolicZero` from bwd made the internal zero (if its type fits)."""
        if (ct.aval.shape, ct.aval.dtype) != (zero.aval.shape, zero.aval.dtype):
            raise ValueError(
                f"Custom VJP bwd rule {_name(self.bwd)} produced a SymbolicZero of type "
                f"{ct.aval.str_short()} for an input whose cotangent type is "
                f"{zero.aval.str_short()}; return None for a zero cotangent instead."
            )
        return zero

    def _flat_bwd(self, nondiff, in_tree, out_tree, res_trees, dyn):
        # structures and tangent avals only: holding `dyn` itself would keep tracers alive
        arg_trees = [tree_flatten(a)[1] for a in dyn]
        zero_cts = [[Zero(get_aval(x).to_tangent_aval()) for x in tree_flatten(a)[0]] for a in dyn]

        def flat_bwd(res_leaves, ct_leaves):
            if self.symbolic_zeros:
                ct_leaves = [_to_symbolic(ct) for ct in ct_leaves]
            else:
                ct_leaves = [instantiate_zeros(ct) for ct in ct_leaves]
            res = tree_unflatten(res_trees[0], res_leaves)
            ct = tree_unflatten(out_tree, ct_leaves)
            nondiff_vals = [nondiff[i] for i in sorted(nondiff)]
            cts = self.bwd(*nondiff_vals, res, ct)
            if isinstance(cts, list):
                cts = tuple(cts)
            if not isinstance(cts, tuple) or len(cts) != len(arg_trees):
                raise TypeError(
                    f"Custom VJP bwd rule {_name(self.bwd)} must produce a tuple of length "
                    f"equal to the number of primal inputs ({len(arg_trees)}), got {cts!r}."
                )
            flat = []
            for i, (ct_arg, tree, zeros) in enumerate(zip(cts, arg_trees, zero_cts, strict=True)):
                try:  # a prefix of the argument's structure; None stands for zeros
                    leaves = flatten_axes("custom_vjp bwd output", tree, ct_arg)
                except (ValueError, TypeError):
                    raise TypeError(
                        f"Custom VJP bwd rule {_name(self.bwd)} must produce an output with "
                        f"the same container (pytree) structure as the args tuple of the "
                        f"primal function; got {tree_flatten(ct_arg)[1]} for argument {i} of "
                        f"structure {tree}."
                    ) from None
                flat += [self._checked_ct(leaf, z, i) for leaf, z in zip(leaves, zeros,
                                                                         strict=True)]
            return flat

        return flat_bwd


custom_jvp_call_p = define_higher_order_primitive(
    "custom_jvp_call",
    abstract_eval=_call_jaxpr_abstract_eval,
    reference=_call_jaxpr_impl,
    jvp=_custom_jvp_call_jvp,
    transpose=NOT_LINEAR,
    batch=_custom_jvp_call_batch,
    partial_eval=STAGED_WHOLE,
    print_params=_print_params,
)


custom_vjp_call_p = define_higher_order_primitive(
    "custom_vjp_call",
    abstract_eval=_call_jaxpr_abstract_eval,
    reference=_call_jaxpr_impl,
    jvp=_custom_vjp_call_jvp,
    transpose=NOT_LINEAR,
    batch=_custom_vjp_call_batch,
    partial_eval=STAGED_WHOLE,
    print_params=_print_params,
)


custom_lin_p = define_higher_order_primitive(
    "custom_lin",
    abstract_eval=_custom_lin_abstract_eval,
    reference=_custom_lin_impl,
    impl=_custom_lin_impl,
    jvp=NOT_DIFFERENTIABLE,
    transpose=_custom_lin_transpose,
    batch=NOT_BATCHED,
    partial_eval=STAGED_WHOLE,
)

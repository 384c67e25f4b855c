"""`custom_jvp` and `custom_vjp`: functions with user-supplied derivative rules.

Calling one traces the function into `call_jaxpr` and binds a higher-order primitive,
`custom_jvp_call` or `custom_vjp_call`, whose params also hold the user's rules. Every trace
treats it like any primitive: the eval trace evaluates `call_jaxpr`; the jvp trace runs the
user's jvp rule (custom_jvp) or the user's fwd and a `custom_lin` primitive (custom_vjp) whose
transpose calls the user's bwd; the batch trace rebinds the primitive with vmapped function and
rules. Values closed over that are tracers of outer transformations become leading operands
(`num_consts`); their derivatives through the function are not taken into account, as in JAX.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

import numpy as np
from laminax_pytree import tree_flatten, tree_map, tree_unflatten

from laminax_core import dtypes
from laminax_core._avals import get_aval
from laminax_core._interpreters import batching, partial_eval
from laminax_core._interpreters.eval import eval_jaxpr
from laminax_core._interpreters.jvp import Zero, instantiate_zeros
from laminax_core._primitive import Primitive
from laminax_core.lax._control_flow.common import hoist_tracer_consts

__all__ = ["custom_jvp", "custom_vjp"]


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


def _resolve_args(fun, args, kwargs):
    if not kwargs:
        return tuple(args)
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as err:
        raise TypeError(f"custom derivative function {_name(fun)}: {err}") from err
    return tuple(bound.args) + tuple(bound.kwargs.values())


def _split_nondiff(args, nondiff_argnums):
    nondiff = {i: args[i] for i in nondiff_argnums}
    dyn = [a for i, a in enumerate(args) if i not in nondiff]
    return nondiff, dyn


def _rebuild(nondiff: dict, dyn: list) -> list:
    out, dyn_iter = [], iter(dyn)
    for i in range(len(nondiff) + len(dyn)):
        out.append(nondiff[i] if i in nondiff else next(dyn_iter))
    return out


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

custom_jvp_call_p = Primitive("custom_jvp_call")
custom_jvp_call_p.multiple_results = True
custom_jvp_call_p.def_effectful_abstract_eval(_call_jaxpr_abstract_eval)
custom_jvp_call_p.def_reference(_call_jaxpr_impl)
custom_jvp_call_p.print_params = _print_params


@custom_jvp_call_p.def_jvp
def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts, symbolic_zeros, name):
    args = primals[num_consts:]
    arg_tangents = [
        _tangent_zeros(x) if isinstance(t, Zero) else t
        for x, t in zip(args, tangents[num_consts:], strict=True)
    ]
    return jvp(args, arg_tangents)


@custom_jvp_call_p.def_batch
def _custom_jvp_call_batch(
    axis_data, args, dims, *, call_jaxpr, jvp, num_consts, symbolic_zeros, name
):
    args, dims = _front(args, dims)
    closed, hoisted = _batched_jaxpr(call_jaxpr, args, dims, axis_data)
    n_out = len(call_jaxpr.out_avals)
    arg_dims = dims[num_consts:]
    mapped = _vmapped(
        lambda *pt: [x for part in jvp(pt[: len(arg_dims)], pt[len(arg_dims) :]) for x in part],
        arg_dims + arg_dims,
        axis_data,
        lambda: 2 * n_out,
    )

    def batched_jvp(primals, tangents):
        outs = mapped(*primals, *tangents)
        return outs[:n_out], outs[n_out:]

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
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Sets the rule `jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`.

        `symbolic_zeros=True` (JAX's opt-in to receive symbolic zero tangents) is not
        supported yet: the rule always receives instantiated zero tangents.
        """
        if symbolic_zeros:
            raise NotImplementedError(
                "custom_jvp.defjvp(symbolic_zeros=True) is not supported by laminax yet; "
                "drop the flag: the rule then receives zero arrays for zero tangents."
            )
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
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {_name(self.fun)} using defjvp."
            )
        args = _resolve_args(self.fun, args, kwargs)
        nondiff, dyn = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(dyn)
        out_trees: list = []
        closed, hoisted = _trace_call(self.fun, nondiff, in_tree, leaves, out_trees)
        out_tree = out_trees[0]
        rule = _Rule(self._flat_jvp(nondiff, in_tree, out_tree), _name(self.jvp))
        outs = custom_jvp_call_p.bind(
            *hoisted,
            *leaves,
            call_jaxpr=closed,
            jvp=rule,
            num_consts=len(hoisted),
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
                found = get_aval(t)
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

custom_vjp_call_p = Primitive("custom_vjp_call")
custom_vjp_call_p.multiple_results = True
custom_vjp_call_p.def_effectful_abstract_eval(_call_jaxpr_abstract_eval)
custom_vjp_call_p.def_reference(_call_jaxpr_impl)
custom_vjp_call_p.print_params = _print_params

custom_lin_p = Primitive("custom_lin")
custom_lin_p.multiple_results = True


@custom_lin_p.def_abstract_eval
def _custom_lin_abstract_eval(*avals, num_res, bwd, out_avals):
    return list(out_avals)


@custom_lin_p.def_impl
def _custom_lin_impl(*args, num_res, bwd, out_avals):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


@custom_lin_p.def_transpose
def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals):
    res = args[:num_res]
    cts = [instantiate_zeros(ct) for ct in cts]
    cts_in = bwd(list(res), cts)
    return [None] * num_res + list(cts_in)


@custom_vjp_call_p.def_jvp
def _custom_vjp_call_jvp(
    primals, tangents, *, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros, name
):
    args = primals[num_consts:]
    outs, res = fwd(*args)
    arg_tangents = [
        _tangent_zeros(x) if isinstance(t, Zero) else t
        for x, t in zip(args, tangents[num_consts:], strict=True)
    ]
    out_avals = tuple(get_aval(o).to_tangent_aval() for o in outs)
    tangent_outs = custom_lin_p.bind(
        *res, *arg_tangents, num_res=len(res), bwd=bwd, out_avals=out_avals
    )
    return outs, tangent_outs


@custom_vjp_call_p.def_batch
def _custom_vjp_call_batch(
    axis_data, args, dims, *, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros, name
):
    from laminax_core import lax

    args, dims = _front(args, dims)
    closed, hoisted = _batched_jaxpr(call_jaxpr, args, dims, axis_data)
    n_out = len(call_jaxpr.out_avals)
    arg_dims = dims[num_consts:]
    counts = {}

    def fwd_flat(*xs):
        outs, res = fwd(*xs)
        counts["res"] = len(res)
        return [*outs, *res]

    mapped_fwd = _vmapped(fwd_flat, arg_dims, axis_data, lambda: n_out + counts["res"])

    def batched_fwd(*xs):
        flat = mapped_fwd(*xs)
        return flat[:n_out], flat[n_out:]

    def batched_bwd(res, cts):
        mapped = _vmapped(
            lambda *rc: bwd(list(rc[: len(res)]), list(rc[len(res) :])),
            [0] * (len(res) + len(cts)),
            axis_data,
            lambda: len(arg_dims),
        )
        cts_in = mapped(*res, *cts)
        # an argument shared by the whole batch gets the sum of the per-example cotangents
        return [
            ct if d is not None or get_aval(ct).dtype == dtypes.float0 else lax.reduce_sum(ct, (0,))
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
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self.symbolic_zeros = False

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False) -> None:
        """Sets `fwd(*args) -> (output, residuals)` and
        `bwd(*nondiff_args, residuals, output_cotangent) -> tuple of argument cotangents`."""
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, symbolic_zeros

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {_name(self.fun)} using defvjp."
            )
        args = _resolve_args(self.fun, args, kwargs)
        nondiff, dyn = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(dyn)
        out_trees: list = []
        closed, hoisted = _trace_call(self.fun, nondiff, in_tree, leaves, out_trees)
        out_tree = out_trees[0]
        res_trees: list = []
        fwd = _Rule(self._flat_fwd(nondiff, in_tree, out_tree, res_trees), _name(self.fwd))
        bwd = _Rule(self._flat_bwd(nondiff, in_tree, out_tree, res_trees, dyn), _name(self.bwd))
        outs = custom_vjp_call_p.bind(
            *hoisted,
            *leaves,
            call_jaxpr=closed,
            fwd=fwd,
            bwd=bwd,
            num_consts=len(hoisted),
            symbolic_zeros=self.symbolic_zeros,
            name=_name(self.fun),
        )
        return tree_unflatten(out_tree, outs)

    def _flat_fwd(self, nondiff, in_tree, out_tree, res_trees):
        def flat_fwd(*xs):
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

    def _flat_bwd(self, nondiff, in_tree, out_tree, res_trees, dyn):
        arg_trees = [tree_flatten(a)[1] for a in dyn]

        def flat_bwd(res_leaves, ct_leaves):
            res = tree_unflatten(res_trees[0], res_leaves)
            ct = tree_unflatten(out_tree, ct_leaves)
            nondiff_vals = [nondiff[i] for i in sorted(nondiff)]
            cts = self.bwd(*nondiff_vals, res, ct)
            if not isinstance(cts, tuple | list) or len(cts) != len(dyn):
                raise TypeError(
                    f"Custom VJP bwd rule {_name(self.bwd)} must produce a tuple of length "
                    f"equal to the number of primal inputs ({len(dyn)}), got {cts!r}."
                )
            flat = []
            for ct_arg, tree, arg in zip(cts, arg_trees, dyn, strict=True):
                arg_leaves = tree_flatten(arg)[0]
                if ct_arg is None:
                    flat += [Zero(get_aval(a).to_tangent_aval()) for a in arg_leaves]
                    continue
                leaves, found = tree_flatten(ct_arg)
                if found != tree:
                    raise TypeError(
                        f"Custom VJP bwd rule {_name(self.bwd)} must produce an output with "
                        f"the same container (pytree) structure as the args tuple of the "
                        f"primal function; got {found} for an argument of structure {tree}."
                    )
                flat += leaves
            return flat

        return flat_bwd

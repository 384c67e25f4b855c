"""`custom_vmap`: a function with a user-supplied batching rule, and `sequential_vmap`.

A call traces the function into `call` and binds `custom_vmap_call`, whose params also hold the
rule (flat: `rule(axis_size, flat_in_batched, flat_args) -> (flat_outs, flat_out_batched)`).
Evaluating or lowering it runs `call`; vmap runs the rule instead (once, at the vmap that sees
the call: an enclosing vmap batches the rule's operations like any others). Forward-mode
differentiation binds the primitive again on primals and tangents, with the jvp of `call` and
a rule that is the jvp of the user's rule. Reverse mode has no rule, as in JAX: linearizing
a call raises ValueError (wrap the function in `custom_vjp` to give it one).

Unlike JAX, a jvp-of-vmap rule broadcasts a primal (or tangent) that is unbatched while its
tangent (primal) is batched, so the user's rule sees both batched, where JAX shows it the
unbatched one and maps the rule over the extra axis; the values are the same.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from laminax_pytree import tree_flatten, tree_map, tree_structure, tree_unflatten

from laminax_core._custom_derivatives import _name, _resolve_args, _Rule, _trace_call
from laminax_core._interpreters import batching, partial_eval
from laminax_core._interpreters.eval import eval_jaxpr
from laminax_core._interpreters.jvp import instantiate_zeros, jvp_flat
from laminax_core._interpreters.partial_eval import hoist_tracer_consts
from laminax_core._avals import get_aval
from laminax_core._primitive import NOT_LINEAR, define_higher_order_primitive

__all__ = ["custom_vmap", "custom_vmap_call_p", "sequential_vmap"]


def _abstract_eval(*avals, call, **params):
    return call.out_avals, call.effects


def _impl(*args, call, **params):
    return eval_jaxpr(call.jaxpr, call.consts, *args)


def _batch(axis_data, args, dims, *, call, rule, in_tree, out_tree):
    args = [batching.move_bdim(x, d, 0) for x, d in zip(args, dims, strict=True)]
    outs, out_batched = rule(axis_data.size, [d is not None for d in dims], args)
    return list(outs), [0 if b else None for b in out_batched]


def _jvp(primals, tangents, *, call, rule, in_tree, out_tree):
    tangents = [instantiate_zeros(t) for t in tangents]
    n = len(primals)

    def jvp_of_call(*primals_and_tangents):
        outs, outs_dot = jvp_flat(
            lambda *xs: eval_jaxpr(call.jaxpr, call.consts, *xs),
            list(primals_and_tangents[:n]), list(primals_and_tangents[n:]))
        return [*outs, *outs_dot]

    avals = [get_aval(x) for x in (*primals, *tangents)]
    jvp_call, hoisted = hoist_tracer_consts(
        partial_eval.trace_to_jaxpr(jvp_of_call, avals, "custom_vmap jvp")[0])

    def jvp_rule(axis_size, batched, args):
        args = list(args[len(hoisted):])
        batched = batched[len(hoisted):]
        both = [p or t for p, t in zip(batched[:n], batched[n:], strict=True)]
        # the side that is not batched is broadcast, so primal and tangent agree
        args = [x if b or not want else batching.bdim_at_front(x, None, axis_size)
                for x, b, want in zip(args, batched, both + both, strict=True)]
        seen = []

        def primal_rule(*xs):
            outs, out_batched = rule(axis_size, both, list(xs))
            seen.append(list(out_batched))
            return outs

        outs, outs_dot = jvp_flat(primal_rule, args[:n], args[n:])
        return [*outs, *outs_dot], seen[0] + seen[0]

    outs = custom_vmap_call_p.bind(
        *hoisted, *primals, *tangents, call=jvp_call, rule=_Rule(jvp_rule, str(rule)),
        in_tree=tree_structure((in_tree, in_tree)), out_tree=tree_structure((out_tree,) * 2))
    half = len(outs) // 2
    return outs[:half], outs[half:]


def _partial_eval(trace, args, params):
    raise ValueError(
        "Linearization failed to produce known values for all output primals: custom_vmap "
        f"function {params['rule']} has no reverse-mode differentiation rule. Wrap it in "
        "custom_vjp to differentiate it in reverse mode.")


custom_vmap_call_p = define_higher_order_primitive(
    "custom_vmap_call",
    abstract_eval=_abstract_eval,
    reference=_impl,
    jvp=_jvp,
    transpose=NOT_LINEAR,
    batch=_batch,
    partial_eval=_partial_eval,
)


def _check_trees(rule, original, out_tree, batched_tree) -> None:
    if out_tree != batched_tree:
        raise ValueError(
            f"structure of output value and output batching specification returned by custom "
            f"vmap rule ({_name(rule)}) do not match.\nOutput values: {out_tree}\n"
            f"Batching spec: {batched_tree}")
    if out_tree != original:
        raise ValueError(
            f"structure of output returned by custom vmap rule ({_name(rule)}) does not match "
            f"that of original custom-vmapped function.\nOriginal output: {original}\n"
            f"Rule output: {out_tree}")


def _flat_rule(user_rule: Callable, n_consts: int, in_tree, out_tree) -> Callable:
    """The user's pytree rule as the primitive calls it (flat, closed-over values first)."""

    def rule(axis_size, batched, args):
        if any(batched[:n_consts]):
            raise ValueError(
                f"custom_vmap function with rule {_name(user_rule)} closes over a value that "
                "this vmap batches; pass that value as an argument instead.")
        in_batched = tree_unflatten(in_tree, batched[n_consts:])
        out, out_batched = user_rule(axis_size, list(in_batched),
                                     *tree_unflatten(in_tree, args[n_consts:]))
        outs, tree = tree_flatten(out)
        flags, flags_tree = tree_flatten(out_batched)
        _check_trees(user_rule, out_tree, tree, flags_tree)
        return outs, [bool(b) for b in flags]

    return rule


class custom_vmap:  # noqa: N801 (JAX's name)
    """A function whose behaviour under `vmap` is given by a rule (`def_vmap`).

    Outside vmap the function runs as written (under jit it is staged as `custom_vmap_call`);
    under vmap the rule runs instead, on the arguments batched along their leading axis.

    Example:
      >>> import numpy as np
      >>> from laminax_core import vmap
      >>> @custom_vmap
      ... def f(x):
      ...     return x + 1
      >>> @f.def_vmap
      ... def f_rule(axis_size, in_batched, xs):
      ...     return xs * 10, in_batched[0]
      >>> print(vmap(f)(np.arange(3.0)))
      [ 0. 10. 20.]
    """

    def __init__(self, fun: Callable):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable | None = None

    def def_vmap(self, vmap_rule: Callable) -> Callable:
        """Sets the rule: ``vmap_rule(axis_size, in_batched, *args) -> (out, out_batched)``.

        `in_batched` is a list, one pytree of booleans per argument, saying which leaves are
        batched (along axis 0); `out_batched` is such a pytree for the output. Returns the rule.
        """
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        try:
            args = _resolve_args(self.fun, args, kwargs)
        except TypeError as err:
            raise TypeError(
                f"The input arguments to the custom_vmap-decorated function {_name(self.fun)} "
                f"could not be resolved to positional-only arguments. {err}") from err
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function "
                                 f"{_name(self.fun)} using def_vmap.")
        leaves, in_tree = tree_flatten(args)
        out_trees: list = []
        call, hoisted = _trace_call(self.fun, {}, in_tree, leaves, out_trees)
        rule = _flat_rule(self.vmap_rule, len(hoisted), in_tree, out_trees[0])
        # printed as JAX prints it: (closed-over values, arguments)
        printed_in_tree = tree_structure((list(hoisted), tree_unflatten(in_tree, leaves)))
        outs = custom_vmap_call_p.bind(
            *hoisted, *leaves, call=call, rule=_Rule(rule, repr(self.vmap_rule)),
            in_tree=printed_in_tree, out_tree=out_trees[0])
        return tree_unflatten(out_trees[0], outs)


def sequential_vmap(f: Callable) -> custom_vmap:
    """`f` as a `custom_vmap` whose batching rule loops over the batch (`lax.map`) instead of
    vectorizing: for functions that have no batching rule, or are cheaper one by one.

    Example:
      >>> import numpy as np
      >>> from laminax_core import vmap
      >>> print(vmap(sequential_vmap(lambda x: x * 2))(np.arange(3.0)))
      [0. 2. 4.]
    """
    # lax sits above this module in core's layers (lax builds on the transformations)
    from laminax_core.lax import map as lax_map

    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        leaves, treedef = tree_flatten(list(args))
        flags = tree_flatten(in_batched)[0]
        mapped = [x for x, b in zip(leaves, flags, strict=True) if b]

        def one(xs: list) -> Any:
            xs_iter = iter(xs)
            merged = [next(xs_iter) if b else x for x, b in zip(leaves, flags, strict=True)]
            return f(*tree_unflatten(treedef, merged))

        out = lax_map(one, mapped)
        return out, tree_map(lambda _: True, out)

    return f

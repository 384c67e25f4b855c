"""`closure_convert` and `custom_gradient`: the conveniences JAX builds on `custom_vjp`.

`custom_vjp` rules must not close over tracers of the transformations being applied, because
their values change under differentiation. `closure_convert` stages a function to a jaxpr and
turns the floating-point tracers it closes over into explicit trailing arguments, so they can
be passed through a custom rule. `custom_gradient` lets a function return its own vjp
closure; the closure is staged on the output's cotangent avals and its jaxpr and constants
become the custom_vjp residuals.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from laminax_pytree import register_pytree_node, tree_flatten, tree_unflatten

from laminax_core import _trace, dtypes
from laminax_core._avals import get_aval
from laminax_core._custom_derivatives import custom_vjp
from laminax_core._interpreters import partial_eval
from laminax_core._interpreters.eval import eval_jaxpr

__all__ = ["closure_convert", "custom_gradient"]


def _maybe_perturbed(value) -> bool:
    # a float tracer of an outer trace may carry a tangent: it must become an explicit argument
    return isinstance(value, _trace.Tracer) and dtypes.issubdtype(
        get_aval(value).dtype, np.inexact
    )


def _stage(fun: Callable, in_tree, avals, name: str):
    out_trees: list = []

    def flat(*leaves):
        out_leaves, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, leaves)))
        out_trees.append(out_tree)
        return out_leaves

    closed, _ = partial_eval.trace_to_jaxpr(flat, list(avals), name)
    return closed, out_trees[0]


def closure_convert(fun: Callable, *example_args):
    """Makes the floating-point values `fun` closes over explicit arguments.

    Args:
      fun: a function of pytrees of arrays.
      *example_args: arguments with the shapes and dtypes `fun` will be called with.

    Returns:
      `(converted, consts)`: `converted(*args, *consts)` computes `fun(*args)`, where `consts`
      are the closed-over tracers of enclosing transformations with a floating dtype (an empty
      list outside any transformation).

    Example:
      >>> f, consts = closure_convert(lambda x: x * 2.0, np.float32(1))
      >>> float(f(np.float32(3))), consts
      (6.0, [])
    """
    leaves, in_tree = tree_flatten(example_args)
    avals = [get_aval(x) for x in leaves]
    closed, out_tree = _stage(fun, in_tree, avals, "closure_convert")
    perturbed = [_maybe_perturbed(c) for c in closed.consts]
    hoisted = [c for c, p in zip(closed.consts, perturbed, strict=True) if p]

    def converted(*args_and_consts):
        split = len(args_and_consts) - len(hoisted)
        args, new_consts = args_and_consts[:split], iter(args_and_consts[split:])
        flat, tree = tree_flatten(args)
        if tree != in_tree:
            raise TypeError(
                f"closure_convert: the converted function was traced for arguments {in_tree} "
                f"but called with {tree}; call it with arguments of the example's structure"
            )
        consts = [
            next(new_consts) if p else c for c, p in zip(closed.consts, perturbed, strict=True)
        ]
        return tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, consts, *flat))

    return converted, hoisted


class _StagedRule:
    """custom_gradient's residuals: the staged vjp closure (static) and its constants (leaves)."""

    def __init__(self, jaxpr, consts, in_tree, cotangent_tree):
        self.jaxpr, self.consts = jaxpr, consts
        self.in_tree, self.cotangent_tree = in_tree, cotangent_tree


register_pytree_node(
    _StagedRule,
    lambda r: (r.consts, (r.jaxpr, r.in_tree, r.cotangent_tree)),
    lambda aux, consts: _StagedRule(aux[0], list(consts), aux[1], aux[2]),
)


def custom_gradient(fun: Callable) -> Callable:
    """Defines a function's gradient by having it return its own vjp.

    Args:
      fun: returns `(value, vjp)`, where `vjp(cotangent_of_value)` returns the cotangents of
        the positional arguments (a tuple, or a single value for one argument).

    Returns:
      A function computing `value`, whose reverse-mode derivative calls `vjp`.

    Example:
      >>> @custom_gradient
      ... def f(x):
      ...     return x**2, lambda g: (g * 10.0,)
      >>> from laminax_core import grad
      >>> float(grad(f)(3.0))
      10.0
    """

    @custom_vjp
    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        value, _ = fun(*args, **kwargs)
        return value

    def fwd(*args, **kwargs):
        value, rule = fun(*args, **kwargs)
        value_leaves, value_tree = tree_flatten((value,))
        avals = [get_aval(v).to_tangent_aval() for v in value_leaves]
        closed, in_tree = _stage(rule, value_tree, avals, "custom_gradient")
        return value, _StagedRule(closed.jaxpr, list(closed.consts), in_tree, value_tree)

    def bwd(res: _StagedRule, cotangent):
        leaves, _ = tree_flatten((cotangent,))
        outs = tree_unflatten(res.in_tree, eval_jaxpr(res.jaxpr, res.consts, *leaves))
        return outs if isinstance(outs, tuple) else (outs,)

    wrapped.defvjp(fwd, bwd)
    return wrapped

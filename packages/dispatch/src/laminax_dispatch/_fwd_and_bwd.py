"""`fwd_and_bwd`: a function's forward pass and its backward pass as two functions, each jitted
once, with the residuals passed between them as a pytree (JAX's answer to `jit(vjp_fun)`
recompiling on every step)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from laminax_core import vjp
from laminax_core.internal import eval_jaxpr, get_aval, trace_to_jaxpr
from laminax_pytree import register_pytree_node, tree_flatten, tree_unflatten

from laminax_dispatch._jit import jit

__all__ = ["fwd_and_bwd"]


class _Residuals:
    """The backward pass of one forward call: its staged vjp (static) and the arrays it reads
    (leaves), so that the same jitted backward serves every forward call of the same shapes."""

    def __init__(self, jaxpr, consts, ct_tree, out_tree, single):
        self.jaxpr, self.consts = jaxpr, consts
        self.ct_tree, self.out_tree, self.single = ct_tree, out_tree, single


register_pytree_node(
    _Residuals,
    lambda r: (r.consts, (r.jaxpr, r.ct_tree, r.out_tree, r.single)),
    lambda aux, consts: _Residuals(aux[0], list(consts), *aux[1:]),
)


def fwd_and_bwd(fun: Callable, argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable, Callable]:
    """`fwd(*args) -> (out, residuals)` (plus `aux` with `has_aux`) and
    `bwd(residuals, ct) -> cotangents of the arguments in argnums` for `fun`.

    `fwd` computes what `vjp(fun, ...)` does, keeping the backward pass's inputs in `residuals`
    (a pytree of arrays); `bwd` is the vjp function applied to them. With `jitted` (default) both
    are `jit`-compiled once and reused across steps.

    Args:
      fun: the function to differentiate.
      argnums: the positional argument (int: `bwd` returns its cotangent) or arguments (a
        sequence: `bwd` returns a tuple) to differentiate with respect to.
      has_aux: `fun` returns `(out, aux)`; `fwd` then returns `(out, residuals, aux)`.
      jitted: whether to `jit` the two functions.

    Returns:
      `(fwd, bwd)`.

    Example:
      >>> fwd, bwd = fwd_and_bwd(lambda x, w: x * w, argnums=(0, 1))
      >>> y, res = fwd(2.0, 3.0)
      >>> [float(c) for c in bwd(res, 1.0)]
      [3.0, 2.0]
    """
    single = isinstance(argnums, int)
    indices = (argnums,) if single else tuple(argnums)

    def fwd(*args):
        def partial_fun(*diff):
            full = list(args)
            for i, value in zip(indices, diff, strict=True):
                full[i] = value
            return fun(*full)

        diff_args = [args[i] for i in indices]
        if has_aux:
            out, vjp_fun, aux = vjp(partial_fun, *diff_args, has_aux=True)
        else:
            out, vjp_fun = vjp(partial_fun, *diff_args)
        ct_leaves, ct_tree = tree_flatten(out)
        out_trees = []

        def flat_vjp(*cts):
            cot_leaves, cot_tree = tree_flatten(vjp_fun(tree_unflatten(ct_tree, cts)))
            out_trees.append(cot_tree)
            return cot_leaves

        closed, _ = trace_to_jaxpr(flat_vjp, [get_aval(c) for c in ct_leaves], "fwd_and_bwd")
        res = _Residuals(closed.jaxpr, list(closed.consts), ct_tree, out_trees[0], single)
        return (out, res, aux) if has_aux else (out, res)

    def bwd(residuals, ct):
        ct_leaves, tree = tree_flatten(ct)
        if tree != residuals.ct_tree:
            raise TypeError(f"fwd_and_bwd: the cotangent has structure {tree}, but the forward "
                            f"output has structure {residuals.ct_tree}.")
        cts = tree_unflatten(residuals.out_tree,
                             eval_jaxpr(residuals.jaxpr, residuals.consts, *ct_leaves))
        return cts[0] if residuals.single else cts

    return (jit(fwd), jit(bwd)) if jitted else (fwd, bwd)

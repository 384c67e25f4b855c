"""The public transformations: make_jaxpr, eval_shape, jvp, linearize, vjp, grad,
value_and_grad and vmap (the Jacobians, built on them, are in `_jacobians.py`).

Each takes and returns pytrees; it flattens them with `laminax_pytree`, runs the flat
interpreter from `_interpreters/`, and unflattens the results.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from laminax_pytree import (
    Partial,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_unflatten,
)
from laminax_pytree.internal import flatten_axes

from laminax_core import _trace, dtypes
from laminax_core._argnums import check_argnames, check_argnums, index_or_indices, resolve_argnums
from laminax_core._avals import AbstractRef, ShapedArray, ShapeDtypeStruct, get_aval
from laminax_core._interpreters import batching, partial_eval, transpose
from laminax_core._interpreters.eval import eval_jaxpr
from laminax_core._interpreters.jvp import (
    JVPTrace,
    Zero,
    jvp_flat,
    user_value,
    zeros_like_aval,
)

__all__ = [
    "eval_shape",
    "grad",
    "jvp",
    "linearize",
    "make_jaxpr",
    "value_and_grad",
    "vjp",
    "vmap",
    "check_argnums",
    "check_argnames",
    "index_or_indices",
    "resolve_argnums",
]


# ----- flattening helpers -------------------------------------------------------------------


def _fun_name(fun) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _check_output_leaves(name: str, fun, leaves) -> None:
    for leaf in leaves:
        if not _is_array_leaf(leaf):
            raise TypeError(
                f"{name}: the function {_fun_name(fun)} returned a value of type "
                f"{type(leaf).__name__} ({leaf!r}); transformed functions must return arrays, "
                "scalars or pytrees of them."
            )


def _is_array_leaf(x) -> bool:
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


def _flatten_fun(name: str, fun: Callable, in_tree, out_trees: list):
    """`fun` as a function of flat leaves returning flat leaves; records the output tree."""

    def flat(*leaves):
        args = tree_unflatten(in_tree, leaves)
        out = fun(*args)
        out_leaves, out_tree = tree_flatten(out)
        _check_output_leaves(name, fun, out_leaves)
        out_trees.append(out_tree)
        return out_leaves

    return flat


def _flatten_fun_for(name: str, fun: Callable, in_tree, has_aux: bool):
    """`fun` flattened for a transformation named `name`, with the lists it fills when called:
    the output tree, and (if `has_aux`) the auxiliary data."""
    out_trees: list = []
    aux: list = []
    if has_aux:
        return _flatten_fun_aux(name, fun, in_tree, out_trees, aux), out_trees, aux
    return _flatten_fun(name, fun, in_tree, out_trees), out_trees, aux


def _flatten_fun_aux(name: str, fun: Callable, in_tree, out_trees: list, aux_store: list):
    """Like `_flatten_fun` for `has_aux` functions returning `(out, aux)`."""

    def flat(*leaves):
        result = fun(*tree_unflatten(in_tree, leaves))
        if not (isinstance(result, tuple | list) and len(result) == 2):
            raise TypeError(
                f"{name} with has_aux=True requires the function to return a pair "
                f"(output, auxiliary data), got {type(result).__name__}."
            )
        out, aux = result
        out_leaves, out_tree = tree_flatten(out)
        _check_output_leaves(name, fun, out_leaves)
        out_trees.append(out_tree)
        aux_store.append(_strip_aux(aux))
        return out_leaves

    return flat


def _strip_aux(aux):
    """Auxiliary outputs are not differentiated: replace jvp tracers of the running
    differentiation by their primal values, so they do not leak out of it."""
    trace = _trace.current_trace()
    if not isinstance(trace, JVPTrace):
        return aux
    return tree_map(
        lambda leaf: trace.lift(leaf)[0] if isinstance(leaf, _trace.Tracer) else leaf, aux
    )


def _wraps(fun):
    """`functools.wraps`, except that a callable whose `__name__` (or docstring...) is not a
    string, such as an equinox Module with a field of that name, leaves the wrapper's own (as
    JAX's transformations do, rather than failing)."""

    def decorate(wrapper):
        try:
            return functools.update_wrapper(wrapper, fun)
        except (TypeError, AttributeError):
            return wrapper

    return decorate


def _check_args(name: str, leaves) -> None:
    for leaf in leaves:
        if not _is_array_leaf(leaf):
            raise TypeError(
                f"{name}: argument of type {type(leaf).__name__} ({leaf!r}) is not a valid array "
                "type. Pass arrays or scalars, or make the argument static "
                "(static_argnums) or close over it."
            )


def _normalize_argnums(name: str, argnums, nargs: int) -> tuple[int, ...]:
    """The positions a differentiation API differentiates (`argnums` as `index_or_indices`
    gives it): in range, non-negative, each once, at least one."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError(f"{name}: argnums=() selects no argument to differentiate with "
                         "respect to; pass at least one position.")
    if name == "grad" and max(nums) >= nargs:
        # grad and value_and_grad raise TypeError for a position past the arguments given,
        # ValueError (below) for one before them, the Jacobians ValueError for both (as JAX)
        raise TypeError(
            f"differentiating with respect to argnums={argnums} requires at least "
            f"{max(nums) + 1} positional arguments to be "
            f"passed by the caller, but got only {nargs} positional arguments."
        )
    resolved = resolve_argnums(nums, nargs)
    if len(set(resolved)) != len(resolved):
        # JAX fails here too (with a TypeError from inside its argument bookkeeping); a
        # repeated position would otherwise differentiate the same argument twice
        raise TypeError(f"{name}: argnums={argnums} names an argument more than once; "
                        "list each position once.")
    return resolved


def _partial_on(fun: Callable, args: Sequence, argnums: tuple[int, ...]) -> Callable:
    """`fun` as a function of the arguments at `argnums` only (the others fixed to `args`)."""

    def partial_fun(*dyn):
        full = list(args)
        for i, value in zip(argnums, dyn, strict=True):
            full[i] = value
        return fun(*full)

    return partial_fun


# ----- make_jaxpr, eval_shape ---------------------------------------------------------------


def make_jaxpr(
    fun: Callable, static_argnums: int | Sequence[int] = (), return_shape: bool = False
) -> Callable:
    """A function that traces `fun` and returns its `ClosedJaxpr`.

    Args:
      fun: the function to trace.
      static_argnums: positions of arguments passed through as Python values (not traced).
      return_shape: also return the output's shapes as a pytree of `ShapeDtypeStruct`.

    Returns:
      A function taking `fun`'s arguments and returning the `ClosedJaxpr` (and the shapes).

    Example:
      >>> print(make_jaxpr(lambda x: x * 2.0)(np.ones(3, np.float32)))
      { lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @_wraps(fun)
    def make_jaxpr_fun(*args, **kwargs):
        static_set = {s % len(args) for s in static} if args else set()
        dyn_nums = tuple(i for i in range(len(args)) if i not in static_set)
        # keyword arguments are traced too (they become invars after the positional ones)
        leaves, in_tree = tree_flatten((tuple(args[i] for i in dyn_nums), kwargs))
        _check_args("make_jaxpr", leaves)
        out_trees: list = []

        def call(dyn, kw):
            return _partial_on(lambda *a: fun(*a, **kw), args, dyn_nums)(*dyn)

        flat = _flatten_fun("make_jaxpr", call, in_tree, out_trees)
        closed, outs = partial_eval.trace_to_jaxpr(flat, [get_aval(x) for x in leaves])
        if not return_shape:
            return closed
        shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type, sharding=a.sharding)
                  for a in closed.out_avals]
        return closed, tree_unflatten(out_trees[0], shapes)

    return make_jaxpr_fun


def eval_shape(fun: Callable, *args, **kwargs):
    """The output shapes and dtypes of `fun(*args)`, computed without any FLOPs.

    Args:
      fun: the function.
      *args: arrays, or `ShapeDtypeStruct`s standing for them (pytrees allowed).

    Returns:
      A pytree of `ShapeDtypeStruct` with the structure of `fun`'s output.

    Example:
      >>> eval_shape(lambda x: x.sum(), ShapeDtypeStruct((3,), np.float32))
      ShapeDtypeStruct(shape=(), dtype=float32)
    """
    leaves, in_tree = tree_flatten(args)
    _check_args("eval_shape", leaves)
    out_trees: list = []
    flat = _flatten_fun("eval_shape", lambda *a: fun(*a, **kwargs), in_tree, out_trees)
    closed, _ = partial_eval.trace_to_jaxpr(flat, [get_aval(x) for x in leaves], "eval_shape")
    shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type, sharding=a.sharding)
                  for a in closed.out_avals]
    return tree_unflatten(out_trees[0], shapes)


# ----- jvp, linearize -----------------------------------------------------------------------


def _check_tangent(primal, tangent, index) -> None:
    _check_tangent_of(get_aval(primal), tangent, index)


def _check_tangent_of(primal_aval, tangent, index) -> None:
    tangent_aval = get_aval(tangent)
    expected = primal_aval.to_tangent_aval()
    if tangent_aval.dtype != expected.dtype:
        raise TypeError(
            "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in "
            "case of int/bool primal dtype the tangent dtype must be float0. Got primal dtype "
            f"{primal_aval.dtype.name} and so expected tangent dtype {_dtype_name(expected)}, "
            f"but got tangent dtype {_dtype_name(tangent_aval)} instead (argument {index})."
        )
    if tangent_aval.shape != primal_aval.shape:
        raise ValueError(
            "jvp called with different primal and tangent shapes; got primal shape "
            f"{primal_aval.shape} and tangent shape as {tangent_aval.shape} (argument {index})."
        )


def _dtype_name(aval: ShapedArray) -> str:
    return "float0" if aval.dtype == dtypes.float0 else aval.dtype.name


def _as_tangent(primal, tangent):
    """A user tangent as the interpreter's: float0 tangents become symbolic zeros."""
    if get_aval(tangent).dtype == dtypes.float0:
        return Zero(get_aval(primal).to_tangent_aval())
    return tangent


def jvp(fun: Callable, primals, tangents, has_aux: bool = False):
    """Evaluates `fun` at `primals` and its directional derivative along `tangents`.

    Args:
      fun: the function to differentiate.
      primals: a tuple or list of the arguments.
      tangents: a tuple or list of the same structure, of matching shapes and tangent dtypes
        (float0 for integer and boolean primals).
      has_aux: `fun` returns `(output, aux)`; aux is returned undifferentiated.

    Returns:
      `(primals_out, tangents_out)` (plus `aux` if `has_aux`).

    Example:
      >>> jvp(lax.sin, (np.float32(0.0),), (np.float32(1.0),))
      (array(0., dtype=float32), array(1., dtype=float32))
    """
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    primal_leaves, in_tree = tree_flatten(tuple(primals))
    tangent_leaves, tangent_tree = tree_flatten(tuple(tangents))
    if in_tree != tangent_tree:
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; primals "
            f"have tree structure {in_tree} whereas tangents have tree structure {tangent_tree}."
        )
    _check_args("jvp", primal_leaves)
    for i, (p, t) in enumerate(zip(primal_leaves, tangent_leaves, strict=True)):
        _check_tangent(p, t, i)
    flat, out_trees, aux = _flatten_fun_for("jvp", fun, in_tree, has_aux)
    tangents_in = [_as_tangent(p, t) for p, t in zip(primal_leaves, tangent_leaves, strict=True)]
    primals_out, tangents_out = jvp_flat(flat, primal_leaves, tangents_in)
    out = (tree_unflatten(out_trees[0], primals_out), tree_unflatten(out_trees[0], tangents_out))
    return (*out, aux[0]) if has_aux else out


def linearize(fun: Callable, *primals, has_aux: bool = False):
    """Evaluates `fun` at `primals` and returns its linearization there.

    Returns:
      `(primals_out, f_jvp)` where `f_jvp(*tangents)` gives the output tangents by evaluating a
      staged linear jaxpr (plus `aux` if `has_aux`).

    Example:
      >>> y, f_jvp = linearize(lax.sin, np.float32(0.0))
      >>> f_jvp(np.float32(2.0))
      array(2., dtype=float32)
    """
    leaves, in_tree = tree_flatten(primals)
    _check_args("linearize", leaves)
    flat, out_trees, aux = _flatten_fun_for("linearize", fun, in_tree, has_aux)
    primals_out, jaxpr, consts = partial_eval.linearize_flat(flat, leaves)
    out_tree = out_trees[0]
    # a Partial whose leaves are the residuals, as JAX returns: it passes through jit
    f_jvp = Partial(_Linearized(jaxpr, in_tree, out_tree, [get_aval(x) for x in leaves]),
                    list(consts))
    result = (tree_unflatten(out_tree, primals_out), f_jvp)
    return (*result, aux[0]) if has_aux else result


class _Linearized:
    """The linear function `linearize` returns, given its residuals first (hashable by identity:
    it is the static part of the returned `Partial`)."""

    def __init__(self, jaxpr, in_tree, out_tree, primal_avals):
        self.jaxpr, self.in_tree, self.out_tree = jaxpr, in_tree, out_tree
        self.primal_avals = primal_avals

    def __call__(self, residuals, *tangents):
        tangent_leaves, tangent_tree = tree_flatten(tangents)
        if tangent_tree != self.in_tree:
            raise TypeError(
                f"linearize's f_jvp expects tangents with structure {self.in_tree}, got "
                f"{tangent_tree}."
            )
        for i, (p, t) in enumerate(zip(self.primal_avals, tangent_leaves, strict=True)):
            _check_tangent_of(p, t, i)
        outs = eval_jaxpr(self.jaxpr, residuals, *tangent_leaves)
        outs = [user_value(o, v.aval) for o, v in zip(outs, self.jaxpr.outvars, strict=True)]
        return tree_unflatten(self.out_tree, outs)


# ----- vjp, grad --------------------------------------------------------------------------


def _zero_cotangent(aval: ShapedArray):
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    return user_value(zeros_like_aval(aval), aval)


def _vjp_flat(flat, leaves):
    """`(primals_out, pullback)` for flat functions; pullback maps flat cts to flat cts."""
    primals_out, jaxpr, consts = partial_eval.linearize_flat(flat, leaves, transformation="vjp")
    in_avals = [get_aval(x).to_tangent_aval() for x in leaves]

    def pullback(cts_out):
        args = [transpose.UndefinedPrimal(v.aval) for v in jaxpr.invars]
        cts_in = transpose.backward_pass(jaxpr, consts, args, cts_out)
        return [
            _zero_cotangent(aval) if isinstance(ct, Zero) else ct
            for ct, aval in zip(cts_in, in_avals, strict=True)
        ]

    return primals_out, pullback


def vjp(fun: Callable, *primals, has_aux: bool = False):
    """Evaluates `fun` at `primals` and returns its vector-Jacobian product function.

    Returns:
      `(primals_out, vjp_fun)` (plus `aux` if `has_aux`); `vjp_fun(ct)` takes a cotangent with
      the structure of `primals_out` and returns a tuple with one cotangent per primal.

    Example:
      >>> y, vjp_fun = vjp(lax.sin, np.float32(0.0))
      >>> vjp_fun(np.float32(1.0))
      (array(1., dtype=float32),)
    """
    leaves, in_tree = tree_flatten(primals)
    _check_args("vjp", leaves)
    flat, out_trees, aux = _flatten_fun_for("vjp", fun, in_tree, has_aux)
    primals_out, pullback = _vjp_flat(flat, leaves)
    out_tree = out_trees[0]
    out_avals = [get_aval(p) for p in primals_out]

    def vjp_fun(ct):
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(
                f"Tree structure of cotangent input {ct_tree}, does not match structure of primal "
                f"output {out_tree}."
            )
        for ct_leaf, aval in zip(ct_leaves, out_avals, strict=True):
            ct_aval = get_aval(ct_leaf)
            if ct_aval.shape != aval.shape:
                raise ValueError(
                    f"vjp: cotangent of shape {ct_aval.shape} for a primal output "
                    f"of shape {aval.shape}; they must match."
                )
        return tree_unflatten(in_tree, pullback(ct_leaves))

    result = (tree_unflatten(out_tree, primals_out), vjp_fun)
    return (*result, aux[0]) if has_aux else result


def _check_grad_input(aval: ShapedArray, holomorphic: bool, allow_int: bool) -> None:
    if isinstance(aval, AbstractRef):  # as JAX's: a reference has no cotangent to return
        raise ValueError(f"Expected cotangent type {aval} but got {aval.inner_aval}")
    dtype = aval.dtype
    if holomorphic:
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise TypeError(
                "grad with holomorphic=True requires inputs with complex dtype, "
                f"but got {dtype.name}."
            )
    elif not dtypes.issubdtype(dtype, np.inexact) and not allow_int:
        raise TypeError(
            "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
            f"np.inexact), but got {dtype.name}. If you want to use Integer-valued inputs, set "
            "allow_int to True."
        )


def _check_grad_output(aval: ShapedArray, holomorphic: bool) -> None:
    if aval.shape != ():
        raise TypeError(
            "Gradient only defined for scalar-output functions. Output had shape: "
            f"{aval.shape}. Use jacrev or jacfwd for non-scalar outputs, or sum the output."
        )
    if holomorphic:
        if not dtypes.issubdtype(aval.dtype, np.complexfloating):
            raise TypeError(
                "grad with holomorphic=True requires outputs with complex dtype, "
                f"but got {aval.dtype.name}."
            )
    elif not dtypes.issubdtype(aval.dtype, np.floating):
        raise TypeError(
            "grad requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {aval.dtype.name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex outputs, use jax.vjp directly."
        )


def value_and_grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence = (),
) -> Callable:
    """A function returning `fun`'s value and its gradient with respect to `argnums`.

    Args:
      fun: a function with a scalar real output (complex with `holomorphic=True`).
      argnums: the positional argument(s) to differentiate (an int or a tuple of ints).
      has_aux: `fun` returns `(value, aux)`; the result is then `((value, aux), grad)`.
      holomorphic: `fun` is holomorphic in complex inputs.
      allow_int: allow integer inputs, whose gradients are float0 zeros.

    Returns:
      A function returning `(value, grad)`; `grad` has the structure of the argument (a tuple
      of them for a tuple `argnums`).

    Example:
      >>> value_and_grad(lambda x: x * x)(np.float32(3.0))
      (array(9., dtype=float32), array(6., dtype=float32))
    """
    del reduce_axes  # accepted for JAX compatibility; has no effect (as in current JAX)
    argnums = index_or_indices("grad argnums", argnums)

    @_wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        nums = _normalize_argnums("grad", argnums, len(args))
        dyn = tuple(args[i] for i in nums)
        leaves, in_tree = tree_flatten(dyn)
        _check_args("grad", leaves)
        for leaf in leaves:
            _check_grad_input(get_aval(leaf), holomorphic, allow_int)
        partial_fun = _partial_on(lambda *a: fun(*a, **kwargs), args, nums)
        flat, out_trees, aux = _flatten_fun_for("grad", partial_fun, in_tree, has_aux)
        outs, pullback = _vjp_flat(flat, leaves)
        if len(outs) != 1:
            raise TypeError(
                "Gradient only defined for scalar-output functions. Output was "
                f"a pytree with {len(outs)} leaves: {out_trees[0]}."
            )
        aval = get_aval(outs[0])
        _check_grad_output(aval, holomorphic)
        grads = tree_unflatten(in_tree, pullback([np.ones((), aval.dtype)]))
        grads = grads[0] if isinstance(argnums, int) else grads
        value = tree_unflatten(out_trees[0], outs)
        return ((value, aux[0]) if has_aux else value), grads

    return value_and_grad_fun


def grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence = (),
) -> Callable:
    """A function returning the gradient of `fun` with respect to `argnums`.

    Same arguments as `value_and_grad`. With `has_aux`, returns `(grad, aux)`.

    Example:
      >>> grad(lambda x: x * x)(np.float32(3.0))
      array(6., dtype=float32)
    """
    value_and_grad_fun = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes)

    @_wraps(fun)
    def grad_fun(*args, **kwargs):
        (value, *aux), grads = _split_value(value_and_grad_fun(*args, **kwargs), has_aux)
        return (grads, aux[0]) if has_aux else grads

    return grad_fun


def _split_value(result, has_aux):
    value_part, grads = result
    if has_aux:
        value, aux = value_part
        return (value, aux), grads
    return (value_part,), grads


# ----- vmap -------------------------------------------------------------------------------


def _mapped_size(leaves, axes, names, axis_size) -> int:
    sizes = {}
    for i, (x, axis) in enumerate(zip(leaves, axes, strict=True)):
        if axis is None:
            continue
        ndim = get_aval(x).ndim
        if not -ndim <= axis < ndim:
            raise ValueError(
                f"vmap was requested to map its argument along axis {axis}, which implies that "
                f"its rank should be at least {axis + 1 if axis >= 0 else -axis}, but is only "
                f"{ndim} (its shape is {get_aval(x).shape})"
            )
        sizes[i] = get_aval(x).shape[axis]
    if not sizes:
        if axis_size is None:
            raise ValueError(
                "vmap must have at least one non-None value in in_axes, or be given axis_size."
            )
        return axis_size
    distinct = set(sizes.values()) | ({axis_size} if axis_size is not None else set())
    if len(distinct) > 1:
        raise ValueError(_inconsistent_sizes_message(leaves, axes, names, sizes, axis_size))
    return distinct.pop()


def _inconsistent_sizes_message(leaves, axes, names, sizes, axis_size) -> str:
    # one line per size, the most common first, naming an example argument (as JAX does)
    by_size: dict[int, list[int]] = {}
    for i, size in sizes.items():
        by_size.setdefault(size, []).append(i)
    lines = []
    for size, idx in sorted(by_size.items(), key=lambda kv: -len(kv[1])):
        aval = get_aval(leaves[idx[0]])
        where = (
            f"axis {axes[idx[0]]} of {names[idx[0]]} of type "
            f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"
        )
        if len(idx) == 1:
            lines.append(f"  * one axis had size {size}: {where}")
        else:
            lines.append(f"  * most axes ({len(idx)} of them) had size {size}, e.g. {where}")
    if axis_size is not None:
        lines.append(f"  * axis_size was given as {axis_size}")
    return "vmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(lines)


def _argument_names(fun, args) -> list[str]:
    """A name for every leaf of `args`: `argument x['a']`, or `args[1]` without a name."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = []
    for i, arg in enumerate(args):
        paths, _ = tree_flatten_with_path(arg)
        for path, _ in paths:
            suffix = keystr(path)
            names.append(
                f"argument {positional[i]}{suffix}" if i < len(positional) else f"args[{i}]{suffix}"
            )
    return names


def _check_axis_spec(name: str, spec) -> None:
    """vmap's `in_axes`/`out_axes`: an int, None, or a container of them (in_axes at the top
    level an int, None or a tuple); anything else is a TypeError here, not a puzzle later."""
    if name == "in_axes" and not (spec is None or type(spec) in (int, tuple)):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got {spec!r}."
        )
    bad = [leaf for leaf in tree_flatten(spec)[0] if type(leaf) is not int]
    if bad:
        raise TypeError(f"vmap {name} must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {spec!r} (the entry {bad[0]!r} is a "
                        f"{type(bad[0]).__name__}).")


def vmap(
    fun: Callable,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name=None,
    axis_size: int | None = None,
    spmd_axis_name=None,
) -> Callable:
    """Vectorizes `fun` over a mapped axis of its inputs.

    Args:
      fun: the function to vectorize.
      in_axes: an int, None, or a tuple with one entry per positional argument (each a
        pytree prefix of the argument) giving the mapped axis; None marks unmapped inputs.
      out_axes: the same for the outputs: where the mapped axis goes (None: not mapped).
      axis_name: a name for the mapped axis, for collectives such as `psum`.
      axis_size: the axis size, needed when no input is mapped.

    Returns:
      The vectorized function.

    Example:
      >>> vmap(lambda x: x.sum())(np.ones((3, 2), np.float32))
      array([2., 2., 2.], dtype=float32)
    """
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)  # a top-level list means one entry per argument, as in JAX
    _check_axis_spec("in_axes", in_axes)
    _check_axis_spec("out_axes", out_axes)

    @_wraps(fun)
    def vmap_fun(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got len(in_axes) = "
                f"{len(in_axes)}, len(args) = {len(args)}"
            )
        # keyword arguments are always mapped over their leading axis, as in JAX
        leaves, in_tree = tree_flatten((args, kwargs))
        spec = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        axes = flatten_axes("vmap in_axes", in_tree, (spec, {k: 0 for k in kwargs}), kws=True)
        # as in JAX, an unmapped argument reaches the function as it is (any Python object)
        _check_args("vmap", [x for x, a in zip(leaves, axes, strict=True) if a is not None])
        names = _argument_names(fun, args) + [
            f"argument {k}{keystr(path)}"
            for k, v in kwargs.items()
            for path, _ in tree_flatten_with_path(v)[0]
        ]
        size = _mapped_size(leaves, axes, names, axis_size)
        dims = [
            None if a is None else a % get_aval(x).ndim for x, a in zip(leaves, axes, strict=True)
        ]
        out_trees: list = []
        flat = _flatten_fun("vmap", lambda a, k: fun(*a, **k), in_tree, out_trees)
        outs = batching.batch_flat(
            flat,
            leaves,
            dims,
            batching.AxisData(axis_name, size, spmd_axis_name),
            lambda: flatten_axes("vmap out_axes", out_trees[0], out_axes),
        )
        return tree_unflatten(out_trees[0], outs)

    return vmap_fun

"""`sparsify`: run a function written for dense arrays on sparse ones, by staging it with the
sparse arguments' dense types and evaluating its jaxpr with a sparse rule for each primitive
that meets a sparse operand. Also the sparse-aware `grad` / `value_and_grad`, `todense` and
`random_bcoo`."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core import _api, _jacobians, dtypes
from laminax_core import numpy as jnp
from laminax_core import random as jrandom
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters.partial_eval import trace_to_jaxpr
from laminax_core._jaxpr import ClosedJaxpr, Literal
from laminax_core.sparse._bcoo import (
    BCOO,
    JAXSparse,
    _add,
    _multiply,
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_dot_general,
    bcoo_reduce_sum,
    bcoo_reshape,
    bcoo_rev,
    bcoo_slice,
    bcoo_dynamic_slice,
    bcoo_squeeze,
    bcoo_transpose,
)
from laminax_core.sparse._bcsr import BCSR

__all__ = ["sparsify", "todense", "grad", "value_and_grad", "jacfwd", "jacrev", "jacobian",
           "random_bcoo"]

# elementwise functions with f(0) == 0: applied to the stored data alone (the nonlinear ones
# need each coordinate stored once)
_LINEAR_UNARY = frozenset({"conj", "copy", "imag", "neg", "real", "stage"})
_NONLINEAR_UNARY = frozenset({
    "abs", "asin", "asinh", "atan", "atanh", "bessel_i1e", "expm1", "log1p", "sign", "sin",
    "sinh", "sqrt", "square", "tan", "tanh", "convert_element_type"})
_DENSIFYING = frozenset({"acos", "acosh", "bessel_i0e", "cos", "cosh", "eq", "exp", "ge", "gt",
                         "le", "lt", "ne", "log", "logistic", "exp2", "erfc", "rsqrt"})
_CALLS = frozenset({"jit", "pjit", "closed_call", "core_call", "custom_jvp_call", "remat2"})
_CALL_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr")


def _is_sparse(x) -> bool:
    return isinstance(x, JAXSparse)


def _unimplemented(prim):
    if prim.name in _DENSIFYING:
        raise NotImplementedError(
            f"sparse rule for {prim.name} is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments "
            "to dense matrices.")
    raise NotImplementedError(f"sparse rule for {prim.name} is not implemented.")


def _as_bcoo(x):
    return x.to_bcoo() if isinstance(x, BCSR) else x


def _unary(name, x, params, prim):
    x = _as_bcoo(x)
    if name in _NONLINEAR_UNARY:
        x = x._unique()
    return x._with_data(prim.bind(x.data, **params))


def _dot_rule(lhs, rhs, dimension_numbers, preferred_element_type=None, **_):
    return bcoo_dot_general(_as_bcoo(lhs), _as_bcoo(rhs), dimension_numbers=dimension_numbers,
                            preferred_element_type=preferred_element_type)


def _reduce_sum_rule(x, axes, **_):
    out = bcoo_reduce_sum(x, axes=axes)
    return out.data.sum() if out.shape == () else out


def _mul_rule(x, y, **_):
    return _multiply(y, x) if not _is_sparse(x) else _multiply(x, y)


def _div_rule(x, y, **_):
    if _is_sparse(y):
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments "
            "to a dense array.")
    return _multiply(x, 1 / jnp.asarray(y))


def _sub_rule(x, y, **_):
    if not (_is_sparse(x) and _is_sparse(y)):
        raise NotImplementedError("Subtraction between sparse and dense array.")
    return _add(x, _negated(y), shared_layouts=True)


def _negated(x):
    return x._with_data(-x.data)


def _integer_pow_rule(x, y, **_):
    if y <= 0:
        raise NotImplementedError(
            f"sparse rule for integer_pow with non-positive exponent {y} is not implemented "
            "because it would result in dense output. If this is your intent, use "
            "sparse.todense() to convert your argument to a dense array.")
    unique = x._unique()
    return unique._with_data(unique.data ** y)


_RULES: dict[str, Callable] = {
    "add": lambda x, y, **_: _add(x, y, shared_layouts=True),
    "sub": _sub_rule,
    "mul": _mul_rule,
    "div": _div_rule,
    "integer_pow": _integer_pow_rule,
    "dot_general": _dot_rule,
    "reduce_sum": _reduce_sum_rule,
    "transpose": lambda x, permutation, **_: bcoo_transpose(x, permutation=permutation),
    "reshape": lambda x, new_sizes, dimensions=None, **_: bcoo_reshape(
        x, new_sizes=new_sizes, dimensions=dimensions),
    "slice": lambda x, start_indices, limit_indices, strides=None, **_: bcoo_slice(
        x, start_indices=start_indices, limit_indices=limit_indices, strides=strides),
    "dynamic_slice": lambda x, *starts, slice_sizes, **_: bcoo_dynamic_slice(
        x, starts, slice_sizes),
    "squeeze": lambda x, dimensions, **_: bcoo_squeeze(x, dimensions=dimensions),
    "rev": lambda x, dimensions, **_: bcoo_rev(x, dimensions),
    "broadcast_in_dim": lambda x, shape, broadcast_dimensions, **_: bcoo_broadcast_in_dim(
        x, shape=shape, broadcast_dimensions=broadcast_dimensions),
    "concatenate": lambda *xs, dimension, **_: bcoo_concatenate(
        [x if _is_sparse(x) else _dense_to_bcoo(x, xs) for x in xs], dimension=dimension),
}


def _dense_to_bcoo(x, others):
    like = next(o for o in others if _is_sparse(o))
    return BCOO.fromdense(x, n_batch=like.n_batch, n_dense=like.n_dense)


def _evaluate(jaxpr, consts, args):
    env: dict[int, object] = {}

    def read(atom):
        return atom.val if isinstance(atom, Literal) else env[id(atom)]

    for var, value in zip([*jaxpr.constvars, *jaxpr.invars], [*consts, *args], strict=True):
        env[id(var)] = value
    for eqn in jaxpr.eqns:
        invals = [read(a) for a in eqn.invars]
        prim, name = eqn.primitive, eqn.primitive.name
        if not any(_is_sparse(v) for v in invals):
            outs = prim.bind(*invals, **eqn.params)
            outs = outs if prim.multiple_results else [outs]
        elif name in _CALLS:
            call = next(eqn.params[k] for k in _CALL_PARAMS if k in eqn.params)
            closed = call if isinstance(call, ClosedJaxpr) else ClosedJaxpr(call, [])
            outs = _evaluate(closed.jaxpr, closed.consts, invals)
        elif name in _LINEAR_UNARY or name in _NONLINEAR_UNARY:
            outs = [_unary(name, invals[0], eqn.params, prim)]
        elif name in _RULES:
            invals = [_as_bcoo(v) for v in invals]
            outs = [_RULES[name](*invals, **eqn.params)]
        else:
            _unimplemented(prim)
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[id(var)] = value
    return [read(v) for v in jaxpr.outvars]


def sparsify(f: Callable, use_tracer: bool = False) -> Callable:
    """Makes `f`, written for dense arrays, accept sparse arrays (BCOO, BCSR) in their place;
    sparse results stay sparse.

    Args:
      f: the function.
      use_tracer: accepted for JAX's signature; the staged evaluation serves both.
    """
    del use_tracer

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        flat, in_tree = tree_flatten((args, kwargs), is_leaf=_is_sparse)
        avals = [ShapedArray(x.shape, x.dtype) if _is_sparse(x) else get_aval(x) for x in flat]
        out_tree = []

        def flat_fun(*xs):
            a, k = tree_unflatten(in_tree, list(xs))
            out, tree = tree_flatten(f(*a, **k))
            out_tree.append(tree)
            return out

        closed, _ = trace_to_jaxpr(flat_fun, avals, "sparsify")
        # each argument is its own layout, even when one array is passed twice
        flat = [tree_unflatten(*reversed(tree_flatten(x))) if _is_sparse(x) else x for x in flat]
        outs = _evaluate(closed.jaxpr, closed.consts, flat)
        return tree_unflatten(out_tree[0], outs)

    return wrapped


def _getitem(self, index):
    """Indexing with static indices (slices, integers): the sparse result of `x[index]`."""
    return sparsify(lambda x: x[index])(self)


# BCOO is defined below sparsify: indexing is installed here, as JAX's BCOO indexes through it
BCOO.__getitem__ = _getitem


def todense(arr):
    """The dense array of a sparse array; any other value unchanged."""
    return arr.todense() if _is_sparse(arr) else arr


def _with_data(mat, data):
    leaves, tree = tree_flatten(mat)
    return tree_unflatten(tree, [data, *leaves[1:]])


def _sparse_ad(transform: Callable, fun: Callable, argnums, has_aux: bool, kwargs,
               returns_value: bool = False) -> Callable:
    """`transform` (grad, jacfwd ...) of `fun` in which a sparse argument is differentiated
    with respect to its stored data: its derivative is a sparse array of the same layout (with
    the output's dimensions as leading batch dimensions for a Jacobian)."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def rebuild(layout, g):
        def one(x):
            return _with_data(layout, x)

        for _ in range(g.ndim - layout.data.ndim):
            one = _api.vmap(one)
        return one(g)

    @functools.wraps(fun)
    def wrapped(*args, **call_kwargs):
        sparse_at = {i: args[i] for i in nums if _is_sparse(args[i])}

        def on_data(*a, **k):
            a = [_with_data(sparse_at[i], x) if i in sparse_at else x for i, x in enumerate(a)]
            return fun(*a, **k)

        plain = [x.data if i in sparse_at else x for i, x in enumerate(args)]
        out = transform(on_data, argnums=argnums, has_aux=has_aux, **kwargs)(*plain,
                                                                                **call_kwargs)
        value, g = out if returns_value else (None, out)
        if has_aux and not returns_value:
            g, aux = g
        if single:
            g = rebuild(sparse_at[argnums], g) if argnums in sparse_at else g
        else:
            g = tuple(rebuild(sparse_at[i], gi) if i in sparse_at else gi
                      for i, gi in zip(nums, g, strict=True))
        if returns_value:
            return value, g
        return (g, aux) if has_aux else g

    return wrapped


def value_and_grad(fun: Callable, argnums=0, has_aux: bool = False, **kwargs) -> Callable:
    """`value_and_grad` that differentiates a sparse argument with respect to its stored data
    (its gradient is a sparse array of the same layout)."""
    return _sparse_ad(_api.value_and_grad, fun, argnums, has_aux, kwargs, returns_value=True)


def grad(fun: Callable, argnums=0, has_aux: bool = False, **kwargs) -> Callable:
    """`grad` that differentiates a sparse argument with respect to its stored data."""
    return _sparse_ad(_api.grad, fun, argnums, has_aux, kwargs)


def jacfwd(fun: Callable, argnums=0, has_aux: bool = False, **kwargs) -> Callable:
    """`jacfwd` that differentiates a sparse argument with respect to its stored data (dense
    outputs): its Jacobian is a sparse array batched over the output's dimensions."""
    return _sparse_ad(_jacobians.jacfwd, fun, argnums, has_aux, kwargs)


def jacrev(fun: Callable, argnums=0, has_aux: bool = False, **kwargs) -> Callable:
    """`jacrev` that differentiates a sparse argument with respect to its stored data (dense
    outputs): its Jacobian is a sparse array batched over the output's dimensions."""
    return _sparse_ad(_jacobians.jacrev, fun, argnums, has_aux, kwargs)


jacobian = jacrev


def random_bcoo(key, shape, *, dtype=None, indices_dtype=None, nse=0.2, n_batch: int = 0,
                n_dense: int = 0, unique_indices: bool = True, sorted_indices: bool = False,
                generator: Callable = jrandom.uniform, **kwds) -> BCOO:
    """A random BCOO array: each batch stores `nse` coordinates drawn by `random.choice` (a
    fraction of the sparse size when `0 < nse < 1`), with data from `generator`.

    The key is split into one key for the data and one per batch element for its coordinates.
    """
    shape = tuple(map(operator.index, shape))
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(f"Invalid {n_batch=}, {n_dense=} for {shape=}")
    n_sparse = len(shape) - n_batch - n_dense
    batch_shape = shape[:n_batch]
    sparse_shape = shape[n_batch:n_batch + n_sparse]
    dense_shape = shape[n_batch + n_sparse:]
    sparse_size = math.prod(sparse_shape)
    if not 0 <= nse < sparse_size:
        raise ValueError(f"got {nse=}, expected to be between 0 and {sparse_size}")
    if 0 < nse < 1:
        nse = math.ceil(nse * sparse_size)
    nse = operator.index(nse)
    dtype = dtype or dtypes.canonicalize_dtype(np.float64)
    indices_dtype = indices_dtype or dtypes.default_int_dtype()
    if sparse_size > np.iinfo(indices_dtype).max:
        raise ValueError(f"{indices_dtype=} does not have enough range to generate sparse "
                         f"indices of size {sparse_size}.")

    def coordinates(k):
        if not sparse_shape:
            return jnp.zeros((nse, n_sparse), indices_dtype)
        flat = jrandom.choice(k, sparse_size, shape=(nse,), replace=not unique_indices)
        return jnp.stack(jnp.unravel_index(flat.astype(indices_dtype), sparse_shape), axis=1)

    keys = jrandom.split(key, math.prod(batch_shape) + 1)
    data = generator(keys[0], shape=batch_shape + (nse,) + dense_shape, dtype=dtype, **kwds)
    indices = _api.vmap(coordinates)(keys[1:]).reshape(batch_shape + (nse, n_sparse))
    mat = BCOO((data, indices), shape=shape)
    return mat.sort_indices() if sorted_indices else mat

"""Structural primitives on typed PRNG keys: each acts on the keys' physical `uint32[..., 2]`
data with the key words as one more trailing dimension, then wraps the result again.

`_primitive.bind` sends a primitive listed in `physical_key_rules` here when an operand has a
key dtype, so broadcasting, reshaping, slicing, gathering, joining, selecting and comparing
keys work under every transformation and eagerly, while the primitives' own rules (and
dispatch's lowering) only ever meet NumPy dtypes. Differs from JAX: jaxprs show the work on
the physical data between `random_unwrap` and `random_wrap` where JAX prints the primitive on
`key<fry>` operands.
"""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core._avals import get_aval
from laminax_core._primitive import physical_key_rules
from laminax_core.lax import _elementwise, _indexing, _joining, _slicing, _structural
from laminax_core.random._keys import KEY_DTYPE, random_unwrap_p, random_wrap_p

__all__ = ["register_key_rule"]


def _is_key(x) -> bool:
    return getattr(x, "dtype", None) == KEY_DTYPE


def _unwrap(x):
    return random_unwrap_p.bind(x) if _is_key(x) else x


def _keys_only(name: str, args) -> None:
    if not all(_is_key(x) for x in args):
        raise TypeError(f"{name} does not accept dtypes "
                        f"{', '.join(str(getattr(x, 'dtype', type(x).__name__)) for x in args)}: "
                        "typed keys combine only with typed keys.")


def register_key_rule(primitive, rule, *, multiple_results: bool = False,
                      keys: tuple[int, ...] = ()) -> None:
    """Lets `primitive` take typed keys: `rule(*physical_args, ndim=..., **params)` computes on
    the unwrapped data (`ndim`: the first key operand's logical rank); its result is wrapped.
    `keys`: the operands that must all be keys when one is (a TypeError otherwise)."""

    def apply(*args, **params):
        if keys:
            _keys_only(primitive.name, [args[i] for i in keys])
        ndim = next(len(get_aval(x).shape) for x in args if _is_key(x))
        out = rule(*map(_unwrap, args), ndim=ndim, **params)
        if multiple_results:
            return [random_wrap_p.bind(o) for o in out]
        return random_wrap_p.bind(out)

    physical_key_rules[primitive] = apply


def _broadcast_in_dim(x, *, ndim, shape, broadcast_dimensions, sharding):
    del sharding  # the words dimension has no mesh axis: the physical value is replicated there
    return _structural.broadcast_in_dim_p.bind(
        x, shape=(*shape, 2), broadcast_dimensions=(*broadcast_dimensions, len(shape)),
        sharding=None)


def _reshape(x, *, ndim, new_sizes, dimensions, sharding):
    del sharding
    if dimensions is not None:
        x = lax.transpose(x, (*dimensions, ndim))
    return _structural.reshape_p.bind(x, new_sizes=(*new_sizes, 2), dimensions=None,
                                      sharding=None)


def _slice(x, *, ndim, start_indices, limit_indices, strides):
    return _slicing.slice_p.bind(
        x, start_indices=(*start_indices, 0), limit_indices=(*limit_indices, 2),
        strides=None if strides is None else (*strides, 1))


def _dynamic_slice(x, *starts, ndim, slice_sizes):
    zero = lax.convert_element_type(0, get_aval(starts[0]).dtype) if starts else np.int32(0)
    return _slicing.dynamic_slice_p.bind(x, *starts, zero, slice_sizes=(*slice_sizes, 2))


def _dynamic_update_slice(x, update, *starts, ndim):
    zero = lax.convert_element_type(0, get_aval(starts[0]).dtype) if starts else np.int32(0)
    return _slicing.dynamic_update_slice_p.bind(x, update, *starts, zero)


def _gather(x, indices, *, ndim, dimension_numbers, slice_sizes, fill_value, **params):
    dnums = dimension_numbers
    out_rank = len(get_aval(indices).shape) - 1 + len(dnums.offset_dims)
    # the words are one more offset dimension, the last of the operand and of the output
    physical = dnums._replace(offset_dims=(*dnums.offset_dims, out_rank))
    return _indexing.gather_p.bind(x, indices, dimension_numbers=physical,
                                   slice_sizes=(*slice_sizes, 2), fill_value=None, **params)


def _scatter(x, indices, updates, *, ndim, dimension_numbers, **params):
    dnums = dimension_numbers
    # the words are one more window dimension, the last of the updates and of the operand
    physical = dnums._replace(update_window_dims=(
        *dnums.update_window_dims, len(get_aval(updates).shape) - 1))
    return _indexing.scatter_p.bind(x, indices, updates, dimension_numbers=physical, **params)


def _select_n(which, *cases, ndim):
    if _is_key(which) or not all(get_aval(c).dtype == np.uint32 for c in cases):
        raise TypeError("select_n: the cases must all be typed keys, and the selector an "
                        "integer or boolean array.")
    which_shape = get_aval(which).shape
    shape = get_aval(cases[0]).shape
    if which_shape:
        which = lax.broadcast_in_dim(which, shape, tuple(range(len(which_shape))))
    return _elementwise.select_n_p.bind(which, *cases)


def _compare(reduce, primitive):
    def rule(x, y, *, ndim):
        if get_aval(x).dtype != np.uint32 or get_aval(y).dtype != np.uint32:
            raise TypeError(f"{primitive.name} does not accept a typed key with another dtype.")
        words = primitive.bind(x, y)
        return reduce(words, (len(get_aval(words).shape) - 1,))
    return rule


def _wrapped_compare(primitive, reduce):
    # comparisons return booleans, not keys: no wrapping
    rule = _compare(reduce, primitive)

    def apply(x, y):
        _keys_only(primitive.name, (x, y))
        # lax lets a scalar meet an array; the physical words would not: broadcast it first
        shape = np.broadcast_shapes(get_aval(x).shape, get_aval(y).shape)
        x, y = (lax.broadcast_in_dim(k, shape, ()) if not get_aval(k).shape and shape else k
                for k in (x, y))
        return rule(_unwrap(x), _unwrap(y), ndim=len(shape))

    physical_key_rules[primitive] = apply


register_key_rule(_structural.broadcast_in_dim_p, _broadcast_in_dim)
register_key_rule(_structural.reshape_p, _reshape)
register_key_rule(_structural.squeeze_p, lambda x, *, ndim, dimensions:
                  _structural.squeeze_p.bind(x, dimensions=dimensions))
register_key_rule(_structural.transpose_p, lambda x, *, ndim, permutation:
                  _structural.transpose_p.bind(x, permutation=(*permutation, ndim)))
register_key_rule(_structural.rev_p, lambda x, *, ndim, dimensions:
                  _structural.rev_p.bind(x, dimensions=dimensions))
register_key_rule(_slicing.slice_p, _slice)
register_key_rule(_slicing.dynamic_slice_p, _dynamic_slice)
register_key_rule(_slicing.dynamic_update_slice_p, _dynamic_update_slice, keys=(0, 1))
register_key_rule(_indexing.gather_p, _gather)
register_key_rule(_indexing.scatter_p, _scatter, keys=(0, 2))
register_key_rule(_elementwise.select_n_p, _select_n)
register_key_rule(_elementwise.copy_p, lambda x, *, ndim: _elementwise.copy_p.bind(x))
register_key_rule(_joining.concatenate_p, lambda *xs, ndim, dimension:
                  _joining.concatenate_p.bind(*xs, dimension=dimension))
register_key_rule(_joining.stack_p, lambda *xs, ndim, axis: _joining.stack_p.bind(*xs, axis=axis))
register_key_rule(_joining.unstack_p, lambda x, *, ndim, axis: _joining.unstack_p.bind(x, axis=axis),
                  multiple_results=True)
register_key_rule(_joining.split_p, lambda x, *, ndim, sizes, axis:
                  _joining.split_p.bind(x, sizes=sizes, axis=axis), multiple_results=True)
register_key_rule(_joining.tile_p, lambda x, *, ndim, reps:
                  _joining.tile_p.bind(x, reps=(*reps, 1)))
_wrapped_compare(_elementwise.eq_p, lax.reduce_and)
_wrapped_compare(_elementwise.ne_p, lax.reduce_or)

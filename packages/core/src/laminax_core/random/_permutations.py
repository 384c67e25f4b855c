"""Samplers that reorder or pick elements: `permutation` and `choice`.

A shuffle sorts the elements by fresh 32-bit random keys, repeating with new keys
`ceil(3 ln(n) / ln(2**32 - 1))` times so that ties (which a stable sort resolves by position)
become negligible, exactly as JAX does; equal keys give equal permutations.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._avals import canonicalize_shape, get_aval
from laminax_core.random._keys import check_key
from laminax_core.random._samplers import _randint, gumbel_raw, random_bits, split_raw, uniform_raw

__all__ = ["choice", "permutation"]

_UINT32_MAX = 2**32 - 1


def _shape_of(x) -> tuple[int, ...]:
    return tuple(get_aval(x).shape)


def _canonical_axis(name: str, axis, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}.")
    return axis % ndim


def _rounds(size: int) -> int:
    return math.ceil(3 * math.log(max(1, size)) / math.log(_UINT32_MAX))


def _shuffle(raw_key, x, axis: int, slices: bool = False):
    """`x` reordered along `axis` by sorting on random keys: one key per element, or with
    `slices` one per index along `axis` (whole slices move together)."""
    shape = _shape_of(x)
    key_shape = (shape[axis],) if slices else shape
    for _ in range(_rounds(math.prod(key_shape))):
        raw_key, subkey = split_raw(raw_key)
        sort_keys = random_bits(subkey, 32, key_shape)
        if slices:
            sort_keys = lax.broadcast_in_dim(sort_keys, shape, (axis,))
        _, x = lax.sort((sort_keys, x), dimension=axis, num_keys=1)
    return x


def _arange(n: int):
    return lax.iota(dtypes.default_int_dtype(), n)


def permutation(key, x, axis: int = 0, independent: bool = False):
    """A random permutation of `range(x)` (integer `x`) or of `x`'s elements along `axis`.

    Args:
      key: a single PRNG key.
      x: an integer, or an array to shuffle.
      axis: the axis to permute along.
      independent: permute each slice along `axis` independently (else whole slices move).

    Returns:
      The permuted array.

    Example:
      >>> permutation(PRNGKey(0), 5)
      array([0, 1, 4, 3, 2], dtype=int32)
    """
    raw, _ = check_key("permutation", key)
    if isinstance(x, int | np.integer) or (hasattr(x, "shape") and not _shape_of(x)
                                            and not hasattr(x, "aval")):
        if not np.issubdtype(np.asarray(x).dtype, np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle(raw, _arange(int(x)), 0)
    shape = _shape_of(x)
    if not shape:
        raise TypeError("x must be an integer or at least 1-dimensional")
    axis = _canonical_axis("permutation", axis, len(shape))
    # JAX shuffles arange(n) and takes those slices; sorting x by the same keys is equal
    return _shuffle(raw, x, axis, slices=not independent and len(shape) > 1)


def _take(x, indices, axis: int):
    return jnp.take(x, indices, axis=axis)


def _choice_indices(raw, n_inputs, shape, replace, p, mode):
    """Indices into the population for `choice`, shaped `shape`."""
    n_draws = math.prod(shape)
    if p is None:
        if replace:
            zero, top = (np.asarray(v, dtypes.default_int_dtype()) for v in (0, n_inputs))
            return _randint(raw, shape, zero, top, dtypes.default_int_dtype())
        return lax.slice(_shuffle(raw, _arange(n_inputs), 0), (0,), (n_draws,))
    p = _as_inexact(p)
    if _shape_of(p) != (n_inputs,):
        raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                         f"p has shape {_shape_of(p)} and a.shape[axis] is {n_inputs}.")
    dtype = get_aval(p).dtype
    if replace:
        cumulative = lax.cumsum(p, 0)
        total = lax.squeeze(lax.slice(cumulative, (n_inputs - 1,), (n_inputs,)), (0,))
        u = uniform_raw(raw, shape, dtype)
        r = lax.mul(total, lax.sub(np.asarray(1, dtype), u))
        ind = jnp.searchsorted(cumulative, r)
    else:
        g = lax.add(gumbel_raw(raw, (n_inputs,), dtype, mode or "low"), lax.log(p))
        ind = lax.top_k(g, n_draws)[1]
    return lax.convert_element_type(ind, dtypes.default_int_dtype())


def _as_inexact(p):
    if isinstance(p, int | float):
        return np.asarray(p, dtypes.default_float_dtype())
    if not dtypes.issubdtype(get_aval(p).dtype, np.inexact):
        return lax.convert_element_type(p, dtypes.default_float_dtype())
    return p


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0, mode=None):
    """Random samples from `range(a)` (integer `a`) or from `a`'s slices along `axis`.

    Args:
      key: a single PRNG key.
      a: an integer population size, or an array to sample from.
      shape: the sample shape (a tuple).
      replace: sample with replacement.
      p: optional probabilities of the population's elements (1-D, `a.shape[axis]` long).
      axis: the axis of `a` to sample along.
      mode: the gumbel mode for sampling without replacement with `p`.

    Returns:
      The samples: `shape` for integer `a`, else `a.shape[:axis] + shape + a.shape[axis+1:]`.

    Example:
      >>> choice(PRNGKey(0), 10, (3,))
      array([9, 0, 2], dtype=int32)
    """
    raw, _ = check_key("choice", key)
    if not isinstance(shape, tuple | list):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = canonicalize_shape(shape, "choice")
    is_scalar = isinstance(a, int | np.integer) or not _shape_of(a)
    if is_scalar:
        if hasattr(a, "aval"):
            raise TypeError("choice: an integer population size must be concrete, not traced.")
        n_inputs = int(a)
    else:
        axis = _canonical_axis("choice", axis, len(_shape_of(a)))
        n_inputs = _shape_of(a)[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        dtype = dtypes.default_int_dtype() if is_scalar else get_aval(a).dtype
        return np.zeros(shape, dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size "
                         f"{n_inputs}) when 'replace=False'")
    ind = lax.reshape(_choice_indices(raw, n_inputs, shape, replace, p, mode), (n_draws,))
    if is_scalar:
        return lax.reshape(ind, shape)
    a_shape = _shape_of(a)
    result = _take(a, ind, axis)
    return lax.reshape(result, a_shape[:axis] + shape + a_shape[axis + 1:])

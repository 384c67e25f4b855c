"""Segment reductions (JAX's `jax.ops`): `segment_sum`, `segment_prod`, `segment_max` and
`segment_min` reduce the rows of `data` that share a segment id into one output row.

They are scatters into an array of `num_segments` rows filled with the reduction's identity, so
an empty segment holds that identity (0, 1, the dtype's lowest or highest value). Ids outside
`[0, num_segments)` (negative ones included) are dropped unless `mode` says otherwise.

Example:
  >>> segment_sum(np.arange(5, dtype=np.float32), np.array([0, 0, 1, 1, 2]), 3)
  array([1., 5., 4.], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from laminax_core import errors, numpy as jnp
from laminax_core._avals import get_aval
from laminax_core._trace import Tracer

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _mode_name(mode) -> str:
    if mode is None:
        return "drop"
    name = getattr(mode, "name", mode)
    name = str(name).lower()
    aliases = {"fill_or_drop": "drop", "fill": "drop", "clip": "clip",
               "promise_in_bounds": "clip", "drop": "drop"}
    if name not in aliases:
        raise ValueError(f"Unknown gather/scatter mode {mode!r}.")
    return aliases[name]


def _segment(name, data, segment_ids, num_segments, indices_are_sorted, unique_indices,
             bucket_size, mode, update, reducer, identity):
    for arg in (data, segment_ids):
        if not (hasattr(arg, "shape") or isinstance(arg, int | float | complex | bool)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got "
                            f"{type(arg).__name__}.")
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    if num_segments is None:
        if isinstance(segment_ids, Tracer):
            raise errors.ConcretizationTypeError(
                segment_ids, f"{name}() `num_segments` argument: pass num_segments statically "
                "to use it under a transformation.")
        num_segments = int(np.max(np.asarray(segment_ids))) + 1
    if isinstance(num_segments, Tracer):
        raise errors.ConcretizationTypeError(
            num_segments, f"{name}() `num_segments` argument.")
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    dtype = get_aval(data).dtype
    # ids are not counted from the end (JAX scatters with normalize_indices=False): a negative
    # id is out of range, dropped, or clamped to 0 in clip mode
    below = 0 if _mode_name(mode) == "clip" else num_segments
    ids = jnp.where(segment_ids < 0, below, segment_ids)
    mode_arg = "clip" if _mode_name(mode) == "clip" else "drop"
    fill = identity(dtype)
    if bucket_size is None:
        out = jnp.full((num_segments, *data.shape[1:]), fill, dtype)
        return update(out.at[ids], data, indices_are_sorted, unique_indices, mode_arg)
    # one partial result per bucket of `bucket_size` consecutive rows, then reduced: shorter
    # accumulation chains (JAX's option for the precision of long products and sums)
    n = ids.shape[0]
    num_buckets = -(-n // bucket_size)
    out = jnp.full((num_buckets, num_segments, *data.shape[1:]), fill, dtype)
    bucket = jnp.arange(n) // bucket_size
    partial = update(out.at[bucket, ids], data, indices_are_sorted, unique_indices, mode_arg)
    return reducer(partial, axis=0).astype(dtype)


def _lowest(dtype):
    if jnp.issubdtype(dtype, np.inexact):
        return -np.inf
    return jnp.iinfo(dtype).min if dtype != np.bool_ else False


def _highest(dtype):
    if jnp.issubdtype(dtype, np.inexact):
        return np.inf
    return jnp.iinfo(dtype).max if dtype != np.bool_ else True


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Sums the rows of `data` (along axis 0) that share an id in `segment_ids`.

    Args:
      data: the array whose leading axis is reduced.
      segment_ids: int array of `data.shape[0]` ids.
      num_segments: the number of output rows (static); by default `max(segment_ids) + 1`,
        which needs concrete ids.
      indices_are_sorted, unique_indices: promises about the ids, passed to the scatter.
      bucket_size: if given, sums buckets of this many rows first, then the buckets.
      mode: "drop" (default: out-of-range ids are ignored) or "clip", or a GatherScatterMode.

    Returns:
      An array of shape `(num_segments, *data.shape[1:])`.
    """
    return _segment("segment_sum", data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode,
                    lambda ref, v, s, u, m: ref.add(v, indices_are_sorted=s,
                                                    unique_indices=u, mode=m),
                    jnp.sum, lambda dtype: 0)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
    """The product of the rows of `data` that share a segment id (see `segment_sum`); an empty
    segment is 1."""
    return _segment("segment_prod", data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode,
                    lambda ref, v, s, u, m: ref.multiply(v, indices_are_sorted=s,
                                                         unique_indices=u, mode=m),
                    jnp.prod, lambda dtype: 1)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The maximum of the rows of `data` that share a segment id (see `segment_sum`); an empty
    segment holds the dtype's lowest value (-inf for floats)."""
    return _segment("segment_max", data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode,
                    lambda ref, v, s, u, m: ref.max(v, indices_are_sorted=s,
                                                    unique_indices=u, mode=m),
                    jnp.max, _lowest)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The minimum of the rows of `data` that share a segment id (see `segment_sum`); an empty
    segment holds the dtype's highest value (inf for floats)."""
    return _segment("segment_min", data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode,
                    lambda ref, v, s, u, m: ref.min(v, indices_are_sorted=s,
                                                    unique_indices=u, mode=m),
                    jnp.min, _highest)

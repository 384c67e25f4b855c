"""Scaled dot-product attention (`dot_product_attention`), the XLA formulation of JAX's: logits
`Q K^T * scale` in at least float32, bias and masks (explicit, causal, sliding window, padding
by sequence lengths) applied by replacing masked logits with a large negative number, a float32
softmax, and the probability-weighted sum of values. Grouped-query attention (fewer key/value
heads than query heads) shares each key/value head across its group of query heads.

Differs from JAX: no cuDNN implementation (`implementation="cudnn"` raises ValueError), and the
bf16/f16 dot-algorithm presets are expressed as `preferred_element_type=float32`.
"""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._avals import get_aval
from laminax_core.nn._functions import logsumexp, softmax

__all__ = ["dot_product_attention"]


def _shape_of(x) -> tuple[int, ...]:
    return tuple(get_aval(x).shape)


def _to_4d(x):
    x = jnp.asarray(x)
    missing = 4 - len(_shape_of(x))
    return lax.reshape(x, (1,) * missing + _shape_of(x)) if missing > 0 else x


def _check(t, shape, dtype, name):
    if t is None:
        return
    found = _shape_of(t)
    if len(found) != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {len(found)}")
    if dtype is not None and get_aval(t).dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {get_aval(t).dtype}")
    if any(s != -1 and f != s for f, s in zip(found, shape, strict=True)):
        raise ValueError(f"{name} shape should be {list(shape)}: but got {found}")


def _combined_mask(shape, mask, is_causal, q_lengths, kv_lengths, window):
    """The boolean mask of kept logits, broadcast to the logits' shape (B, N, T, S)."""
    _, _, t, s = shape
    keep = jnp.ones(shape, dtype=bool)
    if mask is not None:
        keep = jnp.logical_and(keep, mask)
    query_pos = jnp.arange(t)[:, None]
    key_pos = jnp.arange(s)[None, :]
    if is_causal:
        keep = jnp.logical_and(keep, (query_pos >= key_pos)[None, None])
    if window is not None:
        left, right = window
        in_window = jnp.logical_and(query_pos <= key_pos + left, query_pos >= key_pos - right)
        keep = jnp.logical_and(keep, in_window[None, None])
    if q_lengths is not None:
        keep = jnp.logical_and(keep, (jnp.arange(t)[None, :] < q_lengths[:, None])[:, None, :,
                                                                                  None])
    if kv_lengths is not None:
        keep = jnp.logical_and(keep, (jnp.arange(s)[None, :] < kv_lengths[:, None])[:, None,
                                                                                    None, :])
    return keep


def _large_negative(dtype):
    limit = min(float(dtypes.finfo(dtype).max), float(dtypes.finfo(np.float32).max))
    return np.asarray(-0.7 * limit, dtype)


def _grouped(t, n_heads, kv_heads):
    """A (B, N|1, T, S) bias or mask as (B, K, G, T, S) for K key/value heads."""
    if t is None:
        return None
    b, heads, tq, s = _shape_of(t)
    groups = n_heads // kv_heads
    if heads == 1:
        return jnp.broadcast_to(t[:, :, None], (b, 1, groups, tq, s))
    return jnp.reshape(t, (b, kv_heads, groups, tq, s))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal: bool = False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual: bool = False):
    """Scaled dot-product attention `softmax(Q K^T * scale + bias) V` over heads.

    Args:
      query: `(B, T, N, H)` (or without leading dims).
      key, value: `(B, S, K, H)`; `N` must be a multiple of `K` (grouped-query attention).
      bias: optional logits bias broadcastable as `(B, N, T, S)`.
      mask: optional boolean `(B, N, T, S)`-broadcastable mask of logits to keep.
      scale: the logits scale (default `1 / sqrt(H)`).
      is_causal: keep only keys at or before each query position.
      query_seq_lengths, key_value_seq_lengths: optional int32 `(B,)` valid lengths.
      local_window_size: keep keys within `(left, right)` positions of the query (an int
        means the same on both sides).
      implementation: None or "xla".
      return_residual: also return the logsumexp of the logits, `(B, T, N)`.

    Returns:
      The attention output, shaped like `query` (and the residual if asked).

    Example:
      >>> q = np.ones((1, 2, 1, 4), np.float32)
      >>> dot_product_attention(q, q, q).shape
      (1, 2, 1, 4)
    """
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}; laminax has "
                         "only the 'xla' formulation.")
    out_shape = _shape_of(jnp.asarray(query))
    query, key, value = _to_4d(query), _to_4d(key), _to_4d(value)
    bias = None if bias is None else _to_4d(bias)
    mask = None if mask is None else _to_4d(mask)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    b, s, kv_heads, h = _shape_of(key)
    _check(value, [b, s, kv_heads, h], get_aval(key).dtype, "value")
    _check(query, [b, -1, -1, h], get_aval(key).dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    q_lengths = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_lengths = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    _check(q_lengths, [b], np.dtype(np.int32), "query_seq_lengths")
    _check(kv_lengths, [b], np.dtype(np.int32), "key_value_seq_lengths")
    t, n_heads = _shape_of(query)[1:3]
    if n_heads % kv_heads:
        raise ValueError("The number of query heads must be a multiple of key/value heads, but "
                         f"got {n_heads} vs {kv_heads}")
    scale = 1.0 / np.sqrt(h) if scale is None else scale
    encoded, residual = _attention(query, key, value, bias, mask, scale, is_causal, q_lengths,
                                   kv_lengths, local_window_size)
    encoded = jnp.reshape(encoded, out_shape)
    if return_residual:
        return encoded, jnp.reshape(residual, out_shape[:-1])
    return encoded


def _attention(query, key, value, bias, mask, scale, is_causal, q_lengths, kv_lengths, window):
    b, t, n_heads, h = _shape_of(query)
    kv_heads = _shape_of(key)[2]
    groups = n_heads // kv_heads
    grouped_query = jnp.reshape(query, (b, t, kv_heads, groups, h))
    logits_dtype = dtypes.promote_types(get_aval(query).dtype, np.float32)
    logits = jnp.einsum("BTKGH,BSKH->BKGTS", grouped_query, key,
                        preferred_element_type=logits_dtype)
    logits = lax.mul(logits, np.asarray(scale, logits_dtype))
    if bias is not None:
        logits = lax.convert_element_type(jnp.add(logits, _grouped(bias, n_heads, kv_heads)),
                                          logits_dtype)
    s = _shape_of(key)[1]
    if any(v is not None for v in (mask, q_lengths, kv_lengths, window)) or is_causal:
        keep = _combined_mask((b, n_heads, t, s), mask, is_causal, q_lengths, kv_lengths, window)
        logits = jnp.where(_grouped(keep, n_heads, kv_heads), logits,
                           _large_negative(logits_dtype))
    logits = lax.convert_element_type(logits, np.float32)
    probs = lax.convert_element_type(softmax(logits, axis=-1), get_aval(key).dtype)
    encoded = jnp.einsum("BKGTS,BSKH->BTKGH", probs, value)
    encoded = jnp.reshape(encoded, (b, t, n_heads, h))
    if q_lengths is not None:
        valid = (jnp.arange(t)[None, :] < q_lengths[:, None])[:, :, None, None]
        encoded = jnp.multiply(encoded, valid.astype(get_aval(encoded).dtype))
    residual = lax.convert_element_type(logsumexp(logits, axis=-1), get_aval(key).dtype)
    residual = jnp.transpose(jnp.reshape(residual, (b, n_heads, t)), (0, 2, 1))
    return encoded, lax.stop_gradient(residual)

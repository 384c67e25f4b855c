"""Block-scaled matmuls (JAX's `nn.scaled_matmul`, `nn.scaled_dot_general` and
`nn.get_scaled_dot_general_config`): low-precision operands with one scale per block of the
contracting dimension (the MX and NVFP4 formats).

JAX runs these only through cuDNN on recent NVIDIA GPUs; on CPU its lowering fails. laminax
computes them as what they stand for, so they run everywhere XLA does: `scaled_matmul`
multiplies each operand by its widened scales in float32 and contracts; `scaled_dot_general`
quantizes its high-precision operands as JAX does (per-block absolute maximum over the data
type's range; MXFP8 scales rounded up to powers of two, NVFP4 scales in float8_e4m3fn after a
global scale), then calls `scaled_matmul`, with JAX's custom gradient (the cotangent and the
other operand quantized the same way; NVFP4's straight-through mask).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._custom_derivatives import custom_vjp

__all__ = ["BlockScaleConfig", "get_scaled_dot_general_config", "scaled_dot_general",
           "scaled_matmul"]


@dataclasses.dataclass(slots=True)
class BlockScaleConfig:
    """How `scaled_dot_general` quantizes one operand: the format's name (`mode`), the block
    size along the contracting dimension, the data and scale dtypes, and the global scale
    (NVFP4 only)."""

    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def get_scaled_dot_general_config(mode: str, global_scale=None) -> BlockScaleConfig:
    """The `BlockScaleConfig` of a format: "mxfp8" (float8_e4m3fn data, power-of-two
    float8_e8m0fnu scales per 32 values) or "nvfp4" (float4_e2m1fn data, float8_e4m3fn scales
    per 16 values, and a float32 global scale, 1 by default)."""
    if mode == "nvfp4":
        return BlockScaleConfig("nvfp4", 16, dtypes.float4_e2m1fn, dtypes.float8_e4m3fn,
                                jnp.ones((1,), np.float32) if global_scale is None
                                else global_scale, False)
    if mode == "mxfp8":
        return BlockScaleConfig("mxfp8", 32, dtypes.float8_e4m3fn, dtypes.float8_e8m0fnu, None,
                                False)
    raise ValueError(f"Unsupported mode: {mode}")


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """`einsum("BMK,BNK->BMN", lhs * widen(lhs_scales), rhs * widen(rhs_scales))`, where each
    scale covers a block of `K // scales.shape[-1]` consecutive values, computed in float32.

    Args:
      lhs: `(B, M, K)`; rhs: `(B, N, K)`.
      lhs_scales: `(B, M, K_a)`; rhs_scales: `(B, N, K_a)`, with `K % K_a == 0`.
      preferred_element_type: the result dtype (float32 by default).

    Example:
      >>> a = np.array([1.0, 2.0, 3.0], np.float32).reshape(1, 1, 3)
      >>> s = np.full((1, 1, 1), 0.5, np.float32)
      >>> scaled_matmul(a, a, s, s)
      array([[[3.5]]], dtype=float32)
    """
    operands = [jnp.asarray(x) for x in (lhs, rhs, lhs_scales, rhs_scales)]
    if not all(x.ndim == 3 for x in operands):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    a, b, a_scales, b_scales = operands
    if a.shape[2] != b.shape[2] or a.shape[0] != b.shape[0]:
        raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {a.shape} and {b.shape}")
    if a_scales.shape[2] != b_scales.shape[2] or a_scales.shape[0] != b_scales.shape[0]:
        raise ValueError("scaled_matmul requires scales to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {a_scales.shape} and "
                         f"{b_scales.shape}")
    if a_scales.shape[1] != a.shape[1] or b_scales.shape[1] != b.shape[1]:
        raise ValueError("scaled_matmul requires scales to match non-contract dimensions of "
                         f"inputs, but got shapes a: {a.shape}, b: {b.shape}, a_scales: "
                         f"{a_scales.shape}, b_scales: {b_scales.shape}")
    out_dtype = dtypes.canonicalize_dtype(np.dtype(preferred_element_type))

    def scaled(x, scales):
        widened = jnp.repeat(scales.astype(np.float32), x.shape[2] // scales.shape[2], axis=2)
        return x.astype(np.float32) * widened

    out = lax.dot_general(scaled(a, a_scales), scaled(b, b_scales), (((2,), (2,)), ((0,), (0,))),
                          preferred_element_type=np.float32)
    return out.astype(out_dtype)


# ----- quantization, as JAX's cuDNN path does it -----------------------------------------------


def _round_up_to_e8m0(x):
    """Per-block scales as float8_e8m0fnu exponents, rounded up (so scaled values fit)."""
    bits = lax.bitcast_convert_type(x.astype(np.float32), np.uint32)
    exponent, mantissa = bits >> 23, bits & 0x7FFFFF
    up = (mantissa > 0) & (exponent != 0xFE) & ~((exponent == 0) & (mantissa <= 0x400000))
    return jnp.where(up, exponent + 1, exponent).astype(np.uint8)


def _e8m0_value(exponents, dtype):
    value = lax.bitcast_convert_type(exponents.astype(np.uint32) << 23, np.float32)
    tiny = 2.0**-15 if dtype == np.float16 else 2.0**-127
    return jnp.where(value == 0, np.float32(tiny), value).astype(dtype)


def _quantize(x, config: BlockScaleConfig):
    """`(values, scales)` of `x` (`(B, M, K)`) in the config's format, one scale per block."""
    shape = x.shape
    size = config.block_size
    if shape[-1] < size or shape[-1] % size:
        raise ValueError(f"scaled_dot_general: the contracting size {shape[-1]} must be a "
                         f"multiple of the block size {size}.")
    x = x.reshape((*shape[:-1], shape[-1] // size, size))
    top = np.asarray(dtypes.finfo(config.data_type).max, np.float32).astype(x.dtype)
    if config.mode == "mxfp8":
        exponents = _round_up_to_e8m0(jnp.max(jnp.abs(x), axis=-1, keepdims=True) / top)
        scaled = x / _e8m0_value(exponents, x.dtype)
        scales = lax.bitcast_convert_type(exponents, config.scale_type)
    elif config.mode == "nvfp4":
        scale_top = np.asarray(dtypes.finfo(config.scale_type).max, np.float32).astype(x.dtype)
        x = x / config.global_scale
        scales = jnp.clip(jnp.max(jnp.abs(x), axis=-1, keepdims=True) / top, 0, scale_top)
        scales = lax.optimization_barrier(scales.astype(config.scale_type))
        scaled = x / scales.astype(np.float32)
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    values = jnp.clip(scaled, -top, top).astype(config.data_type).reshape(shape)
    return values, scales.reshape(scales.shape[:-1])


def _as_bmk(x, contract, batch):
    """`x` transposed to (batch, free, contracting) dims and reshaped to `(B, M, K)`."""
    free = [d for d in range(x.ndim) if d not in contract and d not in batch]
    order = [d for d in range(x.ndim) if d in batch] + free + [
        d for d in range(x.ndim) if d in contract]
    sizes = [int(np.prod([x.shape[d] for d in group], dtype=np.int64))
             for group in (batch, free, contract)]
    return jnp.transpose(x, order).reshape(sizes)


def _dot_shape(x_shape, y_shape, x_dn, y_dn):
    (x_contract, x_batch), (y_contract, y_batch) = x_dn, y_dn
    return (tuple(n for d, n in enumerate(x_shape) if d in x_batch)
            + tuple(n for d, n in enumerate(x_shape) if d not in x_contract and d not in x_batch)
            + tuple(n for d, n in enumerate(y_shape) if d not in y_contract and d not in y_batch))


def _quantized_dot(x, y, x_dn, y_dn, out_dtype, x_config, y_config, plain=False):
    x3, y3 = _as_bmk(x, *x_dn), _as_bmk(y, *y_dn)
    if plain:
        out = lax.dot_general(x3, y3, (((2,), (2,)), ((0,), (0,))),
                              preferred_element_type=out_dtype)
    else:
        (xq, xs), (yq, ys) = _quantize(x3, x_config), _quantize(y3, y_config)
        nvfp4 = x_config.mode == "nvfp4"
        out = scaled_matmul(xq, yq, xs, ys, np.float32 if nvfp4 else out_dtype)
        if nvfp4:
            out = (out * (x_config.global_scale * y_config.global_scale)).astype(out_dtype)
    return out.reshape(_dot_shape(x.shape, y.shape, x_dn, y_dn))


def _forward(lhs, rhs, dimension_numbers, out_dtype, configs):
    (lc, rc), (lb, rb) = dimension_numbers
    return _quantized_dot(lhs, rhs, (lc, lb), (rc, rb), out_dtype, configs[0], configs[1])


def _cotangent_of(g, x, y, x_dn, y_dn, swap, out_dtype, configs):
    """The cotangent of operand `x` of the dot with `y`: the cotangent `g` contracted with
    `y` over `y`'s free dimensions, laid out as `x`."""
    (x_contract, x_batch), (y_contract, y_batch) = x_dn, y_dn
    x_free = [d for d in range(x.ndim) if d not in x_contract and d not in x_batch]
    y_free = [d for d in range(y.ndim) if d not in y_contract and d not in y_batch]
    nb = len(x_batch)
    first, second = (y_free, x_free) if swap else (x_free, y_free)
    y_in_g = list(range(nb + len(first), nb + len(first) + len(second))) if not swap else list(
        range(nb, nb + len(first)))
    g_dn, y_dn3 = (y_in_g, list(range(nb))), (y_free, list(y_batch))
    out = _quantized_dot(g, y, g_dn, y_dn3, out_dtype, configs[0], configs[1],
                         plain=configs[0].mode == "nvfp4")
    by_y = list(np.take(x_contract, np.argsort(y_contract)))
    return lax.transpose(out, tuple(np.argsort(list(x_batch) + x_free + by_y)))


def _scaled_dot_bwd(dimension_numbers, out_dtype, configs, residuals, g):
    lhs, rhs = residuals
    (lc, rc), (lb, rb) = dimension_numbers
    grad_lhs = _cotangent_of(g, lhs, rhs, (lc, lb), (rc, rb), False, out_dtype,
                             [configs[2], configs[1]])
    grad_rhs = _cotangent_of(g, rhs, lhs, (rc, rb), (lc, lb), True, out_dtype,
                             [configs[2], configs[0]])
    if configs[2].mode == "nvfp4":
        # straight-through estimator: no gradient where quantization clipped the input
        top = float(dtypes.finfo(configs[0].data_type).max)
        scale_top = float(dtypes.finfo(configs[0].scale_type).max)
        grad_lhs = jnp.where(jnp.abs(lhs) <= configs[0].global_scale * top * scale_top,
                             grad_lhs, 0)
        grad_rhs = jnp.where(jnp.abs(rhs) <= configs[1].global_scale * top * scale_top,
                             grad_rhs, 0)
    return grad_lhs, grad_rhs


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs: list[BlockScaleConfig] | None = None, implementation=None):
    """`lax.dot_general` of `lhs` and `rhs` quantized to block-scaled formats (`configs`: one
    `BlockScaleConfig` each for lhs, rhs and the output cotangent, see
    `get_scaled_dot_general_config`); without configs, plain `lax.dot_general`.

    The contracting size of each operand (and, for gradients, the free size of the other) must
    be a multiple of the config's block size.

    Example:
      >>> x = np.ones((2, 32), np.float32)
      >>> scaled_dot_general(x, x, (((1,), (1,)), ((), ())))
      array([[32., 32.],
             [32., 32.]], dtype=float32)
    """
    if implementation is not None:
        warnings.warn("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning, stacklevel=2)
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    out_dtype = np.dtype(preferred_element_type)
    if out_dtype not in (np.dtype(np.float32), np.dtype(dtypes.bfloat16), np.dtype(np.float16)):
        raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                        f"{out_dtype}")
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = map(tuple, (lc, rc, lb, rb))
    squeeze = not lb and not rb
    if squeeze:  # a unit batch dimension at the end of each operand, dropped afterwards
        lhs, rhs = jnp.expand_dims(lhs, lhs.ndim), jnp.expand_dims(rhs, rhs.ndim)
        lb, rb = (lhs.ndim - 1,), (rhs.ndim - 1,)
    numbers = ((lc, rc), (lb, rb))

    # the configs (with their global scales) are closed over: they take no gradient
    @custom_vjp
    def scaled_dot(lhs, rhs):
        return _forward(lhs, rhs, numbers, out_dtype, configs)

    scaled_dot.defvjp(
        lambda lhs, rhs: (_forward(lhs, rhs, numbers, out_dtype, configs), (lhs, rhs)),
        lambda residuals, g: _scaled_dot_bwd(numbers, out_dtype, configs, residuals, g))
    out = scaled_dot(lhs, rhs)
    return jnp.squeeze(out, axis=0) if squeeze else out

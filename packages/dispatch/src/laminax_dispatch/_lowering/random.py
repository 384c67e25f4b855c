"""Lowering of `laminax_core/random`'s primitive: threefry2x32 expands into lax operations
(`threefry2x32_lax`, the same 20 rounds), as JAX lowers it on CPU; and of lax's two XLA
generators, `rng_uniform` and `rng_bit_generator`, as JAX emits them."""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax
from laminax_core.internal import (
    random_gamma_program,
    random_unwrap_p,
    random_wrap_p,
    threefry2x32_lax,
)
from laminax_core.random import random_gamma_p, threefry2x32_p

from laminax_dispatch._lowering._core import (
    ir_constant,
    lower_fun,
    lowering_for,
    register_lowering,
)
from laminax_dispatch._mlir import aval_to_ir_type

register_lowering(threefry2x32_p, lower_fun(threefry2x32_lax, multiple_results=True))
# a typed key array is lowered as its physical uint32[..., 2] data: wrapping changes no bits
register_lowering(random_wrap_p, lambda ctx, data: data)
register_lowering(random_unwrap_p, lambda ctx, keys: keys)
# the Marsaglia-Tsang rejection loops, one per element, as JAX lowers random_gamma on CPU
register_lowering(random_gamma_p, lower_fun(random_gamma_program))


# ----- XLA's own generators: rng_uniform (Rng), rng_bit_generator (RngBitGenerator) ---------


@lowering_for(lax.rng_uniform_p)
def _rng_uniform_lower(ctx, a, b, *, shape):
    (aval,) = ctx.avals_out
    dims = ir_constant(np.asarray(aval.shape, np.int64))
    return hlo.rng(a, b, dims, hlo.RngDistributionAttr.get("UNIFORM"))


_U32 = np.dtype(np.uint32)


@lowering_for(lax.rng_bit_generator_p)
def _rng_bit_generator_lower(ctx, key, *, shape, dtype, algorithm, out_sharding):
    key_aval, bits_aval = ctx.avals_out
    key_type = aval_to_ir_type(key_aval)
    if key_aval.dtype == _U32:  # XLA's state is u64[2]: the u32[4] key read as two u64 words
        pairs = aval_to_ir_type(key_aval.update(shape=(2, 2)))
        # built by hand: without x64 the aval's type would be canonicalized to u32
        words = ir.RankedTensorType.get([2], ir.IntegerType.get_unsigned(64))
        key = hlo.bitcast_convert(words, hlo.reshape(pairs, key))
    name = {0: "DEFAULT", 1: "THREE_FRY", 2: "PHILOX"}[int(algorithm)]
    new_key, bits = hlo.RngBitGeneratorOp(
        key.type, aval_to_ir_type(bits_aval), hlo.RngAlgorithmAttr.get(name), key).results
    if key_aval.dtype == _U32:
        pairs = aval_to_ir_type(key_aval.update(shape=(2, 2)))
        new_key = hlo.reshape(key_type, hlo.bitcast_convert(pairs, new_key))
    return [new_key, bits]

"""XLA's own random number operations: `rng_uniform` (stateful, XLA's Rng) and
`rng_bit_generator` (stateless bits from a key, XLA's RngBitGenerator), with the
`RandomAlgorithm` enum. As in JAX, rng_uniform has no derivative or batching rule;
rng_bit_generator's outputs are integers (zero tangents) and a batch of keys draws one key at
a time. `jax.random` (threefry in lax, bit-exact across backends) is what programs should use
instead.

The NumPy references draw from NumPy's generator: the bits XLA produces are its own (a
platform's algorithm), so the references agree with XLA on shapes, dtypes and ranges, not on
values.
"""

from __future__ import annotations

import enum

import numpy as np

from laminax_core import dtypes
from laminax_core._avals import ShapedArray
from laminax_core._primitive import NOT_LINEAR, ZERO_TANGENT, check_dtype, define_primitive
from laminax_core._interpreters.batching import move_bdim
from laminax_core.lax._joining import stack
from laminax_core.lax._slicing import index_in_dim

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_uniform"]
# the primitives, which lax exports beside their functions
__all__ += [
    "rng_bit_generator_p", "rng_uniform_p",
]  # fmt: skip

_BITS_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


def _no_rule(kind: str, name: str):
    def rule(*args, **params):
        raise NotImplementedError(f"{kind} rule for '{name}' not implemented")

    return rule


# ----- rng_uniform --------------------------------------------------------------------------


def rng_uniform(a, b, shape):
    """Random numbers uniform in `[a, b)` from XLA's stateful generator (a different draw on
    every run; undefined for `b <= a`). Prefer `jax.random.uniform`.

    Example:
      >>> x = rng_uniform(np.float32(0), np.float32(1), (3,))
      >>> x.shape, bool(((0 <= x) & (x < 1)).all())
      ((3,), True)
    """
    return rng_uniform_p.bind(a, b, shape=tuple(int(d) for d in shape))


def _rng_uniform_abstract_eval(a, b, *, shape):
    if a.dtype != b.dtype:
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got {a.dtype} "
                         f"and {b.dtype}.")
    if a.shape != () or b.shape != ():
        raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes {a.shape} and "
                         f"{b.shape}.")
    return ShapedArray(shape, a.dtype, a.weak_type and b.weak_type)


def _rng_uniform_reference(a, b, *, shape):
    rng = np.random.default_rng()
    if dtypes.issubdtype(a.dtype, np.integer):
        return rng.integers(a, b, shape, dtype=a.dtype, endpoint=False)
    return rng.uniform(float(a), float(b), shape).astype(a.dtype)


rng_uniform_p = define_primitive(
    "rng_uniform",
    abstract_eval=_rng_uniform_abstract_eval,
    reference=_rng_uniform_reference,
    jvp=_no_rule("Differentiation", "rng_uniform"),
    transpose=NOT_LINEAR,
    batch=_no_rule("Batching", "rng_uniform"),
)


# ----- rng_bit_generator --------------------------------------------------------------------


class RandomAlgorithm(enum.IntEnum):
    """The algorithm of `rng_bit_generator`: the platform's default, Threefry-2x32 or
    Philox-4x32."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
    """Random bits from XLA's RngBitGenerator: `(new_key, bits)` for a key (`uint32[4]`, or
    `uint64[2]`) and an unsigned integer dtype. Stateless: the same key gives the same bits.

    Example:
      >>> new_key, bits = rng_bit_generator(np.zeros(4, np.uint32), (2, 3))
      >>> new_key.shape, bits.shape, bits.dtype
      ((4,), (2, 3), dtype('uint32'))
    """
    dtype = np.dtype(dtype)
    if dtype not in _BITS_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
    return tuple(rng_bit_generator_p.bind(
        key, shape=tuple(int(d) for d in shape), dtype=dtype,
        algorithm=RandomAlgorithm(algorithm), out_sharding=out_sharding))


def _rng_bit_generator_abstract_eval(key, *, shape, dtype, algorithm, out_sharding):
    check_dtype("rng_bit_generator", key.dtype, (np.unsignedinteger,))
    if (key.shape, key.dtype) not in (((4,), np.uint32), ((2,), np.uint64)):
        raise TypeError(f"rng_bit_generator: the key must be uint32[4] or uint64[2], got "
                        f"{key.dtype.name}{list(key.shape)}.")
    return [ShapedArray(key.shape, key.dtype, key.weak_type), ShapedArray(shape, dtype)]


def _rng_bit_generator_reference(key, *, shape, dtype, algorithm, out_sharding):
    rng = np.random.default_rng(key.astype(np.uint64).tolist())
    new_key = rng.integers(0, np.iinfo(key.dtype).max, key.shape, dtype=key.dtype,
                           endpoint=True)
    bits = rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)
    return [new_key, bits]


def _rng_bit_generator_batch(axis_data, args, dims, **params):
    keys = move_bdim(args[0], dims[0], 0)
    draws = [rng_bit_generator_p.bind(index_in_dim(keys, i, 0, False), **params)
             for i in range(axis_data.size)]
    return [stack([d[0] for d in draws]), stack([d[1] for d in draws])], [0, 0]


rng_bit_generator_p = define_primitive(
    "rng_bit_generator",
    abstract_eval=_rng_bit_generator_abstract_eval,
    reference=_rng_bit_generator_reference,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=_rng_bit_generator_batch,
    multiple_results=True,
)

"""Threefry-2x32: the counter-based hash behind every laminax random number, bit-exact with JAX.

`threefry2x32_p` hashes a pair of uint32 counter arrays under a pair of uint32 key words
(Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011: 20 rounds, key schedule
every 4 rounds). Core gives it a NumPy reference (eager evaluation and test oracle); its StableHLO
lowering, in dispatch, expands it into lax ops with `threefry2x32_lax`, the same 20 rounds written
with `lax.add`/`shift_left`/`shift_right_logical`/`bitwise_or`/`bitwise_xor`.

On top of the hash sit the key operations of JAX's default `threefry2x32` implementation on raw
`uint32[..., 2]` key data: `threefry_seed`, `threefry_split`, `threefry_fold_in`,
`threefry_random_bits`. Both settings of `jax_threefry_partitionable` are implemented (JAX 0.10.2
defaults to True): partitionable mode hashes the 64-bit row-major index of each output element;
the original mode hashes a flat counter `iota` split in two halves.
"""

from __future__ import annotations

import math

import numpy as np

from laminax_core import config, lax
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters import batching
from laminax_core._primitive import (
    NOT_LINEAR,
    ZERO_TANGENT,
    broadcast_operand_shapes,
    define_primitive,
)
from laminax_core.lax._helpers import broadcast_to_shape

__all__ = [
    "threefry2x32_lax",
    "threefry2x32_p",
    "threefry_2x32",
    "threefry_fold_in",
    "threefry_random_bits",
    "threefry_seed",
    "threefry_split",
]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA  # Threefry's key-schedule constant
_UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
                64: np.dtype(np.uint64)}


# ----- threefry2x32_p -----------------------------------------------------------------------


def _threefry_rounds(k1, k2, x1, x2, add, rotate_left, xor):
    """The 20 rounds of Threefry-2x32, written once over the given arithmetic.

    `add`, `rotate_left(x, r)` and `xor` are NumPy ufuncs for the reference and lax ops for the
    lowering's expansion, so both compute the same function by construction.
    """
    keys = (k1, k2, xor(xor(k1, k2), _PARITY))
    x1 = add(x1, keys[0])
    x2 = add(x2, keys[1])
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            x1 = add(x1, x2)
            x2 = xor(x1, rotate_left(x2, r))
        # key injection after every 4 rounds: keys rotate by one word, plus the block count
        x1 = add(x1, keys[(block + 1) % 3])
        x2 = add(add(x2, keys[(block + 2) % 3]), block + 1)
    return x1, x2


def _threefry2x32_reference(k1, k2, x1, x2):
    shape = np.broadcast_shapes(*(np.shape(a) for a in (k1, k2, x1, x2)))
    k1, k2, x1, x2 = (np.broadcast_to(np.asarray(a, np.uint32), shape) for a in (k1, k2, x1, x2))

    def add(a, b):
        return np.add(a, np.uint32(b) if isinstance(b, int) else b, dtype=np.uint32)

    def rotate_left(x, r):
        return (x << np.uint32(r)) | (x >> np.uint32(32 - r))

    def xor(a, b):
        return np.bitwise_xor(a, np.uint32(b) if isinstance(b, int) else b)

    with np.errstate(over="ignore"):
        return list(_threefry_rounds(k1, k2, x1, x2, add, rotate_left, xor))


def _threefry2x32_abstract_eval(k1, k2, x1, x2):
    avals = (k1, k2, x1, x2)
    if any(a.dtype != np.uint32 for a in avals):
        found = ", ".join(a.dtype.name for a in avals)
        raise TypeError(f"threefry2x32 takes uint32 arguments (key1, key2, count1, count2), got "
                        f"{found}. Convert with lax.convert_element_type(x, np.uint32).")
    shape = broadcast_operand_shapes("threefry2x32", avals)
    return [ShapedArray(shape, np.uint32)] * 2


def _threefry2x32_batch(axis_data, args, dims):
    # elementwise in all four operands: the generic rule aligns batch dims and broadcasts
    outs, out_dim = _elementwise_rule(axis_data, args, dims)
    return outs, [out_dim, out_dim]


threefry2x32_p = define_primitive(
    "threefry2x32",
    abstract_eval=_threefry2x32_abstract_eval,
    reference=_threefry2x32_reference,
    jvp=ZERO_TANGENT,  # integer outputs: no derivative
    transpose=NOT_LINEAR,
    batch=_threefry2x32_batch,
    multiple_results=True,
)
_elementwise_rule = batching.elementwise_batch_rule(threefry2x32_p)


def threefry2x32_lax(k1, k2, x1, x2):
    """Threefry-2x32 of the counters `(x1, x2)` under the key `(k1, k2)`, as lax operations.

    This is the expansion that `threefry2x32_p`'s lowering emits; it computes the same values as
    the primitive (all operands uint32, broadcast together as lax broadcasts).

    Args:
      k1, k2: uint32 key words (usually scalars).
      x1, x2: uint32 counters of equal shape.

    Returns:
      The pair of hashed uint32 arrays.

    Example:
      >>> z = np.uint32(0)
      >>> [int(v) for v in threefry2x32_lax(z, z, z, z)]
      [1797259609, 2579123966]
    """
    def add(a, b):
        if isinstance(b, int):
            b = np.uint32(b)
        return lax.add(a, b)

    def rotate_left(x, r):
        return lax.bitwise_or(lax.shift_left(x, np.uint32(r)),
                              lax.shift_right_logical(x, np.uint32(32 - r)))

    def xor(a, b):
        return lax.bitwise_xor(a, np.uint32(b) if isinstance(b, int) else b)

    shape = broadcast_operand_shapes("threefry2x32", [get_aval(a) for a in (k1, k2, x1, x2)])
    x1, x2 = (_broadcast(x, shape) for x in (x1, x2))
    return _threefry_rounds(k1, k2, x1, x2, add, rotate_left, xor)


def _broadcast(x, shape):
    return broadcast_to_shape(x, shape)


# ----- the threefry2x32 PRNG implementation on raw uint32[2] keys ---------------------------


def threefry_2x32(keypair, count):
    """Hashes every element of the uint32 array `count` under `keypair` (JAX's original layout).

    The flat counters are padded to even length and split into two halves that form the
    counter pairs; the two hashed halves are concatenated back in order.

    Args:
      keypair: a uint32[2] key (or a pair of uint32 scalars).
      count: a uint32 array of any shape.

    Returns:
      A uint32 array of `count`'s shape.

    Example:
      >>> threefry_2x32(np.zeros(2, np.uint32), np.arange(2, dtype=np.uint32))
      array([ 928981903, 3453687069], dtype=uint32)
    """
    k1, k2 = _key_words(keypair)
    count_aval = get_aval(count)
    if {get_aval(k1).dtype, get_aval(k2).dtype, count_aval.dtype} != {np.dtype(np.uint32)}:
        found = [get_aval(x).dtype.name for x in (k1, k2, count)]
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got {found}.")
    size = count_aval.size
    flat = lax.reshape(count, (size,))
    if size % 2:
        flat = lax.concatenate([flat, np.zeros(1, np.uint32)], 0)
    half = (size + 1) // 2
    x1 = lax.slice(flat, (0,), (half,))
    x2 = lax.slice(flat, (half,), (2 * half,))
    out = lax.concatenate(threefry2x32_p.bind(k1, k2, x1, x2), 0)
    if size % 2:
        out = lax.slice(out, (0,), (size,))
    return lax.reshape(out, count_aval.shape)


def _key_words(key):
    """The two uint32 scalars of a raw key `uint32[2]`."""
    if isinstance(key, tuple | list):
        return key[0], key[1]
    k1 = lax.squeeze(lax.slice(key, (0,), (1,)), (0,))
    k2 = lax.squeeze(lax.slice(key, (1,), (2,)), (0,))
    return k1, k2


def threefry_seed(seed):
    """The raw key of an integer seed: its high and low 32-bit words, as JAX builds it.

    A 32-bit seed gives `[0, seed mod 2**32]` (negative seeds wrap); a 64-bit seed (with x64)
    gives its two words.

    Args:
      seed: an integer scalar array (already canonicalized: int32 unless x64 is enabled).

    Returns:
      A uint32[2] key.
    """
    aval = get_aval(seed)
    if aval.shape:
        raise TypeError(f"PRNG key seed must be a scalar; got an array of shape {aval.shape}.")
    if not np.issubdtype(aval.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got dtype {aval.dtype.name}.")
    if aval.dtype.itemsize > 4:
        high = lax.convert_element_type(
            lax.shift_right_logical(seed, np.array(32, aval.dtype)), np.uint32)
    else:
        high = np.zeros((), np.uint32)  # a logical shift of a 32-bit word by 32 leaves 0
    # conversion to uint32 keeps the low word (sign-extending narrower signed seeds first)
    words = [high, lax.convert_element_type(seed, np.uint32)]
    return lax.concatenate([lax.reshape(w, (1,)) for w in words], 0)


def _iota_2x32(shape):
    """The high and low uint32 words of the row-major index of every element of `shape`."""
    size = math.prod(shape)
    if size > 2**32:
        raise ValueError(f"random bits of shape {shape}: more than 2**32 elements are not "
                         "supported; draw several smaller arrays instead.")
    low = lax.reshape(lax.iota(np.uint32, size), shape) if size else np.zeros(shape, np.uint32)
    return np.zeros(shape, np.uint32), low


def threefry_split(key, shape: tuple[int, ...]):
    """`uint32[*shape, 2]`: new keys derived from `key`."""
    if config.threefry_partitionable.value:
        k1, k2 = _key_words(key)
        bits1, bits2 = threefry2x32_p.bind(k1, k2, *_iota_2x32(shape))
        ndim = len(shape)
        pair = [lax.broadcast_in_dim(b, (*shape, 1), tuple(range(ndim))) for b in (bits1, bits2)]
        return lax.concatenate(pair, ndim)
    size = math.prod(shape)
    counts = lax.iota(np.uint32, size * 2)
    return lax.reshape(threefry_2x32(key, counts), (*shape, 2))


def threefry_fold_in(key, data):
    """The key `key` with the uint32 scalar `data` folded in."""
    return threefry_2x32(key, threefry_seed(data))


def threefry_random_bits(key, bit_width: int, shape: tuple[int, ...]):
    """Uniform random unsigned integers of `bit_width` bits (8, 16, 32 or 64) and `shape`."""
    if bit_width not in _UINT_DTYPES:
        raise TypeError(f"random bits: bit_width must be 8, 16, 32 or 64, got {bit_width}.")
    if config.threefry_partitionable.value:
        return _random_bits_partitionable(key, bit_width, shape)
    return _random_bits_original(key, bit_width, shape)


def _random_bits_partitionable(key, bit_width, shape):
    k1, k2 = _key_words(key)
    bits1, bits2 = threefry2x32_p.bind(k1, k2, *_iota_2x32(shape))
    dtype = _UINT_DTYPES[bit_width]
    if bit_width == 64:
        high = lax.convert_element_type(bits1, dtype)
        low = lax.convert_element_type(bits2, dtype)
        return lax.bitwise_or(lax.shift_left(high, np.array(32, dtype)), low)
    bits = lax.bitwise_xor(bits1, bits2)
    return bits if bit_width == 32 else lax.convert_element_type(bits, dtype)


def _random_bits_original(key, bit_width, shape):
    size = math.prod(shape)
    n_words = -(-bit_width * size // 32)
    if n_words >= 2**32 - 1:
        raise ValueError(f"random bits of shape {shape}: too many elements for the original "
                         "(non-partitionable) threefry layout.")
    bits = threefry_2x32(key, lax.iota(np.uint32, n_words))
    dtype = _UINT_DTYPES[bit_width]
    if bit_width == 64:
        half = n_words // 2
        high, low = (lax.convert_element_type(lax.slice(bits, (s,), (s + half,)), dtype)
                     for s in (0, half))
        bits = lax.bitwise_or(lax.shift_left(high, np.array(32, dtype)), low)
    elif bit_width < 32:
        # each 32-bit word holds 32 // bit_width values, least significant first
        per_word = 32 // bit_width
        shifts = lax.mul(np.uint32(bit_width),
                         lax.reshape(lax.iota(np.uint32, per_word), (1, per_word)))
        words = lax.broadcast_in_dim(bits, (n_words, per_word), (0,))
        parts = lax.shift_right_logical(words, lax.broadcast_in_dim(
            lax.reshape(shifts, (per_word,)), (n_words, per_word), (1,)))
        parts = lax.convert_element_type(parts, dtype)  # keeps the low bit_width bits
        bits = lax.slice(lax.reshape(parts, (n_words * per_word,)), (0,), (size,))
    return lax.reshape(bits, shape)

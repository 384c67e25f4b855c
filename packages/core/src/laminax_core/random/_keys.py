"""PRNG keys: raw `uint32[..., 2]` keys (`PRNGKey`) and typed keys (`key`), and the key
operations `split`, `fold_in`, `key_data`, `wrap_key_data`.

JAX represents typed keys with an extended dtype (`key<fry>`) known to every layer. Core has no
extended dtypes, so a typed key here is a `PRNGKeyArray`: a small pytree node wrapping the raw
`uint32[*shape, 2]` data. Transformations (`vmap`, `jit`, `grad`) see its data as the leaf, so
keys flow through them as JAX's do; `shape`, indexing, iteration, `==` and printing follow JAX.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
from laminax_pytree import register_pytree_node

from laminax_core import config, dtypes, lax
from laminax_core._avals import get_aval, is_array_like
from laminax_core._trace import Tracer
from laminax_core.random import _threefry

__all__ = [
    "PRNGKey",
    "PRNGKeyArray",
    "check_key",
    "fold_in",
    "key",
    "key_data",
    "key_impl",
    "split",
    "wrap_key_data",
    "KeyDType",
]

_IMPL_NAME = "threefry2x32"


class _KeyDTypeMeta(type):
    def __repr__(cls) -> str:
        return "key<fry>"

    __str__ = __repr__
    name = property(lambda cls: "key<fry>")


class KeyDType(dtypes.prng_key, metaclass=_KeyDTypeMeta):
    """The dtype of typed threefry2x32 keys: prints as `key<fry>`, and
    `dtypes.issubdtype(KeyDType, dtypes.prng_key)` holds, as for JAX's key dtypes."""


KEY_DTYPE = KeyDType


class PRNGKeyArray:
    """An array of typed PRNG keys (from `key`, `split`, `fold_in`, `wrap_key_data`).

    Its shape is the key data's shape without the trailing key dimension of size 2.
    Differs from JAX: the dtype is a laminax `KeyDType`, not a NumPy extended dtype, and only
    integer and slice indexing with static indices is supported.

    Example:
      >>> keys = split(key(0), 3)
      >>> keys.shape, str(keys.dtype)
      ((3,), 'key<fry>')
    """

    __slots__ = ("_base",)
    __hash__ = None  # like arrays: keys compare elementwise

    def __init__(self, base):
        self._base = base

    dtype = KEY_DTYPE
    shape = property(lambda self: tuple(get_aval(self._base).shape[:-1]))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object: a scalar key array has no length.")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index) -> PRNGKeyArray:
        return PRNGKeyArray(_index_leading(self._base, index, self.shape))

    def reshape(self, *shape) -> PRNGKeyArray:
        """The keys arranged in a new shape of the same size (-1 infers one dimension)."""
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        if -1 in shape:
            known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
            shape = tuple(self.size // max(known, 1) if d == -1 else d for d in shape)
        return PRNGKeyArray(lax.reshape(self._base, (*shape, 2)))

    def ravel(self) -> PRNGKeyArray:
        """The keys as a 1-D key array."""
        return self.reshape(self.size)

    flatten = ravel

    def squeeze(self) -> PRNGKeyArray:
        """The keys without size-1 dimensions."""
        return self.reshape(tuple(d for d in self.shape if d != 1))

    @property
    def T(self) -> PRNGKeyArray:  # noqa: N802 (NumPy's name)
        """The key array with its dimensions reversed."""
        ndim = self.ndim
        return PRNGKeyArray(lax.transpose(self._base, (*reversed(range(ndim)), ndim)))

    itemsize = 8  # two uint32 words per key, as JAX reports

    def __array__(self, dtype=None, copy=None):
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. "
                        "Use jax.random.key_data(arr) if you wish to extract the underlying "
                        "integer array.")

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        differ = lax.convert_element_type(lax.ne(self._base, other._base), np.int32)
        return lax.eq(lax.reduce_sum(differ, (len(self.shape),)), 0)

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else lax.eq(equal, False)

    def __repr__(self) -> str:
        data = self._base
        body = repr(data) if isinstance(data, Tracer) else np.array2string(np.asarray(data))
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{body}"

    __str__ = __repr__


register_pytree_node(PRNGKeyArray, lambda k: ((k._base,), None),
                     lambda _, children: PRNGKeyArray(children[0]))


def _index_leading(data, index, shape):
    """`data[index]` for integer and slice indices over the leading (key) dimensions."""
    index = index if isinstance(index, tuple) else (index,)
    if len(index) > len(shape):
        raise IndexError(f"too many indices for a key array of shape {shape}: {len(index)}.")
    aval_shape = get_aval(data).shape
    starts, limits, strides, squeezed = [], [], [], []
    for axis, size in enumerate(aval_shape):
        item = index[axis] if axis < len(index) else slice(None)
        if isinstance(item, slice):
            start, stop, step = item.indices(size)
            if step < 0:
                raise IndexError("key arrays support only positive slice steps.")
            stop = max(stop, start)
        else:
            position = operator.index(item)
            if not -size <= position < size:
                raise IndexError(f"index {position} is out of bounds for axis {axis} of a key "
                                 f"array with shape {shape}.")
            start, stop, step = position % size, position % size + 1, 1
            squeezed.append(axis)
        starts.append(start)
        limits.append(stop)
        strides.append(step)
    out = lax.slice(data, tuple(starts), tuple(limits), tuple(strides))
    return lax.squeeze(out, tuple(squeezed)) if squeezed else out


def _check_impl(impl) -> None:
    name = str(impl) if impl is not None else config.default_prng_impl.value
    if name not in (_IMPL_NAME, "key<fry>"):
        raise ValueError(f"laminax implements only the {_IMPL_NAME!r} PRNG, got {name!r}.")


def check_key(name: str, key, allow_batched: bool = False):
    """`(raw uint32[..., 2] data, whether key was typed)`, or a TypeError/ValueError naming
    the random function `name` when `key` is not a valid key."""
    if isinstance(key, PRNGKeyArray):
        data, typed = key._base, True
    elif is_array_like(key) and not isinstance(key, bool | int | float | complex):
        aval = get_aval(key)
        if aval.dtype != np.uint32 or aval.shape[-1:] != (2,):
            raise TypeError(
                f"{name}: invalid PRNG key data: expected a uint32 array whose shape ends with "
                f"(2,), got {aval.dtype.name}{list(aval.shape)}. Create keys with "
                "random.key(seed) or random.PRNGKey(seed).")
        data, typed = key, False
        _legacy_key_policy()
    else:
        raise TypeError(f"{name}: unexpected PRNG key type {type(key).__name__}; pass a key "
                        "from random.key(seed) or random.PRNGKey(seed).")
    key_shape = tuple(get_aval(data).shape[:-1])
    if key_shape and not allow_batched:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{key_shape} != (). Use jax.vmap for batching.")
    return data, typed


_LEGACY_KEY = ("Legacy uint32 key array passed as key to jax.random function. Please create "
               "keys using jax.random.key(). If use of a raw key array was intended, set "
               'jax_legacy_prng_key="allow".')


def _legacy_key_policy() -> None:
    # JAX's jax_legacy_prng_key option, then its enable_custom_prng upgrade's deprecation
    policy = config.legacy_prng_key.value
    if policy == "error":
        raise ValueError(_LEGACY_KEY)
    if policy == "warn":
        warnings.warn(_LEGACY_KEY, stacklevel=4)
    elif config.enable_custom_prng.value:
        warnings.warn("Raw arrays as random keys to jax.random functions are deprecated. "
                      "Assuming valid threefry2x32 key for now.", FutureWarning, stacklevel=4)


def _seed_array(ctor: str, seed):
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, int):
        # as JAX: a Python int goes through int64 first, then to the default int dtype, so a
        # large hash seeds a 32-bit key by its low word instead of overflowing
        seed = np.int64(seed)
        seed = seed.astype(dtypes.canonicalize_dtype(np.int64))
    elif isinstance(seed, np.ndarray | np.generic):
        seed = np.asarray(seed, dtypes.canonicalize_dtype(seed.dtype))
    shape = get_aval(seed).shape
    if shape:
        raise TypeError(f"{ctor} accepts a scalar seed, but was given an array of shape "
                        f"{shape} != (). Use jax.vmap for batching")
    return seed


def PRNGKey(seed, *, impl=None):  # noqa: N802 (JAX's name)
    """A raw (legacy) PRNG key: a `uint32[2]` array built from an integer seed.

    Args:
      seed: a 32- or 64-bit integer scalar (Python ints wider than the default int keep their
        low 32 bits unless x64 is enabled, as in JAX).
      impl: the PRNG implementation; only "threefry2x32" exists.

    Returns:
      The key data, `uint32[2]`.

    Example:
      >>> PRNGKey(0)
      array([0, 0], dtype=uint32)
    """
    _check_impl(impl)
    data = _threefry.threefry_seed(_seed_array("PRNGKey", seed))
    # under JAX's enable_custom_prng upgrade every key is a typed one
    return PRNGKeyArray(data) if config.enable_custom_prng.value else data


def key(seed, *, impl=None, dtype=None) -> PRNGKeyArray:
    """A typed PRNG key (scalar `PRNGKeyArray` of dtype `key<fry>`) built from an integer seed.

    Args:
      seed: a 32- or 64-bit integer scalar.
      impl, dtype: the PRNG implementation; only "threefry2x32" exists.

    Returns:
      A scalar key array.

    Example:
      >>> key(0)
      Array((), dtype=key<fry>) overlaying:
      [0 0]
    """
    if impl is not None and dtype is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to random.key")
    _check_impl(impl if dtype is None else dtype)
    return PRNGKeyArray(_threefry.threefry_seed(_seed_array("key", seed)))


def _like_input(typed: bool, data):
    return PRNGKeyArray(data) if typed or config.enable_custom_prng.value else data


def split(key, num: int | tuple[int, ...] = 2):
    """Splits a key into `num` new keys (a leading axis; `num` may be a shape tuple).

    Args:
      key: a single key, typed or raw.
      num: the number (or shape) of new keys.

    Returns:
      The new keys, typed if `key` is typed, else `uint32[*num, 2]`.

    Example:
      >>> split(PRNGKey(0))
      array([[1797259609, 2579123966],
             [ 928981903, 3453687069]], dtype=uint32)
    """
    data, typed = check_key("split", key)
    shape = tuple(num) if isinstance(num, tuple | list) else (operator.index(num),)
    return _like_input(typed, _threefry.threefry_split(data, shape))


def fold_in(key, data):
    """A new key derived from `key` and the integer `data` (a uint32 value).

    Args:
      key: a single key, typed or raw.
      data: an integer scalar.

    Returns:
      A key of the same kind as `key`.

    Example:
      >>> fold_in(PRNGKey(0), 1)
      array([ 928981903, 3453687069], dtype=uint32)
    """
    raw, typed = check_key("fold_in", key)
    if np.ndim(data) if not hasattr(data, "aval") else data.aval.ndim:
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data) if not hasattr(data, 'aval') else data.aval.shape} "
                        "!= (). Use jax.vmap for batching.")
    return _like_input(typed, _threefry.threefry_fold_in(raw, _as_uint32(data)))


def _as_uint32(data):
    if isinstance(data, int):
        if not 0 <= data < 2**32:
            # JAX's answer (a Python int must fit uint32); wrapping it would silently fold
            # in another number
            raise OverflowError(f"fold_in: Python integer {data} out of bounds for uint32; "
                                "pass a value in [0, 2**32), or reduce it first (data % 2**32).")
        return np.asarray(data, np.uint32)
    return lax.convert_element_type(data, np.uint32)


def key_data(keys):
    """The raw `uint32[..., 2]` data under a (typed or raw) key array.

    Example:
      >>> key_data(key(42))
      array([ 0, 42], dtype=uint32)
    """
    data, _ = check_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array, *, impl=None, dtype=None) -> PRNGKeyArray:
    """Wraps raw `uint32[..., 2]` key data into a typed key array.

    Example:
      >>> wrap_key_data(np.array([0, 42], np.uint32)) == key(42)
      array(True)
    """
    if impl is not None and dtype is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                         "random.wrap_key_data")
    _check_impl(impl if dtype is None else dtype)
    if isinstance(key_bits_array, PRNGKeyArray):
        raise TypeError("wrap_key_data expects raw uint32 key data, got a typed key array; "
                        "use it directly or unwrap it with key_data first.")
    data, _ = check_key("wrap_key_data", key_bits_array, allow_batched=True)
    return PRNGKeyArray(data)


def key_impl(keys) -> str:
    """The name of the PRNG implementation of a key array: always "threefry2x32".

    Example:
      >>> key_impl(key(0))
      'threefry2x32'
    """
    check_key("key_impl", keys, allow_batched=True)
    return _IMPL_NAME

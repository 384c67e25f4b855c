"""PRNG keys: raw `uint32[..., 2]` keys (`PRNGKey`) and typed keys (`key`), and the key
operations `split`, `fold_in`, `key_data`, `wrap_key_data`.

Typed keys are arrays of the extended dtype `key<fry>` (`dtypes.key_fry`), as in JAX: a key
array is one pytree leaf, its aval is `ShapedArray(shape, key<fry>)`, and tracers of that dtype
flow through jit, vmap, scan, cond and while. Its physical form is the `uint32[*shape, 2]`
data: `random_wrap` / `random_unwrap` cross between the two, and structural primitives applied
to keys act on that data (`_key_rules.py`). A concrete key array is a `PRNGKeyArray` holding
its data.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
from jaxlib import _jax

from laminax_core import config, dtypes, lax
from laminax_core._avals import ShapedArray, get_aval, is_array_like, pytype_aval_mappings
from laminax_core._dtypes_base import key_fry
from laminax_core._primitive import NOT_LINEAR, ZERO_TANGENT, define_primitive
from laminax_core import _trace
from laminax_core._trace import Tracer
from laminax_core.random import _threefry

__all__ = ["install_array_methods", 
    "PRNGKey",
    "PRNGKeyArray",
    "check_key",
    "fold_in",
    "key",
    "key_data",
    "key_impl",
    "random_unwrap_p",
    "random_wrap_p",
    "split",
    "wrap_key_data",
]

_IMPL_NAME = "threefry2x32"
KEY_DTYPE = key_fry


class PRNGKeyArray(_jax.Array):
    """A concrete array of typed PRNG keys (dtype `key<fry>`), holding its `uint32[*shape, 2]`
    data; a single pytree leaf, as JAX's key arrays are.

    As in JAX, it subclasses jaxlib's `Array` base class, so `isinstance(keys, jax.Array)`.

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
    weak_type = False
    shape = property(lambda self: tuple(get_aval(self._base).shape[:-1]))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    aval = property(lambda self: ShapedArray(self.shape, KEY_DTYPE))
    sharding = property(lambda self: getattr(self._base, "sharding", None))

    committed = property(lambda self: getattr(self._base, "committed", False))

    def devices(self):
        """The devices holding the key data."""
        return self._base.devices()

    def is_deleted(self) -> bool:
        """Whether the key data was deleted (or donated)."""
        return self._base.is_deleted()

    def delete(self) -> None:
        """Frees the key data."""
        self._base.delete()

    def block_until_ready(self) -> PRNGKeyArray:
        """Waits for the key data; returns the key array."""
        wait = getattr(self._base, "block_until_ready", None)
        if wait is not None:
            wait()
        return self

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object: a scalar key array has no length.")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    itemsize = 8  # two uint32 words per key, as JAX reports

    def __reduce__(self):
        return (PRNGKeyArray, (self._base,))  # pickled by its data

    def __array__(self, dtype=None, copy=None):
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. "
                        "Use jax.random.key_data(arr) if you wish to extract the underlying "
                        "integer array.")

    def __repr__(self) -> str:
        data = self._base
        body = repr(data) if isinstance(data, Tracer) else np.array2string(np.asarray(data))
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{body}"

    __str__ = __repr__


pytype_aval_mappings[PRNGKeyArray] = lambda k: ShapedArray(k.shape, KEY_DTYPE)

# the array methods that make sense on keys (arithmetic raises, as on key tracers)
_KEY_METHODS = ("reshape", "ravel", "flatten", "squeeze", "swapaxes", "take", "transpose",
                "copy", "repeat")


def install_array_methods() -> None:
    """Gives concrete key arrays the operators, indexing and shape methods tracers have
    (`laminax_core.numpy`'s): they bind primitives, which act on keys through their data."""
    from laminax_core.numpy import _array_methods  # noqa: PLC0415 (numpy sits above random)

    for name in _KEY_METHODS:
        setattr(PRNGKeyArray, name, _array_methods.METHODS[name])
    for name in _array_methods.OPERATORS:
        setattr(PRNGKeyArray, name, getattr(_trace.Tracer, name))
    for name in ("T", "at"):
        setattr(PRNGKeyArray, name, property(_array_methods.PROPERTIES[name],
                                             doc=f"The key array's `{name}`, as an array's."))


def _wrap_abstract_eval(aval):
    if aval.dtype != np.uint32 or aval.shape[-1:] != KEY_DTYPE.key_shape:
        raise TypeError(f"random_wrap: key data must be uint32[..., 2], got {aval.str_short()}.")
    return ShapedArray(aval.shape[:-1], KEY_DTYPE)


def _unwrap_abstract_eval(aval):
    if aval.dtype != KEY_DTYPE:
        raise TypeError(f"random_unwrap: expected a typed key array, got {aval.str_short()}.")
    return ShapedArray((*aval.shape, *KEY_DTYPE.key_shape), KEY_DTYPE.physical_dtype)


def _wrap_batch(axis_data, args, dims):
    (data,), (dim,) = args, dims
    ndim = len(get_aval(data).shape)
    if dim is not None and dim == ndim - 1:  # the key words stay last: the batch moves out
        data, dim = lax.transpose(data, (dim, *range(dim))), 0
    return random_wrap_p.bind(data), dim


def _key_reference(_x):
    raise TypeError("typed keys have no NumPy reference value; use key_data.")


random_wrap_p = define_primitive(
    "random_wrap", abstract_eval=_wrap_abstract_eval, reference=_key_reference,
    jvp=ZERO_TANGENT, transpose=NOT_LINEAR, batch=_wrap_batch,
    print_params=lambda params: {"impl": "fry"})
random_wrap_p.impl = PRNGKeyArray
random_unwrap_p = define_primitive(
    "random_unwrap", abstract_eval=_unwrap_abstract_eval, reference=_key_reference,
    jvp=ZERO_TANGENT, transpose=NOT_LINEAR,
    batch=lambda axis_data, args, dims: (random_unwrap_p.bind(args[0]), dims[0]))
random_unwrap_p.impl = lambda keys: keys._base


def _wrap(data):
    return random_wrap_p.bind(data)


type(KEY_DTYPE).wrap = staticmethod(_wrap)


def _unwrap(keys):
    return random_unwrap_p.bind(keys)


def _check_impl(impl) -> None:
    name = str(impl) if impl is not None else config.default_prng_impl.value
    if name not in (_IMPL_NAME, "key<fry>"):
        raise ValueError(f"laminax implements only the {_IMPL_NAME!r} PRNG, got {name!r}.")


def check_key(name: str, key, allow_batched: bool = False):
    """`(raw uint32[..., 2] data, whether key was typed)`, or a TypeError/ValueError naming
    the random function `name` when `key` is not a valid key."""
    if getattr(key, "dtype", None) == KEY_DTYPE:
        data, typed = _unwrap(key), True
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
    if getattr(seed, "dtype", None) == KEY_DTYPE:
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
    return _wrap(data) if config.enable_custom_prng.value else data


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
    return _wrap(_threefry.threefry_seed(_seed_array("key", seed)))


def _like_input(typed: bool, data):
    return _wrap(data) if typed or config.enable_custom_prng.value else data


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
    if getattr(key_bits_array, "dtype", None) == KEY_DTYPE:
        raise TypeError("wrap_key_data expects raw uint32 key data, got a typed key array; "
                        "use it directly or unwrap it with key_data first.")
    data, _ = check_key("wrap_key_data", key_bits_array, allow_batched=True)
    return _wrap(data)


def key_impl(keys) -> str:
    """The name of the PRNG implementation of a key array: always "threefry2x32".

    Example:
      >>> key_impl(key(0))
      'threefry2x32'
    """
    check_key("key_impl", keys, allow_batched=True)
    return _IMPL_NAME

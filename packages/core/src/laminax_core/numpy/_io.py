"""Printing, files and buffers: NumPy's own `array_repr`, `array_str`, print options,
`save` and `savez` (as JAX re-exports them), `load` (NumPy's reader, returning an array),
`frombuffer` and `fromstring` (host data made into arrays), and `fromiter`/`fromfile`, which
JAX refuses because they consume their source (not pure)."""

from __future__ import annotations

import numpy as np

from laminax_core.dtypes import bfloat16
from laminax_core.numpy._creation import asarray

__all__ = [
    "ComplexWarning", "array_repr", "array_str", "frombuffer", "fromfile", "fromiter",
    "fromstring", "get_printoptions", "load", "printoptions", "save", "savez",
    "set_printoptions",
]  # fmt: skip

# NumPy's objects, exactly as JAX re-exports them
ComplexWarning = np.exceptions.ComplexWarning
array_repr = np.array_repr
array_str = np.array_str
save = np.save
savez = np.savez


def printoptions(*args, **kwargs):
    """A context manager setting NumPy's print options (which arrays print with) for its
    body; the arguments are `numpy.printoptions`'s.

    Example:
      >>> with printoptions(precision=2):
      ...     print(np.array([1 / 3], np.float32))
      [0.33]
    """
    return np.printoptions(*args, **kwargs)


def get_printoptions() -> dict:
    """NumPy's current print options (a dict), which arrays print with.

    Example:
      >>> get_printoptions()["precision"]
      8
    """
    return np.get_printoptions()


def set_printoptions(*args, **kwargs) -> None:
    """Sets NumPy's print options (which arrays print with); arguments as
    `numpy.set_printoptions`'s.

    Example:
      >>> set_printoptions(precision=8)
    """
    return np.set_printoptions(*args, **kwargs)


def load(file, *args, **kwargs):
    """Reads `.npy`/`.npz` data with `numpy.load`; a single array comes back as an array
    (bfloat16 data saved as raw 2-byte records is viewed as bfloat16 again), an `.npz`
    archive as NumPy's lazy mapping.

    Example:
      >>> import io
      >>> buffer = io.BytesIO(); save(buffer, np.arange(3, dtype=np.int32)); _ = buffer.seek(0)
      >>> load(buffer)
      array([0, 1, 2], dtype=int32)
    """
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == "V2":
            out = out.view(bfloat16)
        try:
            out = asarray(out)
        except TypeError:  # object or structured data: NumPy's array as is
            pass
    return out


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0):
    """An array of the items in a bytes-like `buffer` (see `numpy.frombuffer`).

    Example:
      >>> frombuffer(b"\\x01\\x02", dtype=np.uint8)
      array([1, 2], dtype=uint8)
    """
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype=float, count: int = -1, *, sep: str):
    """An array of the numbers in a text `string` separated by `sep` (see
    `numpy.fromstring`; `sep` is required, as in JAX).

    Example:
      >>> fromstring("1 2 3", dtype=np.int32, sep=" ")
      array([1, 2, 3], dtype=int32)
    """
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


_IMPURE = (
    "jnp.{name}() is not implemented: it consumes its source, so it is not pure and unsafe "
    "under jit and other transformations. Use jnp.asarray(np.{name}(...)) outside them instead."
)


def fromiter(*args, **kwargs):
    """Not available, as in JAX: reading an iterator is a side effect. Use
    `jnp.asarray(np.fromiter(...))` outside transformed functions.

    Raises:
      NotImplementedError: always.
    """
    raise NotImplementedError(_IMPURE.format(name="fromiter"))


def fromfile(*args, **kwargs):
    """Not available, as in JAX: reading a file is a side effect. Use
    `jnp.asarray(np.fromfile(...))` outside transformed functions.

    Raises:
      NotImplementedError: always.
    """
    raise NotImplementedError(_IMPURE.format(name="fromfile"))

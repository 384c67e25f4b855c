"""Array operators and methods: the same ones core installs on its tracers.

Core's lax and numpy install the array operators and methods (`+`, `@`, `[...]`, `.sum()`,
`.at` ...) on `Tracer`. This module imports `laminax_core.numpy` (so the full set is there) and
copies every one of them onto jaxlib's `ArrayImpl`, so that eager code and traced code read and
behave the same: on an Array each operator binds primitives, which run through eager dispatch.
What only makes sense for one of the two classes (concrete-value access, construction,
printing, hashing, metadata the Array knows itself) is left alone.

The hottest binary operators (`+`, `-`, `*`, `/`) get a shortcut on Arrays: when both operands
are Arrays of one aval (shape, dtype and weak type) that NumPy-style promotion would leave
alone, they go straight to an inlined `jit` of the lax function (jaxlib's C++ fast path, as
JAX's operators call jitted ufuncs), skipping the promotion that would change nothing.
"""

from __future__ import annotations

import laminax_core.numpy  # noqa: F401  (installs the full NumPy-style methods on Tracer)
from jaxlib import _jax
from laminax_core import lax
from laminax_core.internal import Tracer

from laminax_dispatch import _array
from laminax_dispatch._jit import jit

__all__ = ["install_array_methods"]

# Tracer attributes that are not array operators: tracer machinery and what ArrayImpl defines
# itself from its concrete value.
_NOT_COPIED = frozenset({
    "__array__", "__array_priority__", "__bool__", "__complex__", "__doc__", "__float__",
    "__hash__", "__index__", "__init__", "__int__", "__iter__", "__len__", "__module__",
    "__repr__", "__slots__", "__str__", "__format__", "__dict__", "__weakref__", "_concrete",
    "_debug_info", "_source", "_trace", "aval", "dtype", "ndim", "shape", "size",
    "to_concrete_value", "weak_type",
})  # fmt: skip


# What the concrete array defines itself (its Python half and jaxlib's C++ class) wins; taken
# before anything is copied, so that installing again copies the same names.
_OWN = frozenset(vars(_array.ArrayImpl))


# operator -> (lax function, the dtype kinds for which NumPy's operator is that function alone)
_SHORTCUTS = {
    "__add__": (lax.add, "iufc"),  # booleans: logical or
    "__sub__": (lax.sub, "iufc"),  # booleans: an error
    "__mul__": (lax.mul, "iufc"),  # booleans: logical and
    "__truediv__": (lax.div, "fc"),  # integers: converted to float first
}


def _shortcut(slow, lax_fn, kinds: str):
    array_type = _jax.ArrayImpl
    compiled = []  # the inlined jit of `lax_fn`, made on first use

    def operator(x, y):
        if type(y) is array_type:
            a, b = x.aval, y.aval
            if a == b and a.dtype.kind in kinds:
                if not compiled:
                    compiled.append(jit(lax_fn, inline=True))
                # as JAX's operators (a jitted ufunc): one call of jaxlib's C++ fast path
                # instead of a Python primitive bind
                return compiled[0](x, y)
        return slow(x, y)

    operator.__name__ = operator.__qualname__ = slow.__name__
    operator.__doc__ = slow.__doc__
    return operator


def _with_shortcut(cls, name: str, value):
    if cls is not _jax.ArrayImpl or name not in _SHORTCUTS:
        return value
    lax_fn, kinds = _SHORTCUTS[name]
    return _shortcut(value, lax_fn, kinds)


def install_array_methods(cls=_jax.ArrayImpl) -> list[str]:
    """Copies core's array operators and methods from `Tracer` onto `cls`.

    Returns:
      The names installed.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import device_put
      >>> "__add__" in install_array_methods()
      True
      >>> device_put(np.float32(1)) + 1
      Array(2., dtype=float32)
    """
    installed = []
    own = _OWN if cls is _jax.ArrayImpl else frozenset()
    for klass in reversed(Tracer.__mro__[:-1]):
        for name, value in vars(klass).items():
            if name in _NOT_COPIED or name in own:
                continue
            setattr(cls, name, _with_shortcut(cls, name, value))
            installed.append(name)
    return installed

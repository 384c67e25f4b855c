"""`laminax.numpy`: laminax's implementation lives in `laminax_core.numpy`; this module
re-exports its public names.

One difference from the source module, as in JAX: the one-array elementwise functions
(`sin`, `exp`, `tanh`, ...) are wrapped in an inlined `jit` whose callable is jaxlib's C++
`PjitFunction` itself (as JAX's), so an eager call on an Array is a single compiled dispatch
with no Python frame instead of promotion and a primitive bind in Python. Under a transformation the wrapper inlines the same equations the plain function
stages.

`from_dlpack` is dispatch's (it creates device Arrays from another library's memory).
"""

import inspect as _inspect

import laminax_core.numpy as _core_numpy
from laminax_core.numpy import *  # noqa: F403  (the facade is exactly the source module's __all__)
from laminax_core.numpy import __all__ as _core_all
from laminax_dispatch import from_dlpack as from_dlpack

__all__ = [*_core_all, "from_dlpack"]
from laminax_core.internal import unary_elementwise_names as _UNARY_ELEMENTWISE
from laminax_dispatch.internal import inline_jit_cpp as _inline_jit_cpp

for _name in _UNARY_ELEMENTWISE:
    _fun = getattr(_core_numpy, _name)
    if _inspect.isfunction(_fun):  # not the ufunc objects (jnp.negative ...), which have methods
        globals()[_name] = _inline_jit_cpp(_fun)

del _name, _fun

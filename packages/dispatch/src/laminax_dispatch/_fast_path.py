"""jaxlib's C++ fast path for calling compiled programs, shared by `jit` and eager dispatch.

`cpp_function(name, fun, cache_miss, ...)` wraps jaxlib's `PjitFunction` (`_jax.pjit`). A call
flattens the arguments with laminax's pytree registry, computes their signature (each leaf's
shape, dtype, weak type, sharding and committed flag; the static arguments' values; the config
values in the jit key, such as ``jax_enable_x64``), and looks it up in a `PjitFunctionCache`.
On a hit it runs the executable and wraps the outputs in C++, without entering Python. On a
miss it calls the Python ``cache_miss(*args, **kwargs)``, which must return
``(outputs, FastPathData or None, False)``: with data, the C++ side remembers the executable
for that signature; with None (effects, donation, a computation with no executable) every call
with that signature goes through Python again.

At import, this module also installs what jaxlib's C++ reads of the laminax runtime: the
holder of the post-call hook (unused by laminax: `None`), the exception type for inputs it
cannot canonicalize, core's `Tracer` as the tracer class (a tracer argument is never on the
fast path: its signature fails and the call goes to ``cache_miss``), and core's
`WeakTypedArray` (the NumPy constant a Python scalar becomes, weakly typed) as jaxlib's typed
ndarray, so that its signature keeps the weak type: without it jaxlib would read it as a plain,
strongly typed ndarray and share one cache entry between `x + 1.0` and `x + np.float32(1)`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jaxlib.weakref_lru_cache  # noqa: F401  (jaxlib's typed-ndarray setter crashes without it)
from jaxlib import _jax
from jaxlib._jax import config as _config_ext
from laminax_core.internal import Tracer, WeakTypedArray
from laminax_pytree import default_registry, tree_leaves

from laminax_dispatch import _hooks
from laminax_dispatch._array import _deleted_error

__all__ = [
    "FastPathData",
    "InvalidInputError",
    "cpp_function",
    "fast_path_data",
    "new_cache",
    "raise_if_deleted",
]


class InvalidInputError(TypeError):
    """An argument jaxlib could not turn into an array (raised by jaxlib's C++ runtime)."""


class FastPathData(NamedTuple):
    """What jaxlib's `PjitFunction` needs to run one signature without Python.

    The field names are the attributes jaxlib's C++ reads.

    Attributes:
      xla_executable: the jaxlib `LoadedExecutable`.
      out_pytree_def: the `PyTreeDef` of the outputs (laminax's registry).
      in_shardings: one sharding per executable input (constants first, then kept leaves).
      out_shardings: one sharding per output.
      out_avals: the output avals (shape, dtype, weak type).
      out_committed: whether each output is committed to its device.
      kept_var_bitvec: per constant and per argument leaf, whether the executable takes it.
      in_device_local_layouts: one layout per executable input (None: the default).
      const_args: device arrays passed before the argument leaves (hoisted constants).
    """

    xla_executable: Any
    out_pytree_def: Any
    in_shardings: Sequence[Any]
    out_shardings: Sequence[Any]
    out_avals: Sequence[Any]
    out_committed: Sequence[bool]
    kept_var_bitvec: Sequence[bool]
    in_device_local_layouts: Sequence[Any]
    const_args: Sequence[Any]


def fast_path_data(executable, out_tree, outs, kept: Sequence[bool], const_args=()):
    """The `FastPathData` of one signature of `executable`, or None if outputs are not Arrays.

    Args:
      executable: a dispatch `Executable` (no runtime tokens); its `in_shardings` and
        `out_shardings` become the per-argument and per-output shardings C++ checks and wraps.
      out_tree: the outputs' `PyTreeDef`.
      outs: the flat outputs of the call that missed (Arrays).
      kept: per argument leaf, whether the executable takes it.
      const_args: device arrays the executable takes before the kept leaves.

    Returns:
      A `FastPathData`, or None when an output is not a jaxlib `ArrayImpl`.

    Example:
      >>> fast_path_data(None, None, [1.0], [True]) is None
      True
    """
    if not all(type(o) is _jax.ArrayImpl for o in outs):
        return None
    n_inputs = len(const_args) + sum(kept)
    return FastPathData(
        executable.xla_executable,
        out_tree,
        list(executable.in_shardings),
        list(executable.out_shardings),
        [o.aval for o in outs],
        [o._committed for o in outs],
        [True] * len(const_args) + list(kept),
        [None] * n_inputs,
        list(const_args),
    )


def new_cache(capacity: int) -> _jax.PjitFunctionCache:
    """A C++ cache of executables per (function, options), holding at most `capacity`."""
    return _jax.PjitFunctionCache(capacity=capacity)


def _shard_arg(x, sharding, layout):
    # jaxlib calls this for an argument whose sharding is not the compiled one (a host value,
    # an uncommitted Array elsewhere): place it as the executable takes it
    return _hooks.device_put(x, sharding)


def cpp_function(
    name: str,
    fun: Callable,
    cache_miss: Callable,
    cache: _jax.PjitFunctionCache,
    *,
    static_argnums: Sequence[int] = (),
    static_argnames: Sequence[str] = (),
    key: Any = (),
) -> _jax.PjitFunction:
    """A jaxlib `PjitFunction` calling `cache_miss` for signatures it has not seen.

    Args:
      name: the function's name (for jaxlib's messages).
      fun: what jaxlib calls instead (returning the outputs) when ``jax_disable_jit`` is on.
      cache_miss: ``(*args, **kwargs) -> (outputs, FastPathData | None, False)``.
      cache: the `PjitFunctionCache` its entries live in (shared by equal `key` and `fun`).
      static_argnums, static_argnames: arguments hashed into the signature, not flattened.
      key: a hashable that separates functions of the same `fun` with different options.

    Returns:
      The callable `PjitFunction`.

    Example:
      >>> import numpy as np
      >>> f = cpp_function("f", lambda x: x, lambda x: (x, None, False), new_cache(4))
      >>> f(np.float32(2.0))
      np.float32(2.0)
    """
    return _jax.pjit(
        name,
        fun,
        cache_miss,
        list(static_argnums),
        list(static_argnames),
        key,
        default_registry,
        _shard_arg,
        cache,
    )


def raise_if_deleted(err: Exception, args, kwargs=None) -> None:
    """Raises laminax's RuntimeError for a deleted (or donated) Array among `args`/`kwargs` if
    `err` is XLA's report of one (jaxlib's fast path passes the buffer to XLA unchecked)."""
    if "deleted or donated" not in str(err):
        return
    for leaf in tree_leaves((args, kwargs)):
        if type(leaf) is _jax.ArrayImpl and leaf.is_deleted():
            raise _deleted_error(leaf) from None


def _install_runtime_hooks() -> None:
    post_hook = _config_ext.Config("laminax_post_hook", None, include_in_jit_key=False)
    _jax.jax_jit.set_post_hook_state(post_hook)
    _jax.set_invalid_input_exception(InvalidInputError)
    _jax.set_tracer_class(Tracer)
    _jax.register_canonicalize_value_handler(Tracer, None)
    _jax.set_typed_ndarray_type(WeakTypedArray)


_install_runtime_hooks()

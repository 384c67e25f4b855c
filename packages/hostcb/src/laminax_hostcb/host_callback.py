"""The seed's `jax.experimental.host_callback`: `id_tap`, `id_print`, `call`, `barrier_wait`.

JAX 0.10.2 removed this module; laminax keeps its user-facing behaviour on today's runtime (XLA's
FFI Python callbacks instead of outfeed). Summary of that behaviour:

- `id_tap(tap_func, arg)` returns `arg` (or `result`) and calls ``tap_func(arg, transforms)``
  on the host with NumPy arrays, asynchronously: the computation does not wait for it. Taps
  run one at a time, in the order the computations sent them.
- `id_print(arg, **kwargs)` is `id_tap` with a tap function that prints the keyword arguments
  (sorted) and then `arg`.
- `call(callback_func, arg, result_shape=...)` calls ``callback_func(arg)`` and returns its
  result to the computation, which waits for it.
- `barrier_wait()` returns once every tap of every computation started before it has run, and
  raises `CallbackException` if a tap function raised. It also runs at interpreter exit.
- Under `vmap` a tap receives the whole batch, with ``("batch", {"batch_dims": dims})`` in
  `transforms`; under `jvp`, `grad` and `linearize` it sees primal values only, once;
  `checkpoint` runs it again when the residuals are recomputed; `custom_jvp`/`custom_vjp` rules
  may tap tangents and cotangents. `call` supports no transformation and says so.

Configuration (``laminax.config.update`` or the environment): `jax_host_callback_inline`,
`jax_host_callback_max_queue_byte_size`, `jax_host_callback_ad_transforms` and
`jax_host_callback_outfeed` (accepted, ignored: outfeed is gone).
"""

from __future__ import annotations

import atexit
import functools
import logging
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from laminax_core import dtypes
from laminax_core.internal import ShapedArray, get_aval
from laminax_dispatch.internal import effects_barrier, wait_for_all_threads
from laminax_pytree import tree_flatten

from laminax_hostcb import _config
from laminax_hostcb._host_calls import running_host_callback
from laminax_hostcb._id_print import print_tap_func
from laminax_hostcb._outside_call import CallbackWrapper, outside_call_p
from laminax_hostcb._tap_queue import TAPS

__all__ = [
    "CallbackException",
    "TapFunctionException",
    "barrier_wait",
    "call",
    "id_print",
    "id_tap",
    "stop_outfeed_receiver",
]

logger = logging.getLogger("laminax_hostcb")


class CallbackException(Exception):
    """A tap function raised; `barrier_wait` reports the last such exception.

    Tap functions run on a separate thread, so their exceptions cannot reach the code that
    dispatched the computation. They are logged when they happen, and the next `barrier_wait`
    raises this exception, whose message holds the traceback of the last one (also available
    as ``__cause__``). Fix the tap function, or catch exceptions inside it.
    """


TapFunctionException = CallbackException  # the seed's older name


def _check_args(flat_args, api_name: str) -> None:
    for leaf in flat_args:
        try:
            get_aval(leaf)
        except TypeError as err:
            raise TypeError(
                f"{api_name}: the argument must be a pytree of arrays, got a leaf {leaf!r} of "
                f"type {type(leaf).__name__}."
            ) from err


def id_tap(
    tap_func: Callable, arg, *, result=None, tap_with_device=False, device_index=0, **kwargs
):
    """Identity function that calls ``tap_func(arg, transforms)`` on the host.

    Args:
      tap_func: called as ``tap_func(arg, transforms)`` with `arg`'s values as NumPy arrays and
        `transforms` a tuple of ``(name, params)`` (for example
        ``("batch", {"batch_dims": (0,)})``); with `tap_with_device` also ``device=...``.
      arg: a pytree of arrays sent to the host.
      result: when given, returned instead of `arg` (and not sent to the host).
      tap_with_device: pass the device the value comes from as keyword ``device``.
      device_index: which device of a multi-device computation taps.

    Returns:
      `arg`, or `result` when given.

    Raises:
      TypeError: extra keyword arguments (pre-apply them with `functools.partial`).

    Example:
      >>> import numpy as np
      >>> seen = []
      >>> _ = id_tap(lambda x, tr: seen.append(int(x)), np.int32(5))
      >>> barrier_wait()
      >>> seen
      [5]
    """
    if kwargs:
        raise TypeError(
            "Support for **kwargs in ``id_tap`` has been removed. Instead, "
            "pre-apply keyword arguments, either by using a closure or by passing "
            "``functools.partial(tap_func, **kwargs)``."
        )
    if _config.ad_transforms.value:
        warnings.warn(
            "The flag jax_host_callback_ad_transforms is for temporary backwards compatibility "
            "mode. This flag, and the behavior it enabled will be removed soon.",
            FutureWarning,
            stacklevel=2,
        )
    if result is not None:
        result_leaves, _ = tree_flatten(result)
        _check_args(result_leaves, "id_tap result")
    tapped = _call(tap_func, arg, identity=True, call_with_device=tap_with_device,
                   device_index=device_index)
    return tapped if result is None else result


def id_print(arg, *, result=None, tap_with_device=False, device_index=0, output_stream=None,
             threshold=None, **kwargs):
    """Like `id_tap`, with a tap function that prints `kwargs` (sorted) and then `arg`.

    Args:
      arg, result, tap_with_device, device_index: as for `id_tap`.
      output_stream: an object with ``write(str)`` used instead of `print`.
      threshold: passed to `numpy.array2string`.
      **kwargs: printed before the value as ``key: value``.

    Example:
      >>> import numpy as np
      >>> _ = id_print(np.float32(3.0), what="x")
      >>> barrier_wait()
      what: x
      3.
    """
    printer = functools.partial(print_tap_func, output_stream=output_stream,
                                threshold=threshold, **kwargs)
    return id_tap(printer, arg, result=result, tap_with_device=tap_with_device,
                  device_index=device_index)


def call(callback_func: Callable, arg, *, result_shape=None, call_with_device=False,
         device_index=0):
    """Calls ``callback_func(arg)`` on the host and returns its result to the computation.

    Args:
      callback_func: the host function; it returns a pytree of arrays.
      arg: a pytree of arrays passed to it as NumPy arrays.
      result_shape: what `callback_func` returns: a pytree whose leaves are numeric scalars
        or objects with ``shape`` and ``dtype`` (`ShapeDtypeStruct`, NumPy arrays); ``()`` or
        None when it returns nothing.
      call_with_device: pass the calling device as keyword ``device``.
      device_index: which device of a multi-device computation calls.

    Returns:
      The callback's result, with the structure of `result_shape`.

    Raises:
      ValueError: `result_shape` is not a pytree of shapes and dtypes.

    A result that differs from `result_shape`, or an exception in `callback_func`, fails the
    computation with an error naming the callback.

    Example:
      >>> import numpy as np
      >>> float(call(np.sin, np.float32(0.0), result_shape=np.float32(0.0)))
      0.0
    """
    return _call(callback_func, arg, identity=False, result_shape=result_shape,
                 call_with_device=call_with_device, device_index=device_index)


def _result_avals(result_shape):
    leaves, treedef = tree_flatten(result_shape)
    try:
        avals = tuple(
            ShapedArray(np.shape(r), dtypes.canonicalize_dtype(np.result_type(r.dtype)
                                                               if hasattr(r, "dtype")
                                                               else np.result_type(r)))
            for r in leaves
        )
    except Exception as err:
        raise ValueError(
            "result_shape should be a pytree of values with structure matching the expected "
            "result of the callback function. The values must be either numeric scalars, or "
            f"must have 'shape' and 'dtype' attributes. Got {result_shape}"
        ) from err
    return treedef, avals


def _call(callback_func, arg, *, identity, call_with_device, device_index, result_shape=None):
    if not callable(callback_func):
        raise TypeError(f"Expected a callable value, got {callback_func!r}")
    flat_args, arg_treedef = tree_flatten(arg)
    _check_args(flat_args, "id_tap" if identity else "call")
    params: dict[str, Any] = dict(
        callback=CallbackWrapper(callback_func, identity, call_with_device),
        arg_treedef=arg_treedef,
        identity=identity,
        transforms=(),
        device_index=device_index,
    )
    if not identity:
        result_treedef, avals = _result_avals(result_shape)
        params.update(result_treedef=result_treedef, flat_results_aval=avals)
    _start_exit_barrier()
    outs = outside_call_p.bind(*flat_args, **params)
    if identity:
        return arg_treedef.unflatten(outs)
    return params["result_treedef"].unflatten(outs)


def barrier_wait(logging_name: str | None = None) -> None:
    """Waits until every tap of every computation started so far has run.

    Computations dispatched by any thread count. Raises `CallbackException` if a tap function
    raised since the previous `barrier_wait`.

    Args:
      logging_name: a name for this barrier in debug logs.

    Example:
      >>> barrier_wait()
    """
    logger.debug("barrier_wait[%s]: start", logging_name or "")
    if running_host_callback():
        raise RuntimeError(
            "barrier_wait() was called from a host callback (call, pure_callback, io_callback "
            "or debug.callback) of a running computation: it would wait for that computation "
            "itself. Call it after the computation returns, or from a tap function."
        )
    if not TAPS.on_worker():
        effects_barrier()
        wait_for_all_threads()
    TAPS.wait_until_processed()
    logger.debug("barrier_wait[%s]: done", logging_name or "")
    last = TAPS.take_exception()
    if last is not None:
        err, formatted = last
        raise CallbackException(
            f"There were exceptions during callback processing. Last one was: {formatted}"
        ) from err


def stop_outfeed_receiver() -> None:
    """Waits for every pending tap (as `barrier_wait`, without raising). The seed stopped its
    outfeed receiver here; with FFI callbacks there is no receiver to stop, and the next tap
    works as before."""
    if not TAPS.on_worker():
        effects_barrier()
        wait_for_all_threads()
    TAPS.wait_until_processed()


_exit_barrier_registered = False


def _start_exit_barrier() -> None:
    global _exit_barrier_registered
    if not _exit_barrier_registered:
        _exit_barrier_registered = True
        atexit.register(_barrier_at_exit)


def _barrier_at_exit() -> None:
    try:
        barrier_wait("at_exit")
    except CallbackException as err:
        logger.error("%s", err)

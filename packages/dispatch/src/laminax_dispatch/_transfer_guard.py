"""Transfer guards: JAX's options that log or refuse host<->device copies; and the guard on
Arrays freed by Python's garbage collector rather than by reference counting.

The checks themselves live in jaxlib's C++ runtime (`guard_lib`): every host-to-device copy of
a NumPy array or Python scalar (an argument of a jitted call, an operand of an eager operation,
`jnp.asarray(np_array)`) consults the current thread's level, then the global one. laminax only
sets those levels from its options and marks the calls that count as explicit (`device_put`,
`device_get`), which the ``*_explicit`` levels let through. As in JAX on a CPU backend, reading
an Array back to NumPy never trips the device-to-host guard (the buffer is already host memory).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

from jaxlib._jax import guard_lib
from laminax_core.config import config

__all__ = [
    "array_garbage_collection_guard",
    "explicit_device_get_scope",
    "explicit_device_put_scope",
    "thread_guard",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
]

_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")


def _set_level(state_of: Callable[[], Any], direction: str, value: str | None) -> None:
    # None leaves the decision to the next level (thread-local -> global -> "allow")
    level = None if value is None else getattr(guard_lib.TransferGuardLevel, value.upper())
    setattr(state_of(), direction, level)


def _direction_option(direction: str) -> Any:
    name = f"jax_transfer_guard_{direction}"
    return config.define_optional_enum_state(
        name,
        _LEVELS,
        None,  # None rather than "allow", so `jax_transfer_guard` set globally is not overridden
        f"The transfer guard level for {direction.replace('_', '-')} transfers: 'allow' "
        "(default), 'log' or 'disallow' implicit transfers, or 'log_explicit' / "
        "'disallow_explicit' every transfer.",
        update_global_hook=functools.partial(_set_level, guard_lib.global_state, direction),
        update_thread_local_hook=functools.partial(
            _set_level, guard_lib.thread_local_state, direction),
    )


transfer_guard_host_to_device = _direction_option("host_to_device")
transfer_guard_device_to_device = _direction_option("device_to_device")
transfer_guard_device_to_host = _direction_option("device_to_host")
_DIRECTIONS = (transfer_guard_host_to_device, transfer_guard_device_to_device,
               transfer_guard_device_to_host)


def _set_all_global(value: str | None) -> None:
    for holder in _DIRECTIONS:
        config.update(holder.name, value)


# set-only, as in JAX: the per-direction options are the ones to read
_transfer_guard_all = config.define_optional_enum_state(
    "jax_transfer_guard",
    _LEVELS,
    None,
    "The transfer guard level for every direction at once (see "
    "jax_transfer_guard_host_to_device); read the per-direction options for the current levels.",
    update_global_hook=_set_all_global,
)


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """Sets the transfer guard level of every direction for this thread, inside the block.

    Args:
      new_val: 'allow', 'log', 'disallow', 'log_explicit' or 'disallow_explicit'.

    Raises:
      ValueError: `new_val` is not one of those.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import jit
      >>> with transfer_guard("disallow"):
      ...     jit(lambda x: x + 1)(np.ones(2))
      Traceback (most recent call last):
        ...
      jaxlib._jax.JaxRuntimeError: INVALID_ARGUMENT: Disallowed host-to-device transfer: ...
    """
    with contextlib.ExitStack() as stack:
        for holder in (*_DIRECTIONS, _transfer_guard_all):
            stack.enter_context(holder(new_val))
        yield


@contextlib.contextmanager
def _explicit(flag: str) -> Iterator[None]:
    state = guard_lib.thread_local_state()
    previous = getattr(state, flag)
    setattr(state, flag, True)
    try:
        yield
    finally:
        setattr(state, flag, previous)


def explicit_device_put_scope() -> contextlib.AbstractContextManager:
    """Marks the transfers inside the block as explicitly requested (`device_put`)."""
    return _explicit("explicit_device_put")


def explicit_device_get_scope() -> contextlib.AbstractContextManager:
    """Marks the device-to-host copies inside the block as explicit (`device_get`)."""
    return _explicit("explicit_device_get")


def _set_gc_level(state_of: Callable[[], Any], value: str | None) -> None:
    level = None if value is None else getattr(guard_lib.GarbageCollectionGuardLevel,
                                               value.upper())
    state_of().garbage_collect_array = level


# jaxlib reports an Array the garbage collector frees (it sat in a reference cycle, holding
# its device memory until a collection ran): 'log' writes the error and the Array's creation
# traceback to stderr, 'fatal' aborts the process
array_garbage_collection_guard = config.define_optional_enum_state(
    "jax_array_garbage_collection_guard",
    ("allow", "log", "fatal"),
    None,
    "What happens when an Array is freed by the garbage collector (it was in a reference "
    "cycle) instead of by reference counting: 'allow' (default), 'log' an error with the "
    "Array's creation traceback, or 'fatal'.",
    update_global_hook=functools.partial(_set_gc_level, guard_lib.global_state),
    update_thread_local_hook=functools.partial(_set_gc_level, guard_lib.thread_local_state),
)


# jaxlib checks, in a multi-process program, that collective operations are only issued from
# the thread that set the guard (threads issuing them in different orders on different
# processes deadlock or crash); a single process is never affected
thread_guard = config.define_bool_state(
    "jax_thread_guard",
    False,
    "Raise if a multi-process operation is issued from a thread other than the one that set "
    "this guard.",
    update_thread_local_hook=lambda value: guard_lib.update_thread_guard_global_state(
        bool(value)),
)

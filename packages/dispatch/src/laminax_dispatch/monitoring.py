"""Event listeners (JAX's `jax.monitoring`): counters, durations, time spans and scalars that
the runtime reports, for a program's own metrics collection.

laminax records, under JAX's event names: for every jitted function traced, lowered and
compiled, the duration of each stage (`/jax/core/compile/jaxpr_trace_duration`,
`.../jaxpr_to_mlir_module_duration`, `.../backend_compile_duration`, each with
``fun_name=``) as a duration, a time span and a scalar (the stage's start time); with the
persistent compilation cache on, `/jax/compilation_cache/compile_requests_use_cache`,
`.../cache_hits` or `.../cache_misses`, and on a hit `.../cache_retrieval_time_sec` (not
JAX's `.../compile_time_saved_sec`: laminax's cache entries do not keep the compile time).

Listeners run synchronously in the thread that records, in registration order.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "COMPILE_EVENT",
    "LOWER_EVENT",
    "TRACE_EVENT",
    "clear_event_listeners",
    "record_event",
    "record_event_duration_secs",
    "record_event_time_span",
    "record_scalar",
    "register_event_duration_secs_listener",
    "register_event_listener",
    "register_event_time_span_listener",
    "register_scalar_listener",
    "unregister_event_duration_listener",
    "unregister_event_listener",
    "unregister_event_time_span_listener",
    "timed_stage",
    "unregister_scalar_listener",
]

_event: list[Callable] = []
_duration: list[Callable] = []
_time_span: list[Callable] = []
_scalar: list[Callable] = []


def record_event(event: str, **kwargs: str | int) -> None:
    """Reports that `event` happened; listeners get ``(event, **kwargs)``."""
    for callback in list(_event):
        callback(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Reports that `event` took `duration` seconds; listeners get ``(event, duration, **kwargs)``.
    """
    for callback in list(_duration):
        callback(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Reports that `event` ran from `start_time` to `end_time` (``time.time()`` seconds)."""
    for callback in list(_time_span):
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Reports a value measured for `event`; listeners get ``(event, value, **kwargs)``."""
    for callback in list(_scalar):
        callback(event, value, **kwargs)


def register_event_listener(callback: Callable[..., None]) -> None:
    """Calls ``callback(event, **kwargs)`` for every `record_event`.

    Example:
      >>> seen = []
      >>> register_event_listener(lambda event, **kw: seen.append(event))
      >>> record_event("/my/event")
      >>> seen
      ['/my/event']
      >>> clear_event_listeners()
    """
    _event.append(callback)


def register_event_duration_secs_listener(callback: Callable[..., None]) -> None:
    """Calls ``callback(event, duration_secs, **kwargs)`` for every recorded duration."""
    _duration.append(callback)


def register_event_time_span_listener(callback: Callable[..., None]) -> None:
    """Calls ``callback(event, start_time, end_time, **kwargs)`` for every recorded span."""
    _time_span.append(callback)


def register_scalar_listener(callback: Callable[..., None]) -> None:
    """Calls ``callback(event, value, **kwargs)`` for every recorded scalar."""
    _scalar.append(callback)


def _unregister(listeners: list, callback: Callable, kind: str) -> None:
    if callback not in listeners:
        # JAX asserts here; the same type, with a message
        raise AssertionError(f"{callback!r} is not a registered {kind} listener.")
    listeners.remove(callback)


def unregister_event_listener(callback: Callable[..., None]) -> None:
    """Stops calling a callback given to `register_event_listener` (AssertionError if none)."""
    _unregister(_event, callback, "event")


def unregister_event_duration_listener(callback: Callable[..., None]) -> None:
    """Stops calling a callback given to `register_event_duration_secs_listener`."""
    _unregister(_duration, callback, "event duration")


def unregister_event_time_span_listener(callback: Callable[..., None]) -> None:
    """Stops calling a callback given to `register_event_time_span_listener`."""
    _unregister(_time_span, callback, "event time span")


def unregister_scalar_listener(callback: Callable[..., None]) -> None:
    """Stops calling a callback given to `register_scalar_listener`."""
    _unregister(_scalar, callback, "scalar")


def clear_event_listeners() -> None:
    """Removes every registered listener of every kind."""
    for listeners in (_event, _duration, _time_span, _scalar):
        listeners.clear()


class timed_stage:  # noqa: N801 (used as a context manager, like a function)
    """Reports a compilation stage of `fun_name` as JAX does: the start time as a scalar, then
    the duration and the time span (only when the stage completes)."""

    __slots__ = ("event", "fun_name", "start")

    def __init__(self, event: str, fun_name: str):
        self.event, self.fun_name = event, fun_name

    def __enter__(self) -> None:
        self.start = time.time()
        if _scalar:
            record_scalar(self.event, self.start, fun_name=self.fun_name)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None or not (_duration or _time_span):
            return
        end = time.time()
        record_event_duration_secs(self.event, end - self.start, fun_name=self.fun_name)
        record_event_time_span(self.event, self.start, end, fun_name=self.fun_name)


TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
LOWER_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

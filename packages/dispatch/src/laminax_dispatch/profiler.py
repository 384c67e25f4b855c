"""The profiler (JAX's `jax.profiler`), on jaxlib's profiler: traces of host and device
activity written where TensorBoard's profile plugin and Perfetto read them, annotations that
name spans of a program on the trace's timeline, a profiler server TensorBoard can sample, and
device memory profiles in pprof format.

A trace is one `ProfilerSession` at a time; `stop_trace` exports it under
``<log_dir>/plugins/profile/<run>/`` (``*.xplane.pb``, and with ``create_perfetto_trace`` a
``perfetto_trace.json.gz`` the Perfetto UI opens). laminax does not serve that file to the
Perfetto UI itself: ``create_perfetto_link`` writes it and logs its path.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import jaxlib
from jaxlib import _profile_data, _profiler

from laminax_dispatch._backends import backends, get_backend

__all__ = [
    "ProfileData",
    "ProfileEvent",
    "ProfileOptions",
    "ProfilePlane",
    "StepTraceAnnotation",
    "TraceAnnotation",
    "annotate_function",
    "device_memory_profile",
    "register_subprocess",
    "save_device_memory_profile",
    "start_server",
    "start_trace",
    "stop_server",
    "stop_trace",
    "trace",
]

logger = logging.getLogger("laminax_dispatch.profiler")

ProfileData = _profile_data.ProfileData
ProfileEvent = _profile_data.ProfileEvent
ProfilePlane = _profile_data.ProfilePlane


class ProfileOptions(_profiler.ProfileOptions):
    """What a trace collects: `host_tracer_level`, `device_tracer_level`,
    `python_tracer_level`, `include_dataset_ops`, `start_timestamp_ns`, `duration_ms` ...
    (jaxlib's profiler options)."""


class TraceAnnotation(_profiler.TraceMe):
    """Names a span of the program on the trace timeline while a trace is being collected.

    Keyword arguments become the event's metadata. Costs almost nothing when no trace runs.

    Example:
      >>> with TraceAnnotation("load batch", index=3):
      ...     pass
    """


class StepTraceAnnotation(TraceAnnotation):
    """A `TraceAnnotation` marking one step of a loop (pass ``step_num=``), which the profiler's
    step-time analysis groups by."""

    def __init__(self, name: str, **kwargs: Any):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func: Callable, name: str | None = None, **decorator_kwargs: Any):
    """`func` wrapped so that every call is a `TraceAnnotation` (named `name`, by default the
    function's qualified name, with `decorator_kwargs` as metadata)."""
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


class _Session:
    lock = threading.Lock()
    session: Any = None
    log_dir: str = ""
    perfetto = False
    link = False


def _set_metadata() -> None:
    _profiler.clear_metadata()
    try:
        version = metadata.version("laminax")
    except metadata.PackageNotFoundError:
        version = metadata.version("laminax-dispatch")
    _profiler.set_metadata("laminax_version", version)
    _profiler.set_metadata("jaxlib_version", jaxlib.__version__)
    for client in backends().values():
        _profiler.set_metadata(f"{client.platform}_version", client.platform_version)


def start_trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> None:
    """Starts collecting a trace, saved under `log_dir` by `stop_trace`.

    Args:
      log_dir: the directory (usually a TensorBoard log directory).
      create_perfetto_link: also write the Perfetto trace and log where it is.
      create_perfetto_trace: also write ``perfetto_trace.json.gz`` next to the trace.
      profiler_options: a `ProfileOptions` (host/device tracer levels ...).

    Raises:
      RuntimeError: a trace is already running.
    """
    with _Session.lock:
        if _Session.session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be run "
                               "at a time.")
        # the backends first, so their tracers exist when the session starts
        get_backend()
        _set_metadata()
        _Session.session = _profiler.ProfilerSession(profiler_options or ProfileOptions())
        _Session.log_dir = str(log_dir)
        _Session.perfetto = create_perfetto_trace or create_perfetto_link
        _Session.link = create_perfetto_link


def _write_perfetto_trace(log_dir: str) -> Path:
    runs = list((Path(log_dir).absolute() / "plugins" / "profile").iterdir())
    latest = max(runs, key=os.path.getmtime)
    traces = list(latest.glob("*.trace.json.gz"))
    if len(traces) != 1:
        raise ValueError(f"Invalid trace folder: {latest} (expected one *.trace.json.gz)")
    with gzip.open(traces[0], "rb") as source:
        events = json.load(source)
    events.pop("metadata", None)  # the Perfetto UI rejects the trace with this field
    target = latest / "perfetto_trace.json.gz"
    with gzip.open(target, "w") as out:
        out.write(json.dumps(events).encode("utf-8"))
    return target


def stop_trace() -> None:
    """Stops the running trace and writes it to the `log_dir` given to `start_trace`.

    Raises:
      RuntimeError: no trace is running.
    """
    with _Session.lock:
        if _Session.session is None:
            raise RuntimeError("No profile started")
        try:
            _Session.session.stop_and_export(_Session.log_dir)
            if _Session.perfetto:
                path = _write_perfetto_trace(_Session.log_dir)
                if _Session.link:
                    logger.warning("Perfetto trace written to %s; open it at "
                                   "https://ui.perfetto.dev (Open trace file).", path)
        finally:
            _Session.session = None
            _profiler.clear_metadata()


@contextlib.contextmanager
def trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False,
          profiler_options: ProfileOptions | None = None) -> Iterator[None]:
    """Collects a trace of the block into `log_dir` (`start_trace` ... `stop_trace`).

    Example:
      >>> import tempfile
      >>> with trace(tempfile.mkdtemp()):
      ...     pass
    """
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


_server: Any = None


def start_server(port: int, requires_backend: bool = True) -> Any:
    """Starts a profiler server on `port` that TensorBoard's profile plugin can sample.

    Raises:
      ValueError: a server is already running.
    """
    global _server
    if _server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    if requires_backend:
        get_backend()
    _server = _profiler.start_server(port)
    return _server


def stop_server() -> None:
    """Stops the server `start_server` started.

    Raises:
      ValueError: none is running.
    """
    global _server
    if _server is None:
        raise ValueError("No active profiler server.")
    _server = None  # dropping the last reference shuts it down


def register_subprocess(pid: int, port: int) -> Callable[[], None]:
    """Profiles the process `pid` (whose profiler server listens on `port`) along with this
    one; returns a function that unregisters it."""
    return _profiler.register_subprocess(pid, port)


def device_memory_profile(backend: str | None = None) -> bytes:
    """A snapshot of the live device buffers and executables with their allocation sites, as
    a gzip-compressed pprof protocol buffer (``pprof`` reads it)."""
    return gzip.compress(get_backend(backend).heap_profile())


def save_device_memory_profile(filename: os.PathLike | str, backend: str | None = None) -> None:
    """Writes `device_memory_profile(backend)` to `filename`."""
    Path(filename).write_bytes(device_memory_profile(backend))

"""Backends: the PJRT clients laminax runs on, created lazily on first use.

A backend is a jaxlib `Client`. The CPU client always exists; a GPU client exists when a PJRT
GPU plugin is installed (found without importing JAX: the ``jax_plugins`` entry points and
namespace package, or ``PJRT_NAMES_AND_LIBRARY_PATHS="cuda:/path/plugin.so"``). Options that
shape the clients (``jax_platforms``, ``jax_num_cpu_devices``) must be set before the first
use; the first call to `devices()`, `device_put` or a compile initializes every backend once,
under a lock, so threads racing to start see one set of clients.

The CPU device count comes, in order, from ``config.update("jax_num_cpu_devices", n)``, the
``LAMINAX_NUM_CPU_DEVICES`` / ``JAX_NUM_CPU_DEVICES`` environment variables (read by core's
config), or XLA's own ``--xla_force_host_platform_device_count`` flag in ``XLA_FLAGS`` (read by
the C++ client when laminax passes no count).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import os
import pkgutil
import threading
from pathlib import Path

from jaxlib import utils as jaxlib_utils
from jaxlib import xla_client as xc
from laminax_core.config import config

__all__ = [
    "backends",
    "backends_are_initialized",
    "default_backend",
    "device_count",
    "devices",
    "get_backend",
    "live_arrays",
    "local_device_count",
    "local_devices",
    "process_count",
    "process_index",
    "default_device",
    "set_cpu_client_options",
]

logger = logging.getLogger("laminax_dispatch")

# Platform names users may pass, mapped to the PJRT platform that serves them.
_PLATFORM_ALIASES = {"gpu": ("cuda", "rocm"), "cuda": ("cuda",), "rocm": ("rocm",), "cpu": ("cpu",)}
# Preference order when choosing the default backend: accelerators first, as in JAX.
_PRIORITY = ("cuda", "rocm", "cpu")

_lock = threading.RLock()
_backends: dict[str, xc.Client] | None = None
_errors: dict[str, str] = {}


def _refuse_after_init(option: str):
    """An update hook for options that only take effect before the backends start."""

    def hook(value) -> None:
        if _backends is None:
            return
        used = _initial_values.get(option)
        if value != used:
            _frozen_options[option].set_global(used)
            raise RuntimeError(
                f"{option} must be set before laminax's backends are initialized (before the "
                f"first device_put, devices() call or computation); it was {used!r} then. Set "
                "it right after import, or through the environment."
            )

    return hook


# The values the backends were built with, recorded at initialization.
_initial_values: dict[str, object] = {}

num_cpu_devices = config.define_int_state(
    "jax_num_cpu_devices",
    -1,
    "Number of CPU devices. -1 leaves it to XLA's --xla_force_host_platform_device_count flag "
    "(default 1). Must be set before the backends are initialized.",
    update_global_hook=_refuse_after_init("jax_num_cpu_devices"),
)

platforms = config.define_optional_string_state(
    "jax_platforms",
    None,
    "Comma-separated platforms to initialize, the first being the default (for example 'cpu'). "
    "Each listed platform must initialize or laminax raises. None tries every platform found.",
    update_global_hook=_refuse_after_init("jax_platforms"),
)

cpu_enable_async_dispatch = config.define_bool_state(
    "jax_cpu_enable_async_dispatch",
    True,
    "Dispatch CPU computations asynchronously (results are futures until read).",
    update_global_hook=_refuse_after_init("jax_cpu_enable_async_dispatch"),
)

# JAX's per-platform device restriction for GPU plugins ("all" or comma-separated ids);
# `distributed.initialize(local_device_ids=...)` sets both, as JAX's does. CPU ignores them.
visible_devices = {
    platform: config.define_string_state(
        f"jax_{platform}_visible_devices",
        "all",
        f"Restricts the {platform.upper()} devices laminax uses: 'all', or a comma-separated "
        "list of integer device ids. Must be set before the backends are initialized.",
        update_global_hook=_refuse_after_init(f"jax_{platform}_visible_devices"),
    )
    for platform in ("cuda", "rocm")
}

_frozen_options = {
    "jax_num_cpu_devices": num_cpu_devices,
    "jax_platforms": platforms,
    "jax_cpu_enable_async_dispatch": cpu_enable_async_dispatch,
    **{f"jax_{p}_visible_devices": state for p, state in visible_devices.items()},
}


def _quiet_runtime_logging() -> None:
    """XLA's C++ logging at TF_CPP_MIN_LOG_LEVEL (default 1: warnings and up), set now: the
    variable is read only when jaxlib loads, which may have happened before laminax set its
    default, and at level 0 every client start prints pjrt_client.cc INFO lines."""
    try:
        level = int(os.environ.get("TF_CPP_MIN_LOG_LEVEL", "1"))
    except ValueError:
        level = 1
    jaxlib_utils.absl_set_min_log_level(level)


# A multi-process run (laminax_pjit.distributed) builds the CPU client with its distributed
# client, node id and collectives; the provider returns those keyword arguments ({} alone).
_cpu_client_options: list = []


def set_cpu_client_options(provider) -> None:
    """Registers `provider() -> dict`, extra keyword arguments for jaxlib's `make_cpu_client`
    read when the CPU backend is created (the distributed runtime's client and collectives)."""
    _cpu_client_options[:] = [provider]


def _make_cpu_client() -> xc.Client:
    count = num_cpu_devices.value
    extra = _cpu_client_options[0]() if _cpu_client_options else {}
    return xc.make_cpu_client(
        asynchronous=cpu_enable_async_dispatch.value,
        num_devices=count if count >= 0 else None,
        **extra,
    )


def _plugin_library_in(module_name: str) -> tuple[str, str] | None:
    """Finds (platform, .so path) in a plugin package without importing it (it imports jax)."""
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        for path in sorted(Path(folder).glob("*.so")):
            for platform in ("cuda", "rocm"):
                if platform in path.name or platform in module_name:
                    return platform, str(path)
    return None


def _discover_plugins() -> dict[str, str]:
    """Maps platform to PJRT plugin library, from the environment and installed packages."""
    found: dict[str, str] = {}
    for entry in os.environ.get("PJRT_NAMES_AND_LIBRARY_PATHS", "").split(","):
        name, sep, path = entry.partition(":")
        if sep and name and path:
            found[name.strip()] = path.strip()
    modules = {ep.value for ep in importlib.metadata.entry_points(group="jax_plugins")}
    namespace = importlib.util.find_spec("jax_plugins")
    if namespace is not None and namespace.submodule_search_locations:
        for info in pkgutil.iter_modules(namespace.submodule_search_locations):
            modules.add(f"jax_plugins.{info.name}")
    for module_name in sorted(modules):
        hit = _plugin_library_in(module_name.split(":")[0])
        if hit is not None:
            found.setdefault(*hit)
    return found


def _make_plugin_client(platform: str, library: str) -> xc.Client:
    if not xc.pjrt_plugin_loaded(platform):
        xc.load_pjrt_plugin_dynamically(platform, library)
    if not xc.pjrt_plugin_initialized(platform):
        xc.initialize_pjrt_plugin(platform)
    return xc.make_c_api_client(platform, _plugin_options(platform), None)


def _plugin_options(platform: str) -> dict:
    """The PJRT create options laminax gives `platform`'s plugin (its visible devices)."""
    state = visible_devices.get(platform)
    if state is None or state.value == "all":
        return {}
    return {"visible_devices": [int(i) for i in state.value.split(",")]}


def _requested_platforms() -> list[str] | None:
    value = platforms.value
    if not value:
        return None
    requested = []
    for name in value.split(","):
        name = name.strip().lower()
        if name not in _PLATFORM_ALIASES:
            raise RuntimeError(
                f"jax_platforms names unknown platform {name!r}; known platforms are "
                f"{sorted(_PLATFORM_ALIASES)}."
            )
        requested.append(name)
    return requested


def _initialize() -> dict[str, xc.Client]:
    _quiet_runtime_logging()
    requested = _requested_platforms()
    wanted = None if requested is None else {p for r in requested for p in _PLATFORM_ALIASES[r]}
    clients: dict[str, xc.Client] = {}
    for platform, library in _discover_plugins().items():
        if wanted is not None and platform not in wanted:
            continue
        try:
            clients[platform] = _make_plugin_client(platform, library)
        except Exception as err:  # a broken plugin must not take the CPU backend down
            _errors[platform] = f"{type(err).__name__}: {err}"
            logger.warning("Could not start the %s PJRT plugin at %s: %s", platform, library, err)
    if wanted is None or "cpu" in wanted:
        clients["cpu"] = _make_cpu_client()
    for name in requested or ():
        if not any(p in clients for p in _PLATFORM_ALIASES[name]):
            detail = "; ".join(f"{p}: {e}" for p, e in _errors.items()) or "no plugin found"
            raise RuntimeError(
                f"jax_platforms asks for {name!r} but it could not be initialized ({detail}). "
                "Install its PJRT plugin or remove it from jax_platforms."
            )
    return clients


def backends() -> dict[str, xc.Client]:
    """All initialized backends by platform name, initializing them on first call.

    Returns:
      A dict such as ``{"cpu": <Client>}``; the CPU backend is present unless ``jax_platforms``
      excludes it.

    Example:
      >>> from laminax_dispatch import backends
      >>> "cpu" in backends()
      True
    """
    global _backends
    if _backends is not None:
        return _backends
    with _lock:
        if _backends is None:
            clients = _initialize()
            for option, holder in _frozen_options.items():
                _initial_values[option] = holder.value
            _backends = clients
    return _backends


_default_device_cache: list = []


def _check_default_device(value) -> None:
    if value is not None and not isinstance(value, (str, xc.Device)):
        raise ValueError(f"jax_default_device must be a Device, a platform name or None, got "
                         f"{value!r}.")


default_device_option = config.define_string_or_object_state(
    "jax_default_device",
    None,
    "The device uncommitted computations and device_put use (a Device, or a platform name "
    "for that platform's first device); None: the default backend's first device.",
    validator=_check_default_device,
    include_in_jit_key=True,  # jaxlib's fast path must not reuse another device's entry
    include_in_trace_context=True,
)


def default_device() -> xc.Device:
    """The device uncommitted work goes to: ``jax_default_device`` if set (globally or by the
    ``default_device(...)`` context), else the default backend's first device (fixed once the
    backends are initialized, since the platform options are frozen then)."""
    chosen = default_device_option.value
    if chosen is not None:
        return chosen if isinstance(chosen, xc.Device) else get_backend(chosen).local_devices()[0]
    if _default_device_cache:
        return _default_device_cache[0]
    device = get_backend().local_devices()[0]
    _default_device_cache.append(device)
    return device


def backends_are_initialized() -> bool:
    """Whether the backends have started (after which device-count options are frozen)."""
    return _backends is not None


def _default_platform(clients: dict[str, xc.Client]) -> str:
    requested = _requested_platforms()
    if requested:
        first = _PLATFORM_ALIASES[requested[0]]
        return next(p for p in first if p in clients)
    return next(p for p in _PRIORITY if p in clients)


def get_backend(platform: str | xc.Client | None = None) -> xc.Client:
    """The client for `platform` ('cpu', 'gpu', 'cuda', 'rocm'), or the default one for None.

    Args:
      platform: a platform name, a `Client` (returned as is) or None.

    Returns:
      The jaxlib `Client`.

    Raises:
      RuntimeError: the platform is unknown or has no initialized backend.

    Example:
      >>> from laminax_dispatch import get_backend
      >>> get_backend("cpu").platform
      'cpu'
    """
    if isinstance(platform, xc.Client):
        return platform
    clients = backends()
    if platform is None:
        return clients[_default_platform(clients)]
    name = str(platform).lower()
    if name not in _PLATFORM_ALIASES:
        raise RuntimeError(
            f"Unknown backend {platform!r}. Available backends are {sorted(clients)}."
        )
    for candidate in _PLATFORM_ALIASES[name]:
        if candidate in clients:
            return clients[candidate]
    raise RuntimeError(
        f"Unknown backend: {platform!r} requested, but no platforms that are instances of "
        f"{name} are present. Platforms present are: {','.join(sorted(clients))}"
    )


def live_arrays(platform: str | None = None) -> list:
    """Every Array alive (not deleted, still referenced) on `platform`'s backend (default
    backend when None), as the client tracks them.

    Example:
      >>> from laminax_dispatch import device_put, live_arrays
      >>> x = device_put(1.0)
      >>> any(a is x for a in live_arrays())
      True
    """
    return get_backend(platform).live_arrays()


def default_backend() -> str:
    """The platform name of the default backend, such as ``'cpu'`` or ``'gpu'``.

    Example:
      >>> from laminax_dispatch import default_backend
      >>> default_backend()
      'cpu'
    """
    platform = get_backend().platform
    return "gpu" if platform in ("cuda", "rocm") else platform


def devices(backend: str | xc.Client | None = None) -> list[xc.Device]:
    """Every device of `backend` (all processes), default backend when None.

    Args:
      backend: a platform name ('cpu', 'gpu'), a `Client`, or None for the default backend.

    Returns:
      The devices, ordered by id.

    Example:
      >>> from laminax_dispatch import devices
      >>> devices()[0].platform
      'cpu'
    """
    return get_backend(backend).devices()


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[xc.Device]:
    """The devices of `backend` attached to one process (this one when `process_index` is None).

    Example:
      >>> from laminax_dispatch import local_devices
      >>> local_devices()[0].process_index
      0
    """
    client = get_backend(backend)
    index = client.process_index() if process_index is None else process_index
    return [d for d in client.devices() if d.process_index == index]


def device_count(backend: str | None = None) -> int:
    """The number of devices of `backend` across all processes.

    Example:
      >>> from laminax_dispatch import device_count
      >>> device_count() >= 1
      True
    """
    return get_backend(backend).device_count()


def local_device_count(backend: str | None = None) -> int:
    """The number of devices of `backend` attached to this process.

    Example:
      >>> from laminax_dispatch import local_device_count
      >>> local_device_count() >= 1
      True
    """
    return get_backend(backend).local_device_count()


def process_index(backend: str | None = None) -> int:
    """This process's index in a multi-process run (0 when running alone).

    Example:
      >>> from laminax_dispatch import process_index
      >>> process_index()
      0
    """
    return get_backend(backend).process_index()


def process_count(backend: str | None = None) -> int:
    """The number of processes taking part in the computation (1 when running alone).

    Example:
      >>> from laminax_dispatch import process_count
      >>> process_count()
      1
    """
    return 1 + max(d.process_index for d in get_backend(backend).devices())

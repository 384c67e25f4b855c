"""The few names of JAX's private `jax._src` that widely used libraries import, for the
`import jax` mode (`laminax.install_as_jax`).

JAX promises nothing about `jax._src`, and laminax implements none of it in general. Where a
library the project runs (its test suites are the measure, `tests/clients/`) cannot import or
work without a private name, the name is provided here, in `SHIMS`, beside the library and
the use that needs it. Anything not listed is absent: `import jax._src.x` fails with
ModuleNotFoundError, as an absent module should (libraries guard such imports).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable

from laminax_core import dtypes as _dtypes
from laminax_dispatch import backends
from laminax_dispatch import internal as _dispatch_internal

__all__ = [
    "SHIMS",
    "module",
    "register_exclusion",
    "include_frame",
    "api_boundary",
    "backend_compile_and_load",
]


# ----- jax._src.traceback_util: equinox registers its files for traceback filtering -------

_excluded_paths: list[str] = []


def register_exclusion(path: str) -> None:
    """Marks frames from `path` as library frames (laminax shows full tracebacks regardless)."""
    _excluded_paths.append(path)


def include_frame(frame) -> bool:
    """Whether a traceback frame is user code: not in a file passed to `register_exclusion`."""
    filename = frame.f_code.co_filename
    return not any(filename.startswith(path) for path in _excluded_paths)


def api_boundary(fun: Callable) -> Callable:
    """Marks `fun` as a public entry point; laminax does not rewrite tracebacks, so `fun`."""
    return fun


# ----- jax._src.xla_bridge: chex's fake devices ask whether the CPU backend exists yet ------


def _initialized_backends() -> dict:
    if not _dispatch_internal.backends_are_initialized():
        return {}
    return backends()


# ----- jax._src.compiler: chex imports it at package import (chex.restrict_backends) --------


def backend_compile_and_load(backend, module, executable_devices, options, host_callbacks=()):
    """Compiles an MLIR module on `backend` (jaxlib's `Client.compile_and_load`). chex's
    `restrict_backends` wraps this function; laminax's own compilations do not call it, so
    that restriction does not apply to them (tests/clients/KNOWN.md)."""
    if host_callbacks:
        return backend.compile_and_load(module, executable_devices, options, list(host_callbacks))
    return backend.compile_and_load(module, executable_devices, options)


# module name -> {attribute: (value, or a zero-argument callable giving it when read
# (`dynamic=True`), the library that needs it and what for)}
SHIMS: dict[str, dict[str, tuple]] = {
    "jax._src": {},
    "jax._src.traceback_util": {
        "register_exclusion": (register_exclusion, False, "equinox: every module at import"),
        "include_frame": (include_frame, False, "equinox: filters its error tracebacks"),
        "api_boundary": (api_boundary, False, "equinox/optax: decorate public functions"),
    },
    "jax._src.dtypes": {
        "TypePromotionError": (
            _dtypes.TypePromotionError, False, "equinox.nn.Embedding: catches promotion errors"
        ),
    },
    "jax._src.dispatch": {
        "wait_for_tokens": (
            _dispatch_internal.effects_barrier, False,
            "equinox: waits for ordered effects before reading error values",
        ),
    },
    "jax._src.compiler": {
        "backend_compile_and_load": (
            backend_compile_and_load, False,
            "chex: imported by chex/__init__ (restrict_backends wraps it)",
        ),
    },
    "jax._src.xla_bridge": {
        "_backends": (
            _initialized_backends, True,
            "chex.set_n_cpu_devices: refuses once the CPU backend exists",
        ),
    },
}


class _ShimModule(types.ModuleType):
    def __getattr__(self, name: str):
        entry = SHIMS.get(self.__name__, {}).get(name)
        if entry is not None and entry[1]:
            return entry[0]()
        submodule = f"{self.__name__}.{name}"
        if submodule in SHIMS:  # `jax._src.xla_bridge` read as an attribute (chex does)
            return importlib.import_module(submodule)
        raise AttributeError(
            f"module {self.__name__!r} has no attribute {name!r}: JAX's private modules are "
            "not part of laminax; only the names in laminax._jax_src_compat.SHIMS are provided."
        )


def module(fullname: str) -> types.ModuleType | None:
    """The shim module `fullname` (a `jax._src...` name), or None if laminax provides none."""
    names = SHIMS.get(fullname)
    if names is None:
        return None
    shim = _ShimModule(fullname, f"laminax's compatibility names for JAX's private {fullname}.")
    if fullname == "jax._src":
        shim.__path__ = []
    for name, (value, dynamic, _needed_by) in names.items():
        if not dynamic:
            setattr(shim, name, value)
    # the parent package sees its submodule as an attribute, as after a real import
    parent, _, child = fullname.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, shim)
    return shim

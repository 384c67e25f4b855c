"""Running `import jax` code on laminax: the `jax` module name resolved to laminax's modules.

`install_as_jax()` puts a finder at the front of `sys.meta_path` that answers every import of
`jax` or `jax.<sub>` with laminax's own module of the same path (`jax.numpy` is
`laminax.numpy`, the very same module object), so libraries written against JAX (optax, chex,
equinox) and jaxlib's own name look-ups under `jax` run on laminax unchanged. Real JAX is never
imported. The top-level `jax` module is a thin module of its own: it reports the JAX API version
laminax implements (`jax.__version__ == "0.10.2"`, which libraries compare) while
`laminax.__version__` stays laminax's, and hands every other attribute to `laminax`.

A few libraries reach into JAX's private `jax._src`; the handful of names they need are gathered
in `laminax._jax_src_compat`, which says which library needs each.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

__all__ = ["JAX_API_VERSION", "install_as_jax", "is_installed"]

# The JAX release whose public API laminax implements (and whose jaxlib it runs on).
JAX_API_VERSION = "0.10.2"

_ALIAS = "jax"
_FACADE = "laminax"
_COMPAT_PREFIX = "jax._src"


def _facade() -> types.ModuleType:
    # Looked up by name, as every `jax.<path>` is: the alias sits beneath the facade that
    # re-exports `install_as_jax`, with no import back up into it.
    return importlib.import_module(_FACADE)


class _JaxModule(types.ModuleType):
    """The `jax` module of the alias: JAX's version, every other attribute from `laminax`."""

    def __getattr__(self, name: str):
        laminax = _facade()
        try:
            return getattr(laminax, name)
        except AttributeError:
            pass
        # `jax.core` before `import jax.core`: JAX's package imports its public submodules.
        try:
            return importlib.import_module(f"{_ALIAS}.{name}")
        except ImportError:
            raise AttributeError(
                f"module 'jax' (laminax {laminax.__version__}, JAX API {JAX_API_VERSION}) has "
                f"no attribute {name!r}: laminax does not implement it."
            ) from None

    def __dir__(self):
        laminax = _facade()
        return sorted(set(super().__dir__()) | set(dir(laminax)))


def _make_jax_module() -> types.ModuleType:
    laminax = _facade()
    module = _JaxModule(_ALIAS, laminax.__doc__)
    module.__version__ = JAX_API_VERSION
    module.__version_info__ = tuple(int(part) for part in JAX_API_VERSION.split("."))
    module.__path__ = []  # a package, so `import jax.numpy` asks the finder for submodules
    module.__all__ = list(getattr(laminax, "__all__", ()))
    module.__laminax_alias__ = True
    return module


class _AliasLoader(importlib.abc.Loader):
    """Hands back an existing laminax module, leaving its own identity (`__spec__`, ...) intact."""

    def __init__(self, module: types.ModuleType):
        self.module = module
        self._saved = {
            attr: module.__dict__[attr]
            for attr in ("__spec__", "__loader__", "__package__", "__file__", "__cached__")
            if attr in module.__dict__
        }

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # importlib stamped the `jax.*` spec onto the module: laminax's module keeps its own.
        if module.__name__ != _ALIAS:
            module.__dict__.update(self._saved)


class _JaxAliasFinder(importlib.abc.MetaPathFinder):
    """Resolves `jax` and `jax.<path>` to `laminax.<path>` (or a `jax._src` compatibility shim)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        module = self._resolve(fullname)
        if module is None:
            return None
        is_package = fullname == _ALIAS or hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(module), is_package=is_package
        )

    @staticmethod
    def _resolve(fullname: str) -> types.ModuleType | None:
        if fullname == _ALIAS:
            return _make_jax_module()
        if fullname == _COMPAT_PREFIX or fullname.startswith(_COMPAT_PREFIX + "."):
            # the compatibility shims load only for programs that reach into `jax._src`
            from laminax import _jax_src_compat

            return _jax_src_compat.module(fullname)
        target = _FACADE + fullname[len(_ALIAS) :]
        try:
            return importlib.import_module(target)
        except ModuleNotFoundError as err:
            if err.name is not None and target.startswith(err.name):
                return None  # laminax has no such module: `import jax.x` fails as JAX's would
            raise


_finder = _JaxAliasFinder()


def is_installed() -> bool:
    """Whether `install_as_jax()` has run in this process."""
    return _finder in sys.meta_path


def install_as_jax() -> types.ModuleType:
    """Makes `import jax` (and every `import jax.<sub>`) give laminax, from now on.

    Call it before anything imports `jax`. Idempotent. Returns the `jax` module.

    Raises:
      RuntimeError: real JAX was already imported in this process; the two cannot share it.

    Example:
      >>> import laminax
      >>> jax = laminax.install_as_jax()
      >>> import jax.numpy as jnp
      >>> jnp is laminax.numpy and jax.__version__ == "0.10.2"
      True
    """
    existing = sys.modules.get(_ALIAS)
    if existing is not None and not getattr(existing, "__laminax_alias__", False):
        where = getattr(existing, "__file__", None) or "an unknown location"
        raise RuntimeError(
            f"install_as_jax: the real JAX is already imported (from {where}). Install the "
            "laminax alias before anything imports jax: call laminax.install_as_jax() first, "
            "or run the program with `python -m laminax run script.py`."
        )
    if not is_installed():
        sys.meta_path.insert(0, _finder)
    return importlib.import_module(_ALIAS)

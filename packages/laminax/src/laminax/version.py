"""`jax.version`: the version of JAX's API that laminax implements (what libraries compare
`jax.version.__version__` and `jax.__version__` against); laminax's own release is
`laminax.__version__`."""

from jaxlib.version import __version__ as _jaxlib_version

from laminax._jax_alias import JAX_API_VERSION as __version__

_version = __version__
_version_as_tuple = tuple(int(part) for part in __version__.split("."))
# laminax runs on the jaxlib it was built against, the minimum JAX 0.10.2 requires too
_minimum_jaxlib_version = _jaxlib_version
_minimum_jaxlib_version_info = tuple(int(part) for part in _jaxlib_version.split(".")[:3])

__all__: list[str] = []

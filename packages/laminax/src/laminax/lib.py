"""`jax.lib`: in JAX 0.10.2 a module with no public names but `__version__`, the version of the
jaxlib underneath, which libraries compare (equinox's tests do). laminax runs on jaxlib too."""

from jaxlib.version import __version__ as __version__

__all__: list[str] = []

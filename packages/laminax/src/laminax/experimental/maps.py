"""laminax.experimental.maps: the seed-era home of `Mesh` and the `mesh(devices, axis_names)`
context manager (the resource environment `pjit` reads, `thread_resources.env.physical_mesh`),
for code written against it."""

import contextlib
import warnings

import numpy as np
from laminax_pjit import Mesh as Mesh
from laminax_pjit.internal import thread_resources as thread_resources


@contextlib.contextmanager
def mesh(devices, axis_names):
    """``with mesh(devices, axis_names):`` enters ``Mesh(devices, axis_names)`` as the
    resource environment (the seed's spelling of ``with Mesh(...):``)."""
    physical = Mesh(np.asarray(devices, dtype=object), axis_names)
    with warnings.catch_warnings():  # the seed's spelling is not the deprecated `with mesh:`
        warnings.simplefilter("ignore", DeprecationWarning)
        physical.__enter__()
    try:
        yield physical
    finally:
        physical.__exit__(None, None, None)


__all__ = ["Mesh", "mesh", "thread_resources"]

"""Small runtime queries of JAX's top level: process indices (and their old `host_*` names),
starting host copies early, and the environment report users attach to bug reports."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import warnings
from importlib import metadata
from typing import Any

import jaxlib
import numpy as np
from laminax_pytree import tree_leaves

from laminax_dispatch._backends import (
    device_count,
    devices,
    local_device_count,
    process_count,
    process_index,
)

__all__ = [
    "copy_to_host_async",
    "host_count",
    "host_id",
    "host_ids",
    "print_environment_info",
    "process_indices",
]


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of every process taking part in `backend`'s computations (`[0]` alone).

    Example:
      >>> process_indices()
      [0]
    """
    return list(range(process_count(backend)))


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"jax.{old} has been renamed to jax.{new}. This alias will eventually be "
                  "removed; please update your code.", UserWarning, stacklevel=3)


def host_id(backend: str | None = None) -> int:
    """`process_index` under its old name (warns, as JAX does)."""
    _renamed("host_id", "process_index")
    return process_index(backend)


def host_count(backend: str | None = None) -> int:
    """`process_count` under its old name (warns, as JAX does)."""
    _renamed("host_count", "process_count")
    return process_count(backend)


def host_ids(backend: str | None = None) -> list[int]:
    """`process_indices` under its old name (warns, as JAX does)."""
    _renamed("host_ids", "process_indices")
    return process_indices(backend)


def copy_to_host_async(x: Any) -> Any:
    """Starts copying every leaf of pytree `x` that has a host copy to make; returns `x`.

    A later `np.asarray` or `device_get` of those leaves then waits for less. Leaves without a
    ``copy_to_host_async`` method are left alone.
    """
    for leaf in tree_leaves(x):
        start = getattr(leaf, "copy_to_host_async", None)
        if start is not None:
            start()
    return x


def _nvidia_smi() -> str | None:
    try:
        return subprocess.check_output(["nvidia-smi"], stderr=subprocess.DEVNULL).decode()
    except (OSError, subprocess.SubprocessError):
        return None


def print_environment_info(return_string: bool = False) -> str | None:
    """Prints (or returns) versions, devices, the platform and the JAX_/XLA_ environment.

    Args:
      return_string: return the text instead of printing it.
    """
    try:
        version = metadata.version("laminax")
    except metadata.PackageNotFoundError:  # only the lower layers are installed
        version = metadata.version("laminax-dispatch")
    python_version = sys.version.replace("\n", " ")
    lines = [
        f"laminax: {version}",
        f"jaxlib: {jaxlib.__version__}",
        f"numpy:  {np.__version__}",
        f"python: {python_version}",
        f"device info: {devices()[0].device_kind}-{device_count()}, "
        f"{local_device_count()} local devices",
        f"process_count: {process_count()}",
        f"platform: {platform.uname()}",
    ]
    lines += [f"{k}={v}" for k, v in os.environ.items() if k.startswith(("JAX_", "XLA_"))]
    info = "\n".join(lines)
    smi = _nvidia_smi()
    if smi:
        info += "\n\n$ nvidia-smi\n" + smi
    if return_string:
        return info
    print(info)
    return None

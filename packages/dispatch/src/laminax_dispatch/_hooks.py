"""Functions of dispatch's upper modules that its lower modules call at run time.

Arrays (`_array`), jaxlib's argument placement (`_fast_path`) and the effect tokens (`_tokens`)
sit beneath `device_put`, which sits beneath `jit`; yet an array's rows, an unpickled array, a
token and a mis-placed argument each need `device_put`, and a resharding copy needs `jit`.
`_device_put` and `_jit` install their functions here at import (the package imports both), so
that the modules stack without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["device_put", "jit"]


def _not_installed(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("laminax_dispatch: import the package, not one of its modules alone")


device_put: Callable[..., Any] = _not_installed
jit: Callable[..., Any] = _not_installed

"""`platform_dependent`: code that differs per platform, chosen when the program is lowered.

`platform_index` is a primitive with no operands whose value is the position of the branch
that the platform running the program selects. Lowering for one platform makes it a constant;
lowering for several (an export with `platforms=(...)`) makes it a function of the module's
platform index argument. `platform_dependent` feeds it to `cond`, so the choice is made in the
compiled program, not in Python at tracing time (the program may be serialized and run on
another machine).
"""

from __future__ import annotations

import numpy as np

from laminax_core._avals import ShapedArray
from laminax_core._primitive import NO_OPERANDS, NOT_LINEAR, ZERO_TANGENT, define_primitive
from laminax_core.lax._control_flow.cond import _bind_cond

__all__ = ["platform_dependent"]
__all__ += ["platform_index_p"]


def platform_dependent(*args, default=None, **per_platform):
    """Applies the function given for the platform the program runs on (`cpu=`, `cuda=`,
    `tpu=`, `rocm=` ...), or `default` where none is given, to `args`.

    The platform is the one the program is lowered for; an export for several platforms
    carries every branch and picks one at run time. Functions given for several platforms
    are traced once.

    Example:
      >>> platform_dependent(np.float32(1), cpu=lambda x: x + 1, default=lambda x: x - 1)
      array(2., dtype=float32)
    """
    funs: list = []
    platforms: list[list[str]] = []
    for platform, fun in per_platform.items():
        if fun is None:
            continue
        if not callable(fun):
            raise TypeError(f"platform_dependent: the branch for {platform!r} must be callable, "
                            f"got {fun!r}")
        for i, seen in enumerate(funs):
            if seen is fun:
                platforms[i].append(platform.lower())
                break
        else:
            funs.append(fun)
            platforms.append([platform.lower()])
    branch_platforms: tuple = tuple(tuple(p) for p in platforms)
    if default is not None:
        funs.append(default)
        branch_platforms += (None,)
    if not funs:
        raise TypeError("platform_dependent needs at least one branch (a platform's or default)")
    index = platform_index_p.bind(platforms=branch_platforms)
    return _bind_cond(index, tuple(funs), args, "branch outputs")


def _branch_of(platforms: tuple, platform: str) -> int | None:
    """The branch `platform` selects: its own, else the default (`None` entry), else None."""
    for i, ps in enumerate(platforms):
        if ps is not None and platform in ps:
            return i
    for i, ps in enumerate(platforms):
        if ps is None:
            return i
    return None


def _reference(*, platforms):
    # the NumPy reference runs on the host: the cpu branch
    i = _branch_of(platforms, "cpu")
    if i is None:
        raise NotImplementedError(
            f"platform_dependent has no branch for platform cpu (branches for {platforms})")
    return np.int32(i)


platform_index_p = define_primitive(
    "platform_index",
    abstract_eval=lambda *, platforms: ShapedArray((), np.dtype(np.int32)),
    reference=_reference,
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=NO_OPERANDS,
)

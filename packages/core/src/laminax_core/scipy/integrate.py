"""`scipy.integrate.trapezoid`: integration by the trapezoidal rule."""

from __future__ import annotations

from laminax_core import numpy as jnp

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of `y` along `axis` by the trapezoidal rule, at sample points `x` or
    with uniform spacing `dx`."""
    return jnp.trapezoid(y, x, dx, axis)

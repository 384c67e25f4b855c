"""Helpers shared by the distribution modules: argument promotion and constants."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._avals import get_aval
from laminax_core.scipy._common import _inexact

__all__ = ["const", "promote", "promote_dtypes", "scaled", "where_nan", "where_neg_inf"]


def promote(name: str, *args):
    """The arguments as arrays of one inexact dtype, broadcast together (a list, even for one)."""
    out = _inexact(name, *args)
    return [out] if len(args) == 1 else out


def promote_dtypes(name: str, *args):
    """The arguments as arrays of one inexact dtype, shapes unchanged."""
    arrays = [_inexact(name, a) for a in args]
    dtype = dtypes.result_type(*arrays)
    return [lax.convert_element_type(a, dtype) for a in arrays]


def const(like, value):
    """`value` as a NumPy scalar of `like`'s dtype (keeps float32 programs in float32)."""
    return np.asarray(value, get_aval(like).dtype)


def where_neg_inf(condition, x):
    """`-inf` where `condition` holds (outside the support of a density), else `x`."""
    return jnp.where(condition, const(x, -np.inf), x)


def where_nan(condition, x):
    """NaN where `condition` holds (invalid parameters), else `x`."""
    return jnp.where(condition, const(x, np.nan), x)


def scaled(x, loc, scale):
    """`(x - loc) / scale`."""
    return lax.div(lax.sub(x, loc), scale)

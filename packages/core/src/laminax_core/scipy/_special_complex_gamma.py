"""`loggamma` and `gamma` for complex arguments: Lanczos' approximation (g = 7, 9 terms, GSL's
coefficients) with the reflection formula for Re z < 1/2, and, for `loggamma`, SciPy's branch
(the principal branch of log Gamma, continuous off the negative real axis) by first shifting z
to the right half plane with log Gamma(z) = log Gamma(z + n) - sum_k log(z + k)."""

from __future__ import annotations

import numpy as np

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core._avals import get_aval

__all__ = ["complex_gamma", "complex_loggamma"]

_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _lanczos_loggamma(z):
    dtype = get_aval(z).dtype
    reflect = jnp.real(z) < 0.5
    shifted = jnp.where(reflect, 1.0 - z, z) - 1.0
    coefficients = jnp.asarray(_LANCZOS, dtype=dtype)
    ks = jnp.arange(1, 9, dtype=dtype)
    series = coefficients[0] + jnp.sum(coefficients[1:] / (shifted[..., None] + ks), axis=-1)
    t = shifted + _LANCZOS_G + 0.5
    half_log_2pi = jnp.asarray(0.5 * np.log(2.0 * np.pi), dtype=dtype)
    value = half_log_2pi + (shifted + 0.5) * jnp.log(t) - t + jnp.log(series)
    # Gamma(z) Gamma(1 - z) = pi / sin(pi z); 1/2 keeps the unused branch finite
    safe = jnp.where(reflect, z, jnp.full_like(z, 0.5))
    reflected = jnp.log(jnp.asarray(np.pi, dtype=dtype)) - jnp.log(jnp.sin(np.pi * safe)) - value
    return jnp.where(reflect, reflected, value)


def _poles_and_safe(z):
    real = jnp.real(z)
    pole = (jnp.imag(z) == 0) & (real == jnp.floor(real)) & (real <= 0)
    unsafe = pole | jnp.isnan(z)
    return unsafe, jnp.where(unsafe, jnp.ones_like(z), z)


def complex_gamma(z):
    """Gamma(z) for complex `z` (NaN at the poles 0, -1, -2, ...).

    Example:
      >>> complex(complex_gamma(np.complex64(5)))  # doctest: +ELLIPSIS
      (24.0000...+0j)
    """
    unsafe, safe = _poles_and_safe(z)
    nan = jnp.asarray(complex(np.nan, np.nan), dtype=get_aval(z).dtype)
    return jnp.where(unsafe, nan, jnp.exp(_lanczos_loggamma(safe)))


def complex_loggamma(z):
    """The principal branch of log Gamma(z) for complex `z`, SciPy's `loggamma`.

    Example:
      >>> complex(complex_loggamma(np.complex64(5)))  # doctest: +ELLIPSIS
      (3.17805...+0j)
    """
    unsafe, safe = _poles_and_safe(z)
    steps = jnp.maximum(0, jnp.ceil(0.5 - jnp.real(safe)).astype(int))

    def body(state):
        k, total = state
        active = k < steps
        zk = jnp.where(active, safe + k, jnp.ones_like(safe))
        return k + 1, total + jnp.where(active, jnp.log(zk), jnp.zeros_like(total))

    _, logs = lax.while_loop(lambda s: jnp.any(s[0] < steps), body,
                             (0, jnp.zeros_like(safe)))
    value = _lanczos_loggamma(safe + steps) - logs
    nan = jnp.asarray(complex(np.nan, np.nan), dtype=get_aval(z).dtype)
    return jnp.where(unsafe, nan, value)

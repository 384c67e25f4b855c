"""laminax's `lax`: the primitive operations, with JAX's names, params and semantics.

Each primitive's block (wrapper, rules, registration) lives in the module of its family
(`_elementwise.py`, `_math.py`, `_structural.py`, `_reductions.py`, `_dot.py`, ...). This
namespace is the families' `__all__` together: a family lists a new function and its primitive
in its own `__all__`, and they appear here. The families stack without an import cycle; the few
operations a lower family needs from a higher one are installed into `_hooks.py`.
"""

from laminax_core._interpreters import lax_ops
from laminax_core.lax import (
    _approx_top_k,
    _associative_scan,
    _barriers,
    _bitwise,
    _collectives,
    _collectives_exchange,
    _control_flow,
    _convolution,
    _convolution_patches,
    _cumulative,
    _dot,
    _dot_algorithms,
    _elementwise,
    _fft,
    _indexing,
    _indexing_helpers,
    _joining,
    _linear_solve,
    _math,
    _platform,
    _products,
    _ragged_dot,
    _random_bits,
    _reductions,
    _scaled_dot,
    _shape_helpers,
    _shape_tuples,
    _slicing,
    _sorting,
    _special,
    _special_programs,
    _stage,
    _structural,
    _tokens,
    _windowed,
)

_FAMILIES = (
    _approx_top_k, _associative_scan, _barriers, _bitwise, _collectives, _collectives_exchange,
    _control_flow, _convolution, _convolution_patches, _cumulative, _dot, _dot_algorithms,
    _elementwise, _fft, _indexing, _indexing_helpers, _joining, _linear_solve, _math, _platform, _products,
    _ragged_dot, _random_bits, _reductions, _scaled_dot, _shape_helpers, _shape_tuples, _slicing, _sorting,
    _special, _special_programs, _stage, _structural, _tokens, _windowed,
)  # fmt: skip

# Public in their modules (shared between the families, or with the layers above through
# `laminax_core.internal`) but not part of JAX's `lax`.
_NOT_LAX = frozenset({
    "algorithm_compute_types", "apply_counted", "as_algorithm", "betainc_program", "bessel_i0e_program", "broadcast_in_dim_for_select",
    "canonicalize_precision", "conv_general_vjp_lhs_padding", "default_fill_value",
    "dilate_shape", "empty2_p", "igamma_grad_a_program", "igamma_program", "igammac_program",
    "install_take_along_axis", "ragged_dot_program", "random_gamma_grad_program", "scaled_dot_decomposition", "scaled_dot_p",
    "take_along_axis", "NoDCEEffect",
})  # fmt: skip


def _gather_namespace() -> list[str]:
    found: dict[str, str] = {}
    for family in _FAMILIES:
        for name in family.__all__:
            if name in _NOT_LAX:
                continue
            if name in found:
                raise ImportError(f"lax.{name} is exported by both {found[name]} and "
                                  f"{family.__name__}: keep it in one family's __all__")
            found[name] = family.__name__
            globals()[name] = getattr(family, name)
    return sorted(found)


__all__ = _gather_namespace()

from laminax_core.lax import linalg as linalg  # noqa: E402 (uses the families above)

__all__ += ["linalg"]

# the interpreters beneath lax emit these operations themselves (zeros, tangent sums, batch moves)
lax_ops.install(
    add_any=_elementwise.add_any, broadcast_in_dim=_structural.broadcast_in_dim,
    convert_element_type=_elementwise.convert_element_type,
    reduce_sum=_reductions.reduce_sum, transpose=_structural.transpose,
)

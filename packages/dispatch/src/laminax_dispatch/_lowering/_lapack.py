"""LAPACK on CPU through jaxlib's XLA FFI kernels, as JAX 0.10.2 calls them.

jaxlib ships LAPACK drivers as typed-FFI handlers in `jaxlib.cpu._lapack` (`lapack_sgetrf_ffi`,
`lapack_zheevd_ffi`, ...: one per routine and dtype, the letter s/d/c/z naming the dtype).
`register_lapack_targets` loads LAPACK (`_lapack.initialize()`, which takes the routines from
SciPy's bundled LAPACK) and registers every handler with XLA's CPU platform, once, the first time
a lowering rule emits one of these calls, so before any executable that uses them compiles.

`lapack_call` builds the `stablehlo.custom_call`. The kernels read and write column-major
(Fortran) matrices, so the operands and results of the matrix rank carry the layout
`(n-2, n-1, n-3, ..., 0)` (minor to major: rows fastest, then columns, then the batch
dimensions); lower-rank operands (pivots, taus, info) are row-major. Attributes the kernels read
(`uplo`, `mode`, ...) go in `mhlo.backend_config` as a dictionary, with `api_version` 1 and an
empty `backend_config` string, which XLA turns into a typed FFI call.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from jaxlib import xla_client
from jaxlib.cpu import _lapack
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from laminax_dispatch._lowering._dynamic import is_static, lowering_platforms
from laminax_dispatch._lowering._shardings import use_shardy_partitioner
from laminax_dispatch._lowering._core import compare, full_like
from laminax_dispatch._mlir import aval_to_ir_type

__all__ = [
    "char_attr",
    "info_is",
    "lapack_call",
    "nan_unless",
    "register_lapack_targets",
    "solver_call",
    "target_name",
]

_lock = threading.Lock()
_registered = False

# LAPACK's routine prefix per dtype
_PREFIX = {
    np.dtype(np.float32): "s",
    np.dtype(np.float64): "d",
    np.dtype(np.complex64): "c",
    np.dtype(np.complex128): "z",
}


def register_lapack_targets() -> None:
    """Loads LAPACK and registers jaxlib's LAPACK FFI handlers with XLA's CPU platform, once."""
    global _registered
    if _registered:
        return
    with _lock:
        if _registered:
            return
        _lapack.initialize()
        for name, capsule in _lapack.registrations().items():
            # api_version 1 registers a typed XLA FFI handler (0 would be the legacy ABI)
            api_version = int(name.endswith("_ffi"))
            xla_client.register_custom_call_target(
                name, capsule, platform="cpu", api_version=api_version
            )
        _registered = True


def target_name(routine: str, dtype, op_name: str) -> str:
    """`lapack_<s|d|c|z><routine>_ffi` for `dtype`, or a TypeError naming `op_name`."""
    prefix = _PREFIX.get(np.dtype(dtype))
    if prefix is None:
        raise TypeError(
            f"{op_name}: LAPACK on CPU supports float32, float64, complex64 and complex128; got "
            f"{np.dtype(dtype).name}. Convert first, for example x.astype(jnp.float32)."
        )
    return f"lapack_{prefix}{routine}_ffi"


def char_attr(c: str) -> ir.Attribute:
    """A LAPACK character option (`'L'`, `'V'` ...) as the ui8 attribute the kernels read."""
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), ord(c))


def _layout(ndim: int, column_major: bool) -> ir.Attribute:
    if column_major:
        order = (ndim - 2, ndim - 1, *range(ndim - 3, -1, -1))
    else:
        order = tuple(reversed(range(ndim)))
    return ir.DenseIntElementsAttr.get(np.asarray(order, np.int64), type=ir.IndexType.get())


def lapack_call(
    target: str,
    operands: Sequence[ir.Value],
    avals_in: Sequence,
    avals_out: Sequence,
    *,
    aliases: dict[int, int] | None = None,
    **attrs: ir.Attribute,
) -> list[ir.Value]:
    """Emits a `stablehlo.custom_call` of the LAPACK FFI handler `target`.

    Args:
      target: the handler's name (`target_name(...)`).
      operands, avals_in: the operands and their avals.
      avals_out: the avals of the kernel's results (including `info`, where it has one).
      aliases: operand index -> result index the kernel writes in place.
      **attrs: the kernel's attributes (`uplo=char_attr('L')` ...).

    Returns:
      The results, one `ir.Value` per entry of `avals_out`.
    """
    others = [p for p in lowering_platforms() if p != "cpu"]
    if others:  # LAPACK kernels exist on the host only; JAX's error for a missing lowering
        raise NotImplementedError(
            f"MLIR translation rule for the LAPACK kernel '{target}' not found for platforms "
            f"{others}: laminax lowers this linear algebra for cpu only (cholesky, lu, qr, "
            "eigh, svd and triangular_solve also for cuda and rocm; give other platforms "
            "their own code with lax.platform_dependent)")
    register_lapack_targets()
    return _custom_call(target, operands, avals_in, avals_out, aliases, attrs)


def solver_call(target, operands, avals_in, avals_out, *, aliases=None,
                column_major: bool = True, num_non_batch_dims: int = 2, **attrs):
    """A GPU solver kernel's `stablehlo.custom_call` (cusolver / hipsolver, for a module
    lowered for cuda or rocm) as JAX writes it: LAPACK's layouts (row-major throughout
    where not `column_major`), and the batch dimensions' count as a frontend attribute."""
    results = _custom_call(target, operands, avals_in, avals_out, aliases, attrs,
                           column_major=column_major)
    if any(not is_static(a.shape) for a in (*avals_in, *avals_out)):
        return results  # as JAX: a symbolic shape makes the call not batch-partitionable
    batch = max(a.ndim for a in avals_in) - num_non_batch_dims
    op = results[0].owner
    op.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(
        {"num_batch_dims": ir.StringAttr.get(str(batch))})
    if use_shardy_partitioner.value:
        op.attributes["sdy.sharding_rule"] = ir.Attribute.parse(
            _sharding_rule(batch, avals_in, avals_out))
    return results


def _sharding_rule(batch: int, avals_in, avals_out) -> str:
    """JAX's Shardy rule for a batch-partitionable kernel: the batch dimensions share one
    factor each across operands and results, every other dimension has its own."""
    sizes: list[int] = []
    shared: list[int] = []

    def factors(aval) -> str:
        own = aval.ndim - batch
        picked = []
        if batch and own >= 0:
            for k in range(batch):
                if len(shared) <= k:
                    shared.append(len(sizes))
                    sizes.append(aval.shape[k])
                picked.append(shared[k])
        for d in range(max(own, 0)):
            picked.append(len(sizes))
            sizes.append(aval.shape[aval.ndim - own + d])
        return "[" + ", ".join(_factor(f) for f in picked) + "]"

    lhs = ", ".join(factors(a) for a in avals_in)
    rhs = ", ".join(factors(a) for a in avals_out)
    bounds = ", ".join(f"{_factor(f)}={n}" for f, n in enumerate(sizes))
    return f"#sdy.op_sharding_rule<({lhs})->({rhs}) {{{bounds}}}, custom>"


def _factor(k: int) -> str:
    # Shardy's factor names: i, j, ..., z, then z_1, z_2 ...
    return chr(ord("i") + k) if k < 18 else f"z_{k - 17}"


def _custom_call(target, operands, avals_in, avals_out, aliases, attrs, column_major=True):
    matrix_rank = max(a.ndim for a in avals_in) if column_major else -1
    result_types = [aval_to_ir_type(a) for a in avals_out]
    attributes = {
        "call_target_name": ir.StringAttr.get(target),
        "has_side_effect": ir.BoolAttr.get(False),
        "backend_config": ir.StringAttr.get(""),
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        "called_computations": ir.ArrayAttr.get([]),
        "operand_layouts": ir.ArrayAttr.get(
            [_layout(a.ndim, a.ndim == matrix_rank) for a in avals_in]),
        "result_layouts": ir.ArrayAttr.get(
            [_layout(a.ndim, a.ndim == matrix_rank) for a in avals_out]
        ),
    }
    if aliases:
        attributes["output_operand_aliases"] = ir.ArrayAttr.get(
            [
                hlo.OutputOperandAlias.get(
                    output_tuple_indices=[out] if len(avals_out) > 1 else [],
                    operand_index=operand,
                    operand_tuple_indices=[],
                )
                for operand, out in aliases.items()
            ]
        )
    op = hlo.CustomCallOp.build_generic(
        results=result_types, operands=list(operands), attributes=attributes
    )
    op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(attrs)
    return list(op.results)


def nan_unless(ok: ir.Value, x: ir.Value, aval, batch_ndim: int) -> ir.Value:
    """`x` where `ok` (a bool per matrix of the batch), NaN elsewhere (NaN + NaN j if complex):
    how JAX reports a failed factorization."""
    nan = np.nan + np.nan * 1j if np.issubdtype(aval.dtype, np.complexfloating) else np.nan
    which = hlo.broadcast_in_dim(
        aval_to_ir_type(aval.update(dtype=np.dtype(np.bool_))), ok, list(range(batch_ndim))
    )
    return hlo.select(which, x, full_like(nan, aval))


def info_is(info: ir.Value, info_aval, direction: str) -> ir.Value:
    """`info <direction> 0` per matrix (`EQ`: success; `GE`: no illegal argument)."""
    return compare(info, full_like(0, info_aval), direction, np.int32)

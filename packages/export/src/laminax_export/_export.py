"""`export(fun_jit)(*args_specs)`: lower a jitted function for given argument types into an
`Exported` whose module follows JAX 0.10.2's export calling convention.

The module is dispatch's lowering of the traced jaxpr with three differences from `jit`'s:
every constant is embedded (an artifact carries no side buffers), unused inputs are dropped
and recorded in `module_kept_var_idx`, and the module says `jax.uses_shape_polymorphism`.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Sequence

import numpy as np
from jaxlib import _jax
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _stablehlo
from laminax_core.config import config
from laminax_core.internal import AbstractRef, ClosedJaxpr, dce_jaxpr, ordered_effects
from laminax_dispatch import default_backend, devices
from laminax_dispatch.internal import JitFunction, lower_jaxpr, module_to_bytecode
from laminax_pytree import keystr, tree_flatten_with_path, tree_structure, tree_unflatten

from laminax_export._dimvars import dim_vars_of, wrap_main
from laminax_export._exported import (
    DisabledSafetyCheck,
    Exported,
    maximum_supported_calling_convention_version,
    trust_module,
)
from laminax_export._vjp import vjp_jaxpr

__all__ = ["default_export_platform", "export", "export_jaxpr", "module_to_artifact"]

# Custom calls whose ABI XLA and jaxlib keep stable, so that a module calling them may be
# stored (JAX's allow-list for the targets laminax lowers to on CPU).
_STABLE_CUSTOM_CALLS = frozenset({
    "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement",
    "cu_threefry2x32", "cu_threefry2x32_ffi", "lapack_sgeqrf_ffi", "lapack_dgeqrf_ffi",
    "lapack_cgeqrf_ffi", "lapack_zgeqrf_ffi", "lapack_sorgqr_ffi", "lapack_dorgqr_ffi",
    "lapack_cungqr_ffi", "lapack_zungqr_ffi", "lapack_ssyevd_ffi", "lapack_dsyevd_ffi",
    "lapack_cheevd_ffi", "lapack_zheevd_ffi", "lapack_sgeev_ffi", "lapack_dgeev_ffi",
    "lapack_cgeev_ffi", "lapack_zgeev_ffi", "lapack_sgesdd_ffi", "lapack_dgesdd_ffi",
    "lapack_cgesdd_ffi", "lapack_zgesdd_ffi", "lapack_sgetrf_ffi", "lapack_dgetrf_ffi",
    "lapack_cgetrf_ffi", "lapack_zgetrf_ffi", "lapack_spotrf_ffi", "lapack_dpotrf_ffi",
    "lapack_cpotrf_ffi", "lapack_zpotrf_ffi", "blas_strsm_ffi", "blas_dtrsm_ffi",
    "blas_ctrsm_ffi", "blas_ztrsm_ffi", "lapack_sgehrd_ffi", "lapack_dgehrd_ffi",
    "lapack_ssytrd_ffi", "lapack_dsytrd_ffi", "LuPivotsToPermutation", "ApproxTopK",
    "stablehlo.dynamic_approx_top_k", "stablehlo.dynamic_reduce_window", "tpu_custom_call", "mhlo.erf", "shape_assertion",
    "Eigh", "Qr", "ProductOfElementaryHouseholderReflectors", "X64Combine", "X64SplitLow",
    "X64SplitHigh", "xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape",
    "xla.sdy.FuncResultSharding", "local_to_global_shape", "global_to_local_shape",
    # the rest of JAX's CPU kernels, and its GPU solver kernels (linear algebra exported for
    # cuda or rocm)
    "lapack_chetrd_ffi", "lapack_zhetrd_ffi", "lapack_cgehrd_ffi", "lapack_zgehrd_ffi",
    "lapack_sgees_ffi", "lapack_dgees_ffi", "lapack_cgees_ffi", "lapack_zgees_ffi",
    "lapack_strsm_ffi", "lapack_dtrsm_ffi", "lapack_ctrsm_ffi", "lapack_ztrsm_ffi",
    "lapack_sgtsv_ffi", "lapack_dgtsv_ffi", "lapack_cgtsv_ffi", "lapack_zgtsv_ffi",
    "cu_lu_pivots_to_permutation", "cusolver_getrf_ffi", "hip_lu_pivots_to_permutation",
    "hipsolver_getrf_ffi", "cusolver_geqrf_ffi", "cusolver_orgqr_ffi", "hipsolver_geqrf_ffi",
    "hipsolver_orgqr_ffi", "cusolver_potrf_ffi", "hipsolver_potrf_ffi", "cusolver_syevd_ffi",
    "hipsolver_syevd_ffi", "cusolver_gesvd_ffi", "cusolver_gesvdj_ffi", "hipsolver_gesvd_ffi",
    "hipsolver_gesvdj_ffi", "hipsolver_gesdd_ffi", "cusolver_sytrd_ffi", "hipsolver_sytrd_ffi",
    "cusparse_gtsv2_ffi", "hip_threefry2x32_ffi", "LuDecomposition",
})

_lowering_lock = threading.Lock()


def default_export_platform() -> str:
    """The platform `export` lowers for when given none: the default backend's."""
    return default_backend()


def export(fun_jit, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = ()):
    """Returns `do_export(*args_specs, **kwargs_specs) -> Exported` for a jitted function.

    Args:
      fun_jit: the result of `jit(f, ...)` (static arguments, donation and shardings apply).
      platforms: the platforms to lower for; by default the default backend's.
      disabled_checks: safety checks to skip (`DisabledSafetyCheck.custom_call(name)`).
    """
    if not isinstance(fun_jit, JitFunction):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")
    return _exporter(fun_jit, platforms, tuple(disabled_checks))


def _exporter(fun_jit, platforms, disabled_checks):
    if platforms is None:
        platforms = (default_export_platform(),)
    # any platform may be lowered for, present here or not (JAX checks no names either)
    platforms = tuple(_canonical_platform(p) for p in platforms)
    for check in disabled_checks:
        if not isinstance(check, DisabledSafetyCheck):
            raise TypeError(f"disabled_checks must hold DisabledSafetyCheck values, got {check!r}")

    def do_export(*args_specs, **kwargs_specs) -> Exported:
        traced = fun_jit.trace(*args_specs, **kwargs_specs)
        out_tree = tree_structure(traced.out_info)
        # the placement jit decided for this signature (devices, in/out shardings); the
        # stages objects carry their cache entry, which holds it
        placement = traced._entry.placement
        return export_jaxpr(
            traced.jaxpr, name=traced.fun_name, in_tree=traced.in_tree, out_tree=out_tree,
            platforms=platforms, disabled_checks=disabled_checks, placement=placement,
            donated=traced._entry.donated,
        )

    return do_export


def _canonical_platform(p: str) -> str:
    p = str(p).lower()
    return "cuda" if p == "gpu" else p


def export_jaxpr(closed: ClosedJaxpr, *, name: str, in_tree, out_tree, platforms,
                 disabled_checks=(), keep_unused: bool = False,
                 check_custom_calls: bool = True, in_avals=None, out_avals=None,
                 placement=None, donated=None) -> Exported:
    """Exports a closed jaxpr with the given trees (the common path of `export`, the seed's
    `export` and the vjp exports). `check_custom_calls=False` (the seed's
    `strict_checks=False`) allows every custom call."""
    if any(isinstance(a, AbstractRef) for a in closed.in_avals):
        # as JAX's: an exported function's calling convention has no references
        raise NotImplementedError(
            f"export of {name}: the function takes mutable array references (jax.new_ref); "
            "export one that takes their values and returns the new ones.")
    jaxpr = closed.jaxpr
    n_in = len(jaxpr.invars)
    dim_vars = dim_vars_of(closed.in_avals)
    # symbolic shapes: every input stays, its shape may define a dimension variable
    pruned, used = dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars),
                             instantiate=[keep_unused or bool(dim_vars)] * n_in)
    kept = tuple(i for i, u in enumerate(used) if u)
    live = {id(v) for v in pruned.constvars}
    # an artifact carries no side buffers: every constant goes into the module
    consts = [np.asarray(c) for v, c in zip(jaxpr.constvars, closed.consts, strict=True)
              if id(v) in live]
    ordered = [e for e in closed.effects if ordered_effects.contains(e)]
    unordered = [e for e in closed.effects if not ordered_effects.contains(e)]
    biggest = max((c.nbytes for c in consts), default=0)
    in_shardings, out_shardings, program_devices = _shardings(placement, n_in, len(jaxpr.outvars))
    with _lowering_lock:
        previous = config.read("jax_embedded_constants_max_bytes")
        config.update("jax_embedded_constants_max_bytes", max(previous, biggest))
        try:
            lowering = lower_jaxpr(
                ClosedJaxpr(pruned, consts), name=_module_name(name), fun_name=name,
                ordered=ordered, devices=program_devices,
                aliases=_aliases(kept, donated, closed.in_avals, closed.out_avals),
                in_shardings=[in_shardings[i] for i in kept] if len(program_devices) > 1 else None,
                out_shardings=out_shardings if len(program_devices) > 1 else None,
                dim_vars=dim_vars, platforms=platforms,
            )
        finally:
            config.update("jax_embedded_constants_max_bytes", previous)
    if lowering.host_callbacks:
        # JAX's error type and words: a module calling Python functions of this process
        raise NotImplementedError(
            "serialization of host_callbacks is not yet implemented: "
            f"{name} calls Python on the host (pure_callback, io_callback, debug.print ...), "
            "which an artifact cannot carry. Export the function without its callbacks.")
    module = lowering.module
    multi = len(platforms) > 1
    # JAX marks a multi-platform module polymorphic: its platform index is a global constant
    _annotate(module, out_tree, len(ordered), bool(dim_vars) or multi)
    if dim_vars or multi or ordered:
        wrap_main(module, [closed.in_avals[i] for i in kept], dim_vars, len(ordered), multi)
    if check_custom_calls:
        _check_custom_calls(module, disabled_checks)
    in_avals = tuple(a.strip_weak_type() for a in (in_avals or closed.in_avals))
    out_avals = tuple(a.strip_weak_type() for a in (out_avals or closed.out_avals))
    return Exported(
        fun_name=name, in_tree=in_tree, in_avals=in_avals, out_tree=out_tree,
        out_avals=out_avals, in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(out_avals), nr_devices=len(program_devices),
        platforms=tuple(platforms),
        ordered_effects=tuple(ordered), unordered_effects=tuple(unordered),
        disabled_safety_checks=tuple(disabled_checks),
        mlir_module_serialized=module_to_artifact(module),
        calling_convention_version=maximum_supported_calling_convention_version,
        module_kept_var_idx=kept, uses_global_constants=bool(dim_vars),
        _get_vjp=_vjp_exporter(closed, name, in_tree, out_tree, platforms, disabled_checks,
                               check_custom_calls, placement),
        _in_named_shardings=tuple(_named(s) for s in in_shardings),
        _out_named_shardings=tuple(_named(s) for s in out_shardings),
    )


def _aliases(kept, donated, in_avals, out_avals) -> dict[int, int]:
    """Donated kept input (position among main's inputs) -> the first output of its shape and
    dtype not yet taken: what main's `tf.aliasing_output` says, as jit's lowering does."""
    aliases, taken = {}, set()
    for position, leaf in enumerate(kept):
        if not donated or not donated[leaf]:
            continue
        a = in_avals[leaf]
        for o, out in enumerate(out_avals):
            if o not in taken and (out.shape, out.dtype) == (a.shape, a.dtype):
                aliases[position] = o
                taken.add(o)
                break
    return aliases


def _shardings(placement, n_in: int, n_out: int):
    """(one sharding or None per input, per output, the devices) of a jit placement; a
    one-device placement exports as unsharded."""
    if placement is None or len(placement.devices) <= 1:
        return [None] * n_in, [None] * n_out, (devices()[0],)
    return list(placement.in_shardings), list(placement.out_shardings), tuple(placement.devices)


def _named(sharding):
    """A sharding as the artifact records it: a NamedSharding (mesh and spec), or None."""
    if sharding is None:
        return None
    if not (hasattr(sharding, "mesh") and hasattr(sharding, "spec")):
        raise ValueError(
            f"export records shardings as NamedShardings (a mesh and a PartitionSpec), as JAX "
            f"does; got {sharding!r}. Give jit NamedSharding in/out shardings.")
    return sharding


def _module_name(name: str) -> str:
    # JAX's: `<lambda>` becomes `_lambda`
    return "jit_" + name.replace("<", "_").replace(">", "")


def _annotate(module: ir.Module, out_tree, num_tokens: int, polymorphic: bool = False) -> None:
    """JAX's attributes on an exported module: `jax.uses_shape_polymorphism`, and results
    named by their path in the output tree (`result[1]['a']`)."""
    with module.context:
        module.operation.attributes["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(polymorphic)
        main = next(op for op in module.body.operations
                    if ir.StringAttr(op.attributes["sym_name"]).value == "main")
        placeholders = tree_unflatten(out_tree, list(range(out_tree.num_leaves)))
        paths = ["result" + keystr(p) for p, _ in tree_flatten_with_path(placeholders)[0]]
        old = list(ir.ArrayAttr(main.attributes["res_attrs"]))
        new = old[:num_tokens]
        for attrs, path in zip(old[num_tokens:], paths, strict=True):
            entries = {a.name: a.attr for a in ir.DictAttr(attrs)}
            entries["jax.result_info"] = ir.StringAttr.get(path)
            new.append(ir.DictAttr.get(entries))
        main.attributes["res_attrs"] = ir.ArrayAttr.get(new)


def _check_custom_calls(module: ir.Module, disabled_checks) -> None:
    """Refuses custom calls whose ABI is not known to be stable (JAX's safety check), unless
    a `DisabledSafetyCheck.custom_call(target)` allows them."""
    allowed = {c.is_custom_call() for c in disabled_checks}
    bad = []

    def visit(op):
        if op.name == "stablehlo.custom_call":
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if target not in _STABLE_CUSTOM_CALLS and target not in allowed:
                bad.append(target)
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    visit(inner.operation)

    visit(module.operation)
    if bad:
        if any("callback" in t for t in bad):
            raise ValueError(
                "Cannot serialize code with custom calls whose targets have no compatibility "
                f"guarantees: {sorted(set(bad))}. Host callbacks (pure_callback, io_callback, "
                "debug.print) call Python functions of this process and cannot be exported."
            )
        raise ValueError(
            "Cannot serialize code with custom calls whose targets have no compatibility "
            f"guarantees: {sorted(set(bad))}. Examine the module to see where they come from; "
            "pass disabled_checks=[DisabledSafetyCheck.custom_call(target)] to export anyway."
        )


def module_to_artifact(module: ir.Module) -> bytes:
    """The module as a portable StableHLO artifact (VHLO), for a consumer at least a month
    old, as JAX writes it."""
    target = _stablehlo.get_version_from_compatibility_requirement(
        _stablehlo.StablehloCompatibilityRequirement.WEEK_4)
    artifact = bytes(_jax.mlir.serialize_portable_artifact(module_to_bytecode(module), target,
                                                           True))
    trust_module(artifact)
    return artifact


def _vjp_exporter(closed, name, in_tree, out_tree, platforms, disabled_checks, check,
                  placement):
    def get_vjp(_exp):
        vjp_closed, vjp_in_tree, vjp_out_tree, vjp_in_avals, vjp_out_avals = vjp_jaxpr(closed)
        return export_jaxpr(
            vjp_closed, name=f"{name}_vjp", in_tree=vjp_in_tree, out_tree=vjp_out_tree,
            platforms=platforms, disabled_checks=disabled_checks, keep_unused=True,
            check_custom_calls=check, in_avals=vjp_in_avals, out_avals=vjp_out_avals,
            placement=_vjp_placement(placement, len(vjp_in_avals), len(vjp_out_avals)),
        )

    return get_vjp


def _vjp_placement(placement, n_in: int, n_out: int):
    """The backward pass runs on the primal's devices, with its shardings unspecified (the
    partitioner chooses), as JAX's vjp export does."""
    if placement is None or len(placement.devices) <= 1:
        return None
    return dataclasses.replace(placement, in_shardings=(None,) * n_in,
                               out_shardings=(None,) * n_out)

"""Calling an `Exported` from laminax code: the `call_exported` primitive.

Its abstract evaluation checks the arguments against the exported signature (JAX's rank,
dtype and shape messages); its lowering copies the artifact's functions into the module
being built (renamed, private) and calls its `main`, so an exported function runs eagerly
(through dispatch's one-equation programs) and inside any jit alike. Under differentiation
the exported backward pass (`Exported.vjp()`) is used, through `custom_vjp`.
"""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func
from jaxlib.mlir.dialects import stablehlo as hlo
import numpy as np
from laminax_core import custom_vjp, dtypes
from laminax_core.internal import DimExpr, Primitive, ShapedArray
from laminax_dispatch import default_backend
from laminax_dispatch.internal import (
    PLATFORM_INDEX,
    aval_to_ir_type,
    dim_values,
    ir_constant,
    lowering_platforms,
    register_lowering,
)
from laminax_pytree import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten

from laminax_export._dimvars import dim_vars_of, solve_concrete
from laminax_export._exported import (
    DisabledSafetyCheck,
    Exported,
    install_method,
    parse_artifact,
)
from laminax_export._vjp import differentiable, float0_as_bool

__all__ = ["call_exported", "call_exported_p"]

call_exported_p = Primitive("call_exported")
call_exported_p.multiple_results = True


def _abstract_eval(*avals, exported: Exported):
    env = _check_avals(avals, exported) or {}
    # the artifact's effects are the call's: ordered ones thread tokens through its main
    effects = {*exported.ordered_effects, *exported.unordered_effects}
    return [float0_as_bool(ShapedArray(
        tuple(d.evaluate(env) if isinstance(d, DimExpr) else d for d in a.shape), a.dtype))
        for a in exported.out_avals], effects


def _check_avals(avals, exported: Exported):
    """Checks the call's avals (JAX's rank, dtype, shape messages); for a polymorphic
    signature, solves its dimension variables from them (None when there are none)."""
    for i, (want, got) in enumerate(zip(exported.in_avals, avals, strict=True)):
        want = float0_as_bool(want)
        where = _arg_descriptor(exported, i)
        if len(want.shape) != len(got.shape):
            raise ValueError(
                f"Rank mismatch for {where}: expected {want.shape} and called with {got.shape}")
        if want.dtype != got.dtype:
            raise ValueError(
                f"Dtype mismatch for {where}: expected {want.dtype} and called with {got.dtype}")
        for d, (w, g) in enumerate(zip(want.shape, got.shape)):
            if not isinstance(w, DimExpr) and w != g:
                raise ValueError(
                    f"Shape mismatch for {where}.shape[{d}] (expected same constant): "
                    f"expected {want.shape} and called with {got.shape}")
    if not dim_vars_of(exported.in_avals):
        return None
    return solve_concrete(exported.in_avals, [a.shape for a in avals])


call_exported_p.def_effectful_abstract_eval(_abstract_eval)
call_exported_p.print_params = lambda params: {"exported": params["exported"].fun_name}


def _arg_descriptor(exported: Exported, i: int) -> str:
    placeholders = tree_unflatten(exported.in_tree, list(range(exported.in_tree.num_leaves)))
    paths = [p for p, _ in tree_flatten_with_path(placeholders)[0]]
    if i < len(paths) and paths[i]:
        (args_or_kwargs, *rest) = paths[i]
        head = "args" if getattr(args_or_kwargs, "idx", 1) == 0 else "kwargs"
        return f"{head}{keystr(tuple(rest))}"
    return f"args[{i}]"


def _check_platform(exported: Exported, here=None) -> None:
    if here is None:
        here = default_backend()
        here = ("cuda" if here == "gpu" else here,)
    if all(p in exported.platforms for p in here) or DisabledSafetyCheck.platform() in (
            exported.disabled_safety_checks):
        return
    raise ValueError(
        f"Function '{exported.fun_name}' was exported for platforms '{exported.platforms}' "
        f"but it is used on '{here}'. Export it for this platform, or export it with "
        "disabled_checks=[DisabledSafetyCheck.platform()] to skip this check."
    )


def _platform_index(exported: Exported) -> list:
    """The artifact's platform index argument (none for a single platform): the position of
    the platform being lowered for, or, lowering for several, a case mapping this module's
    platform index to the artifact's."""
    if len(exported.platforms) <= 1:
        return []
    here = lowering_platforms()
    _check_platform(exported, here)
    # with the platform check disabled an absent platform runs the first one's code
    where = [exported.platforms.index(p) if p in exported.platforms else 0 for p in here]
    if len(here) == 1:
        return [ir_constant(np.int32(where[0]))]
    index_type = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    case = hlo.CaseOp([index_type], dim_values()[PLATFORM_INDEX], len(here))
    for k, w in enumerate(where):
        with ir.InsertionPoint(case.regions[k].blocks.append()):
            hlo.return_([ir_constant(np.int32(w))])
    return [case.result]


def _lowering(ctx, *args, exported: Exported):
    mctx = ctx.module_context
    module = mctx.module
    sub = parse_artifact(exported.mlir_module_serialized, module.context)
    n_devices = max(len(getattr(ctx.axis_context, "devices", ())), 1)
    if exported.nr_devices != n_devices and exported.nr_devices != 1:
        raise ValueError(
            f"Function {exported.fun_name} was exported for {exported.nr_devices} devices and "
            f"is called in a context with {n_devices} devices. Call it with arguments placed "
            f"on {exported.nr_devices} devices (device_put them with the exported shardings)."
        )
    renames = {}
    ops = list(sub.body.operations)
    for op in ops:
        if "sym_name" in op.attributes:
            old = ir.StringAttr(op.attributes["sym_name"]).value
            renames[old] = mctx.unique_symbol(f"call_exported_{exported.fun_name}_{old}")
    with module.context:
        for old, new in renames.items():
            ir.SymbolTable.replace_all_symbol_uses(old, new, sub.operation)
        for op in ops:
            if "sym_name" in op.attributes:
                old = ir.StringAttr(op.attributes["sym_name"]).value
                op.attributes["sym_name"] = ir.StringAttr.get(renames[old])
                op.attributes["sym_visibility"] = ir.StringAttr.get("private")
        main = next(op for op in ops if ir.StringAttr(op.attributes["sym_name"]).value
                    == renames["main"])
        for op in ops:
            module.body.append(op)
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        kept = [args[i] for i in exported.module_kept_var_idx]
        tokens = [ctx.tokens_in[e] for e in exported.ordered_effects]
        n_tokens = len(tokens)
        index = _platform_index(exported)
        # a polymorphic main takes dynamic shapes: the call converts to them and back, and
        # the module is refined to the concrete shapes before compiling (dispatch's compile)
        kept = [x if x.type == t else hlo.convert(t, x)
                for x, t in zip(kept, list(ftype.inputs)[len(index) + n_tokens:], strict=True)]
        call = func.CallOp(list(ftype.results), ir.FlatSymbolRefAttr.get(renames["main"]),
                           [*index, *tokens, *kept])
        results = list(call.results)
        if dim_vars_of(exported.in_avals):
            module.operation.attributes["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(True)
            results[n_tokens:] = [
                r if r.type == aval_to_ir_type(a) else hlo.convert(aval_to_ir_type(a), r)
                for r, a in zip(results[n_tokens:], ctx.avals_out, strict=True)]
    n_tokens = len(tokens)
    if n_tokens:
        ctx.tokens_out = {**ctx.tokens_in,
                          **dict(zip(exported.ordered_effects, results[:n_tokens], strict=True))}
    return results[n_tokens:]


register_lowering(call_exported_p, _lowering)


def call_exported(exported: Exported):
    """Returns a function of the exported signature's `(*args, **kwargs)` that runs it."""
    if not isinstance(exported, Exported):
        raise ValueError(f"call_exported expects an Exported, got {type(exported).__name__}")

    def flat_call(*leaves):
        # float0 values (cotangents of non-float values) enter the module as bool arrays
        leaves = [np.zeros(np.shape(x), bool) if _is_float0(x) else x for x in leaves]
        return call_exported_p.bind(*leaves, exported=exported)

    # always differentiable, as JAX's: without a stored vjp, differentiating raises
    # `vjp()`'s "No VJP is available" ValueError
    flat_call = _differentiable(exported, flat_call)

    def f_imported(*args, **kwargs):
        leaves, in_tree = tree_flatten((args, kwargs))
        if in_tree != exported.in_tree:
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as when "
                f"the function '{exported.fun_name}' was exported, but they differ: called "
                f"with {in_tree}, exported with {exported.in_tree}."
            )
        _check_platform(exported)
        return tree_unflatten(exported.out_tree, list(flat_call(*leaves)))

    return f_imported


def _is_float0(x) -> bool:
    return getattr(x, "dtype", None) == dtypes.float0


def _differentiable(exported: Exported, flat_call):
    @custom_vjp
    def f_flat(*leaves):
        return tuple(flat_call(*leaves))

    def fwd(*leaves):
        # through f_flat itself, so an outer differentiation sees the custom rule again
        return f_flat(*leaves), leaves

    def bwd(leaves, cts):
        vjp = exported.vjp()
        outs = call_exported(vjp)(*leaves, *cts)
        # a non-float input's cotangent is float0 (the module hands it over as bool)
        return tuple(
            ct if differentiable(a) else np.zeros(a.shape, dtypes.float0)
            for ct, a in zip(outs, exported.in_avals, strict=True))

    f_flat.defvjp(fwd, bwd)
    return f_flat


install_method("call", call_exported)

"""Lowerings of `laminax_core/lax/_control_flow/`: cond, while, scan and composite.

`empty2` (the filler of cond's unused residual slots) is a zero constant, as in JAX.
`cond` becomes `stablehlo.case` with one region per branch (regions read the operands from the
enclosing function); `while` becomes `stablehlo.while`, carrying the constants of both bodies
along with the loop state, as JAX does; `scan` becomes a while loop over an iteration counter
that slices each `xs` and updates each `ys` in place (JAX's CPU lowering). Ordered effects
thread their tokens through every region; a while whose condition has ordered effects (a tap
in the condition) computes its predicate before the loop and at the end of each body and
carries it, since the condition region cannot pass a token on. `composite` becomes
`stablehlo.composite` naming a private function that holds its decomposition.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax
from laminax_core.internal import empty2_p, eval_jaxpr, leading_added, ordered_effects

from laminax_dispatch._lowering import _dynamic
from laminax_dispatch._lowering._core import (
    full_like,
    ir_constant,
    jaxpr_subcomp,
    lower_fun,
    lower_private_function,
    lowering_for,
    register_lowering,
)
from laminax_dispatch._mlir import _element_type, aval_to_ir_type, token_type


def _ordered(*jaxprs) -> list:
    effects = frozenset().union(*(j.effects for j in jaxprs))
    return [e for e in effects if ordered_effects.contains(e)]


def _consts(closed) -> list:
    return [ir_constant(c) for c in closed.consts]


@lowering_for(empty2_p)
def _empty2_lower(ctx, *, dtype, memory_space):
    return ir_constant(np.zeros((), dtype))


@lowering_for(lax.cond_p)
def _cond_lower(ctx, index, *args, branches):
    effects = _ordered(*branches)
    result_types = [token_type()] * len(effects) + [aval_to_ir_type(a) for a in ctx.avals_out]
    case = hlo.CaseOp(result_types, index, len(branches))
    # a platform_dependent branch is lowered for the platforms that take it only (its code
    # may have lowerings for those alone); one no platform takes returns zeros
    choices = ctx.module_context.platform_choices.get(index)
    platforms = _dynamic.lowering_platforms()
    for i, branch in enumerate(branches):
        block = case.regions[i].blocks.append()
        with ir.InsertionPoint(block):
            tokens = {e: ctx.tokens_in[e] for e in effects}
            takers = platforms if choices is None else tuple(
                p for p, c in zip(platforms, choices, strict=True) if c == i)
            if not takers:
                outs = [full_like(0, a) for a in ctx.avals_out]
            else:
                with _dynamic.using_platforms(takers):
                    outs, tokens = jaxpr_subcomp(
                        ctx.module_context,
                        branch.jaxpr,
                        f"{ctx.name_stack}/branch_{i}_fun",
                        tokens,
                        _consts(branch),
                        *args,
                    )
            hlo.return_([*(tokens[e] for e in effects), *outs])
    results = list(case.results)
    ctx.tokens_out = dict(zip(effects, results[: len(effects)], strict=True))
    return results[len(effects) :]


@lowering_for(lax.platform_index_p)
def _platform_index_lower(ctx, *, platforms):
    lowering = _dynamic.lowering_platforms()
    choices = tuple(_branch_of(platforms, p) for p in lowering)
    missing = [p for p, c in zip(lowering, choices, strict=True) if c is None]
    if missing:  # JAX's error: no branch and no default for a platform lowered for
        where = f"platforms {missing}" if len(lowering) > 1 else f"platform {missing[0]}"
        raise NotImplementedError(
            f"MLIR translation rule for primitive 'platform_index(platforms={platforms})' "
            f"not found for {where}")
    if len(lowering) == 1:
        result = ir_constant(np.int32(choices[0]))
    else:  # JAX's form: a case on the module's platform index, a constant per platform
        case = hlo.CaseOp([aval_to_ir_type(ctx.avals_out[0])],
                          _dynamic.dim_values()[_dynamic.PLATFORM_INDEX], len(lowering))
        for k, choice in enumerate(choices):
            with ir.InsertionPoint(case.regions[k].blocks.append()):
                hlo.return_([ir_constant(np.int32(choice))])
        result = case.result
    ctx.module_context.platform_choices[result] = choices
    return [result]


def _branch_of(platforms: tuple, platform: str):
    """The branch `platform` takes: its own, else the default (the `None` entry)."""
    own = [i for i, ps in enumerate(platforms) if ps is not None and platform in ps]
    default = [i for i, ps in enumerate(platforms) if ps is None]
    return (own or default or [None])[0]


@lowering_for(lax.while_p)
def _while_lower(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    # A batched predicate (vmap) is reduced with `or` for the loop test, and in the body each
    # carry keeps its old value where its example is done, as JAX lowers it.
    effects = _ordered(cond_jaxpr, body_jaxpr)
    if _ordered(cond_jaxpr):
        return _while_with_effectful_cond(
            ctx, args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, effects
        )
    n_consts = cond_nconsts + body_nconsts
    operands = [ctx.tokens_in[e] for e in effects] + list(args)
    types = [token_type()] * len(effects) + [aval_to_ir_type(a) for a in ctx.avals_in]
    loop = hlo.WhileOp(types, operands)
    n_tok = len(effects)
    pred_aval = cond_jaxpr.out_avals[0]

    def predicate(cond_consts, carry, name):
        (pred,), _ = jaxpr_subcomp(
            ctx.module_context,
            cond_jaxpr.jaxpr,
            f"{ctx.name_stack}/while/{name}",
            {},
            _consts(cond_jaxpr),
            *cond_consts,
            *carry,
        )
        return pred

    cond_block = loop.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        values = list(cond_block.arguments)[n_tok:]
        pred = predicate(values[:cond_nconsts], values[n_consts:], "cond")
        if pred_aval.shape:
            pred = _reduce_or(pred, pred_aval)
        hlo.return_([pred])

    body_block = loop.body.blocks.append(*types)
    with ir.InsertionPoint(body_block):
        block_args = list(body_block.arguments)
        tokens = dict(zip(effects, block_args[:n_tok], strict=True))
        values = block_args[n_tok:]
        body_consts, carry = values[cond_nconsts:n_consts], values[n_consts:]
        new_carry, tokens = jaxpr_subcomp(
            ctx.module_context,
            body_jaxpr.jaxpr,
            f"{ctx.name_stack}/while/body",
            tokens,
            _consts(body_jaxpr),
            *body_consts,
            *carry,
        )
        if pred_aval.shape:
            pred = predicate(values[:cond_nconsts], carry, "body_pred")
            new_carry = [
                _select_where(pred, pred_aval, new, old, aval)
                for new, old, aval in zip(new_carry, carry, body_jaxpr.out_avals, strict=True)
            ]
        hlo.return_([*(tokens[e] for e in effects), *values[:n_consts], *new_carry])

    results = list(loop.results)
    ctx.tokens_out = dict(zip(effects, results[:n_tok], strict=True))
    return results[n_tok + n_consts :]


def _while_with_effectful_cond(ctx, args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
                               effects):
    # stablehlo.while's condition region cannot pass tokens on, so (as JAX does) the predicate
    # is computed once before the loop and then at the end of each body, and carried along.
    n_consts, n_tok = cond_nconsts + body_nconsts, len(effects)
    pred_aval = cond_jaxpr.out_avals[0]

    def predicate(tokens, cond_consts, carry, name):
        (pred,), tokens = jaxpr_subcomp(
            ctx.module_context,
            cond_jaxpr.jaxpr,
            f"{ctx.name_stack}/while/{name}",
            tokens,
            _consts(cond_jaxpr),
            *cond_consts,
            *carry,
        )
        return pred, tokens

    tokens = {e: ctx.tokens_in[e] for e in effects}
    pred, tokens = predicate(tokens, args[:cond_nconsts], args[n_consts:], "cond_before")
    operands = [*(tokens[e] for e in effects), pred, *args]
    types = [token_type()] * n_tok + [aval_to_ir_type(pred_aval)]
    types += [aval_to_ir_type(a) for a in ctx.avals_in]
    loop = hlo.WhileOp(types, operands)

    cond_block = loop.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        pred = cond_block.arguments[n_tok]
        hlo.return_([_reduce_or(pred, pred_aval) if pred_aval.shape else pred])

    body_block = loop.body.blocks.append(*types)
    with ir.InsertionPoint(body_block):
        block_args = list(body_block.arguments)
        tokens = dict(zip(effects, block_args[:n_tok], strict=True))
        pred, values = block_args[n_tok], block_args[n_tok + 1 :]
        cond_consts, body_consts = values[:cond_nconsts], values[cond_nconsts:n_consts]
        carry = values[n_consts:]
        new_carry, tokens = jaxpr_subcomp(
            ctx.module_context,
            body_jaxpr.jaxpr,
            f"{ctx.name_stack}/while/body",
            tokens,
            _consts(body_jaxpr),
            *body_consts,
            *carry,
        )
        if pred_aval.shape:
            new_carry = [
                _select_where(pred, pred_aval, new, old, aval)
                for new, old, aval in zip(new_carry, carry, body_jaxpr.out_avals, strict=True)
            ]
        new_pred, tokens = predicate(tokens, cond_consts, new_carry, "cond")
        hlo.return_([*(tokens[e] for e in effects), new_pred, *values[:n_consts], *new_carry])

    results = list(loop.results)
    ctx.tokens_out = dict(zip(effects, results[:n_tok], strict=True))
    return results[n_tok + 1 + n_consts :]


def _reduce_or(pred, pred_aval):
    # stablehlo.reduce with `or` over every dimension of the batched predicate
    scalar = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
    reduce = hlo.ReduceOp([scalar], [pred], [ir_constant(np.array(False))],
                          ir.DenseI64ArrayAttr.get(list(range(len(pred_aval.shape)))))  # fmt: skip
    block = reduce.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.OrOp(*block.arguments).result])
    return reduce.result


def _select_where(pred, pred_aval, new, old, aval):
    # the predicate's shape prefixes the carry's: broadcast it along the trailing dims
    if aval.shape != pred_aval.shape:
        bool_type = ir.RankedTensorType.get(list(aval.shape), ir.IntegerType.get_signless(1))
        dims = ir.DenseI64ArrayAttr.get(list(range(len(pred_aval.shape))))
        pred = hlo.BroadcastInDimOp(bool_type, pred, dims).result
    return hlo.SelectOp(pred, new, old).result


def _index_in_dim(x, i):
    # x[i] along the leading axis: dynamic_slice then drop the axis
    shape = x.aval.shape
    starts = [i] + [np.int32(0)] * (len(shape) - 1)
    # the loop's index is never negative: no wrap-around select (JAX's scan emits none either)
    piece = lax.dynamic_slice(x, starts, (1, *shape[1:]), allow_negative_indices=False)
    return lax.reshape(piece, shape[1:])


def _update_index_in_dim(xs, x, i):
    shape = xs.aval.shape
    starts = [i] + [np.int32(0)] * (len(shape) - 1)
    update = lax.reshape(x, (1, *shape[1:]))
    return lax.dynamic_update_slice(xs, update, starts, allow_negative_indices=False)


def _scan_as_while(*args, jaxpr, length, reverse, unroll, num_consts, num_carry):
    consts, carry = list(args[:num_consts]), list(args[num_consts : num_consts + num_carry])
    xs = list(args[num_consts + num_carry :])
    ys_avals = jaxpr.out_avals[num_carry:]
    # the stacked outputs start with the type scan gives them (split where each y is)
    ys = [lax.broadcast_in_dim(np.zeros((), a.dtype), (length, *a.shape), (),
                               sharding=leading_added(a, length).sharding) for a in ys_avals]
    if isinstance(length, int) and length == 0:  # no step runs (and the body could not even index an empty xs)
        return [*carry, *ys]

    def count(n):  # a symbolic length (shape polymorphism) counts with its value
        if isinstance(n, int):
            return np.int32(n)
        return lax.convert_element_type(lax.dimension_as_value(n), np.int32)

    def cond_fun(state):
        return lax.lt(state[0], count(length))

    def body_fun(state):
        i, carry, ys = state
        index = lax.sub(count(length - 1), i) if reverse else i
        x = [_index_in_dim(v, index) for v in xs]
        outs = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *consts, *carry, *x)
        new_ys = [
            _update_index_in_dim(acc, y, index) for acc, y in zip(ys, outs[num_carry:], strict=True)
        ]
        return lax.add(i, np.int32(1)), list(outs[:num_carry]), new_ys

    _, carry, ys = lax.while_loop(cond_fun, body_fun, (np.int32(0), carry, ys))
    return [*carry, *ys]


register_lowering(lax.scan_p, lower_fun(_scan_as_while, multiple_results=True))


# ----- composite ----------------------------------------------------------------------------


def _attribute(value) -> ir.Attribute:
    """A composite attribute as MLIR reads it (Python numbers at 64 bits, as JAX writes them)."""
    if isinstance(value, bool | np.bool_):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    if isinstance(value, float):
        return ir.FloatAttr.get(ir.F64Type.get(), value)
    if isinstance(value, str | bytes):
        return ir.StringAttr.get(value)
    if isinstance(value, np.dtype):
        return ir.TypeAttr.get(_element_type(value))
    if isinstance(value, dict):
        return ir.DictAttr.get({k: _attribute(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return ir.ArrayAttr.get([_attribute(v) for v in value])
    array = np.ascontiguousarray(getattr(value, "val", value))  # HashableArray, NumPy values
    return ir.DenseElementsAttr.get(array, type=_element_type(array.dtype), shape=array.shape)


@lowering_for(lax.composite_p)
def _composite_lower(ctx, *args, name, attributes, version, jaxpr):
    mctx = ctx.module_context
    symbol = mctx.unique_symbol(name)
    lower_private_function(mctx, symbol, jaxpr, f"{ctx.name_stack}/{name}")
    values = {}
    for key, leaves, tree in attributes:
        value = tree.unflatten([getattr(v, "val", v) for v in leaves])
        if value is not None:
            values[key] = _attribute(value)
    op = hlo.CompositeOp([aval_to_ir_type(a) for a in ctx.avals_out], list(args),
                         name=ir.StringAttr.get(name),
                         decomposition=ir.FlatSymbolRefAttr.get(symbol),
                         composite_attributes=ir.DictAttr.get(values),
                         version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), version))
    return list(op.results)

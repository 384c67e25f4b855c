"""Lowering `shard_map_p` and the collectives over manual mesh axes to StableHLO, as JAX
0.10.2 emits them with the Shardy partitioner.

A shard_map becomes one ``sdy.manual_computation`` whose operands and results carry the
in/out specs as Shardy shardings over the module's ``sdy.mesh`` and whose region is the body,
lowered on per-device shapes. Inside the region the module's axis context is an
`SPMDAxisContext`, and the collectives lower to XLA's: psum/pmax/pmin to ``all_reduce``,
all_gather to ``all_gather``, psum_scatter to ``reduce_scatter``, all_to_all to
``all_to_all``, ppermute to ``collective_permute``, axis_index to arithmetic on
``partition_id``; each with the replica groups of the named axes (device positions in mesh
order, one group per combination of the other axes), a channel handle and global device ids.
With ``jax_use_shardy_partitioner`` off, GSPMD's custom calls frame the body instead, as JAX's
do. Outside a manual region the collectives keep dispatch's one-device lowerings.
"""

from __future__ import annotations

import math
import types

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, sdy
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import lax
from laminax_core.config import disable_jit
from laminax_dispatch import jit
from laminax_dispatch.internal import (
    PLATFORM_INDEX,
    SdyDim,
    SdyMesh,
    SdySharding,
    SPMDAxisContext,
    aval_to_ir_type,
    dim_values,
    get_lowering,
    ir_constant,
    jaxpr_subcomp,
    lower_fun,
    is_static_shape,
    register_lowering,
    shape_tensor,
    use_shardy_partitioner,
    using_dim_values,
)

from laminax_pjit._named_sharding import NamedSharding
from laminax_pjit._shard_map_rules import (
    manual_axes,
    shard_map_p,
    spec_entries,
    spec_names,
    unshard_aval,
)

__all__: list[str] = ["replica_groups", "spec_sharding"]

_CHANNEL_ID = 1  # JAX's COLLECTIVE_CHANNEL_ID
_DEVICE_TO_DEVICE = 1


def _sdy_mesh(mesh) -> SdyMesh:
    return SdyMesh(tuple(mesh.axis_names), tuple(mesh.shape[n] for n in mesh.axis_names))


def _spec_text(symbol: str, mesh, spec, ndim: int, is_open: bool) -> str:
    names = spec_names(spec)
    dims = tuple(SdyDim(tuple(names.get(d, ())), is_open) for d in range(ndim))
    return SdySharding(_sdy_mesh(mesh), dims).text(symbol)


def _per_value(symbol, mesh, specs, avals, is_open=False, scalars=0) -> ir.Attribute:
    # in a region manual over only some axes, the partitioner may split the others: open dims
    texts = [SdySharding(_sdy_mesh(mesh), ()).text(symbol)] * scalars
    texts += [_spec_text(symbol, mesh, s, a.ndim, is_open)
              for s, a in zip(specs, avals, strict=True)]
    return ir.Attribute.parse(f"#sdy.sharding_per_value<[{', '.join(texts)}]>")


def _shard_map_lowering(ctx, *args, jaxpr, mesh, in_specs, out_specs, check_vma,
                        newly_manual_axes):
    if not use_shardy_partitioner.value:
        return _gspmd_lowering(ctx, *args, jaxpr=jaxpr, mesh=mesh, in_specs=in_specs,
                               out_specs=out_specs, newly_manual_axes=newly_manual_axes)
    mctx = ctx.module_context
    ordered = [n for n in mesh.axis_names if n in newly_manual_axes]
    if math.prod(mesh.shape[n] for n in ordered) == 1:
        return _inline(ctx, args, jaxpr, mesh, ordered)
    symbol = mctx.meshes.symbol(_sdy_mesh(mesh))
    partial = len(ordered) != len(mesh.axis_names)
    manual = ir.Attribute.parse(
        "#sdy<manual_axes{" + ", ".join(f'"{n}"' for n in ordered) + "}>")
    # the region is isolated: the caller's dimension variables (and the platform index of a
    # multi-platform export) enter it as replicated scalar operands, as in JAX
    dims = dim_values()
    names = _dim_order(dims)
    op = sdy.ManualComputationOp(
        [aval_to_ir_type(a) for a in ctx.avals_out], [*(dims[n] for n in names), *args],
        _per_value(symbol, mesh, in_specs, ctx.avals_in, partial, len(names)),
        _per_value(symbol, mesh, out_specs, ctx.avals_out, partial), manual)
    block = op.body.blocks.append(*[dims[n].type for n in names],
                                  *[aval_to_ir_type(a) for a in jaxpr.in_avals])
    inner = list(block.arguments)
    # rules that re-trace (lower_fun, scan lowered as a while) meet the body's collectives:
    # the manual axes stay bound while the region is lowered
    with mctx.using_axis_context(_axis_context(mctx.axis_context, mesh, ordered)), \
            manual_axes(mesh, ordered):
        with ir.InsertionPoint(block), using_dim_values(dict(zip(names, inner, strict=False))):
            consts = [ir_constant(np.asarray(c, v.aval.dtype))
                      for c, v in zip(jaxpr.consts, jaxpr.jaxpr.constvars, strict=True)]
            outs, _ = jaxpr_subcomp(mctx, jaxpr.jaxpr, f"{ctx.name_stack}/shard_map", {}, consts,
                                    *inner[len(names):])
            sdy.ReturnOp(outs)
    return list(op.results)


def _inline(ctx, args, jaxpr, mesh, ordered):
    """A region manual over axes of size 1 only: the body in place, as JAX lowers it (no
    manual computation, which a one-device program does not need)."""
    mctx = ctx.module_context
    with mctx.using_axis_context(_axis_context(mctx.axis_context, mesh, ordered)), \
            manual_axes(mesh, ordered):
        consts = [ir_constant(np.asarray(c, v.aval.dtype))
                  for c, v in zip(jaxpr.consts, jaxpr.jaxpr.constvars, strict=True)]
        outs, _ = jaxpr_subcomp(mctx, jaxpr.jaxpr, f"{ctx.name_stack}/shard_map", {}, consts,
                                *args)
    return list(outs)


def _dim_order(dims) -> list:
    """The dimension values a region's function takes first: the platform index, then the
    dimension variables by name (JAX's order)."""
    return sorted(dims, key=lambda n: (n != PLATFORM_INDEX, n))


def _custom_call(target: str, x, result_type, sharding: str, shape=None):
    # a symbolic result shape is an operand, as JAX passes it (shape refinement reads it)
    dynamic = shape is not None and not is_static_shape(shape)
    operands = [x, shape_tensor(shape)] if dynamic else [x]
    op = hlo.CustomCallOp([result_type], operands, call_target_name=target)
    if dynamic:
        op.attributes["indices_of_shape_operands"] = ir.DenseIntElementsAttr.get(
            np.asarray([1], np.int64))
    op.attributes["backend_config"] = ir.StringAttr.get("")
    op.attributes["mhlo.sharding"] = ir.StringAttr.get(sharding)
    return op.result


def _hlo_text(mesh, spec, ndim: int) -> str:
    return str(NamedSharding(mesh, spec)._to_xla_hlo_sharding(ndim))


def _gspmd_lowering(ctx, *args, jaxpr, mesh, in_specs, out_specs, newly_manual_axes):
    """GSPMD's form (JAX's with jax_use_shardy_partitioner=False): each operand pinned to its
    spec's sharding and cut to its per-device shape (``@Sharding``, ``@SPMDFullToShardShape``),
    the body as a private function ``shmap_body`` on per-device values, each result marked
    manual and assembled back (``@SPMDShardToFullShape``)."""
    if frozenset(newly_manual_axes) != frozenset(mesh.axis_names):
        raise ValueError(
            "shard_map over a subset of the mesh axes (axis_names) lowers only with Shardy; "
            "turn jax_use_shardy_partitioner back on, or make the body manual over every axis."
        )
    mctx = ctx.module_context
    ordered = list(mesh.axis_names)
    one_device = math.prod(mesh.shape[n] for n in ordered) == 1
    local_in = [aval_to_ir_type(a) for a in jaxpr.in_avals]
    local_out = [aval_to_ir_type(a) for a in jaxpr.out_avals]
    shards = []
    for x, spec, aval, local, jaxpr_aval in zip(args, in_specs, ctx.avals_in, local_in,
                                                jaxpr.in_avals, strict=True):
        if one_device:  # nothing to pin or cut, as in JAX
            shards.append(x)
            continue
        pinned = _custom_call("Sharding", x, aval_to_ir_type(aval),
                              _hlo_text(mesh, spec, aval.ndim), aval.shape)
        shards.append(_custom_call("SPMDFullToShardShape", pinned, local, "{manual}",
                                   jaxpr_aval.shape))
    # the body is a function: the caller's platform index and dimension variables enter it
    # as leading arguments, as JAX's `shmap_body` takes them
    dims = dim_values()
    names = _dim_order(dims)
    name = mctx.unique_symbol("shmap_body")
    with ir.InsertionPoint(mctx.module.body):
        fn = func.FuncOp(name, ir.FunctionType.get(
            [*(dims[n].type for n in names), *local_in], local_out))
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        if names:
            fn.attributes["arg_attrs"] = ir.ArrayAttr.get(
                [ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get(n)})
                 for n in names] + [ir.DictAttr.get({})] * len(local_in))
        block = fn.add_entry_block()
    inner = list(block.arguments)
    with mctx.using_axis_context(_axis_context(mctx.axis_context, mesh, ordered)), \
            manual_axes(mesh, ordered), ir.InsertionPoint(block), \
            using_dim_values(dict(zip(names, inner, strict=False))):
        consts = [ir_constant(np.asarray(c, v.aval.dtype))
                  for c, v in zip(jaxpr.consts, jaxpr.jaxpr.constvars, strict=True)]
        outs, _ = jaxpr_subcomp(mctx, jaxpr.jaxpr, f"{ctx.name_stack}/shard_map", {}, consts,
                                *inner[len(names):])
        func.ReturnOp(outs)
    call = func.CallOp(local_out, ir.FlatSymbolRefAttr.get(name),
                       [*(dims[n] for n in names), *shards])
    if one_device:
        return list(call.results)
    results = []
    for y, spec, aval, local, jaxpr_aval in zip(call.results, out_specs, ctx.avals_out,
                                                local_out, jaxpr.out_avals, strict=True):
        manual = _custom_call("Sharding", y, local, "{manual}", jaxpr_aval.shape)
        results.append(_custom_call("SPMDShardToFullShape", manual, aval_to_ir_type(aval),
                                    _hlo_text(mesh, spec, aval.ndim), aval.shape))
    return results


def _axis_context(outer, mesh, manual) -> SPMDAxisContext:
    if isinstance(outer, SPMDAxisContext):  # nested: the enclosing region knows the devices
        return SPMDAxisContext(outer.devices, outer.axis_names, outer.axis_sizes,
                               outer.device_ids, frozenset(manual) | outer.manual_axes)
    devices = outer.devices
    flat = tuple(mesh._flat_devices_tuple)
    devices = tuple(devices) if len(devices) == len(flat) else flat
    position = {d: i for i, d in enumerate(devices)}
    try:
        ids = tuple(position[d] for d in flat)
    except KeyError:
        raise ValueError(
            f"shard_map's mesh uses devices outside the computation's devices "
            f"{[d.id for d in devices]}; put the arguments on the mesh's devices."
        ) from None
    return SPMDAxisContext(devices, tuple(mesh.axis_names),
                           tuple(mesh.shape[n] for n in mesh.axis_names), ids, frozenset(manual))


register_lowering(shard_map_p, _shard_map_lowering)


# ----- collectives inside a manual region -------------------------------------------------


def _manual_context(ctx):
    axis_context = ctx.module_context.axis_context
    return axis_context if isinstance(axis_context, SPMDAxisContext) else None


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)


def replica_groups(manual: SPMDAxisContext, names) -> np.ndarray:
    """One row per group of devices that differ only along `names` (positions in the
    program's device assignment); within a row, `names` vary major to minor as given."""
    return np.asarray(manual.axis_groups(list(names)), np.int64)


def _as_mesh(manual: SPMDAxisContext):
    # what `manual_axes` reads of a mesh: its axis names and sizes
    return types.SimpleNamespace(axis_names=manual.axis_names,
                                 shape=dict(zip(manual.axis_names, manual.axis_sizes, strict=True)))


def _groups_attr(groups: np.ndarray) -> ir.DenseIntElementsAttr:
    return ir.DenseIntElementsAttr.get(np.ascontiguousarray(groups.astype(np.int64)))


def _grouped(manual, axis_name, axis_index_groups) -> np.ndarray:
    groups = replica_groups(manual, _names(axis_name))
    if axis_index_groups is None:
        return groups
    return np.array([[g[i] for i in sub] for g in groups for sub in axis_index_groups], np.int64)


def _channel():
    return hlo.ChannelHandle.get(_CHANNEL_ID, _DEVICE_TO_DEVICE)


def _scalar_type(aval):
    return aval_to_ir_type(aval.update(shape=()))


def _reducer_region(op, aval, combine) -> None:
    scalar = _scalar_type(aval)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([combine(*block.arguments)])


def _all_reduce(x, aval, groups, combine):
    op = hlo.AllReduceOp([x.type], [x], _groups_attr(groups), channel_handle=_channel(),
                         use_global_device_ids=True)
    _reducer_region(op, aval, combine)
    return op.result


def _reduction_lowering(primitive, combine):
    one_device = get_lowering(primitive)

    def rule(ctx, *xs, axes, axis_index_groups):
        manual = _manual_context(ctx)
        named = tuple(a for a in axes if not isinstance(a, int))
        if manual is None or not named:
            return one_device(ctx, *xs, axes=axes, axis_index_groups=axis_index_groups)
        positional = tuple(a for a in axes if isinstance(a, int))
        if positional:
            xs = one_device(ctx, *xs, axes=positional, axis_index_groups=None)
        groups = replica_groups(manual, named)
        if axis_index_groups is not None:  # each group of the axis splits into sub-groups
            groups = np.array([[g[i] for i in sub] for g in groups for sub in axis_index_groups],
                              np.int64)
        return [_all_reduce(x, aval, groups, combine) for x, aval in
                zip(xs, ctx.avals_out, strict=True)]

    register_lowering(primitive, rule)


_reduction_lowering(lax.psum_p, hlo.add)
_reduction_lowering(lax.pmax_p, hlo.maximum)
_reduction_lowering(lax.pmin_p, hlo.minimum)


def _psum_invariant_lowering(ctx, x, *, axes):
    return _psum_rule(ctx, x, axes=axes, axis_index_groups=None)[0]


_psum_rule = get_lowering(lax.psum_p)
register_lowering(lax.psum_invariant_p, _psum_invariant_lowering)
# pvary only changes the type: on devices the value is already there
register_lowering(lax.pvary_p, lambda ctx, x, *, axes: x)


def _require_manual(ctx, name):
    manual = _manual_context(ctx)
    if manual is None:
        raise NameError(
            f"{name} over a named axis reached lowering outside shard_map: the axis is unbound. "
            "Run it under shard_map (or vmap(..., axis_name=...))."
        )
    return manual


def _axis_index_lowering(ctx, *, axis_name):
    manual = _require_manual(ctx, "axis_index")
    if manual.device_ids != tuple(range(len(manual.device_ids))):
        raise ValueError("axis_index needs the program's devices in the mesh's order; put the "
                         "arguments on the shard_map mesh's devices.")
    result_type = aval_to_ir_type(ctx.avals_out[0])
    every = frozenset(manual.axis_names)
    if manual.manual_axes == every:
        return _partition_coordinate(manual, axis_name, result_type)
    # partly manual: partition_id only means something where every axis is manual, so (as
    # JAX does) the index is computed in a nested region manual over the remaining axes
    if manual.axis_size(axis_name) == 1:
        return ir_constant(np.int32(0))
    remaining = [n for n in manual.axis_names if n not in manual.manual_axes]
    mctx = ctx.module_context
    symbol = mctx.meshes.symbol(SdyMesh(tuple(manual.axis_names), tuple(manual.axis_sizes)))
    op = sdy.ManualComputationOp(
        [result_type], [], ir.Attribute.parse("#sdy.sharding_per_value<[]>"),
        ir.Attribute.parse(f"#sdy.sharding_per_value<[<@{symbol}, []>]>"),
        ir.Attribute.parse("#sdy<manual_axes{" + ", ".join(f'"{n}"' for n in remaining) + "}>"))
    block = op.body.blocks.append()
    full = SPMDAxisContext(manual.devices, manual.axis_names, manual.axis_sizes,
                           manual.device_ids, every)
    with mctx.using_axis_context(full), ir.InsertionPoint(block):
        sdy.ReturnOp([_partition_coordinate(full, axis_name, result_type)])
    return op.results[0]


def _partition_coordinate(manual, axis_name, result_type):
    names, sizes = list(manual.axis_names), list(manual.axis_sizes)
    stride = math.prod(sizes[names.index(axis_name) + 1:])
    position = hlo.PartitionIdOp().result
    index = hlo.divide(position, ir_constant(np.uint32(stride)))
    index = hlo.remainder(index, ir_constant(np.uint32(manual.axis_size(axis_name))))
    return hlo.convert(result_type, index)


register_lowering(lax.axis_index_p, _axis_index_lowering)


def _all_gather_lowering(ctx, x, *, all_gather_dimension, axis_name, axis_index_groups,
                         axis_size, tiled):
    manual = _require_manual(ctx, "all_gather")
    (aval,), (out,) = ctx.avals_in, ctx.avals_out
    if not tiled:
        shape = list(aval.shape)
        shape.insert(all_gather_dimension, 1)
        x = hlo.reshape(aval_to_ir_type(aval.update(shape=tuple(shape))), x)
    groups = replica_groups(manual, _names(axis_name))
    if axis_index_groups is not None:
        groups = np.array([[g[i] for i in sub] for g in groups for sub in axis_index_groups],
                          np.int64)
    op = hlo.AllGatherOp([aval_to_ir_type(out)], [x], all_gather_dimension,
                         _groups_attr(groups),
                         channel_handle=_channel(), use_global_device_ids=True)
    return op.results[0]


register_lowering(lax.all_gather_p, _all_gather_lowering)


def _reduce_scatter_lowering(ctx, x, *, scatter_dimension, axis_name, axis_index_groups,
                             axis_size, tiled):
    manual = _require_manual(ctx, "psum_scatter")
    (aval,), (out,) = ctx.avals_in, ctx.avals_out
    shape = list(aval.shape)
    shape[scatter_dimension] //= axis_size
    scattered = aval.update(shape=tuple(shape))
    op = hlo.ReduceScatterOp(aval_to_ir_type(scattered), x, scatter_dimension,
                             _groups_attr(_grouped(manual, axis_name, axis_index_groups)),
                             channel_handle=_channel(), use_global_device_ids=True)
    _reducer_region(op, aval, hlo.add)
    result = op.result
    if not tiled:
        result = hlo.reshape(aval_to_ir_type(out), result)
    return result


register_lowering(lax.reduce_scatter_p, _reduce_scatter_lowering)


def _all_to_all_lowering(ctx, x, *, split_axis, concat_axis, axis_name, axis_index_groups,
                         tiled):
    manual = _require_manual(ctx, "all_to_all")
    groups = _grouped(manual, axis_name, axis_index_groups)
    op = hlo.AllToAllOp([x], split_axis, concat_axis, groups.shape[1], _groups_attr(groups),
                        channel_handle=_channel(),
                        results=[aval_to_ir_type(ctx.avals_out[0])])
    return op.results[0]


register_lowering(lax.all_to_all_p, _all_to_all_lowering)


def _ppermute_lowering(ctx, x, *, axis_name, perm):
    manual = _require_manual(ctx, "ppermute")
    groups = replica_groups(manual, _names(axis_name))
    pairs = np.array([(g[s], g[d]) for g in groups for s, d in perm], np.int64).reshape(-1, 2)
    op = hlo.CollectivePermuteOp(x, ir.DenseIntElementsAttr.get(np.ascontiguousarray(pairs)),
                                 channel_handle=_channel())
    return op.result


register_lowering(lax.ppermute_p, _ppermute_lowering)


def _pbroadcast_expansion(x, *, axis_name, source):
    # the value at `source`, everywhere: a masked psum (XLA CPU has no collective_broadcast)
    here = lax.eq(lax.axis_index(axis_name), np.int32(source))
    return lax.psum(lax.select(here, x, lax.full_like(x, 0)), axis_name)


_pbroadcast_expanded = lower_fun(_pbroadcast_expansion)


def _pbroadcast_lowering(ctx, x, *, axis_name, source):
    manual = _require_manual(ctx, "pbroadcast")
    with manual_axes(_as_mesh(manual), manual.manual_axes):
        return _pbroadcast_expanded(ctx, x, axis_name=axis_name, source=source)


register_lowering(lax.pbroadcast_p, _pbroadcast_lowering)


# ----- eager execution --------------------------------------------------------------------


def spec_sharding(mesh, spec, ndim: int, typed: bool = False):
    """The sharding of a global value that `spec` lays out over `mesh` (`typed`: written out
    to the value's rank, as JAX's explicit-sharding types are)."""
    if typed:
        entries = spec_entries(spec)
        spec = type(spec)(*entries, *[None] * (ndim - len(entries)))
    return NamedSharding(mesh, spec)


_executables: dict = {}


def _impl(*args, jaxpr, mesh, in_specs, out_specs, check_vma, newly_manual_axes):
    params = dict(jaxpr=jaxpr, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                  check_vma=check_vma, newly_manual_axes=newly_manual_axes)
    key = (id(jaxpr), mesh, in_specs, out_specs, newly_manual_axes)
    entry = _executables.get(key)
    if entry is None or entry[0] is not jaxpr:
        in_shardings = tuple(spec_sharding(mesh, s, a.ndim) for s, a in
                             zip(in_specs, [_global_in(mesh, s, a) for s, a in
                                            zip(in_specs, jaxpr.in_avals, strict=True)],
                                 strict=True))
        # outputs of a region manual over only some Explicit axes get JAX's typed specs
        typed = mesh._any_axis_explicit and set(newly_manual_axes) != set(mesh.axis_names)
        out_shardings = tuple(spec_sharding(mesh, s, a.ndim, typed) for s, a in
                              zip(out_specs, jaxpr.out_avals, strict=True))

        def run(*xs):
            return tuple(shard_map_p.bind(*xs, **params))

        run.__name__ = "shard_map"
        if len(_executables) > 256:
            _executables.clear()
        entry = _executables[key] = (
            jaxpr, jit(run, in_shardings=in_shardings, out_shardings=out_shardings))
    # the region is compiled even under `jax_disable_jit` (as JAX's pmap is): run as Python,
    # `run` would bind shard_map_p again and come back here
    with disable_jit(False):
        return entry[1](*args)


def _global_in(mesh, spec, aval):
    return unshard_aval(mesh, spec, aval)


shard_map_p.def_impl(_impl)


def _ragged_all_to_all_lowering(ctx, operand, output, *offsets_and_sizes, axis_name,
                                axis_index_groups):
    # JAX's: a typed-FFI custom call named ragged_all_to_all, which XLA reads as its
    # RaggedAllToAll instruction (implemented on GPU and TPU, refused by XLA:CPU)
    manual = _require_manual(ctx, "ragged_all_to_all")
    groups = _grouped(manual, axis_name, axis_index_groups)
    config = {"replica_groups": _groups_attr(groups),
              "channel_id": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), _CHANNEL_ID)}
    op = hlo.CustomCallOp(
        [output.type], [operand, output, *offsets_and_sizes],
        call_target_name=ir.StringAttr.get("ragged_all_to_all"),
        backend_config=ir.DictAttr.get(config),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4))
    return op.results[0]


register_lowering(lax.ragged_all_to_all_p, _ragged_all_to_all_lowering)

"""Shardings in lowered modules: attributes on ``main``, sharding constraints, axis contexts.

A module compiled for several devices says how each argument and result of ``main`` is laid
out, and a sharding constraint pins an intermediate value's layout. JAX 0.10.2 writes these in
Shardy's dialect (``sdy.mesh`` symbols, ``#sdy.sharding<@mesh, [{"x"}, {}]>`` attributes,
``sdy.sharding_constraint``) and compiles with the Shardy partitioner; with
``jax_use_shardy_partitioner`` off it writes GSPMD's ``mhlo.sharding`` strings and
``@Sharding`` custom calls instead. laminax does the same, from any sharding of dispatch's
protocol (`_to_sdy_sharding` / `_to_xla_hlo_sharding`). A module for one device carries no
sharding attributes, as in JAX.

Shardings number devices by their position in their own ``_device_assignment``; a module's
device assignment may order the same devices differently, so the device ids are rewritten
relative to the module's order.

The axis context (`ModuleContext.axis_context`) tells rules what the devices are: a
`ShardingContext` for a whole program over its device assignment, an `SPMDAxisContext` inside
`shard_map` (named mesh axes, some manual), where collectives over mesh axes lower.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import xla_client as xc
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core.config import config

from laminax_dispatch._sharding import SdyMesh, SdySharding

__all__ = [
    "register_meshes",
    "memory_kind_of",
    "place_in_memory",
    "set_maximal_sharding",
    "AxisContext",
    "MeshTable",
    "SPMDAxisContext",
    "ShardingContext",
    "emit_sharding_constraint",
    "sharding_attribute",
    "use_shardy_partitioner",
    "sdy_sharding",
    "hlo_sharding",
]

use_shardy_partitioner = config.define_bool_state(
    "jax_use_shardy_partitioner",
    True,
    "Write shardings in Shardy's dialect (sdy) and partition with Shardy, as JAX 0.10.2 does; "
    "False writes GSPMD's mhlo.sharding attributes and partitions with GSPMD.",
    include_in_jit_key=True,
    include_in_trace_context=True,
)


class AxisContext:
    """What the devices of the computation being lowered are (base class)."""


@dataclasses.dataclass(frozen=True)
class ShardingContext(AxisContext):
    """A whole SPMD program over `devices` (its device assignment, partition order)."""

    devices: tuple[Any, ...]

    @property
    def num_devices(self) -> int:
        return len(self.devices)


@dataclasses.dataclass(frozen=True)
class SPMDAxisContext(AxisContext):
    """Inside a manual region (`shard_map`) of a program over `devices`: the mesh's named
    axes, and which of them the region's body sees per device (`manual_axes`).

    Attributes:
      devices: the program's device assignment (partition order).
      axis_names, axis_sizes: the mesh axes, major to minor.
      device_ids: the logical device ids (positions in `devices`) in mesh order, row major.
      manual_axes: the axes the body is written per device for.
    """

    devices: tuple[Any, ...]
    axis_names: tuple[str, ...]
    axis_sizes: tuple[int, ...]
    device_ids: tuple[int, ...]
    manual_axes: frozenset = frozenset()

    def axis_size(self, name: str) -> int:
        """The size of mesh axis `name`."""
        try:
            return self.axis_sizes[self.axis_names.index(name)]
        except ValueError:
            raise NameError(
                f"unbound axis name: {name}; the mesh has axes {self.axis_names}."
            ) from None

    def axis_groups(self, names: Sequence[str]) -> list[list[int]]:
        """The groups of logical device ids that a collective over mesh axes `names` combines
        (its ``replica_groups``): devices that agree on every other axis, ordered along
        `names`."""
        ids = np.asarray(self.device_ids).reshape(self.axis_sizes)
        positions = [self.axis_names.index(n) for n in names]  # raises for unknown names
        rest = [i for i in range(len(self.axis_names)) if i not in positions]
        grouped = ids.transpose(rest + positions).reshape(-1, int(np.prod([ids.shape[p] for p in positions], dtype=int)))
        return grouped.tolist()


class MeshTable:
    """The Shardy meshes one module uses: each distinct `SdyMesh` gets a symbol (``mesh``,
    ``mesh_0`` ...) and one ``sdy.mesh`` operation, written at the top of the module."""

    def __init__(self):
        self._symbols: dict[SdyMesh, str] = {}

    def symbol(self, mesh: SdyMesh) -> str:
        """The symbol of `mesh`, allocating one on first use (``maximal_mesh_<i>`` for the
        axis-less mesh of one device, as JAX names it)."""
        symbol = self._symbols.get(mesh)
        if symbol is None:
            if not mesh.axis_names and mesh.device_ids is not None and len(mesh.device_ids) == 1:
                symbol = f"maximal_mesh_{mesh.device_ids[0]}"
            else:
                n = sum(1 for s in self._symbols.values() if not s.startswith("maximal"))
                symbol = "mesh" if n == 0 else f"mesh_{n - 1}"
            self._symbols[mesh] = symbol
        return symbol

    def symbol_of_size(self, n: int) -> str | None:
        """The symbol of a mesh already in use with `n` devices (not a maximal one)."""
        for mesh, symbol in self._symbols.items():
            if mesh.axis_names and math.prod(mesh.axis_sizes) == n:
                return symbol
        return None

    def __bool__(self) -> bool:
        return bool(self._symbols)

    def emit(self, module: ir.Module) -> None:
        """Inserts one ``sdy.mesh`` per mesh used, before every function (JAX's layout)."""
        if not self._symbols:
            return
        text = "\n".join(f"sdy.mesh @{s} = {m.text()}" for m, s in self._symbols.items())
        with module.context, ir.Location.unknown():
            parsed = ir.Module.parse(text)
            first = module.body.operations[0] if len(module.body.operations) else None
            for op in list(parsed.body.operations):
                if first is None:
                    module.body.append(op)
                else:
                    op.move_before(first)


def _positions(sharding, devices: Sequence) -> list[int] | None:
    """Where each device of `sharding`'s own assignment sits in `devices`; None when the
    orders agree (nothing to rewrite)."""
    own = tuple(sharding._device_assignment)
    if own == tuple(devices):
        return None
    index = {d: i for i, d in enumerate(devices)}
    try:
        return [index[d] for d in own]
    except KeyError:
        raise ValueError(
            f"the sharding {sharding} uses devices outside the computation's devices "
            f"{[d.id for d in devices]}; put every argument and sharding on the same devices."
        ) from None


def sdy_sharding(sharding, ndim: int, devices: Sequence) -> SdySharding:
    """`sharding`'s Shardy description with device ids relative to `devices`."""
    described = sharding._to_sdy_sharding(ndim)
    positions = _positions(sharding, devices)
    mesh = described.mesh
    if positions is None or not mesh.axis_sizes:
        return described
    ids = mesh.device_ids if mesh.device_ids is not None else range(len(positions))
    moved = tuple(positions[i] for i in ids)
    new_ids = None if moved == tuple(range(len(moved))) else moved
    return dataclasses.replace(described, mesh=dataclasses.replace(mesh, device_ids=new_ids))


def hlo_sharding(sharding, ndim: int, devices: Sequence) -> xc.HloSharding:
    """`sharding`'s `HloSharding` with its tile assignment relative to `devices`."""
    described = sharding._to_xla_hlo_sharding(ndim)
    positions = _positions(sharding, devices)
    if positions is None or not described.is_tiled():
        return described
    proto = described.to_proto()
    assigned = list(described.tile_assignment_devices())
    proto.iota_reshape_dims = []
    proto.iota_transpose_perm = []
    proto.tile_assignment_devices = [positions[d] for d in assigned]
    return xc.HloSharding.from_proto(proto)


def _sdy_attribute(meshes: MeshTable, described: SdySharding) -> ir.Attribute:
    mesh = described.mesh
    if not mesh.axis_sizes:  # a one-device sharding in a many-device program: replicated
        described = dataclasses.replace(described, mesh=SdyMesh((), ()))
    if not described.replicated_axes and not any(d.axes for d in described.dims):
        # a replicated value names no axis: any mesh of as many devices serves, so the
        # module keeps one mesh where it can
        symbol = meshes.symbol_of_size(math.prod(described.mesh.axis_sizes))
        if symbol is not None:
            return ir.Attribute.parse("#sdy.sharding" + described.text(symbol))
    return ir.Attribute.parse("#sdy.sharding" + described.text(meshes.symbol(described.mesh)))


def register_meshes(meshes: MeshTable, shardings, avals, devices: Sequence) -> None:
    """Gives the meshes of the shardings that split data their symbols first, so replicated
    values then share one of them (`_sdy_attribute`) whatever their order."""
    if not use_shardy_partitioner.value or len(devices) <= 1:
        return
    for sharding, aval in zip(shardings, avals, strict=True):
        if sharding is None or sharding.is_fully_replicated:
            continue
        described = sdy_sharding(sharding, aval.ndim, devices)
        if any(d.axes for d in described.dims):
            meshes.symbol(described.mesh)


def sharding_attribute(
    meshes: MeshTable, sharding, ndim: int, devices: Sequence
) -> tuple[str, ir.Attribute]:
    """The (name, attribute) pair that lays out an `ndim`-dimensional value of a module over
    `devices`: ``sdy.sharding`` with Shardy, ``mhlo.sharding`` with GSPMD."""
    if use_shardy_partitioner.value:
        return "sdy.sharding", _sdy_attribute(meshes, sdy_sharding(sharding, ndim, devices))
    return "mhlo.sharding", ir.StringAttr.get(str(hlo_sharding(sharding, ndim, devices)))


def emit_sharding_constraint(ctx, x: ir.Value, aval, sharding) -> ir.Value:
    """Pins `x` (of `aval`) to `sharding` inside a module being lowered: the hook a
    sharding-constraint primitive's lowering calls (and a resharding `device_put` under jit).

    Args:
      ctx: the rule's `LoweringRuleContext` (its module context knows the devices).
      x: the value; aval: its abstract value; sharding: any sharding of dispatch's protocol.

    Returns:
      The constrained value (`x` itself in a one-device module, which has nothing to pin).
    """
    mctx = ctx.module_context
    devices = mctx.axis_context.devices
    if len(devices) <= 1:
        return x
    name, attribute = sharding_attribute(mctx.meshes, sharding, aval.ndim, devices)
    if name == "sdy.sharding":
        return sdy.ShardingConstraintOp(x, attribute).result
    op = hlo.CustomCallOp([x.type], [x], call_target_name="Sharding")
    op.attributes["backend_config"] = ir.StringAttr.get("")  # as JAX 0.10.2 writes it
    op.attributes["mhlo.sharding"] = attribute
    return op.result


def set_maximal_sharding(ctx, op, num_results: int, device_index: int = 0) -> None:
    """Pins operation `op` (with `num_results` results) to one device of the program, the
    `device_index`-th of its device assignment: how a side-effecting call (a host callback)
    runs once in an SPMD program."""
    if use_shardy_partitioner.value:
        symbol = ctx.module_context.meshes.symbol(SdyMesh((), (), (device_index,)))
        per_value = ", ".join([f"<@{symbol}, []>"] * max(1, num_results))
        op.attributes["sdy.sharding"] = ir.Attribute.parse(
            f"#sdy.sharding_per_value<[{per_value}]>"
        )
    else:
        op.attributes["mhlo.sharding"] = ir.StringAttr.get(f"{{maximal device={device_index}}}")


def memory_kind_of(sharding) -> str | None:
    """`sharding`'s memory kind when it is not its devices' default (None otherwise): what a
    module writes as ``mhlo.memory_kind`` (``pinned_host`` ...)."""
    if sharding is None:
        return None
    kind = sharding.memory_kind
    if kind is None:
        return None
    default = sharding._internal_device_list.default_memory_kind
    return None if kind == default else kind


def place_in_memory(x: ir.Value, sharding) -> ir.Value:
    """`x` annotated to live in `sharding`'s memory kind (XLA's ``annotate_device_placement``
    custom call, as JAX emits it for a result in host memory); `x` itself in default memory."""
    kind = memory_kind_of(sharding)
    if kind is None:
        return x
    op = hlo.CustomCallOp(
        [x.type],
        [x],
        call_target_name="annotate_device_placement",
        has_side_effect=ir.BoolAttr.get(True),
        backend_config=ir.StringAttr.get(""),
    )
    op.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(
        {"_xla_buffer_placement": ir.StringAttr.get(kind)}
    )
    return op.result

"""`inspect_array_sharding`: a value's layout inside `jit`, known only when XLA's SPMD
partitioner has placed it (compile time), as JAX 0.10.2 reports it.

Under a trace the value becomes an `inspect_sharding` equation; its lowering is the
`InspectSharding` custom call that jaxlib's partitioner answers with the operand's
`HloSharding` while the program compiles. The callback then receives that layout as a
`NamedSharding` on the mesh in context when the trace began (else a sharding over the
program's devices), as JAX calls it, once per compilation; a program on one device calls it
with the replicated layout while lowering. Outside a trace the callback gets the Array's own
sharding right away.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from jaxlib import xla_client as xc
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core.internal import (
    Effect,
    Primitive,
    Tracer,
    control_flow_allowed_effects,
    lowerable_effects,
)
from laminax_dispatch.internal import register_lowering, sharding_from_hlo

__all__ = ["InspectShardingEffect", "inspect_array_sharding", "inspect_sharding_p"]


class InspectShardingEffect(Effect):
    """Keeps an `inspect_sharding` equation in its program (nothing reads its outputs)."""


lowerable_effects.add_type(InspectShardingEffect)
control_flow_allowed_effects.add_type(InspectShardingEffect)

inspect_sharding_p = Primitive("inspect_sharding")
inspect_sharding_p.multiple_results = True


@inspect_sharding_p.def_effectful_abstract_eval
def _abstract_eval(aval, *, callback):
    return [], {InspectShardingEffect()}


@inspect_sharding_p.def_impl
def _impl(value, *, callback):
    callback(value.sharding)
    return []


@inspect_sharding_p.def_batch
def _batch(axis_data, args, dims, *, callback):
    inspect_sharding_p.bind(args[0], callback=callback)
    return [], []


def _jvp(primals, tangents, *, callback):
    return inspect_sharding_p.bind(*primals, callback=callback), []


inspect_sharding_p.def_jvp(_jvp)


class _Reporter:
    """What the partitioner calls: the layout as a sharding the callback understands."""

    def __init__(self, callback, mesh, devices):
        self.callback, self.mesh, self.devices = callback, mesh, devices

    def __call__(self, hlo_sharding):
        from laminax_pjit._named_sharding import NamedSharding
        from laminax_pjit._partition_spec import PartitionSpec

        if self.mesh is not None and tuple(self.mesh.devices.flat) == tuple(self.devices):
            if hlo_sharding.is_manual():
                return self.callback(NamedSharding(self.mesh, PartitionSpec()))
            return self.callback(
                NamedSharding(self.mesh, PartitionSpec())._from_xla_hlo_sharding(hlo_sharding))
        return self.callback(sharding_from_hlo(tuple(self.devices), hlo_sharding))


# the reporters of programs lowered so far: jaxlib keeps only an encoded reference to each,
# so they must outlive every compilation of their module (JAX attaches them to the executable)
_alive: list = []


def _program_mesh(module_context, devices):
    """The mesh of the program's own shardings (a concrete mesh over all of its devices), as
    JAX takes the mesh of the program's context."""
    for sharding in module_context.program_shardings:
        mesh = getattr(sharding, "mesh", None)
        if mesh is not None and not mesh.empty and mesh.size == len(devices) and \
                hasattr(mesh, "devices"):
            return mesh
    return None


def _lowering(ctx, value, *, callback):
    devices = tuple(getattr(ctx.module_context.axis_context, "devices", ()) or ())
    mesh = callback.mesh or _program_mesh(ctx.module_context, devices)
    reporter = _Reporter(callback.callback, mesh, devices)
    if len(devices) <= 1:
        reporter(xc.HloSharding.replicate())  # one device: nothing for a partitioner to do
        return []
    if len(_alive) > 4096:
        del _alive[:2048]
    _alive.append(reporter)
    ctx.module_context.add_keepalive(reporter)
    key = xc.encode_inspect_sharding_callback(reporter)
    hlo.CustomCallOp([value.type], [value], call_target_name=ir.StringAttr.get("InspectSharding"),
                     has_side_effect=ir.BoolAttr.get(True),
                     backend_config=ir.StringAttr.get(key))
    return []


register_lowering(inspect_sharding_p, _lowering)


class _Callback:
    """The user's callback and the mesh in context where it was traced (hashable by identity,
    as jit cache keys need)."""

    def __init__(self, callback, mesh):
        self.callback, self.mesh = callback, mesh

    def __repr__(self) -> str:
        # as JAX prints a callback param: without the (run-dependent) address
        return re.sub(r" at 0x[0-9a-f]+>", " at 0xXXXXXXXXXXXX>", repr(self.callback))


def _context_mesh():
    from laminax_pjit._mesh import get_concrete_mesh, thread_resources

    mesh = get_concrete_mesh()
    if mesh is None or mesh.empty:
        mesh = thread_resources.env.physical_mesh
    return None if mesh is None or mesh.empty else mesh


def inspect_array_sharding(value, *, callback: Callable) -> None:
    """Calls `callback` with the sharding of `value` (a pytree of arrays): right away for
    concrete Arrays; inside `jit`, when XLA has decided the layout (at compile time).

    Example:
      >>> jit(lambda x: (inspect_array_sharding(x, callback=print), x * 2)[1])(x)
    """
    from laminax_pytree import tree_leaves

    for leaf in tree_leaves(value):
        if isinstance(leaf, Tracer):
            inspect_sharding_p.bind(leaf, callback=_Callback(callback, _context_mesh()))
        else:
            sharding = getattr(leaf, "sharding", None)
            if sharding is None:
                raise TypeError(
                    f"inspect_array_sharding: {type(leaf).__name__} has no sharding; pass a "
                    "laminax Array or a traced value.")
            callback(sharding)

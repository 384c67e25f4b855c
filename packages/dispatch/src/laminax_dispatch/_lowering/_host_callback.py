"""Calling Python from a compiled module: XLA's FFI host-callback custom call.

A lowering rule that needs the host (an effect that prints, a `pure_callback`, a tap) calls
`emit_python_callback`. The callback is registered with the module being built
(`ModuleContext.add_host_callback`); the custom call names it by index, and whoever compiles the
module passes `LoweringResult.host_callbacks` to the compiler, which keeps the functions alive
as long as the executable. On CPU the target is `xla_ffi_python_cpu_callback`; the callback
receives NumPy arrays and must return a tuple of arrays of the result avals.

In a program over several devices the call gets a maximal sharding on the first device of the
device assignment (JAX's rule for whole-array callbacks): XLA runs it once, with the whole
operands gathered there. Inside a manual region (shard_map's `SPMDAxisContext`) the region's
lowering decides instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core.internal import ShapedArray

from laminax_dispatch._lowering._shardings import set_maximal_sharding
from laminax_dispatch._mlir import aval_to_ir_type, token_type

__all__ = ["emit_python_callback"]

_CPU_TARGET = "xla_ffi_python_cpu_callback"
# XLA's SPMD partitioner runs this target once per device on that device's shard
_PARTITIONED_CPU_TARGET = "xla_ffi_partitioned_python_cpu_callback"


def _checked(callback: Callable, result_avals: Sequence[ShapedArray], name: str) -> Callable:
    """Wraps `callback` so that a wrong result raises on the host with what was expected."""

    def run(*args):
        outs = callback(*args)
        if not isinstance(outs, tuple | list) or len(outs) != len(result_avals):
            count = len(outs) if isinstance(outs, tuple | list) else "a non-sequence"
            raise RuntimeError(
                f"host callback {name} returned {count} results, expected a sequence of "
                f"{len(result_avals)}: return one array per declared result"
            )
        checked = []
        for i, (out, aval) in enumerate(zip(outs, result_avals, strict=True)):
            out = np.asarray(out)
            if out.shape != aval.shape or out.dtype != aval.dtype:
                raise RuntimeError(
                    f"host callback {name} result {i} is {out.dtype}{list(out.shape)}, expected "
                    f"{aval.dtype}{list(aval.shape)}: convert the result before returning it"
                )
            checked.append(out)
        return tuple(checked)

    return run


def _row_major(types) -> ir.ArrayAttr:
    """Default (row-major) layouts, minor-to-major, one per type (empty for tokens)."""
    ranks = [t.rank if isinstance(t, ir.RankedTensorType) else 0 for t in types]
    return ir.ArrayAttr.get([
        ir.DenseIntElementsAttr.get(np.arange(rank - 1, -1, -1, dtype=np.int64),
                                    type=ir.IndexType.get())
        for rank in ranks
    ])


def _device_index(sharding, devices) -> int:
    if sharding is None:
        return 0
    if len(sharding.device_set) != 1:
        raise ValueError(
            f"a host callback runs on one device, but its sharding {sharding} spans "
            f"{len(sharding.device_set)}; give a SingleDeviceSharding."
        )
    (device,) = sharding.device_set
    if device not in devices:
        raise ValueError(
            f"the host callback's sharding names {device}, which is not among the program's "
            f"devices {[d.id for d in devices]}; pick one of those."
        )
    return list(devices).index(device)


def emit_python_callback(
    ctx,
    callback: Callable,
    operands: Sequence[ir.Value],
    result_avals: Sequence[ShapedArray],
    *,
    token: ir.Value | None = None,
    has_side_effect: bool = True,
    name: str | None = None,
    sharding=None,
    partitioned: bool = False,
) -> tuple[list[ir.Value], ir.Value | None]:
    """Emits a custom call that runs `callback(*operands)` on the host.

    Args:
      ctx: the rule's `LoweringRuleContext` (its module context records the callback).
      callback: called with one NumPy array per operand; returns a sequence of arrays matching
        `result_avals`.
      operands: the MLIR values passed to the callback.
      result_avals: the avals of the callback's results.
      token: a runtime token to thread through (ordered effects); the call then comes after
        every operation that produced the token, and the new token after the call.
      has_side_effect: keep the call even when its results are unused.
      name: how errors name the callback (defaults to its `__name__`).
      sharding: in a program over several devices, a `SingleDeviceSharding` naming the device
        the call runs on (default: the first of the device assignment).
      partitioned: in a program over several devices, call back once per device with its
        local shards of the operands instead of once with whole values (no results allowed).

    Returns:
      The result values, and the new token (None when no token was given).

    Example:
      In a lowering rule: ``outs, _ = emit_python_callback(ctx, fn, [x], ctx.avals_out)``.
    """
    name = name or getattr(callback, "__name__", repr(callback))
    if partitioned and result_avals:
        raise ValueError("Partitioned callback not supported with return values.")
    checked = _checked(callback, result_avals, name)
    if token is not None:

        def host_fn(token_value, *args):
            return (token_value, *checked(*args))

        operands = [token, *operands]
    else:
        host_fn = checked
    index = ctx.module_context.add_host_callback(host_fn)
    result_types = [aval_to_ir_type(a) for a in result_avals]
    if token is not None:
        result_types = [token_type(), *result_types]
    layouts = {}
    if partitioned:
        # XLA's partitioner for this target requires layout-constrained custom calls
        layouts = {
            "operand_layouts": _row_major([v.type for v in operands]),
            "result_layouts": _row_major(result_types),
        }
    op = hlo.CustomCallOp(
        result_types,
        list(operands),
        **layouts,
        call_target_name=ir.StringAttr.get(_PARTITIONED_CPU_TARGET if partitioned else _CPU_TARGET),
        has_side_effect=ir.BoolAttr.get(has_side_effect),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
        backend_config=ir.DictAttr.get(
            {"index": ir.IntegerAttr.get(ir.IntegerType.get_unsigned(64), index)}
        ),
    )
    devices = ctx.module_context.axis_context.devices
    if len(devices) > 1:
        # a whole-array callback in an SPMD program runs once, on one device
        set_maximal_sharding(ctx, op, len(result_types), _device_index(sharding, devices))
    results = list(op.results)
    if token is not None:
        return results[1:], results[0]
    return results, None

"""What every callback primitive shares: running a Python function on the host from compiled code.

`FlatCallback` is the hashable parameter a callback primitive carries (the user's function and
how to rebuild its arguments from flat arrays), so two traces of the same call compare equal and
share a compiled executable. `emit_host_call` is the lowering: XLA's FFI Python callback custom
call (dispatch's `emit_python_callback`), threaded through a runtime token when the effect is
ordered, and run by one device of a program over several (the first, or the one a
single-device `sharding` names).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from laminax_core import dtypes
from laminax_core.internal import ShapedArray
from laminax_dispatch import GSPMDSharding, device_put, local_devices
from laminax_dispatch.internal import (
    SPMDAxisContext,
    emit_python_callback,
    emit_sharding_constraint,
)
from laminax_pytree import PyTreeDef, tree_flatten, tree_leaves, tree_unflatten

__all__ = [
    "FlatCallback",
    "check_results",
    "cpu_arrays",
    "emit_host_call",
    "result_avals_of",
    "running_host_callback",
]

logger = logging.getLogger("laminax_hostcb")


@dataclasses.dataclass(frozen=True)
class FlatCallback:
    """A Python function called with flat arrays: `in_tree` rebuilds its `(args, kwargs)`."""

    callback_func: Callable[..., Any]
    in_tree: PyTreeDef

    def __call__(self, *flat_args) -> list:
        args, kwargs = tree_unflatten(self.in_tree, flat_args)
        return tree_leaves(self.callback_func(*args, **kwargs))

    def __str__(self) -> str:
        return getattr(self.callback_func, "__name__", repr(self.callback_func))


def result_avals_of(result_shape_dtypes) -> tuple[list[ShapedArray], Any]:
    """The flat result avals and their tree, from a pytree of objects with shape and dtype.

    Raises ValueError, as JAX does, for a 64-bit dtype while `jax_enable_x64` is off, and
    AttributeError (JAX's type) for a leaf without ``shape`` and ``dtype``.
    """
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            # AttributeError, the type JAX raises here (it reads `leaf.dtype`)
            raise AttributeError(
                f"result_shape_dtypes leaves must have 'shape' and 'dtype' attributes (for "
                f"example jax.ShapeDtypeStruct); got {leaf!r} of type {type(leaf).__name__}."
            )
        dtype = np.dtype(leaf.dtype)
        if dtypes.canonicalize_dtype(dtype) != dtype:
            raise ValueError(
                "result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled"
            )
        avals.append(ShapedArray(tuple(leaf.shape), dtype))
    return avals, tree


def cpu_arrays(flat_args: Sequence[np.ndarray]) -> list:
    """The callback's operands as Arrays on the first CPU device, as JAX hands them over.

    The custom call's buffers live only while the callback runs, so each is copied first: a
    callback may keep what it was given.
    """
    device = local_devices(backend="cpu")[0]
    return [device_put(np.array(a, copy=True), device) for a in flat_args]


def check_results(outs, result_avals: Sequence[ShapedArray]) -> tuple:
    """The callback's results as NumPy arrays of exactly the declared avals (JAX's messages)."""
    if len(outs) != len(result_avals):
        raise RuntimeError(
            "Mismatched number of outputs from callback. "
            f"Expected: {len(result_avals)}, Actual: {len(outs)}"
        )
    checked = []
    for i, (out, aval) in enumerate(zip(outs, result_avals, strict=True)):
        value = np.asarray(out)
        value = value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)
        if value.shape != aval.shape:
            raise RuntimeError(
                f"Incorrect output shape for return value #{i}: "
                f"Expected: {aval.shape}, Actual: {value.shape}"
            )
        if value.dtype != aval.dtype:
            raise RuntimeError(
                f"Incorrect output dtype for return value #{i}: "
                f"Expected: {aval.dtype}, Actual: {value.dtype}"
            )
        checked.append(value)
    return tuple(checked)


_inside = threading.local()


def running_host_callback() -> bool:
    """Whether the calling thread is running a host callback of a computation right now."""
    return getattr(_inside, "depth", 0) > 0


def _marked(host_fn: Callable) -> Callable:
    def run(*args):
        _inside.depth = getattr(_inside, "depth", 0) + 1
        try:
            return host_fn(*args)
        finally:
            _inside.depth -= 1

    run.__name__ = getattr(host_fn, "__name__", "host_callback")
    return run


def emit_host_call(
    ctx,
    host_fn: Callable,
    operands: Sequence[ir.Value],
    result_avals: Sequence[ShapedArray],
    *,
    effect=None,
    has_side_effect: bool,
    name: str,
    sharding=None,
    partitioned: bool = False,
) -> list[ir.Value]:
    """Lowers one host call: `host_fn(*numpy operands) -> tuple of result arrays`.

    `effect`, when given and ordered, threads its runtime token through the call, so the calls
    of that effect happen in program order (and across executions, in dispatch order).
    `sharding` (a single-device sharding) picks the device that calls in a program over several
    devices (default: the first); inside a manual region every device calls, so none may be
    given (JAX's rule).
    """
    if sharding is not None and isinstance(ctx.module_context.axis_context, SPMDAxisContext):
        raise NotImplementedError(
            "callbacks do not support specifying sharding inside spmd computations"
        )
    token = ctx.tokens_in.get(effect) if effect is not None else None
    outs, new_token = emit_python_callback(
        ctx,
        _marked(host_fn),
        list(operands),
        list(result_avals),
        token=token,
        has_side_effect=has_side_effect,
        name=name,
        sharding=sharding,
        partitioned=partitioned,
    )
    if new_token is not None:
        ctx.tokens_out = {**ctx.tokens_in, effect: new_token}
    devices = tuple(ctx.module_context.axis_context.devices)
    if sharding is not None and len(devices) > 1 and outs:
        # Shardy leaves results pinned to a device other than the first where they are (the
        # program then reads zeros, in JAX too); saying they are replicated makes XLA send them
        replicated = GSPMDSharding.get_replicated(devices)
        outs = [
            emit_sharding_constraint(ctx, out, aval, replicated)
            for out, aval in zip(outs, result_avals, strict=True)
        ]
    return outs


"""Today's callbacks: `pure_callback` and `io_callback` (JAX's names, arguments and rules).

`pure_callback_p` has no effect: XLA may skip, repeat or reorder it, and it batches by the
caller's `vmap_method`. `io_callback_p` carries `IOEffect` (kept, unordered) or, with
`ordered=True`, `OrderedIOEffect`, whose runtime token orders its calls within a program and
across programs in dispatch order. Neither is differentiable (wrap one in `custom_jvp` /
`custom_vjp`). Both lower to one FFI host call; eagerly they run through dispatch's compiled
path, as in JAX.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from laminax_core import lax
from laminax_core.internal import (
    Effect,
    Primitive,
    control_flow_allowed_effects,
    lowerable_effects,
    ordered_effects,
)
from laminax_dispatch import register_lowering
from laminax_dispatch.internal import shardable_ordered_effects
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_hostcb._host_calls import (
    FlatCallback,
    check_results,
    cpu_arrays,
    emit_host_call,
    logger,
    result_avals_of,
)

__all__ = [
    "IOEffect",
    "OrderedIOEffect",
    "io_callback",
    "io_callback_p",
    "pure_callback",
    "pure_callback_p",
    "vmap_by_method",
    "CallbackPlacement",
]

VMAP_METHODS = (
    "sequential",
    "sequential_unrolled",
    "expand_dims",
    "broadcast_all",
    "legacy_vectorized",
    None,
)


@dataclasses.dataclass(frozen=True)
class CallbackPlacement:
    """The single-device sharding a callback was given: where the call runs, not where the
    program runs, so it is kept out of sight of placement (which fixes a program's devices
    from the shardings its equations carry)."""

    sharding: Any

    def __repr__(self) -> str:
        return repr(self.sharding)


def _placement_param(sharding):
    return None if sharding is None else CallbackPlacement(sharding)


def _sharding_of(param):
    return None if param is None else param.sharding


def _host_function(callback: FlatCallback, result_avals, api_name: str) -> Callable:
    def run(*flat_args):
        try:
            outs = callback(*cpu_arrays(flat_args))
        except BaseException:
            logger.exception("%s failed", api_name)
            raise
        return check_results(outs, result_avals)

    run.__name__ = str(callback)
    return run


def _move_to_front(x, dim: int | None):
    if dim is None or dim == 0:
        return x
    perm = [dim, *(d for d in range(x.ndim) if d != dim)]
    return lax.transpose(x, perm)


def _batched_aval(size: int, aval):
    return aval.update(shape=(size, *aval.shape))


# ----- pure_callback ------------------------------------------------------------------------

pure_callback_p = Primitive("pure_callback")
pure_callback_p.multiple_results = True


@pure_callback_p.def_abstract_eval
def _pure_callback_abstract_eval(*avals, callback, result_avals, sharding, vmap_method):
    return list(result_avals)


@pure_callback_p.def_jvp
def _pure_callback_jvp(primals, tangents, **params):
    raise ValueError(
        "Pure callbacks do not support JVP. "
        "Please use `jax.custom_jvp` to use callbacks while taking gradients."
    )


@pure_callback_p.def_transpose
def _pure_callback_transpose(cts, *args, **params):
    raise ValueError(
        "Pure callbacks do not support transpose. "
        "Please use `jax.custom_vjp` to use callbacks while taking gradients."
    )


def vmap_by_method(bind: Callable, size: int, args, dims, vmap_method, result_avals):
    """JAX's batching of a callback by `vmap_method`: one call on a batch, or a loop of calls.

    `bind(args, result_avals)` applies the callback primitive with its other params.
    """
    moved = [_move_to_front(x, d) for x, d in zip(args, dims, strict=True)]
    batched_avals = tuple(_batched_aval(size, a) for a in result_avals)
    if vmap_method == "legacy_vectorized":
        outs = bind(moved, batched_avals)
    elif vmap_method in ("expand_dims", "broadcast_all"):
        width = size if vmap_method == "broadcast_all" else 1
        moved = [
            lax.broadcast(x, (width,)) if d is None else x
            for x, d in zip(moved, dims, strict=True)
        ]
        outs = bind(moved, batched_avals)
    elif vmap_method in ("sequential", "sequential_unrolled"):
        is_batched = [d is not None for d in dims]
        fixed = [x for x, b in zip(moved, is_batched, strict=True) if not b]
        mapped = [x for x, b in zip(moved, is_batched, strict=True) if b]

        def one(_, xs):
            it_fixed, it_mapped = iter(fixed), iter(xs)
            merged = [next(it_mapped) if b else next(it_fixed) for b in is_batched]
            return (), list(bind(merged, result_avals))

        _, outs = lax.scan(one, (), mapped, unroll=vmap_method == "sequential_unrolled")
    else:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is "
            "one of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}."
        )
    return list(outs), [0] * len(outs)


@pure_callback_p.def_batch
def _pure_callback_batch(axis_data, args, dims, *, vmap_method, result_avals, **params):
    def bind(operands, avals):
        return pure_callback_p.bind(
            *operands, vmap_method=vmap_method, result_avals=avals, **params
        )

    return vmap_by_method(bind, axis_data.size, args, dims, vmap_method, result_avals)


def _pure_callback_lower(ctx, *args, callback, result_avals, sharding, vmap_method):
    host_fn = _host_function(callback, result_avals, "jax.pure_callback")
    return emit_host_call(
        ctx,
        host_fn,
        args,
        result_avals,
        has_side_effect=False,
        name=str(callback),
        sharding=_sharding_of(sharding),
    )


register_lowering(pure_callback_p, _pure_callback_lower)


def pure_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding=None,
    vmap_method: str | None = None,
    **kwargs: Any,
):
    """Calls a pure Python function on the host from traced or compiled code.

    The function must be pure: its result may be computed fewer or more times than written, or
    not at all when nothing uses it. It receives Arrays on the CPU and returns a pytree of
    arrays matching `result_shape_dtypes`.

    Args:
      callback: the host function, called as ``callback(*args, **kwargs)``.
      result_shape_dtypes: a pytree of objects with ``shape`` and ``dtype`` (for example
        `ShapeDtypeStruct`) describing what `callback` returns.
      *args: the arguments (pytrees of arrays).
      sharding: a single-device sharding naming the device that calls, in a program over
        several devices (default: the program's first device).
      vmap_method: how `vmap` treats the call: ``"sequential"`` (a loop of calls),
        ``"sequential_unrolled"``, ``"expand_dims"`` (one call; unbatched arguments get a
        leading axis of size 1), ``"broadcast_all"`` (one call; every argument is broadcast to
        the batch), ``"legacy_vectorized"`` (one call, unbatched arguments unchanged); None
        makes `vmap` raise NotImplementedError.
      **kwargs: keyword arguments passed to `callback`.

    Returns:
      The callback's result, as Arrays with the structure of `result_shape_dtypes`.

    Raises:
      ValueError: an unknown `vmap_method`, a 64-bit result dtype without x64, or
        differentiation (use `custom_jvp` around the call).

    Example:
      >>> import numpy as np
      >>> from laminax_core import ShapeDtypeStruct
      >>> out = pure_callback(np.sin, ShapeDtypeStruct((), np.float32), np.float32(0.0))
      >>> float(out)
      0.0
    """
    if vmap_method not in VMAP_METHODS:
        raise ValueError(
            f"vmap_method must be on of the allowed methods {list(VMAP_METHODS)}, "
            f"but got: {vmap_method}"
        )
    flat_args, in_tree = tree_flatten((args, kwargs))
    result_avals, out_tree = result_avals_of(result_shape_dtypes)
    outs = pure_callback_p.bind(
        *flat_args,
        callback=FlatCallback(callback, in_tree),
        result_avals=tuple(result_avals),
        sharding=_placement_param(sharding),
        vmap_method=vmap_method,
    )
    return tree_unflatten(out_tree, outs)


# ----- io_callback --------------------------------------------------------------------------


class IOEffect(Effect):
    """An `io_callback` that may run in any order relative to other effects."""

    __str__ = lambda self: "IO"  # noqa: E731  (JAX prints effects by these names)


class OrderedIOEffect(Effect):
    """An `io_callback(ordered=True)`: its calls happen in program order."""

    __str__ = lambda self: "OrderedIO"  # noqa: E731


_IO = IOEffect()
_ORDERED_IO = OrderedIOEffect()
for _effect_type in (IOEffect, OrderedIOEffect):
    lowerable_effects.add_type(_effect_type)
    control_flow_allowed_effects.add_type(_effect_type)
ordered_effects.add_type(OrderedIOEffect)
shardable_ordered_effects.add_type(OrderedIOEffect)  # as in JAX

io_callback_p = Primitive("io_callback")
io_callback_p.multiple_results = True


@io_callback_p.def_effectful_abstract_eval
def _io_callback_abstract_eval(*avals, callback, result_avals, sharding, ordered):
    return list(result_avals), {_ORDERED_IO if ordered else _IO}


@io_callback_p.def_jvp
def _io_callback_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


@io_callback_p.def_transpose
def _io_callback_transpose(cts, *args, **params):
    raise ValueError("IO callbacks do not support transpose.")


@io_callback_p.def_batch
def _io_callback_batch(axis_data, args, dims, *, callback, result_avals, sharding, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")

    def bind(operands, avals):
        return io_callback_p.bind(
            *operands, callback=callback, result_avals=avals, sharding=sharding, ordered=False
        )

    return vmap_by_method(bind, axis_data.size, args, dims, "sequential", result_avals)


def _io_callback_lower(ctx, *args, callback, result_avals, sharding, ordered):
    host_fn = _host_function(callback, result_avals, "jax.io_callback")
    return emit_host_call(
        ctx,
        host_fn,
        args,
        result_avals,
        effect=_ORDERED_IO if ordered else None,
        has_side_effect=True,
        name=str(callback),
        sharding=_sharding_of(sharding),
    )


register_lowering(io_callback_p, _io_callback_lower)


def io_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding=None,
    ordered: bool = False,
    **kwargs: Any,
):
    """Calls an impure Python function on the host; the call is never dropped.

    Args:
      callback: the host function, called as ``callback(*args, **kwargs)`` with Arrays on the
        CPU; it returns a pytree of arrays matching `result_shape_dtypes`.
      result_shape_dtypes: a pytree of objects with ``shape`` and ``dtype``.
      *args: the arguments (pytrees of arrays).
      sharding: a single-device sharding naming the device that calls, in a program over
        several devices (default: the program's first device).
      ordered: calls happen in program order, also across jitted calls and inside loops
        (such a call cannot be `vmap`-ped).
      **kwargs: keyword arguments passed to `callback`.

    Returns:
      The callback's result, as Arrays with the structure of `result_shape_dtypes`.

    Example:
      >>> import numpy as np
      >>> seen = []
      >>> _ = io_callback(lambda x: seen.append(int(x)), None, np.int32(7))
      >>> seen
      [7]
    """
    flat_args, in_tree = tree_flatten((args, kwargs))
    result_avals, out_tree = result_avals_of(result_shape_dtypes)
    outs = io_callback_p.bind(
        *flat_args,
        callback=FlatCallback(callback, in_tree),
        result_avals=tuple(result_avals),
        sharding=_placement_param(sharding),
        ordered=ordered,
    )
    return tree_unflatten(out_tree, outs)

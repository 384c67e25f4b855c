"""`device_put` as a primitive, so that placing data composes with every transformation.

Outside any transformation `device_put` places data at once (`_device_put.device_put`). Under
one (`jit`, `grad`, `vmap`, `make_jaxpr`) it binds `device_put_p`, one equation for all the
leaves, printed as JAX prints it::

    device_put[copy_semantics=(ArrayCopySemantics.REUSE_INPUT,) devices=(None,) srcs=(None,)]

Its rules: the value is unchanged, so it is linear (jvp: the tangents go through the same
placement; transpose: the cotangents go back to ``srcs``, where the values came from), batched
under `vmap` with the batch dimension added to a splitting sharding unsplit
(`_jit_primitive.batched_sharding`), and under `jit` a placement onto a
`Sharding` of a many-device program lowers to a sharding constraint (a resharding inside the
program); onto a device, or in a one-device program, it lowers to nothing.
"""

from __future__ import annotations

from typing import Any

from jaxlib import _jax
from jaxlib import xla_client as xc
from laminax_core.internal import (
    Primitive,
    Tracer,
    UndefinedPrimal,
    Zero,
    current_trace,
    eval_interpreter,
    get_aval,
    no_effects,
    set_device_placer,
)
from laminax_pytree import tree_flatten, tree_unflatten
from laminax_pytree.internal import broadcast_prefix

from laminax_dispatch import _device_put
from laminax_dispatch._jit_primitive import batched_sharding
from laminax_dispatch._lowering._core import register_lowering
from laminax_dispatch._lowering._shardings import emit_sharding_constraint
from laminax_dispatch._sharding import Sharding
from laminax_dispatch._transfer_guard import explicit_device_put_scope

__all__ = ["device_put", "device_put_p"]

_REUSE = _jax.ArrayCopySemantics.REUSE_INPUT
_COPY = _jax.ArrayCopySemantics.ALWAYS_COPY
_DONATE = _jax.ArrayCopySemantics.DONATE_INPUT
_EVAL_TRACE = eval_interpreter.eval_trace

device_put_p = Primitive("device_put")
device_put_p.multiple_results = True


def _print_params(params) -> list:
    return [(k, params[k]) for k in ("copy_semantics", "devices", "srcs")]


device_put_p.print_params = _print_params


def _bind(xs, devices, srcs, semantics) -> list:
    return device_put_p.bind(
        *xs, devices=tuple(devices), srcs=tuple(srcs), copy_semantics=tuple(semantics)
    )


def _impl(*xs, devices, srcs, copy_semantics):
    return [
        _device_put.device_put(
            x, d, may_alias=False if c == _COPY else None, donate=c == _DONATE
        )
        for x, d, c in zip(xs, devices, copy_semantics, strict=True)
    ]


device_put_p.def_impl(_impl)
device_put_p.def_effectful_abstract_eval(lambda *avals, **params: (list(avals), no_effects))
device_put_p.def_reference(lambda *xs, **params: list(xs))


def _jvp(primals, tangents, *, devices, srcs, copy_semantics):
    primals_out = _bind(primals, devices, srcs, copy_semantics)
    nonzero = [i for i, t in enumerate(tangents) if not isinstance(t, Zero)]
    moved = iter(
        _bind(
            [tangents[i] for i in nonzero],
            [devices[i] for i in nonzero],
            [srcs[i] for i in nonzero],
            [_REUSE] * len(nonzero),
        )
        if nonzero
        else []
    )
    tangents_out = [
        next(moved) if not isinstance(t, Zero) else Zero.from_primal_value(p)
        for t, p in zip(tangents, primals_out, strict=True)
    ]
    return primals_out, tangents_out


def _transpose(cts, *args, devices, srcs, copy_semantics):
    # the cotangent of a placement onto `devices` goes back to where the value came from
    given = [
        i for i, (ct, x) in enumerate(zip(cts, args, strict=True))
        if not isinstance(ct, Zero) and isinstance(x, UndefinedPrimal)
    ]  # fmt: skip
    moved = iter(
        _bind([cts[i] for i in given], [srcs[i] for i in given], [devices[i] for i in given],
              [_REUSE] * len(given))
        if given
        else []
    )  # fmt: skip
    out = []
    for i, x in enumerate(args):
        if not isinstance(x, UndefinedPrimal):
            out.append(None)
        elif i in given:
            out.append(next(moved))
        else:
            out.append(Zero(x.aval.to_tangent_aval()))
    return out


device_put_p.def_jvp(_jvp)
device_put_p.def_transpose(_transpose)


def _batch(axis_data, args, dims, *, devices, srcs, copy_semantics):
    ndims = [get_aval(x).ndim - (d is not None) for x, d in zip(args, dims, strict=True)]
    outs = _bind(
        args,
        [_batched(p, d, n) for p, d, n in zip(devices, dims, ndims, strict=True)],
        [_batched(p, d, n) for p, d, n in zip(srcs, dims, ndims, strict=True)],
        copy_semantics,
    )
    return outs, list(dims)


def _batched(placement, axis, ndim):
    if isinstance(placement, Sharding):
        return batched_sharding(placement, axis, ndim)
    return placement


device_put_p.def_batch(_batch)


def _lower(ctx, *xs, devices, srcs, copy_semantics):
    return [
        emit_sharding_constraint(ctx, x, aval, d) if isinstance(d, Sharding) else x
        for x, aval, d in zip(xs, ctx.avals_in, devices, strict=True)
    ]


register_lowering(device_put_p, _lower)


def _is_placement(node: Any) -> bool:
    return node is None or isinstance(node, xc.Device | Sharding)


def _check_leaf(x) -> None:
    if isinstance(x, Tracer):
        return
    try:
        get_aval(x)
    except TypeError as err:
        raise TypeError(
            f"device_put: argument {x!r} of type {type(x)} is not a valid array type; pass "
            "NumPy arrays, Python or NumPy scalars, Arrays, or pytrees of them."
        ) from err


def device_put(
    x: Any,
    device: xc.Device | Sharding | None = None,
    *,
    src: xc.Device | Sharding | None = None,
    may_alias: bool | None = None,
    donate: bool = False,
) -> Any:
    """Places `x` (an array, scalar or pytree of them) on a device or onto a sharding.

    Under a transformation (`jit`, `grad`, `vmap`, `make_jaxpr`) this stages a `device_put`
    equation: linear under differentiation, batched under vmap, a sharding constraint under
    jit. Outside one it places the data at once.

    Args:
      x: a NumPy array, Python or NumPy scalar, Array, or a pytree of these.
      device: a `Device` or any `Sharding` to commit the result to (an Array laid out
        otherwise is resharded), None to put it on the default device uncommitted (Arrays are
        then returned unchanged), or a pytree prefix of `x` of these.
      src: where `x` comes from (a placement or prefix of them, like `device`): under
        differentiation the cotangents go back there. Default: nowhere in particular.
      may_alias: False to always copy; True or None (the default) let the result share the
        input's memory.
      donate: True to hand the input Array's buffer over to the result.

    Returns:
      Arrays (or tracers, under a transformation) with the structure of `x`.

    Raises:
      TypeError: a leaf is not an array type, or `device` is not a placement.
      ValueError: both `may_alias` and `donate` are True, `device` is not a prefix of `x`,
        or a sharding splits a dimension unevenly.

    Example:
      >>> from laminax_dispatch import device_put
      >>> device_put(1.0)
      Array(1., dtype=float32, weak_type=True)
    """
    if current_trace() is _EVAL_TRACE:
        # placed at once; `src` only matters to differentiation. The copy is the user's
        # explicit request, which the transfer guards' "*_explicit" levels alone refuse.
        with explicit_device_put_scope():
            return _device_put.device_put(x, device, may_alias=may_alias, donate=donate)
    if may_alias and donate:
        raise ValueError(
            "device_put: may_alias and donate cannot be True at the same time; donate gives the "
            "buffer away, may_alias shares it."
        )
    leaves, treedef = tree_flatten(x)
    if not leaves:
        return x
    for leaf in leaves:
        _check_leaf(leaf)
    devices = _per_leaf(device, x, len(leaves), "device")
    srcs = _per_leaf(src, x, len(leaves), "src")
    semantics = _DONATE if donate else _COPY if may_alias is False else _REUSE
    outs = _bind(leaves, devices, srcs, [semantics] * len(leaves))
    return tree_unflatten(treedef, outs)


def _per_leaf(placement, x, n: int, what: str) -> list:
    if _is_placement(placement):
        return [placement] * n
    try:
        flat = broadcast_prefix(placement, x, is_leaf=_is_placement)
    except ValueError as err:
        raise ValueError(
            f"device_put: the {what} argument must be a Device, a Sharding, None, or a pytree "
            f"prefix of x made of those. {err}"
        ) from err
    for p in flat:
        if not _is_placement(p):
            _device_put._target(p)  # raises the TypeError naming it
    return flat


# jnp.zeros(..., device=d), jnp.arange(..., device=d) and the other creation functions
set_device_placer(device_put)

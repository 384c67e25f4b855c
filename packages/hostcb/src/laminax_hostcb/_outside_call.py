"""The seed's `outside_call` primitive: `id_tap`, `id_print` and `call` on today's runtime.

One primitive serves the three functions. With ``identity=True`` (a tap) its results are its
operands and the host function's result is ignored; the custom call copies the operands into
`TAPS` and returns, so the computation does not wait for the tap function. With
``identity=False`` (`call`) the computation waits for the host function's results, after every
earlier tap has run. Both carry `HostCallbackEffect`, an ordered effect: its runtime token keeps
the host calls in program order within a computation and in dispatch order across
computations, inside loops and conditionals too.

Transformations follow the seed: `vmap` makes one call with the whole batch and records
``("batch", {"batch_dims": dims})`` in `transforms`; `jvp` (so `grad` and `linearize`) taps
the primal values only, once; `call` supports no transformation.
"""

from __future__ import annotations

import functools
import logging

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import dtypes
from laminax_core.internal import (
    Effect,
    Primitive,
    ShapedArray,
    Zero,
    control_flow_allowed_effects,
    lowerable_effects,
    ordered_effects,
    partial_eval_rules,
    set_current_trace,
)
from laminax_dispatch import SingleDeviceSharding, local_devices, register_lowering
from laminax_dispatch.internal import (
    SPMDAxisContext,
    apply_primitive,
    shardable_ordered_effects,
)
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_hostcb import _config
from laminax_hostcb._host_calls import emit_host_call
from laminax_hostcb._tap_queue import TAPS

__all__ = ["CallbackWrapper", "HostCallbackEffect", "outside_call_p", "unpack_transforms"]

logger = logging.getLogger("laminax_hostcb")


class HostCallbackEffect(Effect):
    """id_tap / id_print / call: host calls in program order."""

    __str__ = lambda self: "HostCallback"  # noqa: E731


HOST_CALLBACK = HostCallbackEffect()
lowerable_effects.add_type(HostCallbackEffect)
control_flow_allowed_effects.add_type(HostCallbackEffect)
ordered_effects.add_type(HostCallbackEffect)
shardable_ordered_effects.add_type(HostCallbackEffect)  # runs on one device of a pjit


class CallbackWrapper:
    """The user's function with the seed's calling convention; equal for equal functions, so a
    function tapped twice compiles once."""

    def __init__(self, callback_func, identity: bool, call_with_device: bool):
        self.callback_func = callback_func
        self.identity = identity
        self.call_with_device = call_with_device
        self.__name__ = getattr(callback_func, "__name__", type(callback_func).__name__)

    def _key(self):
        return (self.callback_func, self.identity, self.call_with_device)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, CallbackWrapper) and self._key() == other._key()

    def __repr__(self):
        return repr(self.callback_func)

    def __call__(self, arg, device, transforms):
        device_kw = {"device": device} if self.call_with_device else {}
        if self.identity:
            return self.callback_func(arg, transforms, **device_kw)
        return self.callback_func(arg, **device_kw)


def unpack_transforms(transforms) -> tuple:
    """The internal ``(name, *params)`` records as the seed's ``(name, params dict)`` pairs."""
    unpacked = []
    for name, *params in transforms:
        if name == "batch":
            unpacked.append((name, {"batch_dims": params[0]}))
        elif name == "pmap":
            unpacked.append((name, {"axis_name": params[0], "axis_size": params[1]}))
        else:
            unpacked.append((name, {}))
    return tuple(unpacked)


def _run_callback(arrays, device, *, callback, arg_treedef, identity, transforms, **params):
    """Calls the user's function on host arrays; for `call`, checks and returns its results."""
    arg = tree_unflatten(arg_treedef, list(arrays))
    result = callback(arg, device, unpack_transforms(transforms))
    if identity:
        return ()
    return _checked_call_results(
        callback, result, params["result_treedef"], params["flat_results_aval"]
    )


def _checked_call_results(callback, result, result_treedef, flat_results_aval) -> tuple:
    leaves, treedef = tree_flatten(result)
    if treedef != result_treedef:
        raise TypeError(
            f"Callback func {callback} should have returned a result with pytree "
            f"{result_treedef} but returned {treedef}"
        )
    values = []
    for leaf in leaves:
        value = np.asarray(leaf)
        values.append(value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False))
    actual = [ShapedArray(v.shape, v.dtype) for v in values]
    if any(
        (a.shape, a.dtype) != (e.shape, e.dtype)
        for a, e in zip(actual, flat_results_aval, strict=True)
    ):
        raise TypeError(
            f"Callback func {callback} should have returned a result with abstract values "
            f"{tree_unflatten(result_treedef, [a.str_short() for a in flat_results_aval])} but "
            f"returned {tree_unflatten(treedef, [a.str_short() for a in actual])}"
        )
    return tuple(values)


# ----- the primitive ------------------------------------------------------------------------

outside_call_p = Primitive("outside_call")
outside_call_p.multiple_results = True


@outside_call_p.def_effectful_abstract_eval
def _outside_call_abstract_eval(*avals, identity, **params):
    if identity:
        return list(avals), {HOST_CALLBACK}
    return list(params["flat_results_aval"]), {HOST_CALLBACK}


@outside_call_p.def_impl
def _outside_call_impl(*args, **params):
    if _config.inline.value:
        device = local_devices()[params["device_index"]]
        arrays = [np.asarray(a) for a in args]
        if params["identity"]:
            _run_callback(arrays, device, **params)
            return list(args)
        return list(_run_callback(arrays, device, **params))
    # Compiled even eagerly, so that every tap goes through the same ordered queue.
    return apply_primitive(outside_call_p, args, params)


def _unsupported(transformation: str, params) -> NotImplementedError:
    return NotImplementedError(
        f"host_callback.call({params['callback'].__name__}, ...) does not support "
        f"{transformation}: "
        "the host function's result has no derivative or batching rule. Use id_tap for "
        "side effects, pure_callback with a vmap_method for batching, or wrap the call in "
        "custom_jvp / custom_vjp to differentiate it."
    )


def _instantiate(tangent):
    if isinstance(tangent, Zero):
        return np.zeros(tangent.aval.shape, tangent.aval.dtype)
    return tangent


@outside_call_p.def_jvp
def _outside_call_jvp(primals, tangents, **params):
    if not params["identity"]:
        raise _unsupported("differentiation (jvp, grad)", params)
    if not _config.ad_transforms.value:
        # The seed: the tap sees the primal values only, and tangents pass through unchanged.
        return outside_call_p.bind(*primals, **params), list(tangents)
    # The seed's compatibility mode: one tap of (primals, tangents), transform "jvp".
    tangents = [_instantiate(t) for t in tangents]
    arg_treedef = params["arg_treedef"]
    _, pair_treedef = tree_flatten(
        (tree_unflatten(arg_treedef, primals), tree_unflatten(arg_treedef, tangents))
    )
    outs = outside_call_p.bind(
        *primals,
        *tangents,
        **dict(params, arg_treedef=pair_treedef, transforms=(*params["transforms"], ("jvp",))),
    )
    return outs[: len(primals)], outs[len(primals) :]


def _outside_call_partial_eval(trace, args, params):
    # linearize (grad) of a "jvp" tap in the compatibility mode: the known primals are tapped
    # now, without "jvp"; the unknown tangents are staged as a tap of their own, which the
    # backward pass transposes into a tap of the cotangents ("jvp", "transpose").
    transforms = params["transforms"]
    n = len(args) // 2
    if not (params["identity"] and transforms and transforms[-1] == ("jvp",)) or any(
        trace.is_unknown(x) for x in args[:n]
    ):
        return trace.stage(outside_call_p, args, params)
    primal_treedef, tangent_treedef = params["arg_treedef"].children()
    with set_current_trace(trace.parent):
        known = outside_call_p.bind(
            *args[:n], **dict(params, arg_treedef=primal_treedef, transforms=transforms[:-1])
        )
    staged = trace.stage(outside_call_p, args[n:], dict(params, arg_treedef=tangent_treedef))
    return [*known, *staged]


partial_eval_rules[outside_call_p] = _outside_call_partial_eval


@outside_call_p.def_transpose
def _outside_call_transpose(cts, *args, **params):
    if not params["identity"]:
        raise _unsupported("transposition (grad)", params)
    cts = [_instantiate(ct) for ct in cts]
    if params["transforms"] and params["transforms"][-1] == ("jvp",):
        cts = outside_call_p.bind(
            *cts, **dict(params, transforms=(*params["transforms"], ("transpose",)))
        )
    return list(cts)


@outside_call_p.def_batch
def _outside_call_batch(axis_data, args, dims, **params):
    if not params["identity"]:
        raise _unsupported("vmap", params)
    dims = tuple(dims)
    transforms = (*params["transforms"], ("batch", dims))
    outs = outside_call_p.bind(*args, **dict(params, transforms=transforms))
    return outs, list(dims)


def _device_of(devices, position) -> object:
    index = int(position)
    if devices and index < len(devices):
        return devices[index]
    return local_devices()[index]


def _owned(array: np.ndarray) -> np.ndarray:
    """`array` as the worker thread may keep it: jaxlib hands the callback fresh read-only
    copies of the operands (kept, made writeable as the seed's taps received them); a view of
    the computation's buffer, which lives only during the call, is copied."""
    if array.flags.owndata and array.base is None:
        array.flags.writeable = True
        return array
    return np.array(array, copy=True)


def _outside_call_lower(ctx, *args, callback, identity, **params):
    axis_context = ctx.module_context.axis_context
    devices = tuple(getattr(axis_context, "devices", ()))
    manual = isinstance(axis_context, SPMDAxisContext)
    device_index = params["device_index"]
    sharding = None
    if manual:
        # inside pmap / shard_map every device calls back: pass which one it is (its position
        # in the program's device assignment)
        operands = [hlo.PartitionIdOp().result, *args]
        # the seed documents per-device taps under pmap but no record for them: laminax names
        # each mapped (manual) axis, outermost first, so a tap can tell a per-device slice
        # from a whole value
        mapped = tuple(
            ("pmap", name, axis_context.axis_size(name))
            for name in axis_context.axis_names
            if name in axis_context.manual_axes
        )
        params = dict(params, transforms=(*mapped, *params["transforms"]))
    else:
        # one device runs the call: the `device_index`-th of the program's devices (pjit)
        operands = list(args)
        if not 0 <= device_index < max(len(devices), 1):
            raise ValueError(
                f"{'id_tap' if identity else 'call'}: device_index={device_index} is out of "
                f"range for a program on {max(len(devices), 1)} device(s); give the position "
                "of one of the program's devices."
            )
        if len(devices) > 1:
            sharding = SingleDeviceSharding(devices[device_index])
    run = functools.partial(_run_callback, callback=callback, identity=identity, **params)

    def unpack(host_args):
        if manual:
            return _device_of(devices, host_args[0]), host_args[1:]
        return _device_of(devices, device_index), host_args

    if identity:

        def host_fn(*host_args):
            device, arrays = unpack(host_args)
            copies = [_owned(a) for a in arrays]
            TAPS.put(functools.partial(run, copies, device), sum(c.nbytes for c in copies))
            return ()

        result_avals = []
    else:

        def host_fn(*host_args):
            device, arrays = unpack(host_args)
            TAPS.wait_until_processed()  # taps sent before this call have run
            try:
                return run(arrays, device)
            except BaseException as err:
                logger.error("host_callback.call: %s raised %r", callback, err)
                raise RuntimeError(
                    f"host_callback.call: the callback {callback.__name__} raised "
                    f"{type(err).__name__}: {err}"
                ) from err

        result_avals = list(params["flat_results_aval"])
    host_fn.__name__ = callback.__name__
    outs = emit_host_call(
        ctx,
        host_fn,
        operands,
        result_avals,
        effect=HOST_CALLBACK,
        has_side_effect=True,
        name=callback.__name__,
        sharding=sharding,
    )
    return list(args) if identity else outs


register_lowering(outside_call_p, _outside_call_lower)

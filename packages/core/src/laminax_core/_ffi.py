"""`ffi_call`: calling a kernel registered with XLA's FFI (a C/C++ handler) from traced code.

`ffi_call(target, result_shape_dtypes, vmap_method=...)(*args, **attributes)` binds `ffi_call`,
whose params name the handler, the result types and the attributes (passed to the handler);
laminax_dispatch lowers it to a `stablehlo.custom_call` of the typed FFI. The call is opaque:
it is not differentiable (ValueError, as in JAX); under vmap `vmap_method` decides:
``"sequential"`` / ``"sequential_unrolled"`` loop over the batch (`lax.map` / an unrolled
scan), ``"expand_dims"`` gives unbatched arguments a leading axis of size 1 and calls the
kernel once with batched result types, ``"broadcast_all"`` broadcasts every argument to the
batch first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters import batching, lax_ops
from laminax_core._primitive import NOT_LINEAR, define_primitive

__all__ = ["ffi_call", "ffi_call_p"]

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")


def _abstract_eval(*avals, result_avals, **params):
    return list(result_avals)


def _reference(*args, target_name, **params):
    raise RuntimeError(
        f"ffi_call to {target_name!r}: FFI kernels run on XLA; import laminax (or "
        "laminax_dispatch) so that laminax executes through XLA.")


def _jvp(primals, tangents, *, target_name, **params):
    raise ValueError(
        f"The FFI call to `{target_name}` cannot be differentiated. Use `custom_jvp` or "
        "`custom_vjp` to give it a derivative rule.")


def _batch(axis_data, args, dims, *, vmap_method, result_avals, **params):
    size = axis_data.size
    if vmap_method not in _VMAP_METHODS:
        raise NotImplementedError(
            f"vmap is only supported for ffi_call when vmap_method is one of "
            f"{', '.join(map(repr, _VMAP_METHODS))}; got vmap_method={vmap_method!r}.")
    bind = ffi_call_p.bind
    if vmap_method.startswith("sequential"):
        # lax sits above this module in core's layers: its scan is needed only here
        from laminax_core.lax import scan

        mapped = [i for i, d in enumerate(dims) if d is not None]

        def one(carry, xs):
            full = list(args)
            for i, x in zip(mapped, xs, strict=True):
                full[i] = x
            return carry, bind(*full, vmap_method=vmap_method, result_avals=result_avals,
                               **params)

        xs = [batching.move_bdim(args[i], dims[i], 0) for i in mapped]
        _, outs = scan(one, (), xs, length=size,
                       unroll=size if vmap_method == "sequential_unrolled" else 1)
        return list(outs), [0] * len(result_avals)
    if vmap_method == "expand_dims":
        args = [batching.move_bdim(x, d, 0) if d is not None else
                lax_ops.broadcast_in_dim(x, (1, *get_aval(x).shape),
                                                  tuple(range(1, get_aval(x).ndim + 1)))
                for x, d in zip(args, dims, strict=True)]
    else:
        args = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    batched = tuple(a.update(shape=(size, *a.shape)) for a in result_avals)
    outs = bind(*args, vmap_method=vmap_method, result_avals=batched, **params)
    return list(outs), [0] * len(result_avals)


ffi_call_p = define_primitive(
    "ffi_call",
    abstract_eval=_abstract_eval,
    reference=_reference,
    jvp=_jvp,
    transpose=NOT_LINEAR,
    batch=_batch,
    multiple_results=True,
)


def _attribute(name: str, value: Any) -> Any:
    # what laminax passes to a handler: strings and scalars, typed as JAX types them (NumPy
    # scalars keep their dtype; Python bool, int and float are bool, int64 and float64 whatever
    # the x64 mode: a handler decodes an attribute by its exact type)
    if isinstance(value, str | np.generic):
        return value
    for kind, dtype in ((bool, np.bool_), (int, np.int64), (float, np.float64)):
        if isinstance(value, kind):
            return dtype(value)
    raise TypeError(f"ffi_call attribute {name!r}: laminax passes strings and scalars to FFI "
                    f"handlers, got {type(value).__name__}.")


def ffi_call(target_name: str, result_shape_dtypes: Any, *, has_side_effect: bool = False,
             vmap_method: str | None = None) -> Callable[..., Any]:
    """A function that calls the FFI handler registered as `target_name`.

    Args:
      target_name: the name given to `register_ffi_target`.
      result_shape_dtypes: an object with `shape` and `dtype` (a `ShapeDtypeStruct`), or a
        sequence of them; the results are returned with the same structure.
      has_side_effect: the handler acts beyond its results (XLA must not remove or merge
        calls to it).
      vmap_method: how a vmapped call is batched (see the module docstring); None refuses vmap.

    Returns:
      ``call(*args, **attributes)``: the array arguments are the handler's buffers; keyword
      arguments are its attributes (NumPy scalars keep their dtype; Python floats are float64,
      so a handler taking a 32-bit float needs ``np.float32(value)``).
    """
    if vmap_method is not None and vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be one of {_VMAP_METHODS} or None, "
                         f"got {vmap_method!r}.")
    leaves, tree = tree_flatten(result_shape_dtypes)
    result_avals = tuple(ShapedArray(tuple(r.shape), np.dtype(r.dtype)) for r in leaves)

    def call(*args, **attributes):
        attrs = tuple((k, _attribute(k, v)) for k, v in sorted(attributes.items()))
        outs = ffi_call_p.bind(
            *args, target_name=target_name, result_avals=result_avals,
            vmap_method=vmap_method, has_side_effect=has_side_effect, attributes=attrs)
        return tree_unflatten(tree, outs)

    return call

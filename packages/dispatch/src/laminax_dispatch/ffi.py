"""XLA's foreign function interface (JAX's `jax.ffi`): registering C/C++ handlers written
against XLA's FFI headers (`include_dir()`), and calling them from traced code (`ffi_call`,
defined in laminax_core, lowered here to a `stablehlo.custom_call` of the typed FFI).

A handler is registered by name and platform from a PyCapsule holding its function pointer
(`pycapsule(ctypes_library.Symbol)`); a call whose name was never registered fails when its
program is compiled (XLA's NOT_FOUND error), as in JAX.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import jaxlib
import numpy as np
from jaxlib import xla_client
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core.internal import ffi_call, ffi_call_p

from laminax_dispatch._lowering._core import register_lowering
from laminax_dispatch._mlir import aval_to_ir_type

__all__ = [
    "build_ffi_lowering_function", "ffi_call", "ffi_lowering", "include_dir", "pycapsule",
    "register_ffi_target", "register_ffi_target_as_batch_partitionable", "register_ffi_type",
    "register_ffi_type_id",
]  # fmt: skip


def include_dir() -> str:
    """The directory holding XLA's FFI headers (``xla/ffi/api/ffi.h``) to compile handlers
    against (pass it as ``-I``)."""
    return os.path.join(os.path.dirname(jaxlib.__file__), "include")


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)


def pycapsule(funcptr: Any) -> Any:
    """A PyCapsule holding the address of `funcptr` (a ctypes function, such as an attribute of
    a `ctypes.CDLL`), the form `register_ffi_target` takes a handler in."""
    address = ctypes.cast(funcptr, ctypes.c_void_p).value
    if not address:
        raise ValueError(f"pycapsule: {funcptr!r} is a null function pointer.")
    return _capsule_new(address, None, None)


def register_ffi_target(name: str, fn: Any, platform: str = "cpu", api_version: int = 1,
                        **kwargs: Any) -> None:
    """Registers handler `fn` (a PyCapsule, or a dict of them per execution stage) as `name`
    on `platform` (``"cpu"``, ``"cuda"`` ...).

    Args:
      api_version: 1 for a typed FFI handler (the default), 0 for the legacy custom-call ABI.
      **kwargs: passed to jaxlib's registration (``traits`` ...).
    """
    xla_client.register_custom_call_target(name, fn, platform=platform,
                                           api_version=api_version, **kwargs)


def register_ffi_type(name: str, type_registration: dict, platform: str = "cpu") -> None:
    """Registers a user-defined type (`{"type_id": capsule, "type_info": capsule}`, the
    ``XLA_FFI_TypeId`` and optional ``XLA_FFI_TypeInfo`` of a handler library) as `name`, for
    handlers that pass state of that type."""
    xla_client.register_custom_type(name, type_registration, platform=platform)


def register_ffi_type_id(name: str, obj: Any, platform: str = "cpu") -> None:
    """JAX 0.10.2's refusal: type ids are registered with `register_ffi_type` on this jaxlib."""
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Lets XLA's partitioner split calls of the FFI target `name` along their leading (batch)
    dimension: each device runs the handler on its shard of the batch."""
    xla_client.register_custom_call_as_batch_partitionable(name)


def _scalar_type(dtype: np.dtype) -> ir.Type:
    # the exact type, never canonicalized for x64 mode: the handler checks it
    if np.issubdtype(dtype, np.signedinteger):
        return ir.IntegerType.get_signless(dtype.itemsize * 8)
    if np.issubdtype(dtype, np.unsignedinteger):
        return ir.IntegerType.get_unsigned(dtype.itemsize * 8)
    floats = {"float16": ir.F16Type, "bfloat16": ir.BF16Type, "float32": ir.F32Type,
              "float64": ir.F64Type}
    if dtype.name not in floats:
        raise TypeError(f"ffi_call: no FFI attribute type for {dtype.name} scalars.")
    return floats[dtype.name].get()


def _attribute(value: Any) -> ir.Attribute:
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, ir.Attribute):
        return value
    for kind, python_dtype in ((bool, np.bool_), (int, np.int64), (float, np.float64)):
        if isinstance(value, kind) and not isinstance(value, np.generic):
            value = python_dtype(value)
            break
    if not isinstance(value, np.generic):
        raise TypeError(f"FFI attributes are strings and scalars, got {type(value).__name__}.")
    dtype = np.dtype(type(value))
    if dtype == np.bool_:
        return ir.BoolAttr.get(bool(value))
    if np.issubdtype(dtype, np.integer):
        return ir.IntegerAttr.get(_scalar_type(dtype), int(value))
    return ir.FloatAttr.get(_scalar_type(dtype), float(value))


def _layout(aval, minor_to_major=None) -> ir.Attribute:
    order = (np.arange(aval.ndim - 1, -1, -1) if minor_to_major is None
             else np.asarray(minor_to_major))
    return ir.DenseIntElementsAttr.get(order.astype(np.int64), type=ir.IndexType.get())


def _custom_call(target_name: str, operands, avals_in, avals_out, attributes: dict, *,
                 has_side_effect: bool = False, operand_layouts=None, result_layouts=None):
    return list(_custom_call_op(target_name, operands, avals_in, avals_out, attributes,
                                has_side_effect=has_side_effect, operand_layouts=operand_layouts,
                                result_layouts=result_layouts).results)


def _custom_call_op(target_name: str, operands, avals_in, avals_out, attributes, *,
                    has_side_effect: bool = False, operand_layouts=None, result_layouts=None,
                    api_version: int = 4, layouts: bool = True):
    operand_layouts = operand_layouts or [None] * len(avals_in)
    result_layouts = result_layouts or [None] * len(avals_out)
    if api_version >= 4:
        # the attributes the handler decodes, as a dictionary (what the typed FFI reads)
        config = ir.DictAttr.get({name: _attribute(value) for name, value in attributes.items()})
    else:  # the legacy custom-call ABI: an opaque string
        config = ir.StringAttr.get(attributes or "")
    fields = {
        "call_target_name": ir.StringAttr.get(target_name),
        "has_side_effect": ir.BoolAttr.get(has_side_effect),
        "backend_config": config,
        # 4: the typed FFI (XLA passes buffers and decoded attributes to the handler)
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), api_version),
        "called_computations": ir.ArrayAttr.get([]),
    }
    if layouts:
        fields["operand_layouts"] = ir.ArrayAttr.get(
            [_layout(a, m) for a, m in zip(avals_in, operand_layouts, strict=True)])
        fields["result_layouts"] = ir.ArrayAttr.get(
            [_layout(a, m) for a, m in zip(avals_out, result_layouts, strict=True)])
    return hlo.CustomCallOp.build_generic(
        results=[aval_to_ir_type(a) for a in avals_out], operands=list(operands),
        attributes=fields)


def build_ffi_lowering_function(call_target_name: str, *, operand_layouts=None,
                                result_layouts=None, backend_config=None,
                                skip_ffi_layout_processing: bool = False, **lowering_args: Any):
    """`ffi_lowering`'s rule returning the `stablehlo.custom_call` operation itself (for rules
    that build more around it): `rule(ctx, *operands, **params) -> op`, whose `results` are the
    primitive's outputs.

    Args:
      operand_layouts, result_layouts: minor-to-major orders (None: row-major).
      backend_config: a dict of attributes (the typed FFI, api_version 4), or a string for the
        legacy ABI (api_version below 4, which takes no params).
      skip_ffi_layout_processing: emit no layouts (XLA's defaults).
      **lowering_args: `api_version` (default 4) and `has_side_effect`.

    Example:
      >>> rule = build_ffi_lowering_function("my_kernel")
    """
    api_version = lowering_args.pop("api_version", 4)
    has_side_effect = lowering_args.pop("has_side_effect", False)
    if lowering_args:
        raise TypeError("build_ffi_lowering_function: unexpected arguments "
                        f"{sorted(lowering_args)}.")

    def rule(ctx, *operands, **params):
        if api_version >= 4:
            if backend_config is not None and not isinstance(backend_config, dict):
                raise ValueError("When api_version > 4, backend_config must be a dictionary.")
            attributes = {**(backend_config or {}), **params}
        else:
            if params:
                raise ValueError("The use of ffi_call attributes requires a custom call API "
                                 f"version of at least 4; got api_version={api_version}.")
            attributes = backend_config
        return _custom_call_op(call_target_name, operands, ctx.avals_in, ctx.avals_out,
                               attributes, has_side_effect=has_side_effect,
                               operand_layouts=operand_layouts, result_layouts=result_layouts,
                               api_version=api_version, layouts=not skip_ffi_layout_processing)

    return rule


def ffi_lowering(call_target_name: str, *, operand_layouts=None, result_layouts=None,
                 backend_config: dict | None = None, has_side_effect: bool = False):
    """A lowering rule (for `laminax.interpreters.mlir.register_lowering`) that calls the FFI
    handler `call_target_name` on a primitive's operands, with result types from its avals.

    Args:
      operand_layouts, result_layouts: per operand / result, a minor-to-major dimension
        order (XLA's convention) or None for row-major; None: all row-major.
      backend_config: attributes (``ir.Attribute``s or Python/NumPy scalars and strings)
        always passed; the primitive's params are added to them.
      has_side_effect: XLA must not remove or merge the call.

    Example:
      >>> rule = ffi_lowering("my_kernel")  # mlir.register_lowering(my_p, rule)
    """
    if backend_config is not None and not isinstance(backend_config, dict):
        raise TypeError("ffi_lowering: the typed FFI takes backend_config as a dict of "
                        f"attributes, got {type(backend_config).__name__}.")

    def rule(ctx, *operands, **params):
        attributes = {**(backend_config or {}), **params}
        return _custom_call(call_target_name, operands, ctx.avals_in, ctx.avals_out,
                            attributes, has_side_effect=has_side_effect,
                            operand_layouts=operand_layouts, result_layouts=result_layouts)

    return rule


def _ffi_call_lower(ctx, *args, target_name, result_avals, has_side_effect, attributes,
                    vmap_method):
    del vmap_method
    return _custom_call(target_name, args, ctx.avals_in, result_avals, dict(attributes),
                        has_side_effect=has_side_effect)


register_lowering(ffi_call_p, _ffi_call_lower)

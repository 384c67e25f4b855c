"""The seed's export API (2023's `jax.experimental.export`): `export(fun, *, lowering_platform,
strict_checks)`, its `Exported` record, `call_exported`, and `poly_spec` / `poly_specs`.

It is today's export underneath (`_export.export_jaxpr`, `_call.call_exported`), with the
seed's field names, its implied jit for plain functions, and its errors.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import numpy as np
from laminax_core import ShapeDtypeStruct
from laminax_core.internal import SymbolicScope, get_aval, parse_shape
from laminax_dispatch import default_backend, jit
from laminax_dispatch.internal import make_ir_context
from laminax_pytree import keystr, tree_flatten, tree_structure, tree_unflatten
from laminax_pytree.internal import broadcast_prefix, first_mismatch

from laminax_export import _exported
from laminax_export._call import call_exported as _call_today
from laminax_export._dimvars import dim_vars_of
from laminax_export._export import export_jaxpr

__all__ = [
    "Exported",
    "call_exported",
    "default_lowering_platform",
    "export",
    "poly_spec",
    "poly_specs",
]

# the seed's xla_call_module_version: 5, the module is a portable artifact with a public main
_XLA_CALL_MODULE_VERSION = 5


@dataclasses.dataclass(frozen=True, eq=False)
class Exported:
    """A function lowered to StableHLO, in the seed's terms.

    Attributes:
      fun_name, in_tree, in_avals, out_tree, out_avals: the signature (trees of
        `(args, kwargs)` and of the result, one aval per leaf).
      in_shardings, out_shardings: one sharding per kept input / per output (None:
        unspecified).
      lowering_platform: the platform lowered for ('cpu', 'cuda', 'rocm', 'tpu').
      strict_checks: whether the safety checks ran (platform on call, stable custom calls).
      mlir_module_serialized: the module as a portable StableHLO artifact.
      xla_call_module_version: the version of the module's calling convention (5).
      module_kept_var_idx: the inputs the module takes (unused ones dropped).
      module_uses_dim_vars: whether the module has dimension variables (symbolic shapes).
    """

    fun_name: str
    in_tree: Any
    in_avals: tuple
    out_tree: Any
    out_avals: tuple
    in_shardings: tuple
    out_shardings: tuple
    lowering_platform: str
    strict_checks: bool
    mlir_module_serialized: bytes
    xla_call_module_version: int
    module_kept_var_idx: tuple[int, ...]
    module_uses_dim_vars: bool
    _get_vjp: Callable[[Exported], Exported] | None = None
    _today: Any = None

    def mlir_module(self):
        """The module, as an MLIR `ir.Module`."""
        return _exported.parse_artifact(self.mlir_module_serialized, make_ir_context())

    def __str__(self) -> str:
        return f"Exported(fun_name={self.fun_name}, ...)"

    def vjp(self) -> Exported:
        """The exported VJP: primal inputs and output cotangents in, input cotangents out."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        return self._get_vjp(self)


def default_lowering_platform() -> str:
    """The platform `export` lowers for by default ('gpu' named as 'cuda')."""
    platform = default_backend()
    return "cuda" if platform == "gpu" else platform


def export(fun: Callable, *, lowering_platform: str | None = None, strict_checks: bool = True):
    """The seed's `export`: returns `do_export(*args_specs, **kwargs_specs) -> Exported`.

    Args:
      fun: a jitted function, or a plain one (then a jit is implied).
      lowering_platform: 'cpu', 'cuda', 'rocm' or 'tpu'; by default the default backend's.
      strict_checks: run the safety checks: (A) the module runs only on the platform it was
        lowered for, (B) it calls only custom calls known to be stable.
    """
    if hasattr(fun, "trace") and hasattr(fun, "lower"):
        wrapped = fun
    else:
        wrapped = jit(fun)
    platform = lowering_platform or default_lowering_platform()

    def do_export(*args_specs, **kwargs_specs) -> Exported:
        specs = tree_unflatten(*_as_specs((args_specs, kwargs_specs)))
        traced = wrapped.trace(*specs[0], **specs[1])
        today = export_jaxpr(
            traced.jaxpr, name=getattr(fun, "__name__", traced.fun_name),
            in_tree=traced.in_tree, out_tree=tree_structure(traced.out_info),
            platforms=(platform,), check_custom_calls=strict_checks,
        )
        return _seed_exported(today, platform, strict_checks)

    if platform != default_lowering_platform():
        raise ValueError(
            f"laminax lowers for this machine's platform only: lowering_platform={platform!r} "
            f"was asked, the default backend is {default_lowering_platform()!r}.")
    return do_export


def _as_specs(tree):
    leaves, treedef = tree_flatten(tree)
    out = []
    for x in leaves:
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise TypeError(
                f"export takes arrays, ShapeDtypeStructs or values with .shape and .dtype as "
                f"argument specs, got {type(x).__name__}: {x!r}")
        out.append(x if isinstance(x, ShapeDtypeStruct) else ShapeDtypeStruct(x.shape, x.dtype))
    return treedef, out


def _seed_exported(today, platform: str, strict_checks: bool) -> Exported:
    def get_vjp(_seed):
        return _seed_exported(today.vjp(), platform, strict_checks)

    return Exported(
        fun_name=today.fun_name, in_tree=today.in_tree, in_avals=today.in_avals,
        out_tree=today.out_tree, out_avals=today.out_avals,
        in_shardings=tuple(today.in_shardings_hlo[i] for i in today.module_kept_var_idx),
        out_shardings=today.out_shardings_hlo, lowering_platform=platform,
        strict_checks=strict_checks, mlir_module_serialized=today.mlir_module_serialized,
        xla_call_module_version=_XLA_CALL_MODULE_VERSION,
        module_kept_var_idx=today.module_kept_var_idx, module_uses_dim_vars=bool(dim_vars_of(today.in_avals)),
        _get_vjp=get_vjp if today.has_vjp() else None, _today=today,
    )


def call_exported(exported: Exported) -> Callable:
    """Returns a function that runs `exported` (inside or outside jit, differentiable through
    the exported VJP), with the exported `(args, kwargs)` structure."""
    today = exported._today
    if exported.strict_checks is False:
        today = dataclasses.replace(
            today, disabled_safety_checks=(_exported.DisabledSafetyCheck.platform(),))
    inner = _call_today(today)

    def f_imported(*args, **kwargs):
        here = default_lowering_platform()
        if exported.strict_checks and here != exported.lowering_platform:
            raise ValueError(
                f"The exported function '{exported.fun_name}' was lowered for platform "
                f"'{exported.lowering_platform}' but it is used on '{here}'.")
        return inner(*args, **kwargs)

    return f_imported


# ----- polymorphic specs --------------------------------------------------------------------

_DIM = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def poly_spec(arg_shape, arg_dtype, polymorphic_shape: str | None,
              scope=None) -> ShapeDtypeStruct:
    """A `ShapeDtypeStruct` for `arg_shape` refined by `polymorphic_shape`.

    The spec is None (all dimensions as given) or a string of comma-separated dimensions,
    optionally in parentheses: an integer, `_` for the dimension given in `arg_shape`, or a
    dimension variable or expression (`b`, `2*b`); `...` at the end stands for any number of
    trailing `_`. Dimension variables share `scope` (a new one when None).
    """
    arg_shape = tuple(arg_shape)
    if polymorphic_shape is None:
        dims = list(arg_shape)
    else:
        dims = _parse(polymorphic_shape, arg_shape, scope or SymbolicScope())
    if any(d is None for d in dims):
        raise ValueError(
            f"polymorphic shape {polymorphic_shape!r} for an argument of shape {arg_shape} "
            "leaves a dimension unknown; give it as an integer or in the argument's shape.")
    return ShapeDtypeStruct(tuple(dims), np.dtype(arg_dtype))


def _parse(spec: str, arg_shape: tuple, scope) -> list:
    if not isinstance(spec, str):
        raise ValueError(f"polymorphic shape must be a string or None, got {spec!r}")
    text = spec.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    parts = [p.strip() for p in text.split(",")] if text else []
    if parts and parts[-1] == "":
        parts.pop()  # a trailing comma, as in "(b,)"
    if "..." in parts[:-1]:
        raise ValueError(f"polymorphic shape {spec!r}: '...' may only be the last dimension")
    if parts and parts[-1] == "...":
        parts = parts[:-1] + ["_"] * max(len(arg_shape) - len(parts) + 1, 0)
    if len(parts) != len(arg_shape):
        raise ValueError(
            f"polymorphic shape {spec!r} of rank {len(parts)} must match the rank "
            f"{len(arg_shape)} of argument shape {arg_shape}.")
    dims = []
    for i, (p, given) in enumerate(zip(parts, arg_shape, strict=True)):
        if p == "_":
            if given is None:
                raise ValueError(
                    f"polymorphic shape {spec!r} in dimension {i}: '_' takes the dimension "
                    f"from the argument, whose shape {arg_shape} does not give it.")
            dims.append(given)
        elif p.lstrip("-").isdigit():
            value = int(p)
            if given is not None and given != value:
                raise ValueError(
                    f"polymorphic shape {spec!r} in dimension {i}: {value} does not match "
                    f"the argument's dimension {given} (shape {arg_shape}).")
            dims.append(value)
        elif _DIM.match(p) or re.search(r"[A-Za-z]", p):
            # a dimension variable or expression (shape polymorphism), in the specs' scope
            (dim,) = parse_shape(p, scope)
            dims.append(dim)
        else:
            raise ValueError(f"polymorphic shape {spec!r}: cannot parse dimension {p!r}")
    return dims


def poly_specs(args, polymorphic_shapes):
    """`ShapeDtypeStruct`s for the pytree `args`, each refined by the entry of
    `polymorphic_shapes` (None, one string for all, or a pytree prefix of `args`)."""
    leaves, treedef = tree_flatten(args)
    avals = [get_aval(x) for x in leaves]
    prefix = tuple(polymorphic_shapes) if (
        isinstance(args, tuple) and isinstance(polymorphic_shapes, list)) else polymorphic_shapes
    try:
        flat = broadcast_prefix(prefix, args, is_leaf=lambda x: x is None)
    except ValueError:
        where = first_mismatch(prefix, args, is_leaf=lambda x: x is None)
        path, mine, theirs = where if where else ((), "a different structure", "")
        raise ValueError(
            "pytree structure error at key path "
            f"'{keystr(tuple(path)) or '(root)'}' of jax_export polymorphic_shapes: the "
            f"polymorphic_shapes have {mine} there and the arguments have {theirs}. "
            "polymorphic_shapes must be None, a string, or a pytree prefix of the arguments."
        ) from None
    scope = SymbolicScope()  # the arguments' dimension variables are shared
    specs = [poly_spec(a.shape, a.dtype, s, scope) for a, s in zip(avals, flat, strict=True)]
    return tree_unflatten(treedef, specs)

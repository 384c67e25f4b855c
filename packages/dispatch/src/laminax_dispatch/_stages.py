"""Ahead-of-time stages of a jitted function: `Traced` -> `Lowered` -> `Compiled`.

`jit(f).trace(*args)` stops after tracing (the jaxpr), `.lower()` after building the StableHLO
module, `.compile()` after XLA. A `Compiled` is callable with the dynamic arguments only (static
ones were fixed when tracing), and checks that they have the types it was compiled for.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from jaxlib import _hlo, _jax
from jaxlib.mlir import ir
from laminax_core import ShapeDtypeStruct
from laminax_core import config as core_config
from laminax_core.internal import ShapedArray, get_aval
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_dispatch._fast_path import cpp_function, new_cache, raise_if_deleted
from laminax_dispatch._mlir import module_to_bytecode, module_to_string

_debug_nans, _debug_infs = core_config.debug_nans, core_config.debug_infs

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]

CompilerOptions = dict[str, str | bool]
"""The type of `Lowered.compile`'s `compiler_options`: XLA option names to values."""


@dataclasses.dataclass(frozen=True, slots=True)
class ArgInfo:
    """One argument leaf of a staged function, as its stages report it in `args_info`: its
    abstract value (`shape`, `dtype`) and whether its buffer is donated."""

    _aval: Any
    donated: bool

    @property
    def shape(self):
        if not hasattr(self._aval, "shape"):
            raise TypeError(f"No shape attribute with aval of type {type(self._aval)}")
        return self._aval.shape

    @property
    def dtype(self):
        if not hasattr(self._aval, "dtype"):
            raise TypeError(f"No dtype attribute with aval of type {type(self._aval)}")
        return self._aval.dtype


class _Stage:
    # JAX's Stage: the arguments' abstract values and donations, in the tree of (args, kwargs)

    @property
    def args_info(self):
        """The `ArgInfo` of each argument leaf, in the tree of (args, kwargs)."""
        entry = self._entry
        infos = [ArgInfo(a, bool(d)) for a, d in zip(entry.in_avals, entry.donated, strict=True)]
        return tree_unflatten(entry.in_tree, infos)

    @property
    def in_avals(self):
        """The abstract value of each argument leaf, in the tree of (args, kwargs)."""
        return tree_unflatten(self._entry.in_tree, list(self._entry.in_avals))

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """The flat indices of the donated argument leaves."""
        return tuple(i for i, d in enumerate(self._entry.donated) if d)


@typing.runtime_checkable
class Wrapped(typing.Protocol):
    """A function ready to be traced, lowered and compiled (what `jit` returns): calling it
    compiles as needed and runs; `trace` and `lower` stop at the ahead-of-time stages."""

    def __call__(self, *args, **kwargs):
        """Runs the function, compiling it first if needed."""

    def trace(self, *args, **kwargs) -> Traced:
        """Traces the function for these arguments."""

    def lower(self, *args, **kwargs) -> Lowered:
        """Traces and lowers the function for these arguments."""


def _shape_dtype_structs(entry):
    outs = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in entry.out_avals]
    return tree_unflatten(entry.out_tree, outs)


class Traced(_Stage):
    """A traced jitted function (`jit(f).trace(*args)`).

    Attributes:
      jaxpr: the closed jaxpr of the function for these arguments.
      out_info: the output's `ShapeDtypeStruct`s, in the output's tree.

    Example:
      >>> from laminax_dispatch import jit
      >>> print(jit(lambda x: x + 1.0).trace(1.0).jaxpr)
      { lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (b,) }
    """

    def __init__(self, entry):
        self._entry = entry

    jaxpr = property(lambda self: self._entry.closed)
    in_tree = property(lambda self: self._entry.in_tree)
    fun_name = property(lambda self: self._entry.name)

    @property
    def out_info(self):
        return _shape_dtype_structs(self._entry)

    def lower(self) -> Lowered:
        """Lowers the traced function to StableHLO."""
        self._entry.lower()
        return Lowered(self._entry)


class Lowered(_Stage):
    """A lowered jitted function: its StableHLO module, ready to compile.

    Example:
      >>> from laminax_dispatch import jit
      >>> lowered = jit(lambda x: x * 2.0).lower(1.0)
      >>> "func.func public @main" in lowered.as_text()
      True
    """

    def __init__(self, entry):
        self._entry = entry

    in_tree = property(lambda self: self._entry.in_tree, doc="The tree of (args, kwargs).")
    out_tree = property(lambda self: self._entry.out_tree, doc="The output's tree.")

    @property
    def out_info(self):
        """The output's `ShapeDtypeStruct`s, in the output's tree."""
        return _shape_dtype_structs(self._entry)

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The module as text: StableHLO (the default), or XLA's HLO with `dialect="hlo"`
        (source metadata included if `debug_info`)."""
        if dialect in (None, "stablehlo"):
            return module_to_string(self._entry.lower().module, enable_debug_info=debug_info)
        if dialect == "hlo":
            options = _hlo.HloPrintOptions.short_parsable()
            options.print_metadata = debug_info
            return self._hlo().as_hlo_module().to_string(options)
        raise ValueError(f"Lowered.as_text: unknown dialect {dialect!r}; use 'stablehlo' or 'hlo'.")

    def compiler_ir(self, dialect: str | None = None):
        """The module as an MLIR `ir.Module` (StableHLO, the default), or as XLA's
        `XlaComputation` with `dialect="hlo"`."""
        if dialect in (None, "stablehlo"):
            return self._entry.lower().module
        if dialect == "hlo":
            return self._hlo()
        raise ValueError(
            f"Lowered.compiler_ir: unknown dialect {dialect!r}; use 'stablehlo' or 'hlo'."
        )

    def _hlo(self):
        bytecode = module_to_bytecode(self._entry.lower().module)
        return _jax.mlir.mlir_module_to_xla_computation(bytecode, use_tuple_args=False)

    def compile(self, compiler_options: dict[str, str | bool] | None = None) -> Compiled:
        """Compiles the module with XLA (or takes it from the caches); `compiler_options` are
        XLA options by name for this compilation only (XLA rejects unknown ones: JaxRuntimeError).
        """
        entry = self._entry
        if compiler_options:
            entry = entry.with_compiler_options(compiler_options)
        entry.executable()
        return Compiled(entry)


class Compiled(_Stage):
    """A compiled jitted function, callable with its dynamic arguments.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import jit
      >>> compiled = jit(lambda x: x * 2.0).lower(np.float32(1)).compile()
      >>> compiled(np.float32(4))
      Array(8., dtype=float32)
    """

    def __init__(self, entry):
        self._entry = entry
        self._executable = entry.executable()
        # jaxlib's C++ fast path, as `jit`'s: a call with the signature of an earlier one
        # runs the executable without Python; any other goes through `_cache_miss`, which
        # checks the arguments as before (and raises for the wrong ones)
        self._cpp = cpp_function(entry.name, self._call_python, self._cache_miss, new_cache(8))

    in_tree = property(lambda self: self._entry.in_tree)
    out_tree = property(lambda self: self._entry.out_tree)

    def __call__(self, *args, **kwargs):
        if _debug_nans.value or _debug_infs.value:  # checked in Python only
            return self._call_python(*args, **kwargs)
        try:
            return self._cpp(*args, **kwargs)
        except ValueError as err:
            raise_if_deleted(err, args, kwargs)
            raise

    def _cache_miss(self, *args, **kwargs):
        leaves = self._checked_leaves(args, kwargs)
        outs = self._entry(leaves)
        data = self._entry.fast_path_data(outs)
        return tree_unflatten(self._entry.out_tree, outs), data, False

    def _call_python(self, *args, **kwargs):
        leaves = self._checked_leaves(args, kwargs)
        return tree_unflatten(self._entry.out_tree, self._entry(leaves))

    def _checked_leaves(self, args, kwargs) -> list:
        leaves, in_tree = tree_flatten((args, kwargs))
        if in_tree != self._entry.in_tree:
            raise TypeError(
                f"Compiled function {self._entry.name} was compiled for arguments with tree "
                f"{self._entry.in_tree}, but called with {in_tree}; call it with the dynamic "
                "arguments it was lowered with (static arguments are already fixed)."
            )
        self._check_types(leaves)
        self._check_shardings(leaves)
        return leaves

    def _check_shardings(self, leaves) -> None:
        # committed arguments must come laid out as compiled (uncommitted ones are moved)
        mismatches = []
        required = None
        for i, x in enumerate(leaves):
            if type(x) is not _jax.ArrayImpl or not x._committed:
                continue
            if required is None:
                required = self._entry.input_shardings()
            want = required[i]
            if x._sharding != want and not _equivalent(x._sharding, want, x.ndim):
                mismatches.append(
                    f"Argument {self._entry.arg_names[i]} with shape {_long(x.aval)}:\n"
                    f"  Passed sharding: {x._sharding}\n  Required sharding: {want}"
                )
        if mismatches:
            raise ValueError(
                "Computation was compiled for input shardings that disagree with the shardings "
                f"of arguments passed to it. Here are the {len(mismatches)} mismatches:\n"
                + "\n".join(mismatches)
                + "\ndevice_put the arguments onto the required shardings, or lower again."
            )

    def _check_types(self, leaves) -> None:
        mismatches = []
        for name, expected, x in zip(
            self._entry.arg_names, self._entry.in_avals, leaves, strict=True
        ):
            got = get_aval(x)
            if (got.shape, got.dtype) != (expected.shape, expected.dtype):
                mismatches.append(
                    f"Argument '{name}' compiled with {_long(expected)} and "
                    f"called with {_long(got)}"
                )
        if mismatches:
            raise TypeError(
                "Argument types differ from the types for which this computation was compiled. "
                "The mismatches are:\n" + "\n".join(mismatches)
            )

    def as_text(self) -> str:
        """The optimized HLO of the compiled program."""
        return self._executable.xla_executable.hlo_modules()[0].to_string()

    def cost_analysis(self) -> dict[str, Any]:
        """XLA's cost estimates (flops, bytes accessed ...)."""
        return dict(self._executable.xla_executable.cost_analysis())

    def memory_analysis(self):
        """XLA's memory statistics of the compiled program (argument, output, temp sizes)."""
        return self._executable.xla_executable.get_compiled_memory_stats()

    def runtime_executable(self):
        """The jaxlib `LoadedExecutable`."""
        return self._executable.xla_executable

    @property
    def input_shardings(self):
        """`((sharding per positional leaf ...), {kwarg: sharding ...})`, as JAX reports it:
        the shardings the compiled program takes its arguments in."""
        dyn_args, dyn_kwargs = tree_unflatten(self._entry.in_tree, self._entry.input_shardings())
        return dyn_args, dyn_kwargs

    @property
    def output_shardings(self):
        """One sharding per output leaf, in the output's tree, as the compiled program
        reports them."""
        return tree_unflatten(self._entry.out_tree, self._entry.output_shardings())


def _equivalent(a, b, ndim: int) -> bool:
    try:
        return a.is_equivalent_to(b, ndim)
    except (AttributeError, ValueError):
        return False


def _long(aval: ShapedArray) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"

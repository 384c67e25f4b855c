"""`Exported`: a lowered function as data (signature, platforms, effects, the portable
StableHLO module), and `DisabledSafetyCheck`.

An `Exported` is made by `export(...)` (`_export.py`) or by `deserialize(bytes)`
(`_serialization.py`); `Exported.call` (`_call.py`) runs it from laminax code.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import hashlib
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from jaxlib import _jax
from laminax_core.internal import DimExpr
from laminax_dispatch.internal import make_ir_context

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "install_method",
    "is_symbolic_dim",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
    "parse_artifact",
    "trust_module",
]

# The calling conventions of the module this package writes and reads: as JAX 0.10.2's
# (9: ordered effects' tokens are real `!stablehlo.token`s; 10: `jax.uses_shape_polymorphism`).
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10


def is_symbolic_dim(p) -> bool:
    """Whether `p` is a symbolic dimension (a dimension expression, not an int)."""
    return isinstance(p, DimExpr)


class DisabledSafetyCheck:
    """A safety check that `export` (custom calls) or a call (platform) should skip.

    Build one with `DisabledSafetyCheck.platform()` or
    `DisabledSafetyCheck.custom_call("target_name")`.
    """

    def __init__(self, _impl: str):
        self._impl = _impl

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        """Allows calling the exported module on a platform it was not lowered for."""
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        """Allows exporting a module that calls the custom call `target_name`, which is not
        among those known to keep a stable ABI."""
        return cls(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom call target this check allows, or None."""
        m = re.match(r"custom_call:(.+)$", self._impl)
        return m.group(1) if m else None

    def __str__(self) -> str:
        return self._impl

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)


# `serialize` and `call` are built on Exported in `_serialization` and `_call`; each installs
# its function here at import (the package's __init__ imports both), so neither module is
# imported back from here.
_METHODS: dict[str, Callable] = {}


def install_method(name: str, function: Callable) -> None:
    _METHODS[name] = function


@dataclasses.dataclass(frozen=True, eq=False)
class Exported:
    """A function lowered for given argument types, as data that can be serialized.

    Attributes:
      fun_name: the exported function's name (for messages).
      in_tree: the tree of `(args, kwargs)`; in_avals: one abstract value per input leaf.
      out_tree, out_avals: the same for the result.
      in_shardings_hlo, out_shardings_hlo: one XLA `HloSharding` (or None: unspecified) per
        leaf.
      nr_devices: how many devices the module runs on.
      platforms: the platforms the module was lowered for (`("cpu",)`).
      ordered_effects, unordered_effects: the effects of the function.
      disabled_safety_checks: the checks that were disabled when exporting.
      mlir_module_serialized: the module as a portable StableHLO artifact (VHLO bytecode).
      calling_convention_version: the version of main's calling convention.
      module_kept_var_idx: the indices of the input leaves main takes (unused ones dropped).
      uses_global_constants: whether the module computes dimension values (shape
        polymorphism) or a platform index.
    """

    fun_name: str
    in_tree: Any
    in_avals: tuple
    out_tree: Any
    out_avals: tuple
    in_shardings_hlo: tuple
    out_shardings_hlo: tuple
    nr_devices: int
    platforms: tuple[str, ...]
    ordered_effects: tuple
    unordered_effects: tuple
    disabled_safety_checks: Sequence[DisabledSafetyCheck]
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple[int, ...]
    uses_global_constants: bool
    _get_vjp: Callable[[Exported], Exported] | None = None
    # one NamedSharding (or None: unspecified) per input / output leaf: what JAX serializes
    _in_named_shardings: tuple | None = None
    _out_named_shardings: tuple | None = None

    def __post_init__(self):
        if self._in_named_shardings is None:
            object.__setattr__(self, "_in_named_shardings", (None,) * len(self.in_avals))
        if self._out_named_shardings is None:
            object.__setattr__(self, "_out_named_shardings", (None,) * len(self.out_avals))

    def __str__(self) -> str:
        # short: the module can be long
        return f"Exported(fun_name={self.fun_name}, ...)"

    def _key(self):
        key = self.__dict__.get("_content_key")
        if key is None:
            key = (self.fun_name, self.in_tree, self.out_tree, self.in_avals, self.out_avals,
                   self._in_named_shardings, self._out_named_shardings, self.nr_devices,
                   self.platforms, tuple(self.disabled_safety_checks),
                   self.calling_convention_version, self.module_kept_var_idx,
                   hashlib.sha256(self.mlir_module_serialized).digest())
            object.__setattr__(self, "_content_key", key)
        return key

    # equal when they describe the same module and signature (an artifact deserialized twice
    # is one program: the call primitive's caches then compile it once)
    def __eq__(self, other) -> bool:
        return isinstance(other, Exported) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def mlir_module(self) -> str:
        """The StableHLO module as text."""
        return _module_text(self.mlir_module_serialized)

    def has_vjp(self) -> bool:
        """Whether `vjp()` can give the function's backward pass."""
        return self._get_vjp is not None

    def vjp(self) -> Exported:
        """The exported backward pass: takes the primal inputs and one cotangent per output
        and returns one cotangent per input."""
        if self._get_vjp is None:
            raise ValueError(
                f"No VJP is available for {self.fun_name}: it was deserialized from an "
                "artifact serialized with vjp_order=0. Serialize it with vjp_order >= 1 to "
                "differentiate it after deserialization."
            )
        cached = self.__dict__.get("_vjp_exported")
        if cached is None:
            cached = self._get_vjp(self)
            object.__setattr__(self, "_vjp_exported", cached)
        return cached

    def in_shardings_jax(self, mesh) -> tuple:
        """One NamedSharding on `mesh` per input leaf (None where unspecified): the exported
        layouts, on a mesh of the same axis names, sizes and types (its devices may be any)."""
        return tuple(_sharding_on(mesh, s) for s in self._in_named_shardings)

    def out_shardings_jax(self, mesh) -> tuple:
        """One NamedSharding on `mesh` per output leaf (None where unspecified)."""
        return tuple(_sharding_on(mesh, s) for s in self._out_named_shardings)

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The artifact in JAX's serialization format, with `vjp_order` orders of backward
        passes (each `vjp()` of the one before) so that it stays differentiable."""
        return _METHODS["serialize"](self, vjp_order=vjp_order)

    def call(self, *args, **kwargs):
        """Runs the exported function (eagerly, or staged into the enclosing jit)."""
        return _METHODS["call"](self)(*args, **kwargs)


def _sharding_on(mesh, named):
    if named is None:
        return None
    new = getattr(mesh, "abstract_mesh", mesh)
    old = getattr(named.mesh, "abstract_mesh", named.mesh)
    if (tuple(new.axis_sizes), tuple(new.axis_names), tuple(new.axis_types)) != (
            tuple(old.axis_sizes), tuple(old.axis_names), tuple(old.axis_types)):
        raise ValueError(
            f"NamedSharding new mesh {mesh} does not match the mesh used for export {named.mesh}.")
    # the sharding layer is imported only when shardings are asked for (import-time cost)
    from laminax_pjit import NamedSharding

    return NamedSharding(mesh, named.spec, memory_kind=named.memory_kind)


_text_cache: dict[bytes, str] = {}


# digests of module bytes known to parse: written by this process, or checked once
_checked_modules: set[bytes] = set()
_check_lock = threading.Lock()


def trust_module(serialized: bytes) -> None:
    """Records module bytes this process wrote, so parsing them needs no check."""
    _checked_modules.add(hashlib.sha256(serialized).digest())


def _check_module_in_child(serialized: bytes) -> None:
    """jaxlib's artifact reader can corrupt the process's memory on damaged bytes instead of
    failing; the first parse of module bytes from outside runs in a forked child, so damage
    becomes a ValueError here."""
    digest = hashlib.sha256(serialized).digest()
    if digest in _checked_modules or not hasattr(os, "fork"):
        return
    with _check_lock, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork in a threaded process
        pid = os.fork()
        if pid == 0:  # the child: parse, report by exit status only
            # A crash here is the expected answer for damaged bytes: keep a fault handler (the
            # parent's, e.g. pytest's, writes to its own copy of stderr) from reporting it.
            faulthandler.disable()
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 2)
                # the parent's MLIR thread pool has no threads in the child: a context using
                # it would wait forever, so the child parses on its own thread
                context = make_ir_context()
                context.enable_multithreading(False)
                _jax.mlir.deserialize_portable_artifact(bytes(serialized), context)
                code = 0
            except BaseException:
                code = 3
            os._exit(code)
        status = _wait_child(pid)
        if status is None:  # the child is stuck (a lock held at fork): parse here instead
            return
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        _checked_modules.add(digest)
        return
    why = (f"reading it crashed (signal {os.WTERMSIG(status)})" if os.WIFSIGNALED(status)
           else "it does not parse")
    raise ValueError(
        f"the exported module ({len(serialized)} bytes) is not a valid StableHLO portable "
        f"artifact: {why}. The artifact is corrupted or was not written by JAX or laminax.")


def _wait_child(pid: int, limit_s: float = 60.0):
    """The child's exit status, or None (after killing it) when it runs past `limit_s`."""
    deadline = time.monotonic() + limit_s
    delay = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def parse_artifact(serialized: bytes, context):
    """The artifact as a StableHLO `ir.Module` in `context` (damaged bytes: ValueError)."""
    _check_module_in_child(serialized)
    try:
        return _jax.mlir.deserialize_portable_artifact(bytes(serialized), context)
    except Exception as e:  # jaxlib raises a bare error for bytes that are not an artifact
        raise ValueError(f"the exported module is not a valid StableHLO artifact: {e}") from None


def _module_text(serialized: bytes) -> str:
    text = _text_cache.get(serialized)
    if text is None:
        text = str(parse_artifact(serialized, make_ir_context()))
        if len(_text_cache) > 64:
            _text_cache.clear()
        _text_cache[serialized] = text
    return text

"""Compiling StableHLO modules with XLA and running the executables.

`compile_module(module, devices)` returns a jaxlib `LoadedExecutable`, looking first in an
in-memory cache (shared by live functions; bounded by bytes for the rest), then in the
persistent cache (`_compilation_cache`), and only then compiling. `Executable` wraps a
compiled module with its avals: calling it moves host arguments onto its device, threads
runtime tokens for ordered effects, executes, and wraps the outputs as Arrays.

Options: ``jax_log_compiles`` logs every compilation (module name, input avals, seconds) at
WARNING level through `logging` (DEBUG otherwise); ``jax_dump_ir_to`` writes every module
compiled to ``<dir>/<name>.mlir``, with source locations.
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import logging
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc
from jaxlib.mlir import ir
from laminax_core.internal import ExtendedDType, PRNGKeyArray, ShapedArray
from laminax_core.config import config

from laminax_dispatch import _compilation_cache, monitoring
from laminax_dispatch._array import ArrayImpl, _deleted_error
from laminax_dispatch._device_put import device_put
from laminax_dispatch._lowering._shardings import use_shardy_partitioner
from laminax_dispatch._mlir import (
    module_to_bytecode, module_to_string, physical_aval, safe_module_name)
from laminax_dispatch._placement import Placement
from laminax_dispatch._sharding import SingleDeviceSharding, sharding_from_hlo
from laminax_dispatch._tokens import runtime_tokens

__all__ = [
    "Executable",
    "cache_info",
    "clear_caches",
    "compile_module",
    "compile_options",
]

logger = logging.getLogger("laminax_dispatch.compile")

log_compiles = config.define_bool_state(
    "jax_log_compiles",
    False,
    "Log each compilation (name, input avals, seconds) at WARNING level.",
)
no_execution = config.define_bool_state(
    "jax_no_execution",
    False,
    "Refuses to run compiled programs (jitted calls and eager operations alike).",
    # in the jit key, so calls that hit the C++ fast path come back to Python to be refused
    include_in_jit_key=True,
    include_in_trace_context=True,
)
dump_ir_to = config.define_optional_string_state(
    "jax_dump_ir_to",
    None,
    "Directory to write each compiled module to, as <name>.mlir text with source locations.",
)

# The shared in-memory cache, one executable per distinct module. An executable some live
# jitted function still holds costs nothing extra here, so such entries stay (two live
# functions compiling the same module share one executable). Executables nobody else holds
# (their functions were dropped) are kept only within a small byte budget, for the common
# pattern of a closure re-created with the same code; JAX keeps none (its executables live
# and die with their jaxprs), so a program that creates and drops closures stays flat.
_CACHE_BYTES = 2 << 20
# What an executable occupies when the runtime does not say (the CPU client reports 0 bytes of
# generated code; a small CPU executable takes about this much)
_DEFAULT_EXECUTABLE_BYTES = 256 << 10
_lock = threading.Lock()
_executables: collections.OrderedDict[str, _jax.LoadedExecutable] = collections.OrderedDict()
_sizes: dict[str, int] = {}
_stats = {"hits": 0, "misses": 0, "disk_hits": 0}
_dump_counter = itertools.count()


# XLA's effort levels (xla::ExecutionOptions' EffortLevel enum values), by JAX's names.
_EFFORT_LEVELS = {"UNKNOWN": 0, "O0": 9, "O1": 19, "O2": 29, "O3": 39}
# profile_version -1: no XLA-AutoFDO profile, and XLA is not to look one up (JAX's value when
# no profile version is configured and the backend reports none).
_NO_PROFILE = -1

optimization_level = config.define_enum_state(
    "jax_optimization_level",
    list(_EFFORT_LEVELS),
    "UNKNOWN",
    "How hard XLA optimizes for execution time (an XLA effort level).",
)
memory_fitting_level = config.define_enum_state(
    "jax_memory_fitting_level",
    list(_EFFORT_LEVELS),
    "O2",
    "How hard XLA tries to make the program fit in device memory (an XLA effort level).",
)
exec_time_optimization_effort = config.define_float_state(
    "jax_exec_time_optimization_effort",
    0.0,
    "Effort XLA spends minimizing execution time, in [-1.0, 1.0].",
)
memory_fitting_effort = config.define_float_state(
    "jax_memory_fitting_effort",
    0.0,
    "Effort XLA spends minimizing memory use, in [-1.0, 1.0].",
)
xla_profile_version = config.define_int_state(
    "jax_xla_profile_version",
    0,
    "XLA-AutoFDO profile version to compile with; 0: none.",
)
enable_remat_pass = config.define_bool_state(
    "jax_compiler_enable_remat_pass",
    True,
    "Let XLA's rematerialization pass trade recomputation for memory.",
)


def compile_options(
    devices: Sequence[xc.Device],
    *,
    num_replicas: int = 1,
    propagate_to_inputs: Sequence[bool] | None = None,
    propagate_to_outputs: Sequence[bool] | None = None,
    compiler_options: dict[str, str | bool] | None = None,
) -> _jax.CompileOptions:
    """Compile options for an SPMD program with one partition per device of `devices`.

    laminax hands XLA the options JAX 0.10.2 does (dispatch's README says why each is set):
    SPMD partitioning on, ``num_partitions`` = the number of devices, ``num_replicas`` = 1,
    the Shardy partitioner when ``jax_use_shardy_partitioner`` is on, the device assignment
    in the order the module's shardings number the devices, the effort values and levels of
    the ``jax_*optimization*``/``jax_memory_fitting*`` options (memory fitting level O2 by
    default), no AutoFDO profile (version -1), and sharding propagation allowed exactly for
    the inputs and outputs whose sharding is unspecified.

    Args:
      devices: the device assignment (one device for single-device computations).
      num_replicas: replicas (pmap-style programs); the devices are split into
        ``num_replicas`` rows of ``len(devices) // num_replicas`` partitions.
      propagate_to_inputs, propagate_to_outputs: per parameter / result of main (runtime
        tokens included), whether XLA may choose its sharding; None: not for any.

    Returns:
      A jaxlib `CompileOptions`.

    Example:
      >>> from laminax_dispatch import devices
      >>> options = compile_options(devices()[:1])
      >>> options.num_partitions, options.num_replicas
      (1, 1)
    """
    n_partitions = len(devices) // num_replicas
    options = _jax.CompileOptions()
    options.num_replicas = num_replicas
    options.num_partitions = n_partitions
    ids = np.array([d.id for d in devices], dtype=np.int32).reshape(num_replicas, n_partitions)
    options.device_assignment = _jax.DeviceAssignment.create(ids)
    build = options.executable_build_options
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = use_shardy_partitioner.value
    build.exec_time_optimization_effort = exec_time_optimization_effort.value
    build.memory_fitting_effort = memory_fitting_effort.value
    build.optimization_level = _EFFORT_LEVELS[optimization_level.value]
    build.memory_fitting_level = _EFFORT_LEVELS[memory_fitting_level.value]
    if not enable_remat_pass.value:
        build.debug_options.xla_disable_hlo_passes = "rematerialization"
    profile = xla_profile_version.value
    options.profile_version = profile if profile > 0 else _NO_PROFILE
    if propagate_to_inputs is not None:
        build.allow_spmd_sharding_propagation_to_parameters = list(propagate_to_inputs)
    if propagate_to_outputs is not None:
        build.allow_spmd_sharding_propagation_to_output = list(propagate_to_outputs)
    if compiler_options:
        options.env_option_overrides = list(compiler_options.items())
    return options


def _memory_key(bytecode: bytes, options: _jax.CompileOptions, devices) -> str:
    digest = hashlib.sha256(bytecode)
    digest.update(options.SerializeAsString())
    digest.update(repr([(d.platform, d.id) for d in devices]).encode())
    return digest.hexdigest()


def _dump_module(name: str, module: ir.Module) -> None:
    folder = Path(dump_ir_to.value)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{safe_module_name(name)}.mlir"
    if path.exists():  # keep earlier dumps of a same-named module
        path = folder / f"{safe_module_name(name)}.{next(_dump_counter)}.mlir"
    path.write_text(module_to_string(module, enable_debug_info=True))


def _module_name(module: ir.Module) -> str:
    return ir.StringAttr(module.operation.attributes["sym_name"]).value


def _backend_compile(client, computation, device_list, options, host_callbacks):
    try:
        if host_callbacks:
            return client.compile_and_load(computation, device_list, options, list(host_callbacks))
        return client.compile_and_load(computation, device_list, options)
    except _jax.JaxRuntimeError as err:
        # JAX's type (a RuntimeError) for what XLA rejects
        raise _jax.JaxRuntimeError(f"XLA could not compile the module: {err}") from err


def _compile_uncached(name, computation, devices, options, host_callbacks, avals_text):
    """Compiles `computation` (module bytecode, or the module itself when it has callbacks)."""
    client = devices[0].client
    device_list = _jax.DeviceList(tuple(devices))
    key = (
        _compilation_cache.cache_key(computation, options, devices)
        if _compilation_cache.is_enabled() and not host_callbacks
        else None
    )
    if key is not None:
        monitoring.record_event("/jax/compilation_cache/compile_requests_use_cache")
        retrieval_start = time.perf_counter()
        cached = _compilation_cache.get_executable(
            key, client, device_list, options, host_callbacks
        )
        if cached is not None:
            retrieval = time.perf_counter() - retrieval_start
            with _lock:
                _stats["disk_hits"] += 1
            logger.debug("Persistent compilation cache hit for %s.", name)
            # (JAX also reports compile_time_saved_sec; laminax's entries do not keep the
            # original compile time)
            monitoring.record_event("/jax/compilation_cache/cache_hits")
            monitoring.record_event_duration_secs(
                "/jax/compilation_cache/cache_retrieval_time_sec", retrieval)
            return cached
        monitoring.record_event("/jax/compilation_cache/cache_misses")
    start = time.perf_counter()
    executable = _backend_compile(client, computation, device_list, options, host_callbacks)
    seconds = time.perf_counter() - start
    level = logging.WARNING if log_compiles.value else logging.DEBUG
    logger.log(
        level, "Finished XLA compilation of %s for [%s] in %.6f sec", name, avals_text, seconds
    )
    if key is not None:
        _compilation_cache.put_executable(key, client, executable, seconds)
    return executable


def compile_module(
    module: ir.Module,
    devices: Sequence[xc.Device],
    *,
    in_avals: Sequence[ShapedArray] = (),
    host_callbacks: Sequence[Any] = (),
    propagate_to_inputs: Sequence[bool] | None = None,
    propagate_to_outputs: Sequence[bool] | None = None,
    compiler_options: dict[str, str | bool] | None = None,
) -> _jax.LoadedExecutable:
    """Compiles `module` for `devices`, reusing a cached executable when there is one.

    Args:
      module: a StableHLO module with a public ``main``.
      devices: the device assignment (one SPMD partition per device).
      in_avals: the input avals, for the compile log.
      host_callbacks: Python host callbacks the module calls (kept alive by the executable);
        modules with callbacks are not cached.
      propagate_to_inputs, propagate_to_outputs: per parameter / result of main, whether
        its sharding is unspecified (XLA may choose it), as `compile_options` takes them.
      compiler_options: XLA options by name, as `compile_options` takes them.

    Returns:
      The loaded executable.

    Raises:
      RuntimeError: XLA rejected the module (the message is XLA's).

    Example:
      >>> import numpy as np
      >>> from jaxlib.mlir.dialects import stablehlo as hlo
      >>> from laminax_core import ShapedArray
      >>> from laminax_dispatch import devices
      >>> from laminax_dispatch.internal import Executable, build_module
      >>> aval = ShapedArray((2,), np.float32)
      >>> body = lambda tokens, args: (tokens, [hlo.multiply(*args)])
      >>> module = build_module("jit_mul", [aval, aval], [aval], body)
      >>> run = Executable(compile_module(module, devices()[:1]), "jit_mul", [aval, aval], [aval])
      >>> run(np.array([2, 3], np.float32), np.array([4, 5], np.float32))
      [Array([ 8., 15.], dtype=float32)]
    """
    name = _module_name(module)
    if dump_ir_to.value:
        _dump_module(name, module)
    bytecode = module_to_bytecode(module)
    if "jax.uses_shape_polymorphism" in module.operation.attributes and ir.BoolAttr(
            module.operation.attributes["jax.uses_shape_polymorphism"]).value:
        # a polymorphic artifact called with concrete shapes: propagate them through it
        # (its shape assertions are checked here, against the now constant dimensions)
        try:
            bytecode = bytes(_jax.mlir.refine_polymorphic_shapes(
                bytecode, enable_shape_assertions=True, validate_static_shapes=True))
        except _jax.JaxRuntimeError as err:  # a failed shape assertion: JAX's ValueError
            raise ValueError(f"Error refining shapes. {err}") from None
    options = compile_options(
        devices,
        propagate_to_inputs=propagate_to_inputs,
        propagate_to_outputs=propagate_to_outputs,
        compiler_options=compiler_options,
    )
    avals_text = ", ".join(a.str_short() for a in in_avals)
    if host_callbacks:
        # jaxlib takes host callbacks only with the module object; such executables call into
        # this process, so neither cache may hand them to another module or process
        return _compile_uncached(name, module, devices, options, host_callbacks, avals_text)
    key = _memory_key(bytecode, options, devices)
    with _lock:
        executable = _executables.get(key)
        if executable is not None:
            _executables.move_to_end(key)
            _stats["hits"] += 1
            return executable
        _stats["misses"] += 1
    executable = _compile_uncached(name, bytecode, devices, options, (), avals_text)
    size = _executable_bytes(executable)
    with _lock:
        _executables[key] = executable
        _sizes[key] = size
        _evict_unheld(keep=key)
    return executable


def _held_elsewhere(key: str) -> bool:
    """Whether anything besides this cache refers to the entry's executable (a live jitted
    function's CompiledCall, the C++ fast path's entries, a caller that is still running)."""
    return sys.getrefcount(_executables[key]) > _OWN_REFERENCES


def _own_references() -> int:
    # what getrefcount reports for a value only a dict holds (its argument and the dict's
    # slot), measured rather than assumed
    probe = collections.OrderedDict(k=object())
    return sys.getrefcount(probe["k"])


_OWN_REFERENCES = _own_references()


def _evict_unheld(keep: str | None = None) -> None:
    """Drops the oldest entries nobody else holds until those left fit in `_CACHE_BYTES`
    (`keep`, the entry being returned, stays). Called with `_lock` held."""
    unheld = [k for k in _executables if not _held_elsewhere(k)]
    total = sum(_sizes[k] for k in unheld)
    for k in unheld:
        if total <= _CACHE_BYTES:
            break
        if k != keep:
            del _executables[k]
            total -= _sizes.pop(k)


def _executable_bytes(executable: _jax.LoadedExecutable) -> int:
    try:
        reported = executable.size_of_generated_code_in_bytes()
    except _jax.JaxRuntimeError:
        reported = 0
    return max(reported, _DEFAULT_EXECUTABLE_BYTES)


def cache_info() -> dict[str, int]:
    """Counts of in-memory hits and misses, persistent-cache hits, and the in-memory size
    (after dropping what the byte budget no longer allows: executables of functions dropped
    since the last compilation)."""
    with _lock:
        _evict_unheld()
        return {**_stats, "size": len(_executables), "bytes": sum(_sizes.values())}


def clear_caches() -> None:
    """Empties the in-memory executable cache and resets its counters."""
    with _lock:
        _executables.clear()
        _sizes.clear()
        for key in _stats:
            _stats[key] = 0


def _read_back(reported, devices, template):
    """A sharding for what the executable reports (an `OpSharding`, or None for one device),
    of `template`'s kind when one is given (pjit reports NamedShardings on its mesh)."""
    if reported is None or len(devices) == 1:
        return SingleDeviceSharding(devices[0])
    hlo = xc.HloSharding.from_proto(reported)
    if template is not None and tuple(template._device_assignment) == tuple(devices):
        return template._from_xla_hlo_sharding(hlo)
    return sharding_from_hlo(devices, hlo)


def _output_memory_kinds(executable, n: int) -> list:
    try:
        kinds = executable.get_output_memory_kinds()[0]
    except _jax.JaxRuntimeError:  # a backend without memory spaces
        return [None] * n
    return list(kinds[-n:]) if n else []


def _with_kind(sharding, kind):
    if kind is None or sharding.memory_kind == kind:
        return sharding
    return sharding.with_memory_kind(kind)


class Executable:
    """A compiled module on its devices, callable on Arrays and host values.

    Args:
      executable: the jaxlib `LoadedExecutable`.
      name: the module's name, for error messages.
      in_avals: the avals main expects (after the tokens).
      out_avals: the avals main returns (after the tokens).
      ordered_effects: one hashable per runtime token main threads through, in order.
      has_host_callbacks: the module calls Python; runs then record a runtime token, so that
        `effects_barrier()` waits for the callbacks too.
      placement: the devices and the shardings of main's inputs and outputs (None entries:
        read back from the compiled program); default: the executable's one device.

    Attributes:
      in_shardings, out_shardings: one sharding per input and per output, as placed.
    """

    def __init__(
        self,
        executable,
        name: str,
        in_avals,
        out_avals,
        ordered_effects=(),
        has_host_callbacks: bool = False,
        placement: Placement | None = None,
    ):
        self.xla_executable = executable
        self.name = name
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        self.ordered_effects = tuple(ordered_effects)
        self.has_host_callbacks = has_host_callbacks
        if placement is None:
            devices = tuple(executable.local_devices())
            placement = Placement(devices, (None,) * len(in_avals), (None,) * len(out_avals))
        self.placement = placement
        self.devices = placement.devices
        self.device = self.devices[0]
        self._sharding = SingleDeviceSharding(self.device)
        self.in_shardings, self.out_shardings = self._shardings(placement)
        self._token_handler = _jax.array_result_handler(
            ShapedArray((0,), np.bool_), self._sharding, True, True
        )
        # result handlers depend only on the avals, shardings and `committed`: made once
        # typed-key outputs come back as their physical data, wrapped into key arrays
        self._key_outs = frozenset(
            i for i, a in enumerate(self.out_avals) if isinstance(a.dtype, ExtendedDType))
        self._handlers = {
            flag: [
                _jax.array_result_handler(physical_aval(a), s, flag, True)
                for a, s in zip(self.out_avals, self.out_shardings, strict=True)
            ]
            for flag in (False, True)
        }

    def _shardings(self, placement: Placement) -> tuple[tuple, tuple]:
        devices = placement.devices
        ins = tuple(placement.in_shardings) or (None,) * len(self.in_avals)
        outs = tuple(placement.out_shardings) or (None,) * len(self.out_avals)
        template = next((s for s in (*ins, *outs) if s is not None), placement.template)
        if None in ins:
            n_tokens = len(self.ordered_effects)
            reported = self.xla_executable.get_parameter_shardings() or [None] * (
                n_tokens + len(ins)
            )
            reported = reported[n_tokens:] if len(reported) > len(ins) else reported
            ins = tuple(
                s if s is not None else _read_back(r, devices, template)
                for s, r in zip(ins, reported, strict=True)
            )
        if None in outs:
            reported = self.xla_executable.get_output_shardings() or [None] * len(outs)
            reported = reported[-len(outs) :] if outs else []
            kinds = _output_memory_kinds(self.xla_executable, len(outs))
            outs = tuple(
                s if s is not None else _with_kind(_read_back(r, devices, template), k)
                for s, r, k in zip(outs, reported, kinds, strict=True)
            )
        return ins, outs

    def _input(self, x, aval: ShapedArray, index: int, check_type: bool = True) -> ArrayImpl:
        sharding = self.in_shardings[index]
        if isinstance(aval.dtype, ExtendedDType):  # a typed key array passes its data
            x, aval = getattr(x, "_base", x), physical_aval(aval)
        if type(x) is not _jax.ArrayImpl:
            x = device_put(x, sharding, _weak_type=aval.weak_type)
        elif x.is_deleted():
            raise _deleted_error(x)
        else:
            current = x._sharding
            if current is not sharding and current != sharding:
                x = device_put(x, sharding)
        if check_type and (x.shape, x.dtype) != (aval.shape, aval.dtype):
            raise TypeError(
                f"{self.name} was compiled for argument {index} of type {aval.str_short()}, "
                f"but got {x.dtype.name}{list(x.shape)}; recompile for the new type."
            )
        return x

    def __call__(self, *args, committed: bool = False, check_types: bool = True):
        """Runs the program on `args`; `check_types=False` when the caller already matched the
        arguments' avals (jit and eager dispatch look executables up by avals)."""
        if no_execution.value:
            raise RuntimeError(
                f"laminax tried to execute function {self.name}, but the no_execution config "
                "option is set")
        if len(args) != len(self.in_avals):
            raise TypeError(
                f"{self.name} was compiled for {len(self.in_avals)} arguments, got {len(args)}."
            )
        inputs = [
            self._input(x, a, i, check_types)
            for i, (x, a) in enumerate(zip(args, self.in_avals, strict=True))
        ]
        handlers = self._handlers[committed]
        if not (self.ordered_effects or self.has_host_callbacks):
            results = self.xla_executable.execute_sharded(inputs)
            outs = results.consume_with_handlers(handlers)
        else:
            outs = self._call_with_tokens(inputs, handlers)
        if self._key_outs:
            outs = [PRNGKeyArray(o) if i in self._key_outs else o for i, o in enumerate(outs)]
        return outs

    def _call_with_tokens(self, inputs, handlers) -> list[ArrayImpl]:
        where = self.device if len(self.devices) == 1 else tuple(self.devices)
        tokens = [runtime_tokens.get_token_input(e, where) for e in self.ordered_effects]
        results = self.xla_executable.execute_sharded([*tokens, *inputs], with_tokens=True)
        done = results.consume_token()
        # one token per device of this process (a multi-process program runs here on those)
        here = [d for d in self.devices if d.process_index == d.client.process_index()]
        for i, device in enumerate(here):
            runtime_tokens.set_output_runtime_token(device, done.get_token(i))
        if len(self.devices) == 1:
            # C++ result handlers for the tokens too: Python handlers (strict=False) make
            # jaxlib try `import jax` on every call, which costs hundreds of microseconds
            n = len(tokens)
            outs = results.consume_with_handlers([self._token_handler] * n + handlers)
            for effect, token in zip(self.ordered_effects, outs[:n], strict=True):
                runtime_tokens.set_token_result(effect, token)
            return outs[n:]
        token_outs = results.consume_with_handlers([lambda bufs: bufs] * len(tokens), strict=False)
        for effect, bufs in zip(self.ordered_effects, token_outs, strict=True):
            # the first buffer this process holds (in a multi-process program, not always on
            # the program's first device)
            device = next(iter(bufs[0].devices()))
            runtime_tokens.set_token_result(effect, _wrap_token(bufs[0], device))
        return results.consume_with_handlers(handlers)


def _wrap_token(buffer, device) -> ArrayImpl:
    aval = ShapedArray((0,), np.bool_)
    return _jax.ArrayImpl(aval, SingleDeviceSharding(device), [buffer], True, True)

"""Eager op-by-op dispatch: every primitive applied outside a trace runs on XLA.

`apply_primitive` is what core's eval trace calls (plugged in with `set_eager_impl`). It looks
up an executable compiled for (primitive, params, input avals with weak types, the committed
arguments' shardings); on a miss it stages the one equation into a jaxpr and hands it to jit's
pipeline (`CompiledCall`: placement, lowering, compiling), so an op on sharded Arrays runs as
one SPMD program over their devices. A computation that only
forwards its inputs (`stop_gradient`, a `convert_element_type` that changes only the weak
type) is never compiled: its outputs are the input buffers under the output avals.

The lookup and the call go through jaxlib's C++ fast path (`_fast_path.py`): one `PjitFunction`
per (primitive, params), whose C++ cache maps argument signatures to executables, so a repeated
`x + y` computes its signature, finds the executable and wraps the output without Python. Only
a signature the C++ side has not seen, or one it cannot run (forwarding, ordered effects),
comes back to the Python path above.

A primitive with no lowering (a user primitive with only a NumPy reference) runs its reference
implementation and the result is put on the device, so eager code keeps working; `jit` raises
for it instead.
"""

from __future__ import annotations

import collections
import threading

import numpy as np
from jaxlib import _jax
from laminax_core import config as core_config
from laminax_core.dtypes import float0
from laminax_core.internal import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Var,
    get_aval,
    run_reference,
    set_eager_impl,
)
from laminax_core.lax import copy_p
from laminax_pytree import tree_structure

from laminax_dispatch import _debugging
from laminax_dispatch._array import ArrayImpl, _deleted_error
from laminax_dispatch._device_put import device_put
from laminax_dispatch._fast_path import (
    cpp_function,
    fast_path_data,
    new_cache,
    raise_if_deleted,
)
from laminax_dispatch._compiled_call import CompiledCall
from laminax_dispatch._lowering import _core as lowering
from laminax_dispatch._placement import (
    Placement,
    committed_shardings,
    context_sharding,
    jaxpr_shardings,
    place_inputs,
    typed_out_shardings,
)

__all__ = ["apply_primitive", "clear_eager_cache", "eager_cache_info", "install"]

_CACHE_SIZE = 4096
_lock = threading.Lock()
_cache: collections.OrderedDict = collections.OrderedDict()
_stats = {"hits": 0, "misses": 0, "forwarded": 0}
_debug_nans, _debug_infs = core_config.debug_nans, core_config.debug_infs
# (primitive, params) -> its C++ PjitFunction; bounded by _CACHE_SIZE (oldest dropped first)
_cpp_functions: dict = {}
_cpp_cache = new_cache(_CACHE_SIZE)


class _EagerComputation:
    """What one cache entry holds: an executable, or the forwarding map of a trivial one."""

    __slots__ = ("executable", "forwarded", "out_avals", "multiple_results", "name")

    def __init__(self, executable, forwarded, out_avals, multiple_results, name):
        self.executable = executable
        self.forwarded = forwarded  # output index -> input index, when nothing is computed
        self.out_avals = out_avals
        self.multiple_results = multiple_results
        self.name = name


def _single_eqn_jaxpr(primitive, avals, params) -> ClosedJaxpr:
    avals_out, effects = primitive.abstract_eval(*avals, **params)
    if not primitive.multiple_results:
        avals_out = [avals_out]
    invars = [Var(a) for a in avals]
    outvars = [Var(a) for a in avals_out]
    eqn = JaxprEqn(invars, outvars, primitive, params, effects, "")
    return ClosedJaxpr(Jaxpr([], invars, outvars, [eqn]), [])


def _forwarding(module) -> dict[int, int] | None:
    """output -> argument index if main only returns its arguments, else None."""
    main = next(op for op in module.body.operations if op.operation.name == "func.func")
    block = main.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) != 1:
        return None
    args = list(block.arguments)
    forwarded = {}
    for i, value in enumerate(ops[0].operands):
        if value not in args:
            return None
        forwarded[i] = args.index(value)
    return forwarded


def _compile_eager(primitive, avals, params, placement) -> _EagerComputation:
    # the one compile pipeline: the equation becomes a jitted call's cache entry
    closed = _single_eqn_jaxpr(primitive, avals, params)
    n = len(avals)
    out_avals = closed.out_avals
    single = placement.replicated() if len(placement.devices) == 1 else None
    placement = placement.with_out_shardings(
        typed_out_shardings(out_avals, placement, [single] * len(out_avals)))
    names = [f"args[{i}]" for i in range(n)]
    entry = CompiledCall(
        primitive.name, closed, None, None, names, [False] * n, list(range(n)), placement, False
    )
    name = f"jit_{primitive.name}"
    forwarded = None
    if not entry.ordered and primitive is not copy_p:
        forwarded = _forwarding(entry.lower().module)
    if forwarded is not None:
        _stats["forwarded"] += 1
        return _EagerComputation(None, forwarded, out_avals, primitive.multiple_results, name)
    executable = entry.executable()
    return _EagerComputation(executable, None, out_avals, primitive.multiple_results, name)


def _place(primitive, args, params) -> Placement:
    # a higher-order primitive (cond, remat, ...) runs where the shardings and meshes its
    # jaxprs name say (a shard_map inside runs on its mesh), as a jitted call would
    inner = jaxpr_shardings(tuple(params.values())) if params else ()
    return place_inputs(args, fun_name=primitive.name, inner_shardings=inner)


def _lookup(primitive, avals, params, args) -> tuple[_EagerComputation, Placement]:
    # params in bind order: the same call site always gives the same key
    placed = committed_shardings(args)
    # the context (set_mesh's mesh) decides the devices of uncommitted arguments too
    key = (primitive, tuple(params.items()), tuple(avals), placed, context_sharding())
    try:
        entry = _cache.get(key)
    except TypeError:  # unhashable params: compile (the module cache still helps)
        placement = _place(primitive, args, params)
        return _compile_eager(primitive, avals, params, placement), placement
    if entry is not None:
        _stats["hits"] += 1
        return entry
    placement = _place(primitive, args, params)
    entry = (_compile_eager(primitive, avals, params, placement), placement)
    with _lock:
        _stats["misses"] += 1
        _cache[key] = entry
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return entry


def _rewrap(x: ArrayImpl, aval) -> ArrayImpl:
    if x.aval == aval:
        return x
    return _jax.ArrayImpl(aval, x.sharding, x._arrays, x._committed, True)


def _run(entry: _EagerComputation, args, placement: Placement) -> list:
    if entry.forwarded is None:
        return entry.executable(*args, committed=placement.committed, check_types=False)
    outs = []
    for i, aval in enumerate(entry.out_avals):
        x = args[entry.forwarded[i]]
        if not isinstance(x, _jax.ArrayImpl):
            target = placement.in_shardings[entry.forwarded[i]] if placement.committed else None
            x = device_put(x, target, _weak_type=aval.weak_type)
        elif x.is_deleted():
            raise _deleted_error(x)
        outs.append(_rewrap(x, aval))
    return outs


def _run_reference(primitive, args, params):
    avals_out, _ = primitive.abstract_eval(*[get_aval(x) for x in args], **params)
    outs = run_reference(primitive, [np.asarray(x) for x in args], params)
    if not primitive.multiple_results:
        return device_put(outs, _weak_type=avals_out.weak_type)
    return [device_put(o, _weak_type=a.weak_type) for o, a in zip(outs, avals_out, strict=True)]


def _apply_python(primitive, args, params) -> tuple[list, _EagerComputation | None]:
    if primitive not in lowering.lowerings:
        outs = _run_reference(primitive, args, params)
        return (outs if primitive.multiple_results else [outs]), None
    avals = [get_aval(x) for x in args]
    if any(a.dtype == float0 for a in avals):
        return _apply_with_float0(primitive, args, avals, params), None
    entry, placement = _lookup(primitive, avals, params, args)
    outs = _run(entry, args, placement)
    if _debug_nans.value or _debug_infs.value:
        _debugging.check_outputs(primitive.name, outs)
    return outs, entry


def _apply_with_float0(primitive, args, avals, params) -> list:
    # float0 holds no data (JAX's): float0 results are NumPy zeros, float0 operands travel as
    # bool zeros (their lowered type); such calls stay off the C++ fast path
    out_avals, _ = primitive.abstract_eval(*avals, **params)
    out_avals = out_avals if primitive.multiple_results else [out_avals]
    if all(a.dtype == float0 for a in out_avals):
        return [np.zeros(a.shape, float0) for a in out_avals]
    args = [np.zeros(a.shape, np.bool_) if a.dtype == float0 else x
            for x, a in zip(args, avals, strict=True)]
    entry, placement = _lookup(primitive, avals, params, args)
    return _run(entry, args, placement)


def _result(primitive, outs):
    return outs if primitive.multiple_results else outs[0]


def _new_cpp_function(primitive, params, key):
    def apply(*args):  # what jaxlib calls under jax_disable_jit
        return _result(primitive, _apply_python(primitive, args, params)[0])

    def cache_miss(*args):
        outs, entry = _apply_python(primitive, args, params)
        result = _result(primitive, outs)
        executable = entry.executable if entry is not None else None
        if executable is None or executable.ordered_effects or executable.has_host_callbacks:
            return result, None, False
        data = fast_path_data(executable, tree_structure(result), outs, [True] * len(args))
        return result, data, False

    function = cpp_function(f"{primitive.name}", apply, cache_miss, _cpp_cache)
    with _lock:
        _cpp_functions[key] = function
        if len(_cpp_functions) > _CACHE_SIZE:
            del _cpp_functions[next(iter(_cpp_functions))]
    return function


def apply_primitive(primitive, args, params):
    """Runs `primitive(*args, **params)` on XLA and returns Arrays (core's eager hook).

    Args:
      primitive: a core `Primitive`.
      args: Arrays, NumPy arrays or scalars (Python scalars are weakly typed).
      params: the primitive's parameters.

    Returns:
      An Array, or a list of Arrays for `multiple_results` primitives.

    Example:
      >>> import numpy as np
      >>> from laminax_core import lax
      >>> apply_primitive(lax.sin_p, [np.float32(0.0)], {"accuracy": None})
      Array(0., dtype=float32)
    """
    if _debug_nans.value or _debug_infs.value:
        return _result(primitive, _apply_python(primitive, args, params)[0])
    key = (primitive, tuple(params.items()))
    try:
        function = _cpp_functions.get(key)
    except TypeError:  # unhashable params: the Python path only
        return _result(primitive, _apply_python(primitive, args, params)[0])
    if function is None:
        if primitive not in lowering.lowerings:
            return _result(primitive, _apply_python(primitive, args, params)[0])
        function = _new_cpp_function(primitive, params, key)
    try:
        return function(*args)
    except ValueError as err:
        raise_if_deleted(err, args)
        raise


def eager_cache_info() -> dict[str, int]:
    """Counts of the Python path's hits and misses (calls the C++ fast path runs by itself
    count in neither), its entries (``size``), and the C++ functions (``cpp_functions``)."""
    with _lock:
        return {**_stats, "size": len(_cache), "cpp_functions": len(_cpp_functions)}


def clear_eager_cache() -> None:
    """Empties the eager executable caches (Python and C++) and resets their counters."""
    with _lock:
        _cache.clear()
        _cpp_functions.clear()
        _cpp_cache.clear()
        for key in _stats:
            _stats[key] = 0


def _to_device_array(value):
    # what `jnp.array(...)` returns eagerly: an Array on the default device, weak type kept
    if isinstance(value, ArrayImpl):
        return value
    return device_put(value, _weak_type=bool(getattr(value, "weak_type", False)))


apply_primitive.to_array = _to_device_array


def install() -> None:
    """Plugs `apply_primitive` into core's eval trace (and device Arrays into `jnp.array`)."""
    set_eager_impl(apply_primitive)

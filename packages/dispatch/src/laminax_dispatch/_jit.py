"""`jit`: trace a function once per signature, compile it with XLA, and call the executable.

A call splits the arguments into static ones (hashed into the cache key) and dynamic ones
(flattened to leaves), and looks up a `CompiledCall` keyed on the leaves' avals (shape, dtype,
weak type), the input tree, the static values, the committed device and the config values that
matter (`config.trace_context()`). Everything per entry (the jaxpr, pruned inputs, donation
aliases, the executable, hoisted constants on the device) is computed once, on the first call
with that signature; a later call only flattens, looks up and executes. That per-call path is
what jaxlib's C++ `PjitFunction` does without Python (`_fast_path.py`): a call at top level
goes to it first, and only a signature it has not seen (or one it cannot run: effects,
debug checks) comes back to Python, through `JitFunction._cache_miss`.

Cache entries live in a bounded LRU per function, in a `WeakKeyDictionary` keyed by the
function: `jit(f)` objects made anew for the same `f` share entries, and entries go when `f`
does. The C++ cache (one `PjitFunctionCache` for all functions) is keyed the same way.

Under another trace (make_jaxpr, an outer jit, grad, vmap) the call binds `jit_p` with the
traced jaxpr instead (see `_jit_primitive.py`); with ``jax_disable_jit`` it calls `f` as is.
"""

from __future__ import annotations

import collections
import functools
import inspect
import logging
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from laminax_core import config as core_config
from laminax_core import dtypes as core_dtypes
# `_trace_context.trace is None`: no transformation is running
from laminax_core.internal import trace_context as _trace_context
from laminax_core.internal import (
    AbstractToken,
    ClosedJaxpr,
    Ref,
    Jaxpr,
    Token,
    Tracer,
    check_argnames,
    check_argnums,
    current_trace,
    dce_jaxpr,
    eval_interpreter,
    eval_jaxpr,
    get_aval,
    resolve_argnums,
    trace_to_jaxpr,
)
from laminax_pytree import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten

from laminax_dispatch import _compile, _eager, _hooks, _jit_primitive
from laminax_dispatch import monitoring
from laminax_dispatch._compile import log_compiles
from laminax_dispatch._compiled_call import CompiledCall, check_donations
from laminax_dispatch._fast_path import cpp_function, new_cache, raise_if_deleted
from laminax_dispatch._jit_primitive import call_jaxpr, jit_p, memoize_on_jaxpr
from laminax_dispatch._sharding import SingleDeviceSharding
from laminax_dispatch._stages import Traced
from laminax_dispatch._placement import (
    Placement,
    committed_shardings,
    explicit_shardings,
    flat_in_shardings,
    flat_out_shardings,
    freeze_shardings,
    jaxpr_shardings,
    context_sharding,
    place_inputs,
    typed_out_shardings,
    sharding_key,
)

__all__ = ["JitFunction", "clear_caches", "inline_jit_cpp", "jit"]


_CACHE_SIZE = 4096  # entries per function
_cpp_cache = new_cache(8192)  # (function, options) -> the C++ entries of its signatures
_lock = threading.Lock()
# the logger compilations are logged on, so one handler sees tracing and compiling
_logger = logging.getLogger("laminax_dispatch.jit")
_fun_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

explain_cache_misses = core_config.config.define_bool_state(
    "jax_explain_cache_misses",
    False,
    "Logs, at WARNING level, why each jitted call missed the tracing cache.",
)
# what each part of `JitFunction._entry`'s key is, for the explanation of a miss
_KEY_PARTS = ("jit's options", "the pytree structure of the arguments", "the argument types",
              "the static arguments", "the committed arguments' shardings",
              "the configuration (enable_x64, default_matmul_precision, ...)")


def _explain_miss(name: str, key: tuple, cache) -> None:
    if not cache:
        _logger.warning("TRACING CACHE MISS at %s: never seen function %s before", name, name)
        return
    # the cached signature closest to this call: the one differing in the fewest parts
    closest = min(cache, key=lambda old: sum(a != b for a, b in zip(old, key, strict=True)))
    reasons = []
    for part, old, new in zip(_KEY_PARTS, closest, key, strict=True):
        if old == new:
            continue
        if part == "the argument types" and len(old) == len(new):
            reasons += [f"argument {i} has type {b.str_short()} instead of {a.str_short()}"
                        for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
        else:
            reasons.append(f"{part} differ: {new} instead of {old}")
    _logger.warning("TRACING CACHE MISS at %s (%d signatures cached) because:\n  %s", name,
                    len(cache), "\n  ".join(reasons))

def _fun_name(fun) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


# ----- argument bookkeeping -----------------------------------------------------------------


def _resolve(fun, argnums, argnames, what: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Completes positional indices from names and names from indices, via the signature."""
    nums = check_argnums(f"jit {what}_argnums", argnums)
    names = check_argnames(f"jit {what}_argnames", argnames)
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return tuple(sorted(set(nums))), tuple(names)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    has_varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
    for n in nums:
        if not has_varargs and not -len(positional) <= n < len(positional):
            raise ValueError(
                f"jit: {what}_argnums={argnums} refers to argument {n}, but "
                f"{_fun_name(fun)} takes {len(positional)} positional arguments."
            )
    if what == "static":
        # JAX resolves negative static positions against each call's arguments (jaxlib's C++
        # does the same), so they stay negative here and name no parameter
        nums = tuple(sorted(set(nums)))
    else:
        nums = tuple(sorted({n % len(positional) if n < 0 and positional else n for n in nums}))
    by_name = {p.name: i for i, p in enumerate(positional)}
    names_out = set(names) | {
        positional[n].name
        for n in nums
        if 0 <= n < len(positional) and positional[n].kind != inspect.Parameter.POSITIONAL_ONLY
    }
    nums_out = set(nums) | {by_name[name] for name in names if name in by_name}
    return tuple(sorted(nums_out)), tuple(sorted(names_out))


class _ArgNames:
    """Names the top-level arguments as JAX's debug info does (they name main's parameters in
    the HLO and the arguments in messages): a parameter's name, `args[k]` for the k-th value
    a `*args` parameter takes, `kw['key']` for a keyword that only `**kw` takes; without a
    signature, `args[i]` and `kwargs['key']`."""

    def __init__(self, fun):
        try:
            params = inspect.signature(fun).parameters.values()
        except (TypeError, ValueError):
            params = None
        kind = {p.name: p.kind for p in params or ()}
        P = inspect.Parameter
        self.positional = [n for n, k in kind.items() if k in (P.POSITIONAL_ONLY,
                                                                 P.POSITIONAL_OR_KEYWORD)]
        self.keywords = {n for n, k in kind.items() if k in (P.POSITIONAL_OR_KEYWORD,
                                                                P.KEYWORD_ONLY)}
        var = [n for n, k in kind.items() if k == P.VAR_POSITIONAL] or [None]
        var_kw = [n for n, k in kind.items() if k == P.VAR_KEYWORD] or [None]
        self.var_args, self.var_kw = ("args", "kwargs") if params is None else (var[0], var_kw[0])

    def positional_name(self, i: int) -> str:
        if i < len(self.positional):
            return self.positional[i]
        if self.var_args is None:
            return f"args[{i}]"
        return f"{self.var_args}[{i - len(self.positional)}]"

    def keyword_name(self, key: str) -> str:
        return key if key in self.keywords or self.var_kw is None else f"{self.var_kw}[{key!r}]"


def _check_hashable(value, where: str) -> None:
    try:
        hash(value)
    except TypeError as err:
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while trying "
            f"to hash an object of type {type(value)}, {value!r} (static argument {where}). "
            f"The error was:\nTypeError: {err}\nMake it hashable (a tuple instead of a list) or "
            "pass it as a regular (traced) argument."
        ) from err


class _Options:
    """What `jit` was given, resolved once; `key` enters every cache key."""

    def __init__(
        self,
        fun,
        static_argnums,
        static_argnames,
        donate_argnums,
        donate_argnames,
        keep_unused,
        device,
        backend,
        inline,
        in_shardings=None,
        out_shardings=None,
    ):
        self.static_argnums, self.static_argnames = _resolve(
            fun, static_argnums, static_argnames, "static"
        )
        # negative static positions count from the end of each call's arguments too (JAX
        # resolves them per call): one reaching before the first argument is an error then
        self.negative = tuple(
            n for n in check_argnums("jit static_argnums", static_argnums) if n < 0)
        self.donate_argnums, self.donate_argnames = _resolve(
            fun, donate_argnums, donate_argnames, "donate"
        )
        clash = set(self.static_argnums) & set(self.donate_argnums)
        if clash:
            raise ValueError(
                f"jit: static_argnums and donate_argnums cannot intersect (both name "
                f"{sorted(clash)}); a static argument has no buffer to donate."
            )
        if device is not None and backend is not None:
            raise ValueError("jit: pass device or backend, not both.")
        self.keep_unused = bool(keep_unused)
        self.device = device
        self.backend = backend
        self.inline = bool(inline)
        self.names = _ArgNames(fun)
        self.in_shardings = freeze_shardings(in_shardings)
        # kept as given: a prefix of the output, where a list and a tuple differ (as in JAX);
        # its cache key comes from its flattened structure
        self.out_shardings = out_shardings
        self.key = (
            self.static_argnums,
            self.static_argnames,
            self.donate_argnums,
            self.donate_argnames,
            self.keep_unused,
            device,
            backend,
            self.inline,
            sharding_key(self.in_shardings),
            sharding_key(self.out_shardings),
        )

    def split(self, args, kwargs):
        """`(dyn_args, dyn_kwargs, static_key)`, checking that static values are hashable."""
        nums, names = self.static_argnums, self.static_argnames
        if self.negative:
            nums = frozenset(n for n in nums if n >= 0) | set(
                resolve_argnums(self.negative, len(args)))
        if not nums and not names:
            return args, kwargs, ()
        static = []
        for i in sorted(nums):
            if i < len(args):
                _check_hashable(args[i], f"{i}")
                static.append((i, args[i]))
        for name in names:
            if name in kwargs:
                _check_hashable(kwargs[name], repr(name))
                static.append((name, kwargs[name]))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in names}
        return dyn_args, dyn_kwargs, tuple(static)

    def merge(self, dyn_args, dyn_kwargs, static) -> tuple[tuple, dict]:
        """The full arguments from the dynamic ones and the static pairs."""
        positions = {k: v for k, v in static if isinstance(k, int)}
        args, dyn = [], iter(dyn_args)
        for i in range(len(dyn_args) + len(positions)):
            args.append(positions[i] if i in positions else next(dyn))
        kwargs = dict(dyn_kwargs)
        kwargs.update({k: v for k, v in static if isinstance(k, str)})
        return tuple(args), kwargs

    def leaf_info(self, dyn_args, dyn_kwargs, static) -> tuple[list[str], list[bool]]:
        """A name per leaf (for messages) and whether each leaf is donated."""
        static_positions = sorted(k for k, _ in static if isinstance(k, int))
        original = [
            i for i in range(len(dyn_args) + len(static_positions)) if i not in static_positions
        ]
        names, donated = [], []
        for i, arg in zip(original, dyn_args, strict=False):
            base = self.names.positional_name(i)
            flag = i in self.donate_argnums
            for path, _ in tree_flatten_with_path(arg)[0]:
                names.append(base + keystr(path))
                donated.append(flag)
        for key in sorted(dyn_kwargs):
            flag = key in self.donate_argnames
            for path, _ in tree_flatten_with_path(dyn_kwargs[key])[0]:
                names.append(self.names.keyword_name(key) + keystr(path))
                donated.append(flag)
        return names, donated


# ----- the jitted function ------------------------------------------------------------------


_debug_nans, _debug_infs = core_config.debug_nans, core_config.debug_infs
_EVAL_TRACE = eval_interpreter.eval_trace  # the bottom trace: no transformation running


# `_new_entry`'s answer for a function that closes over references (`new_ref`): no compiled
# call of its own, its calls go through `_call_traced`
_CLOSES_OVER_REFS = object()


class JitFunction:
    """A function compiled with XLA on first call per signature (what `jit` returns).

    Call it like the function; `.lower(*args)` and `.trace(*args)` give the ahead-of-time
    stages, `.eval_shape(*args)` the output shapes.
    """

    def __init__(self, fun: Callable, options: _Options):
        self._fun = fun
        self._options = options
        self._name = _fun_name(fun)
        self._local_cache: collections.OrderedDict | None = None
        self._cache_misses = 0  # calls the C++ fast path handed back to Python
        # the C++ side calls back through a weak reference: a bound method would make a cycle
        # (this object -> its PjitFunction -> the method -> this object), and a dropped jitted
        # closure would then keep its executables alive until the cyclic GC happens to run
        this = weakref.ref(self)

        def cache_miss(*args, **kwargs):
            return this()._cache_miss(*args, **kwargs)

        self._cpp = cpp_function(
            self._name,
            fun,
            cache_miss,
            _cpp_cache,
            static_argnums=options.static_argnums,
            static_argnames=options.static_argnames,
            key=options.key,
        )
        functools.update_wrapper(self, fun, updated=())

    # -- caching ----------------------------------------------------------------------------

    def _cache(self) -> collections.OrderedDict:
        if self._local_cache is not None:
            return self._local_cache
        try:
            with _lock:
                cache = _fun_caches.get(self._fun)
                if cache is None:
                    cache = _fun_caches[self._fun] = collections.OrderedDict()
            self._local_cache = cache  # the same dict: this object holds `fun` anyway
            return cache
        except TypeError:  # not weak-referenceable: keep the entries on this object
            if self._local_cache is None:
                self._local_cache = collections.OrderedDict()
            return self._local_cache

    def _cache_size(self) -> int:
        return len(self._cache())

    def _cpp_cache_size(self) -> int:
        return self._cpp._cache_size()

    def clear_cache(self) -> None:
        """Forgets every traced and compiled signature of this function."""
        self._cache().clear()
        self._cpp._clear_cache()

    # -- tracing ----------------------------------------------------------------------------

    def _trace(self, in_tree, avals, static) -> tuple[ClosedJaxpr, Any]:
        out_trees = []
        options, fun, name = self._options, self._fun, self._name

        def flat_fun(*leaves):  # named after `fun`, for no_tracing's error
            dyn_args, dyn_kwargs = tree_unflatten(in_tree, leaves)
            args, kwargs = options.merge(dyn_args, dyn_kwargs, static)
            out_leaves, out_tree = tree_flatten(fun(*args, **kwargs))
            for leaf in out_leaves:
                _check_output(name, leaf)
            out_trees.append(out_tree)
            return out_leaves

        flat_fun.__name__ = name
        start = time.perf_counter()
        with monitoring.timed_stage(monitoring.TRACE_EVENT, name):
            closed, _ = trace_to_jaxpr(flat_fun, avals, transformation=f"jit({name})")
        _logger.log(logging.WARNING if log_compiles.value else logging.DEBUG,
                    "Finished tracing + transforming %s for pjit in %.6f sec", name,
                    time.perf_counter() - start)
        return closed, out_trees[0]

    def _place(self, dyn_args, dyn_kwargs, leaves, names, closed) -> Placement:
        """The placement of a new signature (`_placement.place_inputs`, the one place where
        placement is decided), from the committed arguments and jit's options."""
        options = self._options
        in_shardings = None
        if options.in_shardings is not None:
            n_kwarg_leaves = len(tree_flatten(dyn_kwargs)[0])
            in_shardings = flat_in_shardings(
                options.in_shardings, dyn_args, n_kwarg_leaves, self._name
            )
        return place_inputs(
            leaves,
            in_shardings=in_shardings,
            out_shardings=explicit_shardings(options.out_shardings),
            device=options.device,
            backend=options.backend,
            arg_names=names,
            fun_name=self._name,
            inner_shardings=jaxpr_shardings(closed),
        )

    def _entry(self, args, kwargs) -> tuple[CompiledCall, list]:
        dyn_args, dyn_kwargs, static = self._options.split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        # get_aval, not x.aval: an Array on Explicit mesh axes has its sharding in its type
        avals = tuple(map(get_aval, leaves))
        # what placement depends on besides the options: the committed arguments' shardings
        placed = committed_shardings(leaves)
        key = (self._options.key, in_tree, avals, static, placed, core_config.trace_context())
        cache = self._cache()
        entry = cache.get(key)
        if entry is None:
            if explain_cache_misses.value:
                _explain_miss(self._name, key, cache)
            entry = self._new_entry(dyn_args, dyn_kwargs, static, in_tree, avals, leaves)
            cache[key] = entry
            if len(cache) > _CACHE_SIZE:
                cache.popitem(last=False)
        return entry, leaves

    def _new_entry(self, dyn_args, dyn_kwargs, static, in_tree, avals, leaves):
        names, donated = self._options.leaf_info(dyn_args, dyn_kwargs, static)
        closed, out_tree = self._trace(in_tree, avals, static)
        if any(isinstance(c, Ref) for c in closed.consts):
            return _CLOSES_OVER_REFS
        if any(_holds_no_data(a) for a in (*closed.out_avals, *closed.in_avals)):
            return _Float0Outputs.wrap(self, closed, out_tree, dyn_args, dyn_kwargs, leaves,
                                       names, donated, in_tree)
        return self._compiled_call(closed, out_tree, dyn_args, dyn_kwargs, leaves, names,
                                   donated, in_tree)

    def _compiled_call(self, closed, out_tree, dyn_args, dyn_kwargs, leaves, names, donated,
                       in_tree):
        placement = self._place(dyn_args, dyn_kwargs, leaves, names, closed)
        outs = typed_out_shardings(closed.out_avals, placement,
                                   self._out_shardings(out_tree, placement))
        placement = placement.with_out_shardings(outs)
        if self._options.keep_unused:
            kept = list(range(len(closed.in_avals)))
        else:
            _, used = dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
            kept = [i for i, u in enumerate(used) if u]
        return CompiledCall(self._name, closed, in_tree, out_tree, names, donated, kept, placement)

    def _out_shardings(self, out_tree, placement: Placement) -> list:
        outs = self._options.out_shardings
        if outs is None:
            flat = [None] * out_tree.num_leaves
        else:
            flat = flat_out_shardings(outs, out_tree, self._name)
        if len(placement.devices) == 1:  # one device: nothing for XLA to choose
            single = placement.replicated()
            flat = [single if s is None else s for s in flat]
        return flat

    # -- calling ----------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        # Every call enters jaxlib's C++ `PjitFunction`: its cache key holds laminax's running
        # trace and the debug-check flags (config values in the jit key), so a call under a
        # transformation or with checks on misses and reaches `_cache_miss`; with
        # `jax_disable_jit` jaxlib calls the function itself.
        try:
            return self._cpp(*args, **kwargs)
        except ValueError as err:
            self._explain(err, args, kwargs)
            raise

    def _explain(self, err: ValueError, args, kwargs) -> None:
        # jaxlib's and XLA's terse errors, raised again as the Python path's, which name things
        message = str(err)
        if message.startswith("Non-hashable static"):
            self._options.split(args, kwargs)  # raises, naming the argument
        elif "donat" in message and _trace_context.trace is None:
            # a donated buffer passed twice, or a deleted one
            entry, leaves = self._entry(args, kwargs)
            check_donations(entry, leaves)
        raise_if_deleted(err, args, kwargs)

    def _cache_miss(self, *args, **kwargs):
        # what the C++ fast path calls for a signature it cannot run by itself; a traced or
        # checked call gives it nothing to remember, so the next one comes back here
        if _trace_context.trace is not None:
            return self._call_traced(args, kwargs), None, False
        self._cache_misses += 1
        if any(isinstance(x, Ref) for x in tree_flatten((args, kwargs))[0]):
            # references are read and written through jit_p's eager path, never cached there
            return self._call_traced(args, kwargs), None, False
        entry, leaves = self._entry(args, kwargs)
        if entry is _CLOSES_OVER_REFS:  # read and written through jit_p's eager path
            return self._call_traced(args, kwargs), None, False
        outs = entry(leaves)
        checked = _debug_nans.value or _debug_infs.value
        data = None if checked else entry.fast_path_data(outs)
        return tree_unflatten(entry.out_tree, outs), data, False

    def _call_traced(self, args, kwargs):
        # Under another transformation: stage this call as one `jit` equation.
        dyn_args, dyn_kwargs, static = self._options.split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        avals = tuple(get_aval(x) for x in leaves)
        key = ("traced", self._options.key, in_tree, avals, static, core_config.trace_context())
        cache = self._cache()
        cached = cache.get(key)
        if cached is None:
            closed, out_tree = self._trace(in_tree, avals, static)
            closed, extra = _closure_convert(closed)
            # a jaxpr that closes over no outer tracer can be reused (concrete references
            # it closes over are the same objects on every call)
            if all(isinstance(x, Ref) and not isinstance(x, Tracer) for x in extra):
                cache[key] = (closed, out_tree, extra)
        else:
            closed, out_tree, extra = cached
        if self._options.inline:
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *extra, *leaves)
        else:
            options = self._options
            donated = ()
            if options.donate_argnums or options.donate_argnames:
                _, flags = options.leaf_info(dyn_args, dyn_kwargs, static)
                donated = (False,) * len(extra) + tuple(flags)
            in_shardings = out_shardings = None
            if options.in_shardings is not None:
                n_kw = len(tree_flatten(dyn_kwargs)[0])
                flat = flat_in_shardings(options.in_shardings, dyn_args, n_kw, self._name)
                in_shardings = (None,) * len(extra) + tuple(flat)
            if options.out_shardings is not None:
                out_shardings = tuple(flat_out_shardings(options.out_shardings, out_tree, self._name))
            if options.device is not None:
                # jit(device=d): every input and output on d, kept through transformations
                single = SingleDeviceSharding(options.device)
                in_shardings = in_shardings or (None,) * len(extra) + (single,) * len(leaves)
                out_shardings = out_shardings or (single,) * out_tree.num_leaves
            outs = call_jaxpr(
                closed,
                [*extra, *leaves],
                self._name,
                donated=donated,
                in_shardings=in_shardings,
                out_shardings=out_shardings,
                ctx_mesh=getattr(context_sharding(), "mesh", None),
                keep_unused=options.keep_unused,
            )
        return tree_unflatten(out_tree, outs)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __repr__(self) -> str:
        return f"<PjitFunction of {self._fun!r}>"  # JAX's repr (chex's is_traceable reads it)

    @property
    def __signature__(self) -> inspect.Signature | None:
        # the function's own signature, as JAX's jitted functions have: `__get__` makes this
        # a method descriptor, which `inspect.signature(..., follow_wrapped=False)` would
        # otherwise take for a builtin without one (chex's fake_pmap asks so)
        try:
            return inspect.signature(self._fun, follow_wrapped=False)
        except (TypeError, ValueError):
            return None

    # -- ahead-of-time stages ---------------------------------------------------------------

    def trace(self, *args, **kwargs):
        """Traces the function for these arguments (no compilation): a `Traced` stage.

        Example:
          >>> jit(lambda x: x * 2).trace(1.0).jaxpr
          { lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }
        """
        entry, _ = self._entry(args, kwargs)
        return Traced(entry)

    def lower(self, *args, **kwargs):
        """Traces and lowers the function for these arguments: a `Lowered` stage.

        Example:
          >>> "stablehlo.multiply" in jit(lambda x: x * 2).lower(1.0).as_text()
          True
        """
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        """The output's shapes and dtypes (`ShapeDtypeStruct`s), without running anything.

        Example:
          >>> jit(lambda x: x * 2).eval_shape(1.0)
          ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)
        """
        return self.trace(*args, **kwargs).out_info


def _holds_no_data(aval) -> bool:
    return isinstance(aval, AbstractToken) or aval.dtype == core_dtypes.float0


class _Float0Outputs:
    """A signature with float0 outputs (gradients of integer inputs, `allow_int=True`) or
    token outputs (`lax.create_token`): they hold no data, so the compiled program computes
    the other outputs and each float0 output is a NumPy float0 array, each token a `Token`,
    as JAX returns them. Token inputs are dropped too: only tokens depend on tokens, so once
    the token outputs are gone nothing reads them. Calls stay on the Python path."""

    def __init__(self, call: CompiledCall, out_tree, out_avals, data_inputs):
        self._call = call
        self.out_tree = out_tree
        self._avals = out_avals
        self._data_inputs = data_inputs

    @classmethod
    def wrap(cls, jit_fun, closed, out_tree, dyn_args, dyn_kwargs, leaves, names, donated,
             in_tree):
        jaxpr = closed.jaxpr
        data = [v for v, a in zip(jaxpr.outvars, closed.out_avals, strict=True)
                if not _holds_no_data(a)]
        inputs = [i for i, a in enumerate(closed.in_avals) if not isinstance(a, AbstractToken)]
        stripped = Jaxpr(jaxpr.constvars, jaxpr.invars, data, jaxpr.eqns, jaxpr.effects)
        consts = closed.consts
        if len(inputs) < len(jaxpr.invars):  # the equations reading tokens go first
            stripped, _ = dce_jaxpr(stripped, [True] * len(data), instantiate=True)
            kept = {id(v) for v in stripped.constvars}
            consts = [c for v, c in zip(jaxpr.constvars, consts, strict=True) if id(v) in kept]
            stripped = Jaxpr(stripped.constvars, [stripped.invars[i] for i in inputs],
                             stripped.outvars, stripped.eqns, stripped.effects)
        stripped = ClosedJaxpr(stripped, consts)
        data_tree = tree_flatten([0] * len(data))[1]
        if len(inputs) < len(leaves):
            in_tree = tree_flatten(([0] * len(inputs), {}))[1]
            dyn_args, dyn_kwargs = tuple(leaves[i] for i in inputs), {}
            names, donated = [names[i] for i in inputs], [donated[i] for i in inputs]
            leaves = [leaves[i] for i in inputs]
        call = jit_fun._compiled_call(stripped, data_tree, dyn_args, dyn_kwargs, leaves, names,
                                      donated, in_tree)
        return cls(call, out_tree, closed.out_avals, inputs)

    def __call__(self, leaves) -> list:
        data = iter(self._call([leaves[i] for i in self._data_inputs]))
        return [Token() if isinstance(a, AbstractToken)
                else np.zeros(a.shape, core_dtypes.float0) if a.dtype == core_dtypes.float0
                else next(data) for a in self._avals]

    def fast_path_data(self, outs):
        return None

    def __getattr__(self, name):  # lower(), placement, closed ...: the data program's
        return getattr(self._call, name)


def clear_caches() -> None:
    """Forgets every traced and compiled computation: each jitted function's signatures (the
    Python and C++ caches), derived jaxprs, the eager op caches and the in-memory executable
    cache (the persistent cache on disk stays). JAX's `jax.clear_caches`."""
    with _lock:
        for cache in list(_fun_caches.values()):
            cache.clear()
        _cpp_cache.clear()
    with _jit_primitive._lock:
        _jit_primitive._derived.clear()
    _eager.clear_eager_cache()
    _compile.clear_caches()


def _check_output(name: str, leaf) -> None:
    if isinstance(leaf, Ref):
        raise ValueError(
            f"function {name} traced for jit returned a mutable array reference of type "
            f"{get_aval(leaf)}, but mutable array references cannot be returned. Return "
            "freeze(ref) or ref[...] (its value) instead.")
    try:
        get_aval(leaf)
    except TypeError:
        raise TypeError(
            f"jit({name}): the function returned a value of type {type(leaf).__name__} "
            f"({leaf!r}); jitted functions must return arrays, scalars or pytrees of them."
        ) from None


def _closure_convert(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """Moves constants that are tracers of an outer trace into leading jaxpr inputs."""
    # concrete references move too: the call reads and writes them through its arguments
    traced = [isinstance(c, Tracer | Ref) for c in closed.consts]
    if not any(traced):
        return closed, []
    jaxpr = closed.jaxpr
    moved = [v for v, t in zip(jaxpr.constvars, traced, strict=True) if t]
    kept = [v for v, t in zip(jaxpr.constvars, traced, strict=True) if not t]
    new = Jaxpr(kept, [*moved, *jaxpr.invars], jaxpr.outvars, jaxpr.eqns, jaxpr.effects)
    consts = [c for c, t in zip(closed.consts, traced, strict=True) if not t]
    extra = [c for c, t in zip(closed.consts, traced, strict=True) if t]
    return ClosedJaxpr(new, consts), extra


# ----- jit_p's eager impl: a jaxpr run like a jitted function -------------------------------


def _jit_impl(*args, jaxpr, name, in_shardings=None, out_shardings=None, **params):
    out_avals = jaxpr.out_avals
    in_shardings = in_shardings or (None,) * len(args)
    out_shardings = out_shardings or (None,) * len(out_avals)
    if any(_holds_no_data(a) for a in out_avals):
        return _impl_without_empty_outputs(args, jaxpr, name, in_shardings, out_shardings, params)
    avals = tuple(get_aval(x) for x in args)
    if any(a.dtype == core_dtypes.float0 for a in avals):
        # residuals of integer or symbolic-zero tangents: float0 lowers as bool (as JAX's)
        args = [np.zeros(a.shape, np.bool_) if a.dtype == core_dtypes.float0 else x
                for x, a in zip(args, avals, strict=True)]
        avals = tuple(get_aval(x) for x in args)
    placed = committed_shardings(args)
    key = (
        "impl",
        jaxpr,
        avals,
        placed,
        in_shardings,
        out_shardings,
        context_sharding(),
    )

    def make():
        names = [f"args[{i}]" for i in range(len(args))]
        placement = place_inputs(
            args,
            in_shardings=in_shardings,
            out_shardings=[s for s in out_shardings if s is not None],
            arg_names=names,
            fun_name=name,
            inner_shardings=jaxpr_shardings(jaxpr),
        )
        outs = list(out_shardings)
        if len(placement.devices) == 1:
            outs = [placement.replicated() if s is None else s for s in outs]
        placement = placement.with_out_shardings(
            typed_out_shardings(jaxpr.out_avals, placement, outs))
        kept = list(range(len(args)))
        return CompiledCall(name, jaxpr, None, None, names, [False] * len(args), kept, placement)

    return memoize_on_jaxpr(key, make)(list(args))


def _impl_without_empty_outputs(args, jaxpr, name, in_shardings, out_shardings, params):
    # float0 outputs (residuals of integer or symbolic-zero tangents that partial evaluation's
    # known call returns) and tokens hold no data: the program computes the others
    data = [i for i, a in enumerate(jaxpr.out_avals) if not _holds_no_data(a)]

    def strip():
        j = jaxpr.jaxpr
        return ClosedJaxpr(Jaxpr(j.constvars, j.invars, [j.outvars[i] for i in data], j.eqns,
                                 j.effects), jaxpr.consts)

    stripped = memoize_on_jaxpr(("no empty outputs", jaxpr), strip)
    outs = iter(_jit_impl(*args, jaxpr=stripped, name=name, in_shardings=in_shardings,
                          out_shardings=tuple(out_shardings[i] for i in data), **params))
    return [Token() if isinstance(a, AbstractToken)
            else np.zeros(a.shape, core_dtypes.float0) if a.dtype == core_dtypes.float0
            else next(outs) for a in jaxpr.out_avals]


jit_p.def_impl(_jit_impl)


# ----- the public entry point ---------------------------------------------------------------


# Its type reads as JAX's (`PjitFunction`): libraries recognise jitted functions by the type's
# name (chex's `is_traceable`); the module-level alias keeps pickle's lookup by name working.
JitFunction.__name__ = JitFunction.__qualname__ = "PjitFunction"
PjitFunction = JitFunction


def jit(
    fun: Callable | None = None,
    *,
    in_shardings=None,
    out_shardings=None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Sequence[str] | None = None,
    keep_unused: bool = False,
    device=None,
    backend: str | None = None,
    inline: bool = False,
) -> JitFunction:
    """Compiles `fun` with XLA: traced once per argument signature, then run as one program.

    Args:
      fun: a function of arrays (pytrees allowed) returning arrays.
      in_shardings: how the compiled program takes its positional arguments: a `Sharding`
        for all, or a pytree prefix of the positional (non-static) arguments of Shardings
        and None (unspecified: a committed argument's own layout, else the compiler's
        choice). Uncommitted arguments are moved onto it; a committed argument laid out
        otherwise is an error, as in JAX.
      out_shardings: the outputs' layouts, a Sharding or a pytree prefix of the output
        (None: the compiler's choice, reported by the executable).
      static_argnums, static_argnames: arguments passed by value into the trace (they must be
        hashable; each new value traces and compiles again).
      donate_argnums, donate_argnames: arguments whose buffers the computation may reuse for
        outputs of the same shape and dtype; donated Arrays are deleted by the call.
      keep_unused: keep arguments the function does not use as inputs of the compiled program.
      device: the device to run on (default: the committed arguments' device, else the
        default device); backend: run on this backend's default device instead.
      inline: under another trace, put `fun`'s equations in the outer jaxpr instead of a call.

    Returns:
      A `JitFunction`, called like `fun`.

    Raises:
      ValueError: a static argument is not hashable, or argnums refer to missing arguments;
        at call time, arguments and shardings on different devices.

    Example:
      >>> import numpy as np
      >>> f = jit(lambda x, y: x * y + 1.0)
      >>> f(np.float32(2), np.float32(3))
      Array(7., dtype=float32)
    """
    if fun is None:
        return functools.partial(
            jit,
            in_shardings=in_shardings,
            out_shardings=out_shardings,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
            keep_unused=keep_unused,
            device=device,
            backend=backend,
            inline=inline,
        )
    if not callable(fun):
        raise TypeError(f"jit: expected a callable, got {fun!r} of type {type(fun).__name__}.")
    options = _Options(
        fun,
        static_argnums,
        static_argnames,
        donate_argnums,
        donate_argnames,
        keep_unused,
        device,
        backend,
        inline,
        in_shardings,
        out_shardings,
    )
    return JitFunction(fun, options)


def inline_jit_cpp(fun: Callable):
    """`jit(fun, inline=True)` as jaxlib's `PjitFunction` itself, carrying the jitted
    function's `lower`, `trace`, `eval_shape` and `clear_cache`: what JAX's `jnp.sin` is. A
    call runs no Python at all on a cache hit (a `JitFunction` call is one Python frame);
    traced and checked calls reach `JitFunction._cache_miss` through jaxlib's cache key.

    Example:
      >>> import numpy as np
      >>> double = inline_jit_cpp(lambda x: x * 2)
      >>> double(np.float32(3)), type(double).__name__
      (Array(6., dtype=float32), 'PjitFunction')
    """
    jitted = jit(fun, inline=True)
    fast = jitted._cpp
    functools.update_wrapper(fast, fun, updated=())
    for name in ("lower", "trace", "eval_shape", "clear_cache"):
        setattr(fast, name, getattr(jitted, name))
    fast._jit_function = jitted
    return fast


_hooks.jit = jit

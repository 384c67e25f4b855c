"""`debug.callback` and `debug.print`: host calls for looking at values, JAX's names and rules.

Both are kept in every program (an effect: `DebugEffect`, or `OrderedDebugEffect` with
`ordered=True`, whose runtime token orders the calls), see primal values under `jvp`/`grad`
(the tangent side does nothing), and run once per batch element under `vmap`. Eagerly the
callback runs right away on the caller's thread, as in JAX.
"""

from __future__ import annotations

import dataclasses
import logging
import string
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from laminax_core import lax
from laminax_core.internal import (
    Effect,
    Primitive,
    control_flow_allowed_effects,
    get_aval,
    lowerable_effects,
    ordered_effects,
)
from laminax_dispatch import register_lowering
from laminax_pytree import tree_flatten, tree_unflatten

from laminax_hostcb._host_calls import cpu_arrays, emit_host_call, logger

__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "debug_callback",
    "debug_callback_p",
    "debug_log",
    "debug_print",
    "debug_print_p",
]


class DebugEffect(Effect):
    """A `debug.callback` / `debug.print`: kept, in no particular order."""

    __str__ = lambda self: "Debug"  # noqa: E731  (JAX prints effects by these names)


class OrderedDebugEffect(Effect):
    """An ordered `debug.callback` / `debug.print`: its calls happen in program order."""

    __str__ = lambda self: "OrderedDebug"  # noqa: E731


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()
for _effect_type in (DebugEffect, OrderedDebugEffect):
    lowerable_effects.add_type(_effect_type)
    control_flow_allowed_effects.add_type(_effect_type)
ordered_effects.add_type(OrderedDebugEffect)


def _run_on_host(callback: Callable, flat_args, api_name: str) -> None:
    try:
        callback(*cpu_arrays(flat_args))
    except BaseException:
        logger.exception("%s failed", api_name)
        raise


def _unrolled_batch(primitive):
    """One call per batch element (JAX unrolls debug callbacks over the mapped axis)."""

    def rule(axis_data, args, dims, **params):
        for i in range(axis_data.size):
            primitive.bind(
                *(x if d is None else lax.index_in_dim(x, i, d, False) for x, d in zip(args, dims)),
                **params,
            )
        return [], []

    return rule


def _primal_only_jvp(primitive):
    def rule(primals, tangents, **params):
        return primitive.bind(*primals, **params), []

    return rule


def _no_cotangents(cts, *args, **params):
    return [None] * len(args)


# ----- debug.callback -----------------------------------------------------------------------

debug_callback_p = Primitive("debug_callback")
debug_callback_p.multiple_results = True


@debug_callback_p.def_effectful_abstract_eval
def _debug_callback_abstract_eval(*avals, callback, effect, partitioned):
    return [], {effect}


@debug_callback_p.def_impl
def _debug_callback_impl(*args, callback, effect, partitioned):
    _run_on_host(callback, [np.asarray(a) for a in args], "jax.debug.callback")
    return []


debug_callback_p.def_jvp(_primal_only_jvp(debug_callback_p))
debug_callback_p.def_transpose(_no_cotangents)
debug_callback_p.def_batch(_unrolled_batch(debug_callback_p))


def _debug_callback_lower(ctx, *args, callback, effect, partitioned):
    def host_fn(*flat_args):
        _run_on_host(callback, flat_args, "jax.debug.callback")
        return ()

    host_fn.__name__ = getattr(callback, "__name__", "debug_callback")
    ordered = ordered_effects.contains(effect)
    return emit_host_call(
        ctx,
        host_fn,
        args,
        [],
        effect=effect if ordered else None,
        has_side_effect=True,
        name=host_fn.__name__,
        partitioned=partitioned,
    )


register_lowering(debug_callback_p, _debug_callback_lower)


def _split_static(args, kwargs):
    """Flat leaves of `(args, kwargs)`: arrays travel to the host, anything else stays static."""
    leaves, in_tree = tree_flatten((args, kwargs))
    static, dynamic = {}, []
    for i, leaf in enumerate(leaves):
        try:
            get_aval(leaf)
        except TypeError:
            static[i] = leaf
        else:
            dynamic.append(leaf)
    return in_tree, dynamic, static


def _merge_static(in_tree, dynamic, static):
    it = iter(dynamic)
    total = len(static) + len(dynamic)
    leaves = [static[i] if i in static else next(it) for i in range(total)]
    return tree_unflatten(in_tree, leaves)


class _StaticArgsCallback:
    """`callback(*args, **kwargs)` from the dynamic leaves; equal for equal calls."""

    def __init__(self, callback, in_tree, static: dict):
        self.callback = callback
        self.in_tree = in_tree
        self.static = tuple(sorted(static.items(), key=lambda kv: kv[0]))
        self.__name__ = getattr(callback, "__name__", "callback")

    def __call__(self, *dynamic):
        args, kwargs = _merge_static(self.in_tree, dynamic, dict(self.static))
        self.callback(*args, **kwargs)

    def _key(self):
        return (self.callback, self.in_tree, tuple(map(id, (v for _, v in self.static))))

    def __eq__(self, other):
        return isinstance(other, _StaticArgsCallback) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


def debug_callback(
    callback: Callable[..., None] | None = None,
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    **kwargs: Any,
):
    """Calls `callback(*args, **kwargs)` on the host, inside traced and compiled code too.

    Two forms, as in JAX: ``debug_callback(fn, *args, ordered=..., **kwargs)``, or the options
    first, ``debug_callback(ordered=True)(fn, *args, **kwargs)``. Array leaves of the arguments
    reach `fn` as Arrays on the CPU; other leaves are passed unchanged.

    Args:
      callback: a function returning None.
      *args: its positional arguments (pytrees).
      ordered: calls happen in program order relative to other ordered debug callbacks.
      partitioned: in a program over several devices, call back once per device with its
        local shards (no all-gather) instead of once with whole values.
      **kwargs: its keyword arguments.

    Returns:
      None (or, in the two-call form, the function to call).

    Example:
      >>> seen = []
      >>> debug_callback(lambda v: seen.append(int(v)), 3)
      >>> seen
      [3]
    """

    def call(fn: Callable[..., None], *c_args: Any, **c_kwargs: Any) -> None:
        if not callable(fn):
            raise TypeError(
                "first argument to jax.debug.callback must be callable, "
                f"but got an object of type {type(fn)}"
            )
        in_tree, dynamic, static = _split_static(c_args, c_kwargs)
        debug_callback_p.bind(
            *dynamic,
            callback=_StaticArgsCallback(fn, in_tree, static),
            effect=ordered_debug_effect if ordered else debug_effect,
            partitioned=partitioned,
        )

    if callback is not None:
        call(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(
            f"debug_callback received unexpected arguments in the two-call form: {args=} {kwargs=}"
        )
    return call


# ----- debug.print --------------------------------------------------------------------------


class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments without formatting anything."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. "
                'You may be passing an f-string (i.e, `f"{x}"`) into '
                "`jax.debug.print` and instead should pass in a regular string."
            )


_format_checker = _FormatChecker()


@dataclasses.dataclass(frozen=True)
class _LogSite:
    """Where a `debug.log` call was written: its record names that file and line."""

    file: str
    line: int


_debug_logger = logging.getLogger("laminax_hostcb.debugging")


def _format_and_write(fmt, np_printoptions, has_placeholders, log_site, *args, **kwargs) -> None:
    if has_placeholders:
        with np.printoptions(**dict(np_printoptions)):
            message = fmt.format(*args, **kwargs)
    else:
        message = " ".join((fmt, *(str(a) for a in args)))
    if log_site is None:
        sys.stdout.write(message + "\n")
    else:
        # handed to the handlers directly, as JAX does: the record is INFO whatever the level
        _debug_logger.handle(
            _debug_logger.makeRecord(
                _debug_logger.name, logging.INFO, log_site.file, log_site.line, message, (), None
            )
        )


def _print_callback(params) -> _StaticArgsCallback:
    printer = _Printer(
        params["fmt"], params["np_printoptions"], params["has_placeholders"],
        params["logging_record"],
    )
    return _StaticArgsCallback(printer, params["in_tree"], dict(params["static_args"]))


class _Printer:
    def __init__(self, fmt, np_printoptions, has_placeholders, log_site):
        self.fmt, self.np_printoptions = fmt, np_printoptions
        self.has_placeholders, self.log_site = has_placeholders, log_site
        self.__name__ = "debug_print"

    def __call__(self, *args, **kwargs):
        _format_and_write(
            self.fmt, self.np_printoptions, self.has_placeholders, self.log_site, *args, **kwargs
        )


debug_print_p = Primitive("debug_print")
debug_print_p.multiple_results = True


@debug_print_p.def_effectful_abstract_eval
def _debug_print_abstract_eval(*avals, ordered, **params):
    return [], {ordered_debug_effect if ordered else debug_effect}


@debug_print_p.def_impl
def _debug_print_impl(*args, **params):
    _run_on_host(_print_callback(params), [np.asarray(a) for a in args], "jax.debug.print")
    return []


debug_print_p.def_jvp(_primal_only_jvp(debug_print_p))
debug_print_p.def_transpose(_no_cotangents)
debug_print_p.def_batch(_unrolled_batch(debug_print_p))


def _debug_print_lower(ctx, *args, **params):
    callback = _print_callback(params)
    effect = ordered_debug_effect if params["ordered"] else debug_effect
    return _debug_callback_lower(ctx, *args, callback=callback, effect=effect,
                                  partitioned=params["partitioned"])


register_lowering(debug_print_p, _debug_print_lower)


def debug_print(
    fmt: str | None = None,
    *args,
    ordered: bool = False,
    partitioned: bool = False,
    skip_format_check: bool = False,
    _use_logging: bool = False,
    **kwargs,
):
    """Prints values from traced and compiled code, formatted when the values exist.

    The format string uses ``str.format`` fields (not an f-string): ``debug_print("x={x}",
    x=x)``. Without placeholders the arguments are printed after the string, space-separated.
    Arrays print with the NumPy print options in effect when `debug_print` was called. Two
    forms, as in JAX: ``debug_print(fmt, *args, ordered=...)`` or
    ``debug_print(ordered=True)(fmt, *args)``.

    Args:
      fmt: the format string.
      *args: positional values for the format fields.
      ordered: prints happen in program order relative to other ordered debug callbacks.
      partitioned: in a program over several devices, print each device's local shards (no
        all-gather) instead of whole values.
      skip_format_check: do not check that every argument is used by `fmt`.
      **kwargs: keyword values for the format fields.

    Raises:
      ValueError: an argument the format string does not use (often an f-string).

    Example:
      >>> debug_print("x = {}", 2)
      x = 2
    """

    def call(fmt: str, *c_args, **c_kwargs) -> None:
        if not skip_format_check:
            _format_checker.format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field_name is not None
        in_tree, dynamic, static = _split_static(c_args, c_kwargs)
        debug_print_p.bind(
            *dynamic,
            fmt=fmt,
            ordered=ordered,
            partitioned=partitioned,
            in_tree=in_tree,
            static_args=tuple(static.items()),
            np_printoptions=tuple(np.get_printoptions().items()),
            has_placeholders=has_placeholders,
            logging_record=_caller_site() if _use_logging else None,
        )

    if fmt is not None:
        call(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(
            f"debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}"
        )
    return call


def _caller_site() -> _LogSite:
    # the first frame outside this module: the user's debug.log call
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None:
        return _LogSite("(unknown file)", 0)
    return _LogSite(frame.f_code.co_filename, frame.f_lineno)


def debug_log(
    fmt: str | None = None,
    *args,
    ordered: bool = False,
    partitioned: bool = False,
    skip_format_check: bool = False,
    **kwargs,
):
    """Like `debug_print`, but the text goes to logging (logger ``laminax_hostcb.debugging``)
    as an INFO record naming the file and line of the call, handed to the handlers whatever
    the logger's level (as `jax.debug.log` does).

    Example:
      >>> debug_log("x = {}", 2)  # a log record, nothing printed
    """
    return debug_print(
        fmt,
        *args,
        ordered=ordered,
        partitioned=partitioned,
        skip_format_check=skip_format_check,
        _use_logging=True,
        **kwargs,
    )

"""Traces, tracers and the current-trace context (the "stackless" design).

Every transformation is a `Trace` with a `parent`: the trace that was current when the
transformation started. Binding a primitive hands it to the *current* trace's
`process_primitive`; a trace handles its own tracers and runs its rules with its parent made
current, so that the operations the rules perform are processed one level down. The bottom is
the eval trace (`_interpreters/eval.py`), which computes concrete values.

When a transformation finishes it marks its trace dead (`is_live = False`); a tracer of a dead
trace that reaches `bind` again has leaked, and raises `UnexpectedTracerError` naming the
transformation and where the tracer was created. With `jax_check_tracer_leaks` on, marking a
staging or vmap trace dead also looks (through the garbage collector) for its tracers that are
still referenced from outside laminax, and raises JAX's "Leaked trace" error if it finds any.

Tracers carry the array operators (`+`, `[...]`, `.sum()` ...): `laminax_core.lax` installs them
on `Tracer` when it is imported (core's upper modules plug into this one, never the reverse).
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import operator
import sys
import threading
import types
import weakref

import numpy as np
from jaxlib._jax import config as _config_ext

from laminax_core import config, dtypes, errors
from laminax_core._avals import ShapedArray

__all__ = [
    "Trace",
    "Tracer",
    "compile_time_eval",
    "current_name_stack",
    "current_trace",
    "eval_trace",
    "evaluates_at_compile_time",
    "extend_name_stack",
    "find_axis_data",
    "fresh_name_stack",
    "set_current_trace",
    "set_eval_trace",
    "user_source_info",
    "check_leaked",
]


# Whether a code object belongs to laminax, memoized: the walk runs for every staged equation
# and every tracer, so each frame must cost one dict lookup, not a module-name test.
_is_laminax_code: dict = {}


def _is_laminax_frame(frame) -> bool:
    code = frame.f_code
    known = _is_laminax_code.get(code)
    if known is None:
        name = frame.f_globals.get("__name__", "")
        known = _is_laminax_code[code] = name == "laminax" or name.startswith(
            ("laminax.", "laminax_")
        )
    return known


def _user_frame():
    frame = sys._getframe(2)
    while frame is not None and _is_laminax_frame(frame):
        frame = frame.f_back
    return frame


def user_source_info() -> str:
    """`file:line` of the innermost frame outside laminax's own packages."""
    frame = _user_frame()
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class Trace:
    """Base class of the interpreters that transformations install.

    Subclasses implement `process_primitive(primitive, args, params)`, where `args` may mix the
    trace's own tracers with values of outer traces (which the trace treats as constants).
    """

    transformation = "a transformation"
    # whether jax_check_tracer_leaks checks this trace when it ends; JAX checks staging and
    # vmap traces, not those of forward-mode differentiation (nor linearize's partial eval)
    check_leaks = True

    def __init__(self, parent: Trace | None):
        self.parent = parent
        self.is_live = True

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name == "is_live" and value is False and config.check_tracer_leaks.value:
            _check_no_leaks(self)

    def process_primitive(self, primitive, args, params):
        raise TypeError(f"{type(self).__name__} does not implement process_primitive.")

    @property
    def main(self) -> Trace:
        # JAX's deprecated name for what identifies a transformation's level; libraries (equinox)
        # compare `tracer._trace.main is main` to tell their own tracers from outer ones
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.transformation})"


class Tracer:
    """A value that stands for an array while a transformation traces a function.

    `aval` is its abstract value; `_trace` the trace that owns it. Concrete-value access (bool,
    int, `np.asarray`) raises JAX's errors unless the tracer knows its concrete value (as a jvp
    tracer of a concrete primal does).
    """

    __slots__ = ("_trace", "_source")
    __array_priority__ = 1000

    def __init__(self, trace: Trace):
        self._trace = trace
        # Where the tracer was made, kept raw: only an error message formats it.
        frame = _user_frame()
        self._source = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None

    @property
    def _debug_info(self) -> str:
        where = "<unknown>" if self._source is None else "%s:%d" % self._source
        return f"created by {self._trace.transformation} at {where}"

    @property
    def aval(self):
        raise NotImplementedError(f"{type(self).__name__} must define aval")

    def to_concrete_value(self):
        """The concrete NumPy value this tracer stands for, or None if it is abstract."""
        return None

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def _concrete(self, error_type, context: str = ""):
        value = self.to_concrete_value()
        if value is None:
            raise error_type(self) if not context else error_type(self, context)
        return value

    # Shape and dtype are checked before concreteness, as in JAX: a non-scalar (or a float
    # index) is a TypeError/ValueError whatever the tracer knows.
    def _check_scalar(self):
        if self.ndim > 0:
            raise TypeError("Only scalar arrays can be converted to Python scalars; got "
                            f"arr.ndim={self.ndim}")

    def __bool__(self):
        value = self.to_concrete_value()
        if value is not None:
            return bool(value)
        if self.size != 1:
            raise ValueError(
                "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
                "that an array is not empty." if self.size == 0 else "The truth value of an "
                "array with more than one element is ambiguous. Use a.any() or a.all()")
        return bool(self._concrete(errors.TracerBoolConversionError))

    def __int__(self):
        value = self.to_concrete_value()
        if value is not None:
            return int(value)
        self._check_scalar()
        return int(self._concrete(errors.ConcretizationTypeError, "The int() method was called"))

    def __float__(self):
        self._check_scalar()
        value = self._concrete(errors.ConcretizationTypeError, "The float() method was called")
        return float(value)

    def __complex__(self):
        self._check_scalar()
        value = self._concrete(errors.ConcretizationTypeError, "The complex() method was called")
        return complex(value)

    def __index__(self):
        value = self.to_concrete_value()
        if value is not None:
            return operator.index(value)
        if self.shape != () or not dtypes.issubdtype(self.dtype, np.integer):
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        return int(self._concrete(errors.TracerIntegerConversionError).__index__())

    def __array__(self, dtype=None, copy=None):
        value = self._concrete(errors.TracerArrayConversionError)
        return value if dtype is None else value.astype(dtype)

    # Methods and properties of a materialized Array: a tracer has no value (or buffer) to
    # give, so each raises ConcretizationTypeError naming itself (installed below the class).
    _ARRAY_ONLY_METHODS = (
        "tolist", "tobytes", "__dlpack__", "addressable_data", "delete", "devices",
        "is_deleted", "on_device_size_in_bytes", "unsafe_buffer_pointer",
    )
    _ARRAY_ONLY_PROPERTIES = (
        "global_shards", "is_fully_addressable", "is_fully_replicated", "traceback",
    )

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a traced scalar)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array (a traced scalar)")
        return (self[i] for i in range(self.shape[0]))

    def _is_traced_array(self) -> bool:
        # jaxlib's `isinstance(x, Array)` asks the registered tracer class (dispatch registers
        # this one) whether the tracer stands for an array.

        return isinstance(self.aval, ShapedArray)

    def __hash__(self):
        raise TypeError(
            f"unhashable type: {type(self).__name__}. Traced arrays cannot be dict keys or set "
            "members; use their position or a static value instead."
        )

    def __repr__(self) -> str:
        return f"Traced<{self.aval}>with<{type(self._trace).__name__}>"


def _array_only(name: str, kind: str):
    def raise_concretization(self, *args, **kwargs):
        raise errors.ConcretizationTypeError(
            self, f"The {name}{'()' if kind == 'method' else ''} {kind} was called on a traced "
            f"array ({self.aval.str_short()}); it needs a concrete value. Call it outside the "
            "transformation (for example on the jitted function's result)."
        )

    raise_concretization.__name__ = name
    return raise_concretization


for _name in Tracer._ARRAY_ONLY_METHODS:
    setattr(Tracer, _name, _array_only(_name, "method"))
for _name in Tracer._ARRAY_ONLY_PROPERTIES:
    setattr(Tracer, _name, property(_array_only(_name, "property")))
del _name


class _Context(threading.local):
    """This thread's running transformation: `trace` is its innermost trace, or None when no
    transformation runs (the eval trace is current)."""

    def __init__(self):
        self.trace: Trace | None = None
        self.name_stack: tuple[str, ...] = ()  # the enclosing `named_scope`s, outermost first
        self.compile_time_eval = False  # inside `ensure_compile_time_eval`


_context = _Context()
_eval_trace: Trace | None = None


def set_eval_trace(trace: Trace) -> None:
    """Installs the bottom (eval) trace; called once by `_interpreters/eval.py`."""
    global _eval_trace
    _eval_trace = trace


def current_trace() -> Trace:
    """The innermost trace of the running transformation, or the eval trace."""
    trace = _context.trace
    return _eval_trace if trace is None else trace


# The running trace as jaxlib's C++ jit sees it: part of its cache key, so that a jitted call
# under a transformation misses the C++ cache and reaches Python (which stages it) even when
# its arguments are concrete Arrays. A weak reference, so cache entries do not keep traces.
_trace_key = _config_ext.Config("laminax_trace_state", None, include_in_jit_key=True)


def _weak(trace: Trace | None):
    if trace is None:
        return None
    ref = trace.__dict__.get("_laminax_weakref")
    if ref is None:
        ref = trace.__dict__["_laminax_weakref"] = weakref.ref(trace)
    return ref


@contextlib.contextmanager
def set_current_trace(trace: Trace):
    """Makes `trace` current for the duration of the block."""
    previous = _context.trace
    current = _context.trace = None if trace is _eval_trace else trace
    _trace_key.set_local(_weak(current))
    try:
        yield trace
    finally:
        _context.trace = previous
        _trace_key.set_local(_weak(previous))


def current_name_stack() -> str:
    """The enclosing `named_scope` names joined by "/" ("" outside any)."""
    return "/".join(_context.name_stack)


@contextlib.contextmanager
def extend_name_stack(name: str):
    """Adds `name` as the innermost scope for the duration of the block."""
    previous = _context.name_stack
    _context.name_stack = (*previous, name)
    try:
        yield
    finally:
        _context.name_stack = previous


@contextlib.contextmanager
def fresh_name_stack():
    """Starts from no scopes for the duration of the block (while staging a sub-jaxpr)."""
    previous = _context.name_stack
    _context.name_stack = ()
    try:
        yield
    finally:
        _context.name_stack = previous


@contextlib.contextmanager
def compile_time_eval():
    """Makes operations on concrete values evaluate eagerly for the duration of the block."""
    previous = _context.compile_time_eval
    _context.compile_time_eval = True
    try:
        yield
    finally:
        _context.compile_time_eval = previous


def evaluates_at_compile_time(args) -> bool:
    """Whether `bind` must evaluate `args` eagerly: inside `compile_time_eval`, with no tracer."""
    return _context.compile_time_eval and not any(isinstance(a, Tracer) for a in args)


def eval_trace() -> Trace:
    """The bottom trace, which computes."""
    return _eval_trace


def check_leaked(args, primitive_name: str) -> None:
    """Raises UnexpectedTracerError if a tracer among `args` belongs to a finished trace."""
    for x in args:
        if isinstance(x, Tracer) and not x._trace.is_live:
            raise errors.UnexpectedTracerError(
                f"Encountered an unexpected tracer while applying {primitive_name!r}: a "
                f"{type(x).__name__} with {x.aval} {x._debug_info}, whose "
                f"{x._trace.transformation} has already finished. A transformed function leaked "
                "it, for example by storing it in a global, a closure or an object attribute. "
                "Return the value from the transformed function instead."
            )


# ----- jax_check_tracer_leaks ---------------------------------------------------------------

_LEAK_SEARCH_DEPTH = 16
_CO_OPTIMIZED = inspect.CO_OPTIMIZED
_JAX_TRACE_NAMES = {"JaxprTrace": "DynamicJaxprTrace"}


def _check_no_leaks(trace: Trace) -> None:
    """Raises JAX's "Leaked trace" `Exception` if a module or a frame outside laminax still
    references (directly or through containers) one of `trace`'s tracers. Skipped while an
    exception propagates: that one matters more."""
    if not trace.check_leaks or getattr(trace, "evaluate_known", False):
        return
    if sys.exc_info()[0] is not None:
        return
    gc.collect()  # tracers kept alive only by reference cycles cannot be reached: not leaks
    tracers = [r for r in gc.get_referrers(trace) if isinstance(r, Tracer)]
    chains = _outside_chains(trace, tracers)
    if chains:
        name = _JAX_TRACE_NAMES.get(type(trace).__name__, type(trace).__name__)
        found = "\n\n".join(_describe_chain(chain) for chain in chains)
        raise Exception(  # JAX raises a plain Exception here
            f"Leaked trace {name}. Leaked tracer(s):\n\n{found}\nA function transformed by "
            f"{trace.transformation} kept one of its tracers (in a global, a closure, an object "
            "attribute...); return values from the transformed function instead."
        )


def _user_locals() -> tuple[dict, list]:
    """The local variables of the running frames outside laminax (`id -> frame`: the garbage
    collector does not see running frames' locals), and the dicts `f_locals` gave for them."""
    found, dicts = {}, []
    frame = sys._getframe(2)
    while frame is not None:
        if not _is_laminax_frame(frame):
            local_vars = frame.f_locals
            if frame.f_code.co_flags & _CO_OPTIMIZED:  # a function's: a snapshot
                dicts.append(local_vars)
            for value in local_vars.values():
                found.setdefault(id(value), frame)
        frame = frame.f_back
    return found, dicts


def _forget_snapshots(dicts: list) -> None:
    # Before Python 3.13, `f_locals` of a running function's frame is a snapshot dict the
    # frame keeps: empty it, or it would keep the frame's (possibly since deleted) values
    # alive. (A module's or class body's `f_locals` is its real namespace: never listed here.)
    for local_vars in dicts:
        if type(local_vars) is dict:
            local_vars.clear()


def _outside_chains(trace: Trace, tracers: list) -> list[list]:
    """For each of `tracers` reachable from a module or a user frame (outside laminax), the
    chain of referrers from the tracer up to that root (breadth first, one heap scan a level)."""
    nodes = {id(t): t for t in tracers}
    up: dict[int, int] = {}  # id(referrer) -> id(the node it was reached from)
    frontier = list(tracers)
    user_locals, snapshots = _user_locals()
    try:
        return _search(trace, tracers, nodes, up, frontier, user_locals, snapshots)
    finally:
        _forget_snapshots(snapshots)


def _search(trace, tracers, nodes, up, frontier, user_locals, snapshots) -> list[list]:
    skip = {id(trace), id(nodes), id(up), id(tracers), id(user_locals), id(snapshots)}
    skip |= {id(d) for d in snapshots}
    roots: dict[int, int] = {id(t): id(t) for t in tracers if id(t) in user_locals}
    for _ in range(_LEAK_SEARCH_DEPTH):
        skip.add(id(frontier))
        referrers = gc.get_referrers(*frontier)
        skip.add(id(referrers))
        ids = {id(x) for x in frontier}
        following = []
        for r in referrers:
            if id(r) in skip or id(r) in nodes:
                continue
            child = next((id(c) for c in gc.get_referents(r) if id(c) in ids), None)
            if child is None:
                continue
            nodes[id(r)], up[id(r)] = r, child
            if id(r) in user_locals:
                roots[id(r)] = child
            elif isinstance(r, types.FrameType):
                if not _is_laminax_frame(r):
                    roots[id(r)] = child
            elif isinstance(r, types.ModuleType):
                roots[id(r)] = child
            else:
                following.append(r)
        del referrers
        if not following:
            break
        frontier = following
    chains, reported = [], set()
    for root in roots:
        chain = [root]
        if root in user_locals:
            nodes[-1] = user_locals[root]  # a pseudo-node: the frame holding the local
            up[-1], chain = root, [-1]
        while chain[-1] in up:
            chain.append(up[chain[-1]])
        if chain[-1] not in reported:
            reported.add(chain[-1])
            chains.append([nodes[i] for i in reversed(chain)])
    return chains


def _describe_chain(chain: list) -> str:
    tracer = chain[0]
    lines = [f"{tracer!r} {tracer._debug_info}"]
    for child, parent in zip(chain, chain[1:], strict=False):
        lines.append(f"<{type(child).__name__} {id(child)}> is referred to by {_name(parent)}")
    return "\n".join(lines)


def _name(x) -> str:
    if isinstance(x, types.ModuleType):
        return f"module {x.__name__}"
    if isinstance(x, types.FrameType):
        return f"a local of {x.f_code.co_name} ({x.f_code.co_filename}:{x.f_lineno})"
    return f"<{type(x).__name__} {id(x)}>"


def find_axis_data(axis_name):
    """The `AxisData` of the innermost vmap trace (from the current one) named `axis_name`."""
    trace = current_trace()
    while trace is not None:
        data = getattr(trace, "axis_data", None)
        if data is not None and data.name == axis_name:
            return data
        trace = trace.parent
    raise NameError(
        f"Found an unbound axis name: {axis_name}. Collectives over a named axis must run "
        f"inside a transformation that binds it, for example vmap(f, axis_name={axis_name!r})."
    )

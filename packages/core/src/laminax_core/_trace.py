"""Traces, tracers and the current-trace context (the "stackless" design).

Every transformation is a `Trace` with a `parent`: the trace that was current when the
transformation started. Binding a primitive hands it to the *current* trace's
`process_primitive`; a trace handles its own tracers and runs its rules with its parent made
current, so that the operations the rules perform are processed one level down. The bottom is
the eval trace (`_interpreters/eval.py`), which computes concrete values.

When a transformation finishes it marks its trace dead (`is_live = False`); a tracer of a dead
trace that reaches `bind` again has leaked, and raises `UnexpectedTracerError` naming the
transformation and where the tracer was created.

Tracers carry the array operators (`+`, `[...]`, `.sum()` ...): `laminax_core.lax` installs them
on `Tracer` when it is imported (core's upper modules plug into this one, never the reverse).
"""

from __future__ import annotations

import contextlib
import sys
import threading

from laminax_core import errors

__all__ = [
    "Trace",
    "Tracer",
    "current_trace",
    "find_axis_data",
    "set_current_trace",
    "set_eval_trace",
    "user_source_info",
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

    def __init__(self, parent: Trace | None):
        self.parent = parent
        self.is_live = True

    def process_primitive(self, primitive, args, params):
        raise TypeError(f"{type(self).__name__} does not implement process_primitive.")

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

    def __bool__(self):
        return bool(self._concrete(errors.TracerBoolConversionError))

    def __int__(self):
        return int(self._concrete(errors.ConcretizationTypeError, "The int() method was called"))

    def __float__(self):
        value = self._concrete(errors.ConcretizationTypeError, "The float() method was called")
        return float(value)

    def __complex__(self):
        value = self._concrete(errors.ConcretizationTypeError, "The complex() method was called")
        return complex(value)

    def __index__(self):
        return int(self._concrete(errors.TracerIntegerConversionError).__index__())

    def __array__(self, dtype=None, copy=None):
        value = self._concrete(errors.TracerArrayConversionError)
        return value if dtype is None else value.astype(dtype)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a traced scalar)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array (a traced scalar)")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        raise TypeError(
            f"unhashable type: {type(self).__name__}. Traced arrays cannot be dict keys or set "
            "members; use their position or a static value instead."
        )

    def __repr__(self) -> str:
        return f"Traced<{self.aval}>with<{type(self._trace).__name__}>"


class _Context(threading.local):
    def __init__(self):
        self.trace: Trace | None = None


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


@contextlib.contextmanager
def set_current_trace(trace: Trace):
    """Makes `trace` current for the duration of the block."""
    previous = _context.trace
    _context.trace = None if trace is _eval_trace else trace
    try:
        yield trace
    finally:
        _context.trace = previous


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

"""The eval trace: concrete evaluation at the bottom of every trace stack.

With no eager executor plugged in, primitives run their NumPy *reference* implementation
(`reference_rules`), which is also the oracle that tests compare everything against. Dispatch,
one layer up, plugs in its XLA executor with `set_eager_impl`; core never imports it.
`eval_jaxpr` interprets a jaxpr by binding each equation under the current trace, so it also
serves every transformation of a jaxpr.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from laminax_core import _trace, config, errors
from laminax_core._avals import Ref, get_aval
from laminax_core._jaxpr import ClosedJaxpr, Jaxpr, Literal

__all__ = [
    "EvalTrace", "eager_array", "eval_jaxpr", "get_eager_impl", "reference_rules",
    "set_eager_impl",
    "takes_refs",
    "to_reference_value",
    "run_reference",
]

# primitive -> NumPy implementation `(*np.ndarray, **params) -> np.ndarray | list`
reference_rules: dict = {}

_eager_impl: Callable | None = None


def set_eager_impl(fn: Callable | None) -> Callable | None:
    """Plugs in the eager executor `fn(primitive, args, params) -> outputs` (None to unplug).

    The eval trace calls it for every primitive without a user `def_impl`, in place of the
    NumPy reference. Returns the previously installed executor.
    """
    global _eager_impl
    previous, _eager_impl = _eager_impl, fn
    return previous


def get_eager_impl() -> Callable | None:
    """The eager executor installed by `set_eager_impl`, or None."""
    return _eager_impl


def eager_array(value):
    """A concrete NumPy value as JAX's `jnp.array` gives it: the eager executor's array type
    (a device Array, once dispatch is installed) outside staging, and under `jit` a tracer of the
    staging trace standing for the constant (so that `isinstance(x, jax.Array)` holds everywhere,
    as libraries' type checks expect). Transformations that do not stage (jvp, vmap) pass a
    constant down to the trace below, as they do for a primitive applied to constants.

    The executor opts in with a `to_array(value)` attribute; without one the value is returned
    as it is.
    """
    convert = getattr(_eager_impl, "to_array", None)
    if convert is None:
        return value
    if _trace.evaluates_at_compile_time([value]):  # inside ensure_compile_time_eval
        return convert(value)
    trace = _trace.current_trace()
    while trace is not None and not isinstance(trace, EvalTrace):
        stage_constant = getattr(trace, "constant_tracer", None)
        staged = None if stage_constant is None else stage_constant(value)
        if staged is not None:
            return staged
        trace = trace.parent
    return convert(value)


def to_reference_value(x) -> np.ndarray:
    """A concrete value as a NumPy array of its canonical dtype (weak type dropped)."""
    aval = get_aval(x)
    if isinstance(x, np.ndarray) and x.dtype == aval.dtype:
        return x
    return np.asarray(x, dtype=aval.dtype)


def run_reference(primitive, args, params):
    """Applies `primitive`'s NumPy reference to concrete `args`."""
    rule = reference_rules.get(primitive)
    if rule is None:
        raise NotImplementedError(
            f"primitive {primitive.name!r} has no eager implementation: register one with "
            f"{primitive.name}_p.def_impl(fn) (or def_reference(fn))."
        )
    values = [to_reference_value(x) for x in args]
    out = rule(*values, **params)
    if primitive.multiple_results:
        return [np.asarray(o) for o in out]
    return np.asarray(out)


def _check_nans(primitive, outs) -> None:
    for out in outs if primitive.multiple_results else [outs]:
        out = np.asarray(out)
        if not np.issubdtype(out.dtype, np.inexact):
            continue
        if config.debug_nans.value and np.isnan(out).any():
            raise FloatingPointError(f"invalid value (nan) encountered in {primitive.name}")
        if config.debug_infs.value and np.isinf(out).any():
            raise FloatingPointError(f"invalid value (inf) encountered in {primitive.name}")


# Installed by `laminax_core.ref`: primitive -> discharge rule, and the runner that evaluates a
# higher-order primitive (scan, while, cond, jit ...) on concrete references by threading their
# values and writing the final ones back.
ref_primitives: dict = {}
run_with_refs: Callable | None = None
# Under jvp, vmap and linearize such a primitive given (traced) references runs on their values
# instead (read, threaded through the functional form, written back), so its own rules, which
# know nothing of references, see arrays only.
run_on_ref_values: Callable | None = None


def takes_refs(primitive, args, params) -> bool:
    """Whether `primitive` is a higher-order one applied to references (or closing over)."""
    return primitive in ref_primitives and _given_refs(args, params)


def _given_refs(args, params) -> bool:
    if any(isinstance(x, Ref) for x in args):
        return True
    return any(isinstance(c, ClosedJaxpr) and any(isinstance(x, Ref) for x in c.consts)
               for p in params.values() for c in (p if isinstance(p, tuple) else (p,)))


class EvalTrace(_trace.Trace):
    """Evaluates primitives on concrete values."""

    transformation = "eager evaluation"

    def process_primitive(self, primitive, args, params):
        for x in args:
            if isinstance(x, _trace.Tracer):
                raise errors.UnexpectedTracerError(
                    f"Encountered a {type(x).__name__} with {x.aval} ({x._debug_info}) while "
                    f"evaluating {primitive.name!r} eagerly, outside the transformation that "
                    "owns it. Return traced values from the transformed function instead of "
                    "keeping them."
                )
        if primitive in ref_primitives and _given_refs(args, params):
            return run_with_refs(primitive, args, params)
        if primitive.impl is not None:
            return primitive.impl(*args, **params)
        if _eager_impl is not None:
            return _eager_impl(primitive, args, params)
        # the reference implementations assume valid operands: check them as tracing would
        primitive.abstract_eval(*[get_aval(x) for x in args], **params)
        outs = run_reference(primitive, args, params)
        if config.debug_nans.value or config.debug_infs.value:
            _check_nans(primitive, outs)
        return outs


eval_trace = EvalTrace(None)
_trace.set_eval_trace(eval_trace)


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence, *args, propagate_source_info: bool = True):
    """Evaluates `jaxpr` on `consts` and `args` by binding each equation under the current trace.

    Args:
      jaxpr: the program.
      consts: values for `jaxpr.constvars`.
      *args: values for `jaxpr.invars`.

    Returns:
      The list of output values.

    Example:
      >>> closed = make_jaxpr(lambda x: x * 2.0)(np.float32(1))
      >>> eval_jaxpr(closed.jaxpr, closed.consts, np.float32(3))
      [array(6., dtype=float32)]
    """
    del propagate_source_info  # source info is recorded by the trace that stages equations
    if len(args) != len(jaxpr.invars):
        raise TypeError(
            f"eval_jaxpr: the jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}."
        )
    env: dict[int, object] = {}

    def read(atom):
        return atom.val if isinstance(atom, Literal) else env[id(atom)]

    for var, value in zip([*jaxpr.constvars, *jaxpr.invars], [*consts, *args], strict=True):
        env[id(var)] = value
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[id(var)] = value
    return [read(v) for v in jaxpr.outvars]

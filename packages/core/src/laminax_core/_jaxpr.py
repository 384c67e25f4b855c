"""Jaxprs: the typed, first-order programs that tracing produces.

A `Jaxpr` has `constvars`, `invars`, `eqns` and `outvars`. Each `JaxprEqn` applies a primitive
with `params` to atoms (`Var`s or `Literal`s), binds fresh `Var`s, and records the effects and
the user's `file:line` (`source_info`). `ClosedJaxpr` pairs a jaxpr with the values of its
constvars. This module also prints jaxprs in JAX's textual form, type-checks them
(`check_jaxpr`) and removes dead code (`dce_jaxpr`); `_interpreters/eval.py` evaluates them.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence

import numpy as np

from laminax_core import _pretty_printer as pp
from laminax_core._avals import ShapedArray, WeakTypedArray
from laminax_core.errors import JaxprTypeError

__all__ = [
    "ClosedJaxpr",
    "DropVar",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "Var",
    "check_jaxpr",
    "dce_jaxpr",
    "pp_jaxpr",
    "pp_eqn",
    "dce_closed_jaxpr",
]


class Var:
    """A variable of a jaxpr, with its abstract value. Names are given when printing."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var({self.aval.str_short()})"


class DropVar(Var):
    """An output binder that nothing reads; prints as `_`."""

    __slots__ = ()


class Literal:
    """A scalar constant inlined into an equation, printed as `1.0:f32[]`."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        val = np.asarray(val, dtype=aval.dtype)
        # evaluating the jaxpr again (jvp, partial eval of a call) keeps the literal's type
        self.val = val.view(WeakTypedArray) if aval.weak_type else val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.val!r})"

    def pretty(self) -> str:
        value = self.val.item() if self.val.ndim == 0 else self.val
        return f"{value}:{self.aval.str_short()}"


Atom = Var | Literal


class JaxprEqn:
    """One equation: `outvars = primitive[params] invars`, with effects, source info and the
    `named_scope`s it was staged in (`name_stack`, "outer/inner"; HLO locations show it)."""

    __slots__ = ("invars", "outvars", "primitive", "params", "effects", "source_info",
                 "name_stack")

    def __init__(self, invars, outvars, primitive, params, effects=frozenset(), source_info="",
                 name_stack=""):
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.primitive = primitive
        self.params = dict(params)
        self.effects = frozenset(effects)
        self.source_info = source_info
        self.name_stack = name_stack

    def replace(self, **changes) -> JaxprEqn:
        """A copy with some fields replaced."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return JaxprEqn(**fields)

    def __repr__(self) -> str:
        return str(pp_eqn(self, _NameContext()))


class Jaxpr:
    """A typed program: `{ lambda constvars ; invars. let eqns in (outvars) }`.

    `effects` is the union of the equations' effects unless given.
    """

    __slots__ = ("constvars", "invars", "outvars", "eqns", "effects", "debug_info")

    def __init__(self, constvars, invars, outvars, eqns, effects=None, debug_info=None):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        if effects is None:
            effects = frozenset().union(*(eqn.effects for eqn in self.eqns))
        self.effects = frozenset(effects)
        self.debug_info = debug_info

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def __str__(self) -> str:
        return str(pp_jaxpr(self))

    def pretty_print(self, width: int = 80) -> str:
        """The jaxpr as text, laid out at `width` columns."""
        return pp_jaxpr(self).format(width)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr with the values of its constvars.

    Example:
      >>> closed = make_jaxpr(lambda x: x + 1.0)(np.float32(2))
      >>> closed.out_avals
      [ShapedArray(float32[])]
    """

    __slots__ = ("jaxpr", "consts")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence):
        if len(consts) != len(jaxpr.constvars):
            raise ValueError(
                f"ClosedJaxpr: {len(jaxpr.constvars)} constvars but {len(consts)} consts given."
            )
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    effects = property(lambda self: self.jaxpr.effects)
    literals = property(lambda self: self.consts)

    def __str__(self) -> str:
        return str(self.jaxpr)

    def pretty_print(self, width: int = 80) -> str:
        """The jaxpr as text, laid out at `width` columns."""
        return self.jaxpr.pretty_print(width)

    __repr__ = __str__


# ----- printing ---------------------------------------------------------------------------


def _alphabetic_name(n: int) -> str:
    # a..z, then ba, bb, ... (base 26 with 'a' as zero, as JAX names variables)
    letters = []
    while True:
        letters.append(chr(ord("a") + n % 26))
        n //= 26
        if n == 0:
            return "".join(reversed(letters))


class _NameContext:
    def __init__(self):
        self.names: dict[int, str] = {}
        self.count = 0  # fresh names given (aliases take none)
        self.shared: dict[int, str] = {}  # jaxprs printed once, up front, by these names

    def name(self, var) -> str:
        if isinstance(var, Literal):
            return var.pretty()
        if isinstance(var, DropVar):
            return "_"
        key = id(var)
        if key not in self.names:
            self.names[key] = _alphabetic_name(self.count)
            self.count += 1
        return self.names[key]

    def alias_call(self, eqn: JaxprEqn, inner: Jaxpr) -> None:
        """Names a called jaxpr's inputs and outputs after the equation's operands and
        binders, as JAX prints `jit` equations (a literal or repeated operand leaves a fresh
        name; an output that is also an input keeps the input's name)."""
        seen = set()
        for var, operand in zip(inner.invars, eqn.invars, strict=False):
            if not isinstance(operand, Literal) and id(operand) not in seen:
                seen.add(id(operand))
                self.names[id(var)] = self.name(operand)
            else:
                self.names.pop(id(var), None)  # named afresh where it is printed
        inputs = {id(v) for v in inner.invars}
        for var, binder in zip(inner.outvars, eqn.outvars, strict=False):
            if isinstance(var, Var) and id(var) not in inputs:
                self.names[id(var)] = self.name(binder)


def _pp_vars(vars_, context: _NameContext, *, separator: str = "", shapes: bool = False):
    docs = [
        pp.concat([pp.text(context.name(v)), pp.text(":" + v.aval.str_short() if shapes else "")])
        for v in vars_
    ]
    return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()), docs)))


def _pp_binder(var, context: _NameContext) -> str:
    return f"{context.name(var)}:{var.aval.str_short()}"


def _pp_param_value(value, context: _NameContext) -> pp.Doc:
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        name = context.shared.get(id(value))
        return pp.text(name) if name is not None else _pp_jaxpr_in(value, context)
    if (
        isinstance(value, tuple)
        and value
        and all(isinstance(v, ClosedJaxpr | Jaxpr) for v in value)
    ):
        items = [_pp_param_value(v, context) for v in value]
        body = pp.nest(2, pp.concat([pp.text("("), pp.brk(""), pp.join(pp.brk(), items)]))
        return pp.group(pp.concat([body, pp.brk(""), pp.text(")")]))
    if isinstance(value, np.dtype):
        return pp.text(value.name)
    return pp.text(str(value))


def _pp_params(eqn: JaxprEqn, context: _NameContext) -> pp.Doc:
    # a primitive's `print_params` may return a dict (printed sorted, as JAX does by default)
    # or a list of (name, value) pairs printed in that order
    shown = eqn.params
    if eqn.primitive.print_params is not None:
        shown = eqn.primitive.print_params(shown)
    pairs = sorted(shown.items()) if isinstance(shown, dict) else list(shown)
    if not pairs:
        return pp.nil()
    items = [pp.text(f"{k}=") + _pp_param_value(v, context) for k, v in pairs]
    body = pp.nest(2, pp.concat([pp.text("["), pp.brk(""), pp.join(pp.brk(), items)]))
    return pp.group(pp.concat([body, pp.brk(""), pp.text("]")]))


def pp_eqn(eqn: JaxprEqn, context: _NameContext) -> pp.Doc:
    """One equation as a document: `b:f32[3] = sin a`."""
    custom = getattr(eqn.primitive, "pp_eqn", None)
    if custom is not None:  # the ref primitives print as JAX's `c:f32[] <- b[0]`
        return pp.text(custom(eqn, context.name, lambda v: _pp_binder(v, context)))
    # binders are named before the params, so nested jaxprs continue the naming after them
    lhs = _pp_vars(eqn.outvars, context, shapes=True) if eqn.outvars else None
    inner = eqn.params.get(getattr(eqn.primitive, "named_call_param", None) or "", None)
    if isinstance(inner, ClosedJaxpr):
        inner = inner.jaxpr
    if isinstance(inner, Jaxpr) and id(inner) not in context.shared:
        context.alias_call(eqn, inner)
    rhs = [
        pp.text(eqn.primitive.name),
        _pp_params(eqn, context),
        pp.text(" ") + _pp_vars(eqn.invars, context),
    ]
    if lhs is None:
        return pp.concat(rhs)
    return pp.concat([lhs, pp.text(" = "), *rhs])


def _pp_jaxpr_in(jaxpr: Jaxpr, context: _NameContext) -> pp.Doc:
    constvars = _pp_vars(jaxpr.constvars, context, shapes=True)
    invars = _pp_vars(jaxpr.invars, context, shapes=True)
    eqns = pp.join(pp.brk("; "), [pp_eqn(e, context) for e in jaxpr.eqns])
    outvars = pp.concat(
        [
            pp.text("("),
            _pp_vars(jaxpr.outvars, context, separator=","),
            pp.text(",)" if len(jaxpr.outvars) == 1 else ")"),
        ]
    )
    body = pp.concat(
        [
            pp.text("{ lambda "),
            constvars,
            pp.text("; "),
            invars,
            pp.text(". let"),
            pp.nest(2, pp.brk() + eqns),
            pp.brk(),
            pp.text("in "),
            outvars,
        ]
    )
    return pp.group(pp.nest(2, body)) + pp.text(" }")


def pp_jaxpr(jaxpr: Jaxpr) -> pp.Doc:
    """The jaxpr as a pretty-printer document (`str()` of it is JAX's textual form). As JAX
    prints it, a nested jaxpr used more than once, or of more than 10 equations, is printed
    once before the rest (`let jaxpr = { lambda ... } in`) and named where it is used."""
    context = _NameContext()
    docs = []
    for name, shared in _shared_jaxprs(jaxpr):
        context.shared[id(shared)] = name
        docs.append(pp.concat([pp.text(f"let {name} = "), _pp_jaxpr_in(shared, context),
                               pp.text(" in"), pp.brk()]))
    return pp.concat([*docs, _pp_jaxpr_in(jaxpr, context)])


def _params_jaxprs(params) -> list:
    found = []
    for value in params.values():
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, ClosedJaxpr):
                v = v.jaxpr
            if isinstance(v, Jaxpr):
                found.append(v)
    return found


def _shared_jaxprs(top: Jaxpr) -> list:
    """(name, jaxpr) of the nested jaxprs JAX prints up front, in the order met breadth
    first; named after the equation holding them (its `name` param) or `jaxpr`, numbered
    when a name repeats."""
    counts: dict[int, list] = {}
    names: dict[int, str] = {}
    queue = collections.deque([top])
    while queue:
        jaxpr = queue.popleft()
        entry = counts.setdefault(id(jaxpr), [jaxpr, 0])
        entry[1] += 2 if jaxpr is not top and len(jaxpr.eqns) > 10 else 1
        for eqn in jaxpr.eqns:
            subs = _params_jaxprs(eqn.params)
            queue.extend(subs)
            name = eqn.params.get("name")
            if isinstance(name, str):
                for sub in subs:
                    names.setdefault(id(sub), name.strip("<>"))
    used: collections.Counter = collections.Counter()
    shared = []
    for key, (jaxpr, count) in counts.items():
        if count == 1:
            continue
        name = names.get(key, "jaxpr")
        seen = used[name]
        used[name] += 1
        if seen:
            name += str(seen)
            used[name] += 1
        shared.append((name, jaxpr))
    return shared


# ----- type checking ------------------------------------------------------------------------


def _types_match(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _eqn_error(index: int, eqn: JaxprEqn, context: _NameContext, problem: str) -> TypeError:
    where = f" (from {eqn.source_info})" if eqn.source_info else ""
    return JaxprTypeError(
        f"check_jaxpr: equation {index} `{pp_eqn(eqn, context).format(10**6)}`{where}: {problem}"
    )


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Type-checks `jaxpr`: every variable is bound once before use, and every equation's
    output types are what its primitive's abstract evaluation gives for its input types.

    Raises:
      JaxprTypeError: (a TypeError) naming the first bad equation and what is wrong with it.
    """
    context = _NameContext()
    str(_pp_jaxpr_in(jaxpr, context))  # fix the names the messages will use
    defined: set[int] = set()

    def bind_var(var, what: str, index=None, eqn=None):
        if id(var) in defined:
            problem = f"variable {context.name(var)} is bound twice ({what})."
            if eqn is None:
                raise JaxprTypeError(f"check_jaxpr: {problem}")
            raise _eqn_error(index, eqn, context, problem)
        if not isinstance(var, DropVar):
            defined.add(id(var))

    for var in [*jaxpr.constvars, *jaxpr.invars]:
        bind_var(var, "as a jaxpr input")
    for index, eqn in enumerate(jaxpr.eqns):
        _check_eqn(index, eqn, context, defined)
        for var in eqn.outvars:
            bind_var(var, "as an equation output", index, eqn)
    for var in jaxpr.outvars:
        if isinstance(var, Var) and id(var) not in defined:
            raise JaxprTypeError(f"check_jaxpr: output {context.name(var)} is never bound.")


def _check_eqn(index: int, eqn: JaxprEqn, context: _NameContext, defined: set[int]) -> None:
    for atom in eqn.invars:
        if isinstance(atom, Var) and id(atom) not in defined:
            problem = f"operand {context.name(atom)} is used before it is bound."
            raise _eqn_error(index, eqn, context, problem)
    try:
        avals_out, effects = eqn.primitive.abstract_eval(
            *[a.aval for a in eqn.invars], **eqn.params
        )
    except (TypeError, ValueError) as err:
        raise _eqn_error(index, eqn, context, f"abstract evaluation failed: {err}") from err
    if not eqn.primitive.multiple_results:
        avals_out = [avals_out]
    if len(avals_out) != len(eqn.outvars):
        problem = f"the primitive gives {len(avals_out)} outputs, the equation binds "
        raise _eqn_error(index, eqn, context, problem + f"{len(eqn.outvars)}.")
    for var, aval in zip(eqn.outvars, avals_out, strict=True):
        if not _types_match(var.aval, aval):
            problem = (
                f"output {context.name(var)} is declared {var.aval.str_short()} but the "
                f"primitive produces {aval.str_short()}."
            )
            raise _eqn_error(index, eqn, context, problem)
    if not frozenset(effects) <= eqn.effects:
        problem = f"the equation records effects {set(eqn.effects)}, the primitive has "
        raise _eqn_error(index, eqn, context, problem + f"{set(effects)}.")


# ----- dead-code elimination ---------------------------------------------------------------


def dce_jaxpr(
    jaxpr: Jaxpr, used_outputs: Sequence[bool], instantiate: bool | Sequence[bool] = False
) -> tuple[Jaxpr, list[bool]]:
    """Removes the equations that no used output depends on, keeping effectful ones.

    Args:
      jaxpr: the jaxpr to prune.
      used_outputs: one flag per outvar; unused outvars are dropped.
      instantiate: flags (or one flag for all) of inputs to keep even when unused.

    Returns:
      `(new_jaxpr, used_inputs)`, where `used_inputs` flags the invars the new jaxpr keeps.
    """
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(jaxpr.invars)
    live: set[int] = {
        id(v) for v, u in zip(jaxpr.outvars, used_outputs, strict=True) if u and isinstance(v, Var)
    }
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if eqn.effects or any(id(v) in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(id(v) for v in eqn.invars if isinstance(v, Var))
    used_inputs = [id(v) in live or keep for v, keep in zip(jaxpr.invars, instantiate, strict=True)]
    invars = [v for v, u in zip(jaxpr.invars, used_inputs, strict=True) if u]
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs, strict=True) if u]
    constvars = [v for v in jaxpr.constvars if id(v) in live]
    new = Jaxpr(constvars, invars, outvars, list(reversed(kept)), debug_info=jaxpr.debug_info)
    return new, used_inputs


def dce_closed_jaxpr(closed: ClosedJaxpr, used_outputs: Sequence[bool]) -> ClosedJaxpr:
    """`dce_jaxpr` for a closed jaxpr, keeping all inputs and dropping unused constants."""
    jaxpr, _ = dce_jaxpr(closed.jaxpr, used_outputs, instantiate=True)
    live = {id(v) for v in jaxpr.constvars}
    consts = [
        c for v, c in zip(closed.jaxpr.constvars, closed.consts, strict=True) if id(v) in live
    ]
    return ClosedJaxpr(jaxpr, consts)

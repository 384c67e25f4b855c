"""Symbolic dimensions (shape polymorphism): `DimExpr`, an integer polynomial over dimension
variables and the operations `floordiv`, `mod`, `max`, `min` of such polynomials, and the
`SymbolicScope` whose constraints decide comparisons between them.

A shape entry is an `int` or a `DimExpr`; arithmetic on dimensions returns an `int` whenever
the result is a constant, so static shapes never see this module. Comparisons are decided from
bounds (every variable is at least 1; the scope's `>=` constraints and variable bounds narrow
them); when the bounds do not decide, `InconclusiveDimensionOperation` is raised, as in JAX.
`==` never raises: two expressions that are not provably equal compare unequal (JAX's choice,
because hashing uses equality).

Expressions print as JAX prints them: terms from the largest (by size, then by name) to the
constant (`a*b + b - a - 1`, `2*n + 1`, `floordiv(b + a, 2)`).
"""

from __future__ import annotations

import math
import operator
import sys
import threading
import tokenize
from io import StringIO

import numpy as np

from laminax_core.errors import InconclusiveDimensionOperation

__all__ = [
    "broadcast_shapes",
    "dim_index",
    "slice_indices",
    "DimExpr",
    "SymbolicScope",
    "definitely_equal",
    "is_constant_dim",
    "is_dim",
    "is_symbolic_dim",
    "max_dim",
    "min_dim",
    "parse_shape",
]

_INF = math.inf

_INCONCLUSIVE_HELP = (
    "\nThis error arises for comparison operations with shapes that\n"
    "are non-constant, and the result of the operation cannot be represented as\n"
    "a boolean value for all values of the symbolic dimensions involved.\n\n"
    "Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
    "#comparison-of-symbolic-dimensions-is-partially-supported\nfor more details.\n"
)


# lax installs `dimension_as_value` here: arithmetic of a dimension with an array or a float
# computes with the dimension's value (JAX's `__jax_array__` of dimension expressions)
dimension_as_value_hook: list = []


def _with_value(dim, other, op, reverse: bool = False):
    if not dimension_as_value_hook or isinstance(other, str | tuple | list):
        return NotImplemented
    value = dimension_as_value_hook[0](dim)
    return op(other, value) if reverse else op(value, other)


class _Factor:
    """A dimension variable, or an operation (`floordiv`, `mod`, `max`, `min`) on two
    expressions (ints or `DimExpr`s): the atoms that terms multiply."""

    __slots__ = ("var", "op", "operands", "size", "key", "_hash")

    def __init__(self, var: str | None, op: str | None = None, operands: tuple = ()):
        self.var, self.op, self.operands = var, op, operands
        if var is not None:
            self.size, self.key = 1, (1, var)
        else:
            self.size = 1 + sum(_expr_size(o) for o in operands)
            self.key = (self.size, op, tuple(_expr_key(o) for o in operands))
        self._hash = hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _Factor) and self.key == other.key

    def __hash__(self):
        return self._hash

    def __str__(self):
        if self.var is not None:
            return self.var
        return f"{self.op}({', '.join(map(str, self.operands))})"


# A term is a tuple of (factor, exponent) sorted by factor key; () is the constant term 1.


def _term_size(term) -> int:
    return sum(1 + e * f.size for f, e in term)


def _term_key(term):
    return (_term_size(term), tuple((f.key, e) for f, e in term))


def _term_str(term) -> str:
    return "*".join(f"{f}^{e}" if e != 1 else str(f) for f, e in term)


def _term_mul(t1, t2):
    powers = dict(t1)
    for f, e in t2:
        powers[f] = powers.get(f, 0) + e
    return tuple(sorted(powers.items(), key=lambda fe: fe[0].key))


def _term_div(t1, t2):
    """t1 / t2 as a term, or None when t2 does not divide t1."""
    powers = dict(t1)
    for f, e in t2:
        left = powers.get(f, 0) - e
        if left < 0:
            return None
        if left:
            powers[f] = left
        else:
            powers.pop(f)
    return tuple(sorted(powers.items(), key=lambda fe: fe[0].key))


def _expr_size(e) -> int:
    return e._size if isinstance(e, DimExpr) else (1 if e else 0)


def _expr_key(e):
    if isinstance(e, DimExpr):
        return e._key
    return (1, (((0, ()), e),)) if e else (0, ())


class SymbolicScope:
    """The scope that dimension variables share, with the constraints that hold among them.

    Args:
      constraints_str: constraints such as `"a >= b"`, `"b >= 4"`, `"a == 2*c"` (an equality's
        left side, a single term, is replaced by its right side wherever it occurs).

    Expressions of different scopes do not combine (ValueError).
    """

    def __init__(self, constraints_str=()):
        if isinstance(constraints_str, str):
            raise ValueError(
                f"The symbolic constraints should be a sequence of strings. Got {constraints_str!r}")
        frame = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__", "").startswith(
                ("laminax_core._shape_poly", "laminax_export")):
            frame = frame.f_back
        self._location = ("(unknown)" if frame is None else
                          f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})")
        self._constraints_str = list(constraints_str)
        self._substitutions: dict = {}  # term -> the expression that replaces it
        self._geq: list[DimExpr] = []  # expressions known to be >= 0
        self._var_lo: dict[str, float] = {}
        self._var_hi: dict[str, float] = {}
        for c in self._constraints_str:
            self._add_constraint(c)

    def _add_constraint(self, text: str) -> None:
        for cmp in ("==", ">=", "<="):
            if cmp in text:
                left, right = text.split(cmp, 1)
                break
        else:
            raise ValueError(
                "Constraint parsing error: must contain one of '==' or '>=' or '<='")
        e1 = _parse_expr(left, self, text)
        e2 = _parse_expr(right, self, text)
        if cmp == "==":
            if not isinstance(e1, DimExpr) or len(e1._terms) != 1 or e1._terms[0][1] != 1:
                raise ValueError(
                    f"Symbolic equality constraint can only have a single term (with "
                    f"coefficient 1) on the left-hand-side. Found '{text}'")
            self._substitutions[e1._terms[0][0]] = e2
            return
        diff = e1 - e2 if cmp == ">=" else e2 - e1
        if not isinstance(diff, DimExpr):
            if diff < 0:
                raise ValueError(f"Unsatisfiable explicit constraint: {text}")
            return
        self._geq.append(diff)
        var_terms = [t for t, _ in diff._terms if t]
        if len(var_terms) == 1 and len(var_terms[0]) == 1 and var_terms[0][0][1] == 1 and (
                var_terms[0][0][0].var is not None):
            (term, k), const = diff._terms[0], diff._const()
            v = term[0][0].var
            if k > 0:  # k*v + const >= 0
                self._var_lo[v] = max(self._var_lo.get(v, 1), math.ceil(-const / k))
            else:
                self._var_hi[v] = min(self._var_hi.get(v, _INF), math.floor(const / -k))

    def _check_same_scope(self, other: DimExpr, when: str, self_str: str = "") -> None:
        if other._scope is not self:
            raise ValueError(
                f"Invalid mixing of symbolic scopes {when}.\nExpected {self_str} scope {self}\n"
                f"and found for '{other}' ({other._scope._location}) scope {other._scope}\n"
                "See https://docs.jax.dev/en/latest/export/shape_poly.html"
                "#user-specified-symbolic-constraints.")

    def __str__(self) -> str:
        text = f"{id(self)} created at {self._location}"
        if self._constraints_str:
            text += " with constraints:\n" + "\n".join(f"  {c}" for c in self._constraints_str)
        return text

    __repr__ = __str__


class DimExpr:
    """A symbolic dimension: a sum of integer multiples of terms (products of powers of
    factors), with `+ - * // %`, `max`/`min`, comparisons and `int()` as JAX's `_DimExpr`."""

    __slots__ = ("_terms", "_scope", "_size", "_key", "_hash")

    def __init__(self, terms, scope: SymbolicScope):
        self._terms = terms  # ((term, coefficient), ...), largest term first
        self._scope = scope
        self._size = sum(1 + abs(k) * _term_size(t) for t, k in terms)
        self._key = (self._size, tuple((_term_key(t), k) for t, k in terms))
        self._hash = hash((self._key, id(scope)))

    @staticmethod
    def _build(coeffs: dict, scope: SymbolicScope):
        """The normal form of `sum(k * term)`: an int when constant."""
        if scope._substitutions and any(t in scope._substitutions for t in coeffs):
            total: int | DimExpr = 0
            for t, k in coeffs.items():
                sub = scope._substitutions.get(t)
                total = total + k * (sub if sub is not None else DimExpr._build({t: 1}, scope))
            return total
        items = [(t, k) for t, k in coeffs.items() if k]
        if not items:
            return 0
        if len(items) == 1 and not items[0][0]:
            return items[0][1]
        items.sort(key=lambda tk: _term_key(tk[0]), reverse=True)
        return DimExpr(tuple(items), scope)

    @staticmethod
    def from_var(name: str, scope: SymbolicScope):
        return DimExpr._build({((_Factor(name), 1),): 1}, scope)

    @staticmethod
    def _from_op(op: str, a, b, scope: SymbolicScope):
        return DimExpr._build({((_Factor(None, op, (a, b)), 1),): 1}, scope)

    @property
    def scope(self) -> SymbolicScope:
        return self._scope

    def _const(self) -> int:
        return dict(self._terms).get((), 0)

    def _coeffs(self) -> dict:
        return dict(self._terms)

    def _other(self, other, when: str):
        """`other` as an int or an expression of this scope; None for what is no dimension."""
        if isinstance(other, DimExpr):
            self._scope._check_same_scope(other, when, f"'{self}'")
            return other
        if isinstance(other, int) or (hasattr(other, "__index__") and not hasattr(other, "aval")
                                      and getattr(other, "ndim", 0) == 0):
            try:
                return operator.index(other)
            except TypeError:
                return None
        return None

    # ----- arithmetic ---------------------------------------------------------------------

    def _lin(self, other, k: int):
        o = self._other(other, "for linear combination")
        if o is None:
            return _with_value(self, other, operator.add if k > 0 else operator.sub)
        coeffs = self._coeffs()
        if isinstance(o, DimExpr):
            for t, c in o._terms:
                coeffs[t] = coeffs.get(t, 0) + k * c
        else:
            coeffs[()] = coeffs.get((), 0) + k * o
        return DimExpr._build(coeffs, self._scope)

    def __add__(self, other):
        return self._lin(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._lin(other, -1)

    def __rsub__(self, other):
        if self._other(other, "for linear combination") is None:
            return _with_value(self, other, operator.sub, reverse=True)
        return -self._lin(other, -1)

    def __neg__(self):
        return DimExpr._build({t: -k for t, k in self._terms}, self._scope)

    def __pos__(self):
        return self

    def __mul__(self, other):
        o = self._other(other, "for multiplication")
        if o is None:
            return _with_value(self, other, operator.mul)
        if not isinstance(o, DimExpr):
            return DimExpr._build({t: k * o for t, k in self._terms}, self._scope)
        coeffs: dict = {}
        for t1, k1 in self._terms:
            for t2, k2 in o._terms:
                t = _term_mul(t1, t2)
                coeffs[t] = coeffs.get(t, 0) + k1 * k2
        return DimExpr._build(coeffs, self._scope)

    __rmul__ = __mul__

    def __pow__(self, power: int):
        power = operator.index(power)
        if power < 0:
            raise InconclusiveDimensionOperation(f"Symbolic dimension cannot be raised to negative powers: '{self}' ^ '{power}'")
        result: int | DimExpr = 1
        for _ in range(power):
            result = result * self
        return result

    def _divmod(self, divisor):
        """Polynomial division when it is exact term by term (a constant divisor may leave a
        remainder); otherwise `floordiv(...)` and `mod(...)` factors."""
        if isinstance(divisor, int) and divisor == 0:
            raise InconclusiveDimensionOperation(f"Division by zero: '{self}' // 0")
        dividend, quotient = self, 0
        try:
            for _ in range(64):
                if not isinstance(dividend, DimExpr):
                    break
                term, count = dividend._terms[0]
                if isinstance(divisor, DimExpr):
                    dterm, dcount = divisor._terms[0]
                    qterm = _term_div(term, dterm)
                    if qterm is None:
                        raise ArithmeticError
                else:
                    qterm, dcount = term, divisor
                qcount, rest = divmod(count, dcount)
                if rest:
                    raise ArithmeticError
                q = DimExpr._build({qterm: qcount}, self._scope)
                quotient = quotient + q
                dividend = dividend - q * divisor
            else:
                raise ArithmeticError
            if isinstance(divisor, DimExpr):
                if dividend != 0:
                    raise ArithmeticError
                return quotient, 0
            q, r = divmod(dividend, divisor)
            return quotient + q, r
        except ArithmeticError:
            return (DimExpr._from_op("floordiv", self, divisor, self._scope),
                    DimExpr._from_op("mod", self, divisor, self._scope))

    def __floordiv__(self, other):
        o = self._other(other, "for floordiv")
        return NotImplemented if o is None else self._divmod(o)[0]

    def __rfloordiv__(self, other):
        o = self._other(other, "for floordiv")
        if o is None:
            return NotImplemented
        return DimExpr._from_op("floordiv", o, self, self._scope)

    def __mod__(self, other):
        o = self._other(other, "for mod")
        return NotImplemented if o is None else self._divmod(o)[1]

    def __rmod__(self, other):
        o = self._other(other, "for mod")
        if o is None:
            return NotImplemented
        return DimExpr._from_op("mod", o, self, self._scope)

    def __divmod__(self, other):
        o = self._other(other, "for divmod")
        return NotImplemented if o is None else self._divmod(o)

    def __rtruediv__(self, other):
        return _with_value(self, other, operator.truediv, reverse=True)

    def __truediv__(self, other):
        o = self._other(other, "for division")
        if o is None:
            return _with_value(self, other, operator.truediv)
        q, r = self._divmod(o)
        if isinstance(r, DimExpr) or r != 0:
            raise InconclusiveDimensionOperation(
                f"Symbolic dimension '{self}' cannot be divided exactly by '{o}'")
        return q

    def __jax_array__(self):
        """The dimension's value as an array (`jnp.asarray(b)`), computed by the program."""
        if not dimension_as_value_hook:
            raise TypeError(f"Symbolic dimension '{self}' has no value without laminax's lax")
        return dimension_as_value_hook[0](self)

    def max(self, other):
        return max_dim(self, other)

    def min(self, other):
        return min_dim(self, other)

    # ----- comparisons --------------------------------------------------------------------

    def __eq__(self, other) -> bool:
        if isinstance(other, DimExpr):
            if other._scope is not self._scope:
                return False
        elif not isinstance(other, int):
            try:
                other = operator.index(other)
            except TypeError:
                return False
        diff = self - other
        return not isinstance(diff, DimExpr) and diff == 0

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self):
        return self._hash

    def __ge__(self, other) -> bool:
        return _geq(self, other, lambda: f"'{self}' >= '{other}'")

    def __le__(self, other) -> bool:
        return _geq(other, self, lambda: f"'{self}' <= '{other}'")

    def __gt__(self, other) -> bool:
        return not _geq(other, self, lambda: f"'{self}' > '{other}'")

    def __lt__(self, other) -> bool:
        return not _geq(self, other, lambda: f"'{self}' < '{other}'")

    def __int__(self):
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used in a context that requires a constant"
            + _INCONCLUSIVE_HELP)

    # ----- printing, variables, evaluation ------------------------------------------------

    def __str__(self) -> str:
        parts = []
        for t, k in self._terms:
            sign = "+" if k > 0 else "-"
            if not t:
                parts.append(f"{sign} {abs(k)}")
            elif abs(k) == 1:
                parts.append(f"{sign} {_term_str(t)}")
            else:
                parts.append(f"{sign} {abs(k)}*{_term_str(t)}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else text

    __repr__ = __str__

    def free_vars(self) -> set[str]:
        """The dimension variables the expression mentions."""
        found: set[str] = set()
        for t, _ in self._terms:
            for f, _ in t:
                if f.var is not None:
                    found.add(f.var)
                else:
                    for o in f.operands:
                        if isinstance(o, DimExpr):
                            found |= o.free_vars()
        return found

    def evaluate(self, env: dict, ops=None):
        """The expression's value for `env` (variable -> value). With `ops`, values are
        combined through `ops.const/add/mul/floordiv/mod/max/min` (lowering builds IR this
        way); without, as Python ints."""
        ops = ops or _INT_OPS
        total = None
        for t, k in self._terms:
            value = None
            for f, e in t:
                fv = _eval_factor(f, env, ops)
                for _ in range(e):
                    value = fv if value is None else ops.mul(value, fv)
            if value is None:
                value = ops.const(k)
            elif k != 1:
                value = ops.mul(value, ops.const(k))
            total = value if total is None else ops.add(total, value)
        return total

    def bounds(self) -> tuple[float, float]:
        """Lower and upper bound (possibly infinite) known from the scope."""
        return _bounds(self)


def _eval_factor(f: _Factor, env: dict, ops):
    if f.var is not None:
        if f.var not in env:
            raise KeyError(f"Encountered dimension variable '{f.var}' that is not appearing in "
                           "the shapes of the function arguments")
        return env[f.var]
    a, b = (o.evaluate(env, ops) if isinstance(o, DimExpr) else ops.const(o) for o in f.operands)
    return getattr(ops, f.op)(a, b)


class _IntOps:
    const = staticmethod(int)
    add = staticmethod(operator.add)
    mul = staticmethod(operator.mul)
    floordiv = staticmethod(operator.floordiv)
    mod = staticmethod(operator.mod)
    max = staticmethod(max)
    min = staticmethod(min)


_INT_OPS = _IntOps()


# ----- bounds and decisions -------------------------------------------------------------------


def _mul_iv(a, b):
    products = [(x * y if x and y else 0) for x in a for y in b]
    return min(products), max(products)


def _factor_iv(f: _Factor, scope: SymbolicScope):
    if f.var is not None:
        return scope._var_lo.get(f.var, 1), scope._var_hi.get(f.var, _INF)
    (lo1, hi1), (lo2, hi2) = (_bounds(o) for o in f.operands)
    if f.op == "max":
        return max(lo1, lo2), max(hi1, hi2)
    if f.op == "min":
        return min(lo1, lo2), min(hi1, hi2)
    if lo2 > 0:  # a positive divisor
        if f.op == "mod":
            return 0, hi2 - 1
        candidates = [lo1 / lo2, lo1 / hi2 if hi2 != _INF else 0, hi1 / lo2,
                      hi1 / hi2 if hi2 != _INF else 0]
        finite = [math.floor(c) if abs(c) != _INF else c for c in candidates]
        return min(finite), max(finite)
    return -_INF, _INF


def _interval(e):
    if not isinstance(e, DimExpr):
        return e, e
    lo = hi = 0
    for t, k in e._terms:
        iv = (1, 1)
        for f, p in t:
            fiv = _factor_iv(f, e._scope)
            for _ in range(p):
                iv = _mul_iv(iv, fiv)
        tlo, thi = _mul_iv(iv, (k, k))
        lo, hi = lo + tlo, hi + thi
    return lo, hi


_nesting = threading.local()  # how deep `_bounds` is: constraints refine the outer levels only


def _bounds(e):
    lo, hi = _interval(e)
    depth = getattr(_nesting, "depth", 0)
    if isinstance(e, DimExpr) and depth < 3:
        _nesting.depth = depth + 1
        try:
            return _refined_bounds(e, lo, hi)
        finally:
            _nesting.depth = depth
    return lo, hi


def _refined_bounds(e, lo, hi):
    for c in e._scope._geq:  # e = (e - c) + c >= e - c; e = (e + c) - c <= e + c
        lo = max(lo, _interval(e - c)[0])
        hi = min(hi, _interval(e + c)[1])
    for t, k in e._terms:
        # k*min(x, y) <= k*x (k > 0): replacing the factor by an operand bounds e from
        # above; the same for max from below (and the reverse for k < 0)
        if len(t) != 1 or t[0][1] != 1 or t[0][0].op not in ("min", "max", "floordiv"):
            continue
        rest = e - DimExpr._build({t: k}, e._scope)
        if t[0][0].op == "floordiv":
            lo, hi = _floordiv_bounds(rest, k, *t[0][0].operands, lo, hi)
            continue
        for operand in t[0][0].operands:
            alt = _bounds(rest + k * operand)
            if (t[0][0].op == "min") == (k > 0):
                hi = min(hi, alt[1])
            else:
                lo = max(lo, alt[0])
    return lo, hi


def _floordiv_bounds(rest, k, a, d, lo, hi):
    """Bounds of rest + k*floordiv(a, d) for a positive constant d, from
    a - d + 1 <= d*floordiv(a, d) <= a (so that b - b // 2 >= 0 is decided, as in JAX)."""
    if isinstance(d, DimExpr) or d <= 0:
        return lo, hi
    low_q, high_q = (a - d + 1, a) if k > 0 else (a, a - d + 1)
    alt_lo = _bounds(d * rest + k * low_q)[0]
    alt_hi = _bounds(d * rest + k * high_q)[1]
    return max(lo, -(-alt_lo // d) if alt_lo > -math.inf else lo), min(
        hi, alt_hi // d if alt_hi < math.inf else hi)


def _geq(e1, e2, describe) -> bool:
    """e1 >= e2, decided by the bounds of e1 - e2, or InconclusiveDimensionOperation."""
    for e in (e1, e2):
        if not is_dim(e):
            raise TypeError(f"Comparison of a symbolic dimension with {e!r} of type "
                            f"{type(e).__name__}: compare with ints or dimensions only.")
    diff = e1 - e2
    lo, hi = _bounds(diff)
    if lo >= 0:
        return True
    if hi < 0:
        return False
    raise InconclusiveDimensionOperation(
        f"Symbolic dimension comparison {describe()} is inconclusive." + _INCONCLUSIVE_HELP)


def max_dim(d1, d2):
    """`max` of two dimensions: the larger one when the bounds decide, else `max(d1, d2)`."""
    if not isinstance(d1, DimExpr) and not isinstance(d2, DimExpr):
        return max(d1, d2)
    scope = (d1 if isinstance(d1, DimExpr) else d2)._scope
    lo, hi = _bounds(d1 - d2)
    if lo >= 0:
        return d1
    if hi <= 0:
        return d2
    return DimExpr._from_op("max", d1, d2, scope)


def min_dim(d1, d2):
    """`min` of two dimensions: the smaller one when the bounds decide, else `min(d1, d2)`."""
    if not isinstance(d1, DimExpr) and not isinstance(d2, DimExpr):
        return min(d1, d2)
    scope = (d1 if isinstance(d1, DimExpr) else d2)._scope
    lo, hi = _bounds(d1 - d2)
    if lo >= 0:
        return d2
    if hi <= 0:
        return d1
    return DimExpr._from_op("min", d1, d2, scope)


def is_symbolic_dim(d) -> bool:
    """Whether `d` is a symbolic dimension (a `DimExpr`)."""
    return isinstance(d, DimExpr)


def is_constant_dim(d) -> bool:
    """Whether `d` is an integer dimension."""
    if isinstance(d, DimExpr):
        return False
    try:
        operator.index(d)
    except TypeError:
        return False
    return True


def is_dim(d) -> bool:
    """Whether `d` is a dimension: an integer or a `DimExpr`."""
    return isinstance(d, DimExpr) or is_constant_dim(d)


def definitely_equal(d1, d2) -> bool:
    """`d1 == d2` where that is provable (dimensions, or shapes as tuples)."""
    if isinstance(d1, tuple | list):
        return len(d1) == len(d2) and all(definitely_equal(a, b) for a, b in zip(d1, d2))
    return d1 == d2 if isinstance(d1, DimExpr) or not isinstance(d2, DimExpr) else d2 == d1


# ----- parsing --------------------------------------------------------------------------------


class _Parser:
    """`"b, 2*n + 1"`: comma-separated expressions of names, ints, `+ - *`, `^` (a power),
    `max(,)`, `min(,)`, `floordiv(,)`, `mod(,)`, parentheses; `_` (taken from `like`) and a
    trailing `...` stand for the known dimensions."""

    def __init__(self, text: str, scope: SymbolicScope, like=None, context: str = ""):
        self.text, self.scope, self.like, self.context = text, scope, like, context
        try:
            toks = list(tokenize.generate_tokens(StringIO(text).readline))
        except (tokenize.TokenError, IndentationError, SyntaxError) as err:
            raise ValueError(f"syntax error in symbolic shape '{text}': {err}") from None
        skip = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT,
                tokenize.DEDENT)
        self.toks = [t for t in toks if t.type not in skip]
        self.pos = 0
        self.dim = 0

    def error(self, what: str):
        parsed = self.text[: self.toks[self.pos].start[1]] if self.pos < len(self.toks) else self.text
        rest = self.text[len(parsed):]
        where = f" in dimension {self.dim}" if self.context != "expr" else ""
        return ValueError(f"syntax error in symbolic shape '{self.text}'{where}: {what}. "
                          f"Parsed '{parsed}', remaining '{rest}'.")

    def peek(self) -> str | None:
        return self.toks[self.pos].string if self.pos < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            found = "end of input" if tok is None else repr(tok)
            raise self.error(f"expecting {expected!r} but found {found}" if expected
                             else "unexpected end of input")
        self.pos += 1
        return tok

    def shape(self) -> tuple:
        parens = self.peek() == "(" and self._outer_parens()
        if parens:
            self.take("(")
        dims: list = []
        while self.peek() not in (None, ")"):
            if self.peek() == "...":
                self.take()
                if self.like is None:
                    raise self.error("'...' needs the actual shape (`like`)")
                dims.extend(self.like[len(dims):])
                break
            if self.peek() == "_":
                self.take()
                known = self.like[self.dim] if self.like is not None and self.dim < len(self.like) else None
                if known is None:
                    raise self.error("dimension '_' given but its size is not known")
                dims.append(known)
            else:
                dims.append(self.expr())
            self.dim += 1
            if self.peek() == ",":
                self.take()
            elif self.peek() not in (None, ")"):
                raise self.error(f"expecting ',' but found {self.peek()!r}")
        if parens:
            self.take(")")
        if self.peek() is not None:
            raise self.error(f"unexpected {self.peek()!r}")
        if self.like is not None and len(dims) != len(self.like):
            raise ValueError(
                f"polymorphic shape {self.text!r} has {len(dims)} dimensions, while the actual "
                f"shape {tuple(self.like)} has {len(self.like)}")
        return tuple(dims)

    def _outer_parens(self) -> bool:
        depth = 0
        for i, t in enumerate(self.toks):
            depth += (t.string == "(") - (t.string == ")")
            if depth == 0:
                return i == len(self.toks) - 1
        return False

    def expr(self):
        sign = -1 if self.peek() == "-" else 1
        if sign < 0:
            self.take()
        acc = sign * self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            acc = acc + self.term() if op == "+" else acc - self.term()
        return acc

    def bounded(self, e):
        # specifications come from artifacts too: a product may not blow up into a huge sum
        if isinstance(e, DimExpr) and len(e._terms) > 256:
            raise self.error(f"the expression has {len(e._terms)} terms (more than 256)")
        return e

    def term(self):
        acc = self.power()
        while self.peek() == "*":
            self.take()
            acc = self.bounded(acc * self.power())
        return acc

    def power(self):
        base = self.atom()
        if self.peek() in ("^", "**"):
            self.take()
            exp = self.take()
            if not exp.isdigit() or int(exp) > 64:
                raise self.error(f"expecting an integer exponent up to 64 but found {exp!r}")
            result = 1
            for _ in range(int(exp)):
                result = self.bounded(result * base)
            return result
        return base

    def atom(self):
        self.depth = getattr(self, "depth", 0) + 1
        try:
            if self.depth > 50:
                raise self.error("expressions nested more than 50 levels")
            return self._atom()
        finally:
            self.depth -= 1

    def _atom(self):
        tok = self.peek()
        if tok is None:
            raise self.error("expecting one of {NAME, MINUS, NUMBER} but found ENDMARKER")
        kind = self.toks[self.pos].type
        if tok == "(":
            self.take()
            e = self.expr()
            self.take(")")
            return e
        if tok == "-":
            self.take()
            return -self.atom()
        if kind == tokenize.NUMBER:
            self.take()
            if not tok.isdigit():
                raise self.error(f"expecting an integer but found {tok!r}")
            return int(tok)
        if kind == tokenize.NAME:
            self.take()
            if tok in ("max", "min", "floordiv", "mod") and self.peek() == "(":
                self.take("(")
                a = self.expr()
                self.take(",")
                b = self.expr()
                self.take(")")
                return {"max": max_dim, "min": min_dim, "floordiv": operator.floordiv,
                        "mod": operator.mod}[tok](a, b)
            return DimExpr.from_var(tok, self.scope)
        raise self.error(f"expecting one of {{NAME, MINUS, NUMBER}} but found {tok!r}")


def _parse_expr(text: str, scope: SymbolicScope, whole: str):
    p = _Parser(text.strip(), scope, context="expr")
    e = p.expr()
    if p.peek() is not None:
        raise p.error(f"unexpected {p.peek()!r} in constraint '{whole}'")
    return e


def parse_shape(text: str, scope: SymbolicScope, like=None) -> tuple:
    """The dimensions of a shape specification (`"b, 2*n + 1"`, `"(b, _, ...)"`)."""
    return _Parser(text, scope, like).shape()


def broadcast_shapes(*shapes) -> tuple:
    """NumPy's broadcasting of shapes that may hold symbolic dimensions (a symbolic dimension
    broadcasts with 1 and with an equal one; `b` and `3` do not broadcast, as in JAX).

    Raises:
      ValueError: the shapes do not broadcast.
    """
    if all(type(d) is int for s in shapes for d in s):
        return tuple(np.broadcast_shapes(*shapes))
    rank = max(len(s) for s in shapes)
    result = []
    for i in range(rank):
        dims = [s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0]
        out = 1
        for d in dims:
            if isinstance(d, int) and d == 1:
                continue
            if isinstance(out, int) and out == 1:
                out = d
            elif not definitely_equal(out, d):
                raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
        result.append(out)
    return tuple(result)


def dim_index(d):
    """`d` as a dimension: a `DimExpr` as it is, anything else through `operator.index`."""
    return d if isinstance(d, DimExpr) else operator.index(d)


def slice_indices(slc: slice, size) -> tuple:
    """`slc.indices(size)` for a symbolic `size` or symbolic start and stop (whose sign
    must be known, as in JAX)."""
    step = 1 if slc.step is None else operator.index(slc.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    last = size if step > 0 else size - 1
    floor = 0 if step > 0 else -1

    def clamp(v, default):
        if v is None:
            return default
        v = dim_index(v)
        return min_dim(last, v) if v >= 0 else max_dim(size + v, floor)

    return clamp(slc.start, 0 if step > 0 else size - 1), clamp(slc.stop, last if step > 0 else -1), step

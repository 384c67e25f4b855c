"""Dimension variables of a polymorphic signature: solving them from the arguments' shapes,
and checking what the shapes must satisfy (each variable at least 1, exact divisions,
consistent dimensions, the scope's constraints), with JAX's messages.

One procedure serves both sides: with Python ints it checks a call's concrete shapes (the
errors a call with bad shapes raises); with MLIR values it emits the exported module's
`main`, which computes the variables from `stablehlo.get_dimension_size` and asserts the same
conditions with `shape_assertion` custom calls, as JAX's modules do.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core.errors import InconclusiveDimensionOperation
from laminax_core.internal import DimExpr

__all__ = ["dim_vars_of", "solve_concrete", "wrap_main"]

_HELP = (" Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
         "#shape-assertion-errors for more details.")


def dim_vars_of(avals) -> list[str]:
    """The dimension variables of the avals' shapes, sorted by name (the order in which the
    module's wrapped function takes them)."""
    found: set[str] = set()
    for a in avals:
        for d in a.shape:
            if isinstance(d, DimExpr):
                found |= d.free_vars()
    return sorted(found)


def _scope(avals):
    for a in avals:
        for d in a.shape:
            if isinstance(d, DimExpr):
                return d.scope
    return None


def _linear_in(expr: DimExpr, var: str):
    """(k, rest) with expr == k*var + rest and `var` not in rest, or None."""
    k = 0
    rest: dict = {}
    for term, c in expr._terms:
        if len(term) == 1 and term[0][1] == 1 and term[0][0].var == var:
            k = c
        else:
            rest[term] = c
    if not k:
        return None
    rest_expr = DimExpr._build(rest, expr.scope)
    if isinstance(rest_expr, DimExpr) and var in rest_expr.free_vars():
        return None
    return k, rest_expr


class _Procedure:
    """Runs the solve-and-check procedure on one backend (`_Concrete` or `_Emit`)."""

    def __init__(self, avals, backend):
        self.avals, self.b = avals, backend
        self.specs = ",".join(f"args[{i}].shape = {tuple(a.shape)}"  # JAX's separator
                               for i, a in enumerate(avals)
                               if any(isinstance(d, DimExpr) for d in a.shape))
        self.obtained: list = []  # (text with {} placeholders, values)

    def message(self, head: str, values: list, *, constraint: bool = False):
        parts, vals = [], list(values)
        for text, vs in self.obtained:
            parts.append(text)
            vals.extend(vs)
        lead = "" if constraint else (
            "Input shapes do not match the polymorphic shapes specification. ")
        tail = (f" Using the following polymorphic shapes specifications: {self.specs}. "
                f"Obtained dimension variables: {''.join(parts)}.{_HELP}")
        return lead + head + tail, vals

    def run(self) -> dict:
        known: dict = {}
        pending = [(d, i, j) for i, a in enumerate(self.avals)
                   for j, d in enumerate(a.shape) if isinstance(d, DimExpr)]
        progress = True
        while progress:
            progress = False
            for eq in list(pending):
                expr, i, j = eq
                unknown = expr.free_vars() - set(known)
                if len(unknown) != 1:
                    continue
                (var,) = unknown
                lin = _linear_in(expr, var)
                if lin is None:
                    continue
                k, rest = lin
                size = self.b.size(i, j)
                num = size if rest == 0 else self.b.sub(size, self.b.value(rest, known))
                if k != 1:
                    q, r = self.b.divmod(num, k)
                    msg, vals = self.message(
                        f"Division had remainder {{}} when computing the value of '{var}'.", [r])
                    self.b.check_eq0(r, msg, vals)
                    num = q
                known[var] = num
                self.obtained.append((
                    f"'{var}' = {{}} from specification '{expr}' for dimension "
                    f"args[{i}].shape[{j}] (= {{}}), ", [num, size]))
                msg, vals = self.message(
                    f"Expected value >= 1 for dimension variable '{var}'.", [])
                self.b.check_ge(num, 1, msg, vals)
                pending.remove(eq)
                progress = True
        unsolved = sorted(set().union(*(e.free_vars() for e, _, _ in pending)) - set(known))
        if unsolved:
            raise ValueError(
                f"Cannot solve for values of dimension variables {set(unsolved)}. We can only "
                "solve linear uni-variate constraints. Using the following polymorphic shapes "
                f"specifications: {self.specs}. Unprocessed specifications: "
                + ", ".join(f"'{e}' for dimension size args[{i}].shape[{j}]"
                            for e, i, j in pending) + ". Please see https://docs.jax.dev/en/latest/"
                "export/shape_poly.html#dimension-variables-must-be-solvable-from-the-input-shapes"
                " for more details.")
        for expr, i, j in pending:
            size, value = self.b.size(i, j), self.b.value(expr, known)
            msg, vals = self.message(
                f"Found inconsistency between dimension size args[{i}].shape[{j}] (= {{}}) and "
                f"the specification '{expr}' (= {{}}).", [size, value])
            self.b.check_eq(size, value, msg, vals)
        scope = _scope(self.avals)
        for text, diff, equal in _constraints(scope):
            value = self.b.value(diff, known)
            msg, vals = self.message(
                f"Input shapes do not match the symbolic shape constraint {text}. Expected "
                f"'{diff}' to be {'equal to' if equal else 'greater or equal to'} 0, but found "
                "{}. ", [value], constraint=True)
            if equal:
                self.b.check_eq0(value, msg, vals)
            else:
                self.b.check_ge(value, 0, msg, vals)
        return known


def _constraints(scope):
    """(text, difference, is an equality) per constraint the call must check, in order."""
    if scope is None:
        return []
    from laminax_core.internal import SymbolicScope, parse_shape

    out = []
    for text in scope._constraints_str:
        cmp = next(c for c in ("==", ">=", "<=") if c in text)
        left, right = text.split(cmp, 1)
        if cmp == "==":
            # outside the scope, which would rewrite the left side into the right one
            (e1, e2) = parse_shape(f"{left}, {right}", SymbolicScope())
            if isinstance(e1, DimExpr) and e1.free_vars() == {str(e1)}:
                continue  # a variable is replaced in the shapes themselves, as in JAX
        else:
            (e1, e2) = parse_shape(f"{left}, {right}", scope)
        diff = e2 - e1 if cmp == "<=" else e1 - e2
        if isinstance(diff, DimExpr):
            out.append((text.strip(), diff, cmp == "=="))
    return out


class _Concrete:
    """Python ints: the sizes of a call's arguments; failed checks raise ValueError."""

    def __init__(self, shapes):
        self.shapes = shapes

    def size(self, i, j):
        return int(self.shapes[i][j])

    def value(self, e, known):
        return e.evaluate(known) if isinstance(e, DimExpr) else int(e)

    sub = staticmethod(lambda a, b: a - b)
    divmod = staticmethod(divmod)

    @staticmethod
    def _fail(msg, vals):
        raise ValueError(msg.format(*vals))

    def check_eq0(self, r, msg, vals):
        if r != 0:
            self._fail(msg, vals)

    def check_ge(self, v, bound, msg, vals):
        if v < bound:
            self._fail(msg, vals)

    def check_eq(self, a, b, msg, vals):
        if a != b:
            self._fail(msg, vals)


class _Symbolic(_Concrete):
    """The sizes are the caller's dimension expressions (a polymorphic artifact called while
    exporting another polymorphic function): a check passes only when it is provably true
    for every value of the caller's variables, as JAX's (the inner module's own shape
    assertions run again at the call)."""

    def size(self, i, j):
        return self.shapes[i][j]

    def check_eq0(self, r, msg, vals):
        if not r == 0:
            self._fail(msg, vals)

    def check_ge(self, v, bound, msg, vals):
        try:
            ok = v >= bound
        except InconclusiveDimensionOperation:
            ok = False
        if not ok:
            self._fail(msg, vals)

    def check_eq(self, a, b, msg, vals):
        if not a == b:
            self._fail(msg, vals)


def solve_concrete(avals, shapes) -> dict:
    """The dimension variables' values for a call with argument `shapes`, after checking
    every condition (ValueError with JAX's message otherwise). With dimension expressions
    among the shapes the values are expressions of the caller's variables."""
    symbolic = any(isinstance(d, DimExpr) for s in shapes for d in s)
    return _Procedure(avals, (_Symbolic if symbolic else _Concrete)(shapes)).run()


class _Emit:
    """MLIR values inside the new `main`: checks become `shape_assertion` custom calls."""

    def __init__(self, args, dim_type):
        self.args, self.dim_type = args, dim_type

    def const(self, v):
        return hlo.constant(ir.DenseElementsAttr.get(
            np.asarray(v, dtype=np.int64 if ir.IntegerType(self.dim_type.element_type).width == 64
                       else np.int32), type=self.dim_type.element_type, shape=[]))

    def size(self, i, j):
        s = hlo.get_dimension_size(self.args[i], j)
        return s if s.type == self.dim_type else hlo.convert(self.dim_type, s)

    def value(self, e, known):
        from laminax_dispatch.internal import dim_ir_ops

        return e.evaluate(known, dim_ir_ops()) if isinstance(e, DimExpr) else self.const(e)

    def sub(self, a, b):
        return hlo.subtract(a, b)

    def divmod(self, a, k):
        from laminax_dispatch.internal import dim_ir_ops

        ops, kv = dim_ir_ops(), self.const(k)
        return ops.floordiv(a, kv), ops.mod(a, kv)

    def _assert(self, cond, msg, vals):
        operands, index = [], []
        for v in vals:  # one operand per distinct value, as JAX's messages number them
            for n, seen in enumerate(operands):
                if seen == v:
                    index.append(n)
                    break
            else:
                operands.append(v)
                index.append(len(operands) - 1)
        text = msg.format(*(f"{{{n}}}" for n in index))
        op = hlo.CustomCallOp([], [cond, *operands], call_target_name="shape_assertion",
                              has_side_effect=True,
                              api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 2))
        op.attributes["error_message"] = ir.StringAttr.get(text)

    def _cmp(self, a, b, direction):
        return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction),
                           compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))

    def check_eq0(self, r, msg, vals):
        self._assert(self._cmp(r, self.const(0), "EQ"), msg, vals)

    def check_ge(self, v, bound, msg, vals):
        self._assert(self._cmp(v, self.const(bound), "GE"), msg, vals)

    def check_eq(self, a, b, msg, vals):
        self._assert(self._cmp(a, b, "EQ"), msg, vals)


def _tokens_after_lead(fn, arg_attrs, num_tokens: int, n_lead: int) -> list:
    """Moves `fn`'s leading token arguments after the next `n_lead` ones (the platform
    index and dimension variables), JAX's order for the wrapped function; returns the
    argument attributes in the new order."""
    block = fn.regions[0].blocks[0]
    n = len(block.arguments)
    order = [*range(num_tokens, num_tokens + n_lead), *range(num_tokens),
             *range(num_tokens + n_lead, n)]
    old_args = list(block.arguments)
    new_args = [block.add_argument(old_args[i].type, old_args[i].location) for i in order]
    for i, new in zip(order, new_args, strict=True):
        old_args[i].replace_all_uses_with(new)
    for _ in range(n):
        block.erase_argument(0)
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    inputs = list(ftype.inputs)
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([inputs[i] for i in order], list(ftype.results)))
    arg_attrs = [arg_attrs[i] for i in order]
    fn.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
    return arg_attrs


def _with_token_mark(attrs):
    entries = {a.name: a.attr for a in ir.DictAttr(attrs)}
    entries["jax.token"] = ir.BoolAttr.get(True)
    return ir.DictAttr.get(entries)


def wrap_main(module: ir.Module, in_avals, dim_vars: list[str], num_tokens: int,
              platform_index: bool = False) -> None:
    """Turns the lowered `main(tokens, platform index?, dim vars, args)` into the private
    `_wrapped_jax_export_main` and adds JAX's public `main(platform index?, tokens, args)`
    that derives the dimension variables from the arguments' shapes, asserts the shapes'
    conditions, and calls it. A module lowered for several platforms whose main needs no
    reordering only has its platform index argument marked, as JAX's."""
    n_lead = int(platform_index) + len(dim_vars)
    names = ["_platform_index"] * platform_index + list(dim_vars)
    with module.context, ir.Location.unknown():
        old = next(op for op in module.body.operations
                   if ir.StringAttr(op.attributes["sym_name"]).value == "main")
        lead = range(num_tokens, num_tokens + n_lead)
        arg_attrs = list(ir.ArrayAttr(old.attributes["arg_attrs"]))
        for i in lead:
            entries = {a.name: a.attr for a in ir.DictAttr(arg_attrs[i])}
            entries["jax.global_constant"] = ir.StringAttr.get(names[i - num_tokens])
            arg_attrs[i] = ir.DictAttr.get(entries)
        # token arguments and results are marked, as JAX's (its callers pass tokens there)
        for i in range(num_tokens):
            arg_attrs[i] = _with_token_mark(arg_attrs[i])
        old.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
        if num_tokens:
            res_attrs = list(ir.ArrayAttr(old.attributes["res_attrs"]))
            res_attrs[:num_tokens] = [_with_token_mark(a) for a in res_attrs[:num_tokens]]
            old.attributes["res_attrs"] = ir.ArrayAttr.get(res_attrs)
        if not dim_vars and not num_tokens:
            return
        old.attributes["sym_name"] = ir.StringAttr.get("_wrapped_jax_export_main")
        old.attributes["sym_visibility"] = ir.StringAttr.get("private")
        if num_tokens and n_lead:
            arg_attrs = _tokens_after_lead(old, arg_attrs, num_tokens, n_lead)
            num_tokens_first = 0
        else:
            num_tokens_first = num_tokens
        ftype = ir.FunctionType(ir.TypeAttr(old.attributes["function_type"]).value)
        inputs = list(ftype.inputs)
        # the public main: the platform index first, then tokens, then the arrays
        token_at = n_lead if not num_tokens_first else 0
        lead_at = 0 if not num_tokens_first else num_tokens
        order = [*range(lead_at, lead_at + platform_index),
                 *range(token_at, token_at + num_tokens),
                 *range(num_tokens + n_lead, len(inputs))]
        results = list(ftype.results)
        with ir.InsertionPoint.at_block_begin(module.body):
            main = func.FuncOp("main", ir.FunctionType.get([inputs[i] for i in order], results))
        main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        main.attributes["arg_attrs"] = ir.ArrayAttr.get([arg_attrs[i] for i in order])
        if "res_attrs" in old.attributes:
            main.attributes["res_attrs"] = old.attributes["res_attrs"]
        block = main.add_entry_block()
        with ir.InsertionPoint(block):
            args = list(block.arguments)
            index, args = args[:platform_index], args[platform_index:]
            tokens, arrays = args[:num_tokens], args[num_tokens:]
            dim_type = inputs[lead_at + platform_index] if dim_vars else None
            known = _Procedure(in_avals, _Emit(arrays, dim_type)).run()
            lead = [*index, *(known[v] for v in dim_vars)]
            # JAX's wrapped function takes the tokens after the platform index and dim vars
            call = func.CallOp(results, ir.FlatSymbolRefAttr.get("_wrapped_jax_export_main"),
                               [*tokens, *lead, *arrays] if num_tokens_first
                               else [*lead, *tokens, *arrays])
            func.ReturnOp(list(call.results))

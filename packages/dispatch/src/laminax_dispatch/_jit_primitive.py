"""`jit_p`: the call primitive that a jitted function becomes inside another trace.

When `jit(f)` is called on tracers (under `make_jaxpr`, an outer `jit`, `grad`, `vmap`), `f` is
traced to a closed jaxpr and `jit_p` is bound with it, so the outer jaxpr shows the call as
JAX prints it: `jit[jaxpr={ lambda ... } name=f]`. Its rules:

- impl: compile the jaxpr (cached by jaxpr) and run it, as a top-level jit call does;
- jvp: one call of the inner jaxpr's jvp (primal and tangent outputs), as JAX's;
- partial evaluation (under `linearize`/`grad`): JAX's split: a known call of the known
  inputs returning the known outputs and the residuals, run at once, and a staged call of
  (residuals, unknown inputs); effectful calls are staged whole;
- transpose: the backward pass of the inner jaxpr, called under the function's name;
- batching: `vmap` of the inner jaxpr, staged into a new jaxpr and called with `jit_p`;
- lowering: a private function `@f` and a `func.call` (inlined when `inline=True`).

Placement travels in the params: ``in_shardings`` and ``out_shardings`` hold one sharding
(or None: unspecified) per input and output, so the jvp, transpose and batching rules hand
them on to the calls they make, and the impl and lowering lay data out with them. Under vmap
a sharding that splits data gets an unsplit batch dimension (`batched_sharding`).
"""

from __future__ import annotations

import collections
import threading

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func
from laminax_core import dtypes as core_dtypes
from laminax_core.internal import (
    ClosedJaxpr,
    discharge_jaxpr,
    discharge_rules,
    Jaxpr,
    UndefinedPrimal,
    Var,
    Zero,
    backward_pass,
    batching,
    dce_closed_jaxpr,
    define_higher_order_primitive,
    eval_jaxpr,
    get_aval,
    jvp,
    ordered_effects,
    partial_eval_jaxpr,
    set_current_trace,
    trace_to_jaxpr,
)

from laminax_dispatch._lowering._dynamic import dim_values
from laminax_dispatch._lowering._core import (
    ir_constant,
    jaxpr_subcomp,
    lower_private_function,
    lowering_for,
)
from laminax_dispatch._lowering._shardings import emit_sharding_constraint
from laminax_dispatch._mlir import aval_to_ir_type, token_type

__all__ = ["jit_p", "call_jaxpr", "memoize_on_jaxpr", "batched_sharding"]


class _Unspecified:
    """How JAX prints an unspecified entry of a jit equation's shardings."""

    def __repr__(self) -> str:
        return "UnspecifiedValue"


_UNSPECIFIED = _Unspecified()


def _print_params(params) -> list:
    # JAX's order: the name, then the params that differ from their defaults, alphabetically
    # (the context mesh, donation and shardings only when given)
    shown = {}
    if params.get("ctx_mesh") is not None:
        shown["ctx_mesh"] = params["ctx_mesh"]
    if any(params.get("donated_invars", ())):
        shown["donated_invars"] = params["donated_invars"]
    for key in ("in_shardings", "out_shardings"):
        shardings = params.get(key) or ()
        if any(s is not None for s in shardings):
            shown[key] = tuple(_UNSPECIFIED if s is None else s for s in shardings)
    if params.get("keep_unused"):
        shown["keep_unused"] = True
    shown["jaxpr"] = params["jaxpr"]
    return [("name", params["name"]), *sorted(shown.items())]


_LRU_SIZE = 1024
_lock = threading.Lock()
# (jaxpr, extra key) -> derived jaxpr or executable: the jaxpr objects key by identity
_derived: collections.OrderedDict = collections.OrderedDict()


def memoize_on_jaxpr(key, make):
    """`make()` cached under `key` (whose jaxprs compare by identity), bounded LRU."""
    with _lock:
        value = _derived.get(key)
        if value is not None:
            _derived.move_to_end(key)
            return value
    value = make()
    with _lock:
        _derived[key] = value
        if len(_derived) > _LRU_SIZE:
            _derived.popitem(last=False)
    return value


def call_jaxpr(
    closed: ClosedJaxpr,
    args,
    name: str,
    inline: bool = False,
    donated: tuple = (),
    in_shardings: tuple | None = None,
    out_shardings: tuple | None = None,
    ctx_mesh=None,
    keep_unused: bool = False,
) -> list:
    """Binds `jit_p` with `closed` on `args` (under whatever trace is current); `donated`
    flags the arguments the caller donates (recorded in the equation, as JAX does);
    `in_shardings` / `out_shardings` give one sharding or None per input / output;
    `ctx_mesh` is the mesh in context where the call was traced (JAX's jit equations carry it)."""
    return jit_p.bind(
        *args,
        jaxpr=closed,
        name=name,
        ctx_mesh=ctx_mesh,
        donated_invars=tuple(donated) or (False,) * len(args),
        keep_unused=keep_unused,
        inline=inline,
        in_shardings=tuple(in_shardings) if in_shardings else (None,) * len(args),
        out_shardings=(
            tuple(out_shardings) if out_shardings else (None,) * len(closed.out_avals)
        ),
    )


def _jit_abstract_eval(*avals, jaxpr, **params):
    return jaxpr.out_avals, jaxpr.effects


def _jit_reference(*args, jaxpr, **params):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


# ----- jvp ----------------------------------------------------------------------------------


def _eval_closed(closed: ClosedJaxpr):
    return lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs)


def _jvp_jaxpr(closed: ClosedJaxpr, nonzero: tuple) -> tuple[ClosedJaxpr, tuple]:
    """A jaxpr from (primals, nonzero tangents) to (primal outputs, nonzero output tangents),
    and which output tangents are nonzero (JAX's jvp of a jit call is one call of it)."""
    in_avals = closed.in_avals
    tangent_avals = [a.to_tangent_aval() for a, nz in zip(in_avals, nonzero, strict=True) if nz]
    found = {}

    def jvp_fun(*xs):
        primals, rest = list(xs[: len(in_avals)]), iter(xs[len(in_avals) :])
        tangents = [
            next(rest) if nz else Zero(a.to_tangent_aval())
            for a, nz in zip(in_avals, nonzero, strict=True)
        ]
        primals_out, tangents_out = jvp.jvp_flat(
            _eval_closed(closed), primals, tangents, instantiate=False
        )
        nz_out = tuple(
            not isinstance(t, Zero) and a.to_tangent_aval().dtype != core_dtypes.float0
            for t, a in zip(tangents_out, closed.out_avals, strict=True)
        )
        found["nonzero_out"] = nz_out
        return [*primals_out, *(t for t, nz in zip(tangents_out, nz_out, strict=True) if nz)]

    traced, _ = trace_to_jaxpr(jvp_fun, [*in_avals, *tangent_avals], "jvp of jit")
    return traced, found["nonzero_out"]


def _dce(closed: ClosedJaxpr) -> ClosedJaxpr:
    # the primal equations the tangents do not need (JAX's partial evaluation drops them too)
    return dce_closed_jaxpr(closed, [True] * len(closed.jaxpr.outvars))


def _jit_jvp(primals, tangents, *, jaxpr, name, in_shardings, out_shardings, **params):
    nonzero = tuple(not isinstance(t, Zero) for t in tangents)
    inline, ctx_mesh = params.get("inline", False), params.get("ctx_mesh")
    if not any(nonzero):
        primals_out = call_jaxpr(
            jaxpr, primals, name, inline, (), in_shardings, out_shardings, ctx_mesh
        )
        return primals_out, [Zero.from_primal_value(p) for p in primals_out]
    jvp_closed, nonzero_out = memoize_on_jaxpr(
        ("jvp", jaxpr, nonzero), lambda: _jvp_jaxpr(jaxpr, nonzero)
    )
    given = [t for t in tangents if not isinstance(t, Zero)]
    ins = (*in_shardings, *(s for s, nz in zip(in_shardings, nonzero, strict=True) if nz))
    outs = (*out_shardings, *(s for s, nz in zip(out_shardings, nonzero_out, strict=True) if nz))
    results = call_jaxpr(jvp_closed, [*primals, *given], name, inline, (), ins, outs, ctx_mesh)
    primals_out = results[: len(jaxpr.out_avals)]
    computed = iter(results[len(jaxpr.out_avals) :])
    tangents_out = [
        next(computed) if nz else Zero.from_primal_value(p)
        for p, nz in zip(primals_out, nonzero_out, strict=True)
    ]
    return primals_out, tangents_out


# ----- partial evaluation -------------------------------------------------------------------


def _split_jaxpr(closed: ClosedJaxpr, in_unknown: tuple):
    """The known and unknown calls partial evaluation makes of `closed` (JAX's split): the
    known one maps the known inputs to the known outputs and the residuals it computes; the
    unknown one maps (residuals, unknown inputs) to the unknown outputs. Residuals that are
    known inputs or constants are passed as themselves (`forwarded`: the input position, a
    1-tuple holding the constant, or None for a computed one), as JAX passes them."""
    known, unknown, out_unknown, res_avals = partial_eval_jaxpr(
        closed, list(in_unknown), [False] * len(closed.out_avals)
    )
    n_known = len(known.out_avals) - len(res_avals)
    kj = known.jaxpr
    position = {id(v): i for i, v in enumerate(kj.invars)}
    position.update({id(v): (c,) for v, c in zip(kj.constvars, known.consts, strict=True)})
    forwarded = tuple(position.get(id(v)) for v in kj.outvars[n_known:])
    kept = [v for v, f in zip(kj.outvars[n_known:], forwarded, strict=True) if f is None]
    known = ClosedJaxpr(
        Jaxpr(kj.constvars, kj.invars, [*kj.outvars[:n_known], *kept], kj.eqns, kj.effects),
        known.consts,
    )
    return _dce(known), unknown, tuple(out_unknown), forwarded, n_known


def _jit_partial_eval(trace, args, params):
    jaxpr = params["jaxpr"]
    in_unknown = tuple(trace.is_unknown(x) for x in args)
    known, unknown, out_unknown, forwarded, n_known = memoize_on_jaxpr(
        ("partial_eval", jaxpr, in_unknown), lambda: _split_jaxpr(jaxpr, in_unknown)
    )
    in_sh, out_sh = params["in_shardings"], params["out_shardings"]
    known_args = [x for x, u in zip(args, in_unknown, strict=True) if not u]
    known_in = tuple(s for s, u in zip(in_sh, in_unknown, strict=True) if not u)
    n_computed = sum(f is None for f in forwarded)
    known_out = (*(s for s, u in zip(out_sh, out_unknown, strict=True) if not u),
                 *(None,) * n_computed)
    name, ctx_mesh = params["name"], params.get("ctx_mesh")
    with set_current_trace(trace.parent):
        known_outs = call_jaxpr(known, known_args, name, params.get("inline", False), (),
                                known_in, known_out, ctx_mesh)
    computed = iter(known_outs[n_known:])
    # residuals are laid out as the compiler chooses (JAX leaves them unspecified, forwarded
    # inputs too)
    residuals = [next(computed) if f is None else f[0] if type(f) is tuple else known_args[f]
                 for f in forwarded]
    res_sh = [None] * len(residuals)
    if not any(out_unknown):
        return list(known_outs[:n_known])
    unknown_args = [x for x, u in zip(args, in_unknown, strict=True) if u]
    staged = trace.stage(jit_p, [*residuals, *unknown_args], dict(
        params,
        jaxpr=unknown,
        donated_invars=(False,) * (len(residuals) + len(unknown_args)),
        in_shardings=(*res_sh, *(s for s, u in zip(in_sh, in_unknown, strict=True) if u)),
        out_shardings=tuple(s for s, u in zip(out_sh, out_unknown, strict=True) if u),
    ))
    known_iter, staged_iter = iter(known_outs[:n_known]), iter(staged)
    return [next(staged_iter) if u else next(known_iter) for u in out_unknown]


# ----- transpose ----------------------------------------------------------------------------


def _transpose_jaxpr(closed: ClosedJaxpr, undefined: tuple, ct_given: tuple) -> ClosedJaxpr:
    """A jaxpr from (residuals, given cotangents) to the cotangents of the linear inputs."""
    in_avals, out_avals = closed.in_avals, closed.out_avals
    residual_avals = [a for a, u in zip(in_avals, undefined, strict=True) if not u]
    ct_avals = [a.to_tangent_aval() for a, g in zip(out_avals, ct_given, strict=True) if g]

    def transposed(*xs):
        residuals, cts = iter(xs[: len(residual_avals)]), iter(xs[len(residual_avals) :])
        args = [
            UndefinedPrimal(a) if u else next(residuals)
            for a, u in zip(in_avals, undefined, strict=True)
        ]
        cts_out = [
            next(cts) if g else Zero(a.to_tangent_aval())
            for a, g in zip(out_avals, ct_given, strict=True)
        ]
        cts_in = backward_pass(closed.jaxpr, closed.consts, args, cts_out)
        return [
            jvp.instantiate_zeros(ct)
            for ct, a, u in zip(cts_in, in_avals, undefined, strict=True)
            if _has_ct(a, u)
        ]

    traced, _ = trace_to_jaxpr(transposed, [*residual_avals, *ct_avals], "transpose of jit")
    return _dce(traced)


def _has_ct(aval, undefined: bool) -> bool:
    return undefined and aval.to_tangent_aval().dtype != core_dtypes.float0


def _jit_transpose(cts, *args, jaxpr, name, in_shardings, out_shardings, **params):
    undefined = tuple(isinstance(a, UndefinedPrimal) for a in args)
    ct_given = tuple(not isinstance(ct, Zero) for ct in cts)
    transposed = memoize_on_jaxpr(
        ("transpose", jaxpr, undefined, ct_given),
        lambda: _transpose_jaxpr(jaxpr, undefined, ct_given),
    )
    residuals = [a for a, u in zip(args, undefined, strict=True) if not u]
    given = [ct for ct, g in zip(cts, ct_given, strict=True) if g]
    ct_in = (
        *(s for s, u in zip(in_shardings, undefined, strict=True) if not u),
        *(s for s, g in zip(out_shardings, ct_given, strict=True) if g),
    )
    ct_out = tuple(
        s
        for s, a, u in zip(in_shardings, args, undefined, strict=True)
        if u and _has_ct(a.aval, True)
    )
    # the backward call keeps the function's name, as JAX's does
    outs = iter(
        call_jaxpr(
            transposed, [*residuals, *given], name, False, (), ct_in, ct_out,
            params.get("ctx_mesh"),
        )
    )
    cts_in = []
    for a, u in zip(args, undefined, strict=True):
        if not u:
            cts_in.append(None)
        else:
            cts_in.append(next(outs) if _has_ct(a.aval, True) else Zero(a.aval.to_tangent_aval()))
    return cts_in


# ----- batching -----------------------------------------------------------------------------


def _mapped_outputs(jaxpr: Jaxpr, dims) -> list[bool]:
    """Which outputs depend on a batched input: the others stay unbatched, as in JAX (jacfwd
    of a jitted function maps only the tangents; its primal output must stay unmapped)."""
    mapped = {v for v, d in zip(jaxpr.invars, dims, strict=True) if d is not None}
    for eqn in jaxpr.eqns:
        if any(isinstance(v, Var) and v in mapped for v in eqn.invars):
            mapped.update(eqn.outvars)
    return [isinstance(v, Var) and v in mapped for v in jaxpr.outvars]


def _batch_jaxpr(closed: ClosedJaxpr, in_avals, dims, axis_data):
    out_dims = [0 if m else None for m in _mapped_outputs(closed.jaxpr, dims)]

    def batched_fun(*xs):
        return batching.batch_flat(_eval_closed(closed), xs, dims, axis_data, lambda: out_dims)

    try:
        traced, _ = trace_to_jaxpr(batched_fun, in_avals, "vmap of jit")
    except ValueError:  # an output mapped without a mapped input (axis_index): all mapped
        out_dims = [0] * len(out_dims)
        traced, _ = trace_to_jaxpr(batched_fun, in_avals, "vmap of jit")
    return traced, out_dims


def batched_sharding(sharding, axis, ndim: int):
    """`sharding` of an `ndim`-dimensional value, for the value batched at `axis` (None: not
    batched): a replicated layout holds for any rank; a splitting one gets an unsplit
    dimension through the protocol's optional `_with_new_dim`, else is left to the compiler."""
    if sharding is None or axis is None or sharding.is_fully_replicated:
        return sharding
    with_new_dim = getattr(sharding, "_with_new_dim", None)
    return None if with_new_dim is None else with_new_dim(axis, ndim)


def _jit_batch(axis_data, args, dims, *, jaxpr, name, in_shardings, out_shardings, **params):
    in_avals = [get_aval(x) for x in args]
    key = ("vmap", jaxpr, tuple(in_avals), tuple(dims), axis_data.size, axis_data.name)
    batched, out_dims = memoize_on_jaxpr(
        key, lambda: _batch_jaxpr(jaxpr, in_avals, dims, axis_data))
    outs = call_jaxpr(
        batched,
        args,
        name,
        params.get("inline", False),
        (),
        tuple(
            batched_sharding(s, d, a.ndim)
            for s, d, a in zip(in_shardings, dims, jaxpr.in_avals, strict=True)
        ),
        tuple(batched_sharding(s, d, a.ndim)
              for s, d, a in zip(out_shardings, out_dims, jaxpr.out_avals, strict=True)),
        params.get("ctx_mesh"),
    )
    return outs, out_dims


# ----- lowering -----------------------------------------------------------------------------


def _constrain(ctx, values, avals, shardings):
    if not shardings:
        return list(values)
    return [
        v if s is None else emit_sharding_constraint(ctx, v, a, s)
        for v, a, s in zip(values, avals, shardings, strict=True)
    ]


jit_p = define_higher_order_primitive(
    "jit",
    abstract_eval=_jit_abstract_eval,
    reference=_jit_reference,
    jvp=_jit_jvp,
    transpose=_jit_transpose,
    batch=_jit_batch,
    partial_eval=_jit_partial_eval,
    print_params=_print_params,
)
jit_p.named_call_param = "jaxpr"


@lowering_for(jit_p)
def _jit_lower(ctx, *args, jaxpr, name, inline=False, in_shardings=(), out_shardings=(), **params):
    # a nested call's shardings become constraints on its operands and results
    args = _constrain(ctx, args, ctx.avals_in, in_shardings)
    outs = _jit_lower_call(ctx, args, jaxpr, name, inline)
    return _constrain(ctx, outs, ctx.avals_out, out_shardings)


def _jit_lower_call(ctx, args, jaxpr, name, inline):
    effects = [e for e in jaxpr.effects if ordered_effects.contains(e)]
    name_stack = f"{ctx.name_stack}/jit({name})"
    if inline:
        consts = [ir_constant(c) for c in jaxpr.consts]
        outs, tokens = jaxpr_subcomp(
            ctx.module_context, jaxpr.jaxpr, name_stack, ctx.tokens_in, consts, *args
        )
        ctx.tokens_out = tokens
        return outs
    mctx = ctx.module_context
    key = (id(jaxpr), tuple(effects))
    cached = mctx.function_cache.get(key)
    if cached is None or cached[1] is not jaxpr:
        symbol = mctx.unique_symbol(name)
        lower_private_function(mctx, symbol, jaxpr, name_stack, effects)
        cached = (symbol, jaxpr)
        mctx.function_cache[key] = cached
    result_types = [token_type()] * len(effects) + [aval_to_ir_type(a) for a in ctx.avals_out]
    tokens = [ctx.tokens_in[e] for e in effects]
    dims = dim_values()  # symbolic shapes: the dimension variables' values come first
    tokens = [dims[n] for n in sorted(dims)] + tokens
    call = func.CallOp(result_types, ir.FlatSymbolRefAttr.get(cached[0]), [*tokens, *args])
    results = list(call.results)
    ctx.tokens_out = dict(zip(effects, results[: len(effects)], strict=True))
    return results[len(effects) :]


# ----- references: a call given references takes their values and returns their new ones ----


def _jit_discharge(invals, ref_keys, *, jaxpr, name, out_shardings, **params):
    keys = [k for k in ref_keys if k is not None]
    if len(set(keys)) != len(keys):
        raise ValueError(
            "only one reference to a mutable array may be passed as an argument to a function, "
            f"but when tracing {name} for jit the same mutable array reference appeared at two "
            "argument positions.")
    discharged, final_keys = discharge_jaxpr(jaxpr, ref_keys)
    outs = jit_p.bind(*invals, jaxpr=discharged, name=name,
                      out_shardings=(*out_shardings, *(None,) * len(final_keys)), **params)
    n = len(outs) - len(final_keys)
    return outs[:n], dict(zip(final_keys, outs[n:], strict=True))


discharge_rules[jit_p] = _jit_discharge

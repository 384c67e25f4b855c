"""`shard_map_p`: the higher-order primitive a `shard_map` becomes, and its rules.

The equation holds the body as a closed jaxpr over *per-device* (local) values, the mesh, one
PartitionSpec per input and output, and the mesh axes the body is manual over. Its rules:

- abstract eval: the global output shapes (each local dimension times the sizes of the mesh
  axes its out_spec names);
- reference: the meaning of the program, without devices. Each manual mesh axis becomes one
  named `vmap` over the blocks of the inputs, so collectives over mesh axes do what their vmap
  batching rules say (a psum over 'x' sums over x's blocks), and the outputs are reassembled
  from the blocks by out_specs. This is the oracle the XLA lowering is tested against;
- jvp: one shard_map of the body's jvp (primals and tangents in and out, as JAX's);
- partial evaluation (under `grad`/`linearize`): the known part of the body runs now as a
  shard_map of its own that also returns the residuals (split over the manual axes), and the
  rest is staged as a shard_map of the residuals and the unknown inputs;
- transpose: a shard_map of the body's backward pass. A cotangent of an output replicated over
  some mesh axes is divided by their size before the backward pass (every device's copy
  carries a share), and the cotangent of an input replicated over some axes is psummed over
  them afterwards, so transposes of the body's collectives (psum is its own transpose) come
  out right without varying-axes types in the avals;
- batching: the body vmapped, the specs shifted by the new leading dimension.

Tracing and re-tracing a body happens inside `manual_axes(mesh, axes)`, which binds the
manual mesh axes for the collectives' checks (`axis_size`, unbound-name errors).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence

import numpy as np
from laminax_core import dtypes as core_dtypes
from laminax_core import lax
from laminax_core import vmap as core_vmap
from laminax_core.internal import (
    AxisData,
    ClosedJaxpr,
    Primitive,
    Trace,
    UndefinedPrimal,
    Zero,
    backward_pass,
    batch_jaxpr,
    batching,
    current_trace,
    dce_jaxpr,
    eval_jaxpr,
    jvp,
    jvp_jaxpr,
    partial_eval_jaxpr,
    partial_eval_rules,
    set_current_trace,
    trace_closed,
)

from laminax_core.internal import EMPTY_MAT, ManualAxisType, manual_axes_typing_rules
from laminax_core.internal import manual_axes_checking as checking

from laminax_pjit._explicit import typed_sharding
from laminax_pjit._mesh import AxisType, use_abstract_mesh
from laminax_pjit._named_sharding import NamedSharding
from laminax_pjit._partition_spec import PartitionSpec

__all__ = [
    "manual_axes",
    "shard_aval",
    "shard_map_p",
    "spec_names",
    "unshard_aval",
    "spec_entries",
    "mentioned",
    "with_leading_dim",
    "manual_abstract_mesh",
    "trace_body",
    "typed_axes",
    "AxisNames",
    "bind_shard_map",
    "body_context",
    "local_avals",
]

shard_map_p = Primitive("shard_map")
shard_map_p.multiple_results = True


# ----- specs and shapes -------------------------------------------------------------------


def spec_entries(spec) -> tuple:
    """The per-dimension entries of a PartitionSpec (None, a name, or a tuple of names)."""
    return tuple(spec.partitions) if hasattr(spec, "partitions") else tuple(spec)


def spec_names(spec) -> dict[int, tuple]:
    """dimension -> the mesh axes it is split over (major to minor), for split dimensions."""
    names = {}
    for d, entry in enumerate(spec_entries(spec)):
        if entry is None:
            continue
        entry = tuple(entry) if isinstance(entry, tuple | list) else (entry,)
        if entry:
            names[d] = entry
    return names


def mentioned(spec) -> set:
    """The mesh axes a spec splits some dimension over."""
    return {n for names in spec_names(spec).values() for n in names}


def _factor(mesh, names) -> int:
    return math.prod(mesh.shape[n] for n in names)


def shard_aval(mesh, spec, aval, vma=None):
    """The per-device aval of a global value laid out by `spec`; with `vma` (the ordered
    manual axes of a check_vma body) typed as varying over the axes `spec` splits over."""
    shape = list(aval.shape)
    for d, names in spec_names(spec).items():
        shape[d] //= _factor(mesh, names)
    mat = None
    if vma is not None:
        mat = ManualAxisType(varying=mentioned(spec) & set(vma), order=vma) \
            if mentioned(spec) & set(vma) else EMPTY_MAT
    return aval.update(shape=tuple(shape), manual_axis_type=mat)


def unshard_aval(mesh, spec, aval):
    """The global aval of per-device values assembled by `spec`."""
    shape = list(aval.shape)
    for d, names in spec_names(spec).items():
        shape[d] *= _factor(mesh, names)
    return aval.update(shape=tuple(shape), manual_axis_type=EMPTY_MAT)


def with_leading_dim(spec):
    """`spec` for the value with a new unsplit leading dimension (vmap's batch dimension)."""
    return type(spec)(None, *spec_entries(spec))


# ----- the manual axes while tracing a body -----------------------------------------------


class _ManualAxisFrame(Trace):
    """Binds one manual mesh axis (its name and size) for the code traced above it; it
    stages nothing itself and forwards anything bound at it to the trace below."""

    transformation = "shard_map"
    check_leaks = False

    def __init__(self, parent, name, size):
        super().__init__(parent)
        self.axis_data = AxisData(name, size)

    def process_primitive(self, primitive, args, params):
        with set_current_trace(self.parent):
            return primitive.bind(*args, **params)


@contextlib.contextmanager
def manual_axes(mesh, axes):
    """Binds the mesh axes `axes` (in mesh order) for collectives traced in the block."""
    frames = []
    trace = current_trace()
    for name in mesh.axis_names:
        if name in axes:
            trace = _ManualAxisFrame(trace, name, mesh.shape[name])
            frames.append(trace)
    try:
        with set_current_trace(trace):
            yield
    finally:
        for frame in frames:
            frame.is_live = False


def manual_abstract_mesh(mesh, axes):
    """`mesh` as the body sees it (JAX's context mesh inside shard_map): the manual axes'
    type is Manual."""
    return mesh.abstract_mesh.update_axis_types({n: AxisType.Manual for n in axes})


def typed_axes(mesh, axes, check_vma):
    """The manual axes a body's values are typed over (every Manual axis of its context
    mesh, in mesh order), or None when `check_vma` is off."""
    if not check_vma:
        return None
    manual = set(manual_abstract_mesh(mesh, axes).manual_axes)
    return tuple(n for n in mesh.axis_names if n in manual)


def trace_body(fun, local_avals, mesh, axes, name="shard_map", check_vma=False):
    """Traces flat `fun` on per-device avals with the manual axes bound (and, as in JAX, the
    mesh with those axes Manual as the context's abstract mesh, which nested shard_maps
    take); returns the closed jaxpr (outer tracers it closes over become leading inputs) and
    those hoisted values."""
    with body_context(mesh, axes, check_vma):
        return trace_closed(fun, local_avals, name)


def _eval_closed(closed: ClosedJaxpr):
    return lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs)


# ----- abstract eval and printing ---------------------------------------------------------


def _abstract_eval(*avals, jaxpr, mesh, in_specs, out_specs, **params):
    outs = [_typed_out(mesh, s, unshard_aval(mesh, s, a))
            for s, a in zip(out_specs, jaxpr.out_avals, strict=True)]
    return outs, jaxpr.effects


def _typing_rule(ins, params):
    # a shard_map nested in a typed body: its results vary over the outer axes its body's do
    return [a.manual_axis_type.varying - params["newly_manual_axes"]
            for a in params["jaxpr"].out_avals]


manual_axes_typing_rules[shard_map_p] = _typing_rule


def _typed_out(mesh, spec, aval):
    """A result's type: split as its out_spec says along the mesh's Explicit axes."""
    if not mesh._any_axis_explicit:
        return aval
    entries = spec_entries(spec)[: len(aval.shape)]
    return aval.update(sharding=typed_sharding(NamedSharding(mesh, PartitionSpec(*entries)),
                                               len(aval.shape)))


shard_map_p.def_effectful_abstract_eval(_abstract_eval)


def _print_params(params) -> list:
    # JAX's order (alphabetical)
    order = ("check_vma", "in_specs", "jaxpr", "mesh", "newly_manual_axes", "out_specs")
    return [(k, params[k]) for k in order]


shard_map_p.print_params = _print_params


class AxisNames(frozenset):
    """A frozenset of mesh axis names that prints in mesh order (deterministic jaxprs; a
    plain set's order follows the per-process string hash)."""

    def __new__(cls, names, order=()):
        self = super().__new__(cls, names)
        self._order = tuple(n for n in order if n in self) + tuple(
            sorted((n for n in self if n not in order), key=str))
        return self

    def __repr__(self) -> str:
        return f"frozenset({{{', '.join(map(repr, self._order))}}})" if self else "frozenset()"


def bind_shard_map(args, *, jaxpr, mesh, in_specs, out_specs, check_vma, axes) -> list:
    if not out_specs and not jaxpr.effects:  # computes nothing anyone can see
        return []
    return shard_map_p.bind(
        *args, jaxpr=jaxpr, mesh=mesh, in_specs=tuple(in_specs), out_specs=tuple(out_specs),
        check_vma=check_vma, newly_manual_axes=AxisNames(axes, tuple(mesh.axis_names)),
    )


# ----- reference: one named vmap per manual mesh axis -------------------------------------


def _ordered_axes(mesh, axes) -> list:
    return [n for n in mesh.axis_names if n in axes]


def _to_blocks(x, mesh, spec, order):
    """The global `x` as (one leading dim per mesh axis the spec splits over, in `order`,
    then the local shape)."""
    names = spec_names(spec)
    shape = np.shape(x)
    split_shape, positions = [], {}
    for d, size in enumerate(shape):
        for n in names.get(d, ()):
            positions[n] = len(split_shape)
            split_shape.append(mesh.shape[n])
        split_shape.append(size // _factor(mesh, names.get(d, ())))
    x = lax.reshape(x, tuple(split_shape))
    leading = [positions[n] for n in order if n in positions]
    rest = [p for p in range(len(split_shape)) if p not in leading]
    return lax.transpose(x, (*leading, *rest))


def _from_blocks(y, mesh, spec, order):
    """Inverse of `_to_blocks` for an output with one leading dim per manual axis (`order`):
    axes the spec does not split over are replicated, so their block 0 is taken."""
    keep = mentioned(spec)
    for pos in reversed(range(len(order))):
        if order[pos] not in keep:
            y = lax.index_in_dim(y, 0, pos, keepdims=False)
    kept = [n for n in order if n in keep]
    lead = {n: i for i, n in enumerate(kept)}
    local = np.shape(y)[len(kept):]
    names = spec_names(spec)
    perm, shape = [], []
    for d, size in enumerate(local):
        perm += [lead[n] for n in names.get(d, ())]
        perm.append(len(kept) + d)
        shape.append(size * _factor(mesh, names.get(d, ())))
    return lax.reshape(lax.transpose(y, tuple(perm)), tuple(shape))


def _reference(*args, jaxpr, mesh, in_specs, out_specs, check_vma, newly_manual_axes):
    order = _ordered_axes(mesh, newly_manual_axes)
    blocks = [_to_blocks(x, mesh, s, order) for x, s in zip(args, in_specs, strict=True)]
    splits = [mentioned(s) for s in in_specs]
    body = _eval_closed(jaxpr)

    def level(i):
        if i == len(order):
            return body
        name = order[i]
        in_axes = [0 if name in split else None for split in splits]
        return core_vmap(level(i + 1), in_axes=in_axes, out_axes=0, axis_name=name,
                         axis_size=mesh.shape[name])

    outs = level(0)(*blocks) if order else body(*blocks)
    return [_from_blocks(y, mesh, s, order) for y, s in zip(outs, out_specs, strict=True)]


shard_map_p.def_reference(_reference)


# ----- jvp --------------------------------------------------------------------------------

_derived: dict = {}


def _memo(key, make):
    found = _derived.get(key)
    if found is None or found[0] is not key[1]:
        if len(_derived) > 512:
            _derived.clear()
        found = _derived[key] = (key[1], make())
    return found[1]


def _differentiable(aval) -> bool:
    return aval.to_tangent_aval().dtype != core_dtypes.float0


@contextlib.contextmanager
def body_context(mesh, axes, check_vma=False):
    """What tracing a body needs: the manual axes bound, the context mesh with them Manual,
    and (with `check_vma`) equations typed with the axes their values vary over."""
    with manual_axes(mesh, axes), use_abstract_mesh(manual_abstract_mesh(mesh, axes)), \
            checking(typed_axes(mesh, axes, check_vma)):
        yield


def _jvp(primals, tangents, *, jaxpr, mesh, in_specs, out_specs, check_vma, newly_manual_axes):
    # one shard_map of the body's jvp: primals and nonzero tangents in, primals and nonzero
    # tangents out (JAX's form; under grad, the partial-eval rule splits it)
    nonzero = tuple(not isinstance(t, Zero) for t in tangents)
    common = dict(mesh=mesh, check_vma=check_vma, axes=newly_manual_axes)
    if not any(nonzero):
        outs = bind_shard_map(primals, jaxpr=jaxpr, in_specs=in_specs, out_specs=out_specs,
                              **common)
        return outs, [Zero.from_primal_value(p) for p in outs]

    def make():
        with body_context(mesh, newly_manual_axes, check_vma):
            return jvp_jaxpr(jaxpr, list(nonzero), [False] * len(jaxpr.out_avals))

    jvp_closed, out_nonzero = _memo(("jvp", jaxpr, nonzero), make)
    given = [t for t in tangents if not isinstance(t, Zero)]
    given_specs = [s for s, nz in zip(in_specs, nonzero, strict=True) if nz]
    tangent_specs = [s for s, nz in zip(out_specs, out_nonzero, strict=True) if nz]
    outs = bind_shard_map([*primals, *given], jaxpr=jvp_closed,
                          in_specs=[*in_specs, *given_specs],
                          out_specs=[*out_specs, *tangent_specs], **common)
    n = len(out_specs)
    computed = iter(outs[n:])
    tangents_out = [next(computed) if nz else Zero.from_primal_value(p)
                    for p, nz in zip(outs[:n], out_nonzero, strict=True)]
    return outs[:n], tangents_out


shard_map_p.def_jvp(_jvp)


# ----- partial evaluation -----------------------------------------------------------------


def _residual_spec(mesh, axes, spec_class, aval=None):
    # an untyped residual is per-device: its (leading) dimension is split over every manual
    # axis; a typed one (check_vma) over the axes it varies over, as JAX's
    if aval is not None:
        axes = aval.manual_axis_type.varying & set(axes)
    names = tuple(n for n in mesh.axis_names if n in axes)
    if not names:
        return spec_class()
    return spec_class(names if len(names) > 1 else names[0])


def _partial_eval(trace, args, params):
    """Known inputs run the known part of the body now (a shard_map of their own); the rest is
    staged as a shard_map of the residuals and the unknown inputs, as JAX splits it. A
    residual that is a known input is passed as itself; rank-0 residuals travel as shape
    (1,) so they can be split over the manual axes."""
    jaxpr, mesh = params["jaxpr"], params["mesh"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    axes = params["newly_manual_axes"]
    in_uk = [trace.is_unknown(x) for x in args]
    known_args = [x for x, u in zip(args, in_uk, strict=True) if not u]
    known_specs = [s for s, u in zip(in_specs, in_uk, strict=True) if not u]

    check_vma = params["check_vma"]

    def split():
        with body_context(mesh, axes, check_vma):
            known, unknown, out_uk, res_avals = partial_eval_jaxpr(
                jaxpr, in_uk, [False] * len(out_specs))
        n_known = len(known.out_avals) - len(res_avals)
        position = {id(v): i for i, v in enumerate(known.jaxpr.invars)}
        forwarded = [position.get(id(v)) for v in known.jaxpr.outvars[n_known:]]
        scalar = [f is None and a.ndim == 0 for f, a in zip(forwarded, res_avals, strict=True)]

        def known_fun(*xs):
            outs = eval_jaxpr(known.jaxpr, known.consts, *xs)
            res = [lax.expand_dims(r, (0,)) if sc else r
                   for r, f, sc in zip(outs[n_known:], forwarded, scalar, strict=True)
                   if f is None]
            return [*res, *outs[:n_known]]  # residuals first, as JAX's known shard_map

        def unknown_fun(*xs):
            res = [lax.squeeze(r, (0,)) if sc else r
                   for r, sc in zip(xs[:len(res_avals)], scalar, strict=True)]
            return eval_jaxpr(unknown.jaxpr, unknown.consts, *res, *xs[len(res_avals):])

        unknown_avals = [a.update(shape=(1,)) if sc else a
                         for a, sc in zip(res_avals, scalar, strict=True)]
        unknown_avals += [a for a, u in zip(jaxpr.in_avals, in_uk, strict=True) if u]
        with body_context(mesh, axes, check_vma):
            known_closed, _ = trace_closed(known_fun, known.in_avals, "partial eval")
            unknown_closed, _ = trace_closed(unknown_fun, unknown_avals, "partial eval")
        computed_avals = [a for a, f in zip(res_avals, forwarded, strict=True) if f is None]
        return known_closed, unknown_closed, out_uk, forwarded, n_known, computed_avals

    key = ("partial_eval", jaxpr, tuple(in_uk), check_vma)
    known_closed, unknown_closed, out_uk, forwarded, n_known, computed_avals = _memo(key, split)
    spec_class = type(in_specs[0]) if in_specs else type(out_specs[0])
    computed_specs = [_residual_spec(mesh, axes, spec_class, a if check_vma else None)
                      for a in computed_avals]
    n_res_out = sum(f is None for f in forwarded)
    known_out_specs = [s for s, u in zip(out_specs, out_uk, strict=True) if not u]
    with set_current_trace(trace.parent):
        known_outs = bind_shard_map(
            known_args, jaxpr=known_closed, mesh=mesh, in_specs=known_specs,
            out_specs=[*computed_specs, *known_out_specs],
            check_vma=params["check_vma"], axes=axes)
    computed = iter(zip(known_outs[:n_res_out], computed_specs, strict=True))
    known_outs = known_outs[n_res_out:]
    residuals, res_specs = [], []
    for f in forwarded:
        if f is None:
            value, spec = next(computed)
            residuals.append(value)
            res_specs.append(spec)
        else:
            residuals.append(known_args[f])
            res_specs.append(known_specs[f])
    if not any(out_uk):  # nothing left to stage (the unknown inputs are unused)
        return list(known_outs)
    unknown_args = [x for x, u in zip(args, in_uk, strict=True) if u]
    unknown_specs = [s for s, u in zip(in_specs, in_uk, strict=True) if u]
    staged = trace.stage(shard_map_p, [*residuals, *unknown_args], dict(
        params, jaxpr=unknown_closed, in_specs=(*res_specs, *unknown_specs),
        out_specs=tuple(s for s, u in zip(out_specs, out_uk, strict=True) if u)))
    known_iter, staged_iter = iter(known_outs[:n_known]), iter(staged)
    return [next(staged_iter) if u else next(known_iter) for u in out_uk]


partial_eval_rules[shard_map_p] = _partial_eval


# ----- transpose --------------------------------------------------------------------------


def _replicated_over(mesh, axes, spec) -> tuple:
    keep = mentioned(spec)
    return tuple(n for n in _ordered_axes(mesh, axes) if n not in keep)


def _transpose_jaxpr(jaxpr, undefined, ct_given, mesh, axes, in_specs, out_specs, check_vma):
    """The body's backward pass as a jaxpr from (given cotangents, residuals) to the
    cotangents of the linear inputs (JAX's order), and which residuals it reads. Untyped
    bodies (check_vma=False) treat every value as per-device: the cotangent of a replicated
    output is divided among its copies, that of a replicated input summed over them. Typed
    bodies need neither: the transposes of `pvary` / `psum_invariant` do it, as in JAX."""
    in_avals, out_avals = jaxpr.in_avals, jaxpr.out_avals
    residual_avals = [a for a, u in zip(in_avals, undefined, strict=True) if not u]
    ct_avals = [a.to_tangent_aval() for a, g in zip(out_avals, ct_given, strict=True) if g]

    def fun(*xs):
        given, residuals = iter(xs[: len(ct_avals)]), iter(xs[len(ct_avals):])
        args = [UndefinedPrimal(a) if u else next(residuals)
                for a, u in zip(in_avals, undefined, strict=True)]
        cts = []
        for a, g, spec in zip(out_avals, ct_given, out_specs, strict=True):
            if not g:
                cts.append(Zero(a.to_tangent_aval()))
                continue
            ct = next(given)
            copies = 1 if check_vma else _factor(mesh, _replicated_over(mesh, axes, spec))
            if copies > 1 and _differentiable(a):
                ct = lax.div(ct, np.asarray(copies, a.to_tangent_aval().dtype))
            cts.append(ct)
        cts_in = backward_pass(jaxpr.jaxpr, jaxpr.consts, args, cts)
        outs = []
        for ct, a, u, spec in zip(cts_in, in_avals, undefined, in_specs, strict=True):
            if not (u and _differentiable(a)):
                continue
            ct = jvp.instantiate_zeros(ct)
            over = () if check_vma else _replicated_over(mesh, axes, spec)
            if over:
                ct = lax.psum(ct, over)
            outs.append(ct)
        return outs

    closed, hoisted = trace_body(fun, [*ct_avals, *residual_avals], mesh, axes, "transpose",
                                 check_vma)
    assert not hoisted
    # residuals the backward pass does not read are not passed (JAX prunes them too)
    keep = [True] * len(ct_avals) + [False] * len(residual_avals)
    pruned, used = dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars), keep)
    live = {id(v) for v in pruned.constvars}
    consts = [c for v, c in zip(closed.jaxpr.constvars, closed.consts, strict=True)
              if id(v) in live]
    return ClosedJaxpr(pruned, consts), tuple(used[len(ct_avals):])


def _transpose(cts, *args, jaxpr, mesh, in_specs, out_specs, check_vma, newly_manual_axes):
    undefined = tuple(isinstance(a, UndefinedPrimal) for a in args)
    ct_given = tuple(not isinstance(ct, Zero) for ct in cts)
    transposed, used = _memo(
        ("transpose", jaxpr, undefined, ct_given, check_vma), lambda: _transpose_jaxpr(
            jaxpr, undefined, ct_given, mesh, newly_manual_axes, in_specs, out_specs, check_vma))
    residuals = [a for a, u in zip(args, undefined, strict=True) if not u]
    res_specs = [s for s, u in zip(in_specs, undefined, strict=True) if not u]
    residuals = [r for r, k in zip(residuals, used, strict=True) if k]
    res_specs = [s for s, k in zip(res_specs, used, strict=True) if k]
    given = [ct for ct, g in zip(cts, ct_given, strict=True) if g]
    given_specs = [s for s, g in zip(out_specs, ct_given, strict=True) if g]
    ct_specs = [s for s, a, u in zip(in_specs, jaxpr.in_avals, undefined, strict=True)
                if u and _differentiable(a)]
    outs = iter(bind_shard_map(
        [*given, *residuals], jaxpr=transposed, mesh=mesh, in_specs=[*given_specs, *res_specs],
        out_specs=ct_specs, check_vma=check_vma, axes=newly_manual_axes))
    result = []
    for a, u in zip(args, undefined, strict=True):
        if not u:
            result.append(None)
        elif _differentiable(a.aval):
            result.append(next(outs))
        else:
            result.append(Zero(a.aval.to_tangent_aval()))
    return result


shard_map_p.def_transpose(_transpose)


# ----- batching ---------------------------------------------------------------------------


def _batch(axis_data, args, dims, *, jaxpr, mesh, in_specs, out_specs, check_vma,
           newly_manual_axes):
    args = [x if d is None else batching.move_bdim(x, d, 0)
            for x, d in zip(args, dims, strict=True)]
    in_dims = tuple(None if d is None else 0 for d in dims)
    key = ("vmap", jaxpr, in_dims, axis_data.size, axis_data.name)

    def make():
        with manual_axes(mesh, newly_manual_axes), \
                checking(typed_axes(mesh, newly_manual_axes, check_vma)):
            return batch_jaxpr(jaxpr, axis_data, in_dims, lambda n: [0] * n)

    batched = _memo(key, make)
    new_in = [s if d is None else with_leading_dim(s)
              for s, d in zip(in_specs, in_dims, strict=True)]
    new_out = [with_leading_dim(s) for s in out_specs]
    outs = bind_shard_map(args, jaxpr=batched, mesh=mesh, in_specs=new_in, out_specs=new_out,
                          check_vma=check_vma, axes=newly_manual_axes)
    return outs, [0] * len(outs)


shard_map_p.def_batch(_batch)


def local_avals(mesh, specs: Sequence, avals: Sequence, vma=None) -> list:
    return [shard_aval(mesh, s, a, vma) for s, a in zip(specs, avals, strict=True)]

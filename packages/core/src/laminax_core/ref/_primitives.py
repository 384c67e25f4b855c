"""Mutable array references: the primitives (`new_ref`, `empty_ref`, `get`, `swap`,
`addupdate`, `freeze`, `free_ref`), their indexers, and how they print, evaluate eagerly and
transform (jvp, transpose, vmap).

A reference is a value of abstract type `AbstractRef` (printed `Ref{f32[3]}`). Outside a
program it is a `Ref` object whose array every write replaces; inside one it is a jaxpr
variable that only the ref primitives read and write. Every ref primitive has the
`InternalMutableArrayEffect`, so dead-code elimination keeps it and control flow may carry it.
Programs are made functional again by `_discharge` before XLA sees them.
"""

from __future__ import annotations

import numpy as np

from laminax_core import _effects, _trace, dtypes, lax
from laminax_core import numpy as jnp
from laminax_core._avals import AbstractRef, Ref, ShapedArray, get_aval
from laminax_core._interpreters import batching, partial_eval
from laminax_core._interpreters import jvp as jvp_interpreter
from laminax_core._interpreters import transpose as transpose_interpreter
from laminax_core._primitive import Primitive
from laminax_core._trace import Tracer
from laminax_core.numpy import _indexing

__all__ = [
    "InternalMutableArrayEffect", "addupdate_p", "empty_ref_p", "free_ref_p", "freeze_p",
    "get_p", "index_value", "make_indexer", "new_ref_p", "ref_addupdate", "ref_get", "ref_set",
    "ref_swap", "state_primitives", "swap_p", "update_value",
]


class InternalMutableArrayEffect(_effects.Effect):
    """The effect of creating, reading or writing a mutable array reference."""


ref_effect = InternalMutableArrayEffect()
_effects.control_flow_allowed_effects.add_type(InternalMutableArrayEffect)
_EFFECTS = frozenset({ref_effect})

# ----- indexers -----------------------------------------------------------------------------
# An indexer is None (the whole reference: `r[...]`) or one entry per dimension: ("i", k) a
# static integer, ("s", start, size, stride) a static slice, ("d",) the next dynamic operand (a
# traced or concrete integer array). They are hashable so that equations' params compare.


def _is_static_int(x) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


def make_indexer(shape, idx) -> tuple[tuple | None, list]:
    """`(indexer, dynamic operands)` for `ref[idx]` on a reference of `shape`."""
    if idx is None or idx is Ellipsis or (isinstance(idx, tuple) and not idx):
        return None, []
    idx = idx if isinstance(idx, tuple) else (idx,)
    if sum(i is Ellipsis for i in idx) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in [i for i in idx if not isinstance(i, Tracer | np.ndarray)]:
        at = next(n for n, i in enumerate(idx) if i is Ellipsis)
        fill = len(shape) - (len(idx) - 1)
        idx = idx[:at] + (slice(None),) * max(fill, 0) + idx[at + 1:]
    if len(idx) > len(shape):
        raise ValueError(
            f"`indices` must not be longer than `shape`: indices={idx}, shape={shape}")
    idx = idx + (slice(None),) * (len(shape) - len(idx))
    entries, dynamic = [], []
    for i, dim in zip(idx, shape, strict=True):
        if isinstance(i, slice):
            start, stop, step = i.indices(dim)
            entries.append(("s", start, len(range(start, stop, step)), step))
        elif _is_static_int(i):
            if not -dim <= i < dim:
                raise ValueError(f"Out of bound indexer: idx={i}, dim={dim}.")
            entries.append(("i", int(i)))
        elif i is None:
            raise TypeError("Indexing a reference with None (np.newaxis) is not supported; "
                            "index the value read from it instead.")
        else:
            aval = get_aval(i)
            if not dtypes.issubdtype(aval.dtype, np.integer):
                raise TypeError(f"Reference indices must be integers, got {aval.str_short()}.")
            entries.append(("d",))
            dynamic.append(i)
    return tuple(entries), dynamic


def _python_index(indexer, dynamic) -> tuple:
    dyn = iter(dynamic)
    out = []
    for entry in indexer:
        if entry[0] == "i":
            out.append(entry[1])
        elif entry[0] == "s":
            _, start, size, stride = entry
            out.append(slice(start, start + (size - 1) * stride + 1, stride) if size
                       else slice(0, 0))
        else:
            out.append(next(dyn))
    return tuple(out)


def _indexed_shape(shape, indexer, dyn_avals) -> tuple[int, ...]:
    if indexer is None:
        return tuple(shape)
    if all(a.shape == () for a in dyn_avals):  # basic indexing: no materialization needed
        return tuple(e[2] for e in indexer if e[0] == "s")
    dyn = iter(dyn_avals)
    probe = [np.zeros(next(dyn).shape, np.intp) if e[0] == "d" else
             (0 if e[0] == "i" else slice(0, e[2])) for e in indexer]
    return np.broadcast_to(np.zeros((), np.int8), shape)[tuple(probe)].shape


def index_value(value, indexer, dynamic):
    """`value[indexer]` as arrays read it (the value a `get` returns)."""
    value = jnp.asarray(value)
    return value if indexer is None else _indexing.getitem(value, _python_index(indexer, dynamic))


def update_value(value, indexer, dynamic, x, *, add: bool = False):
    """`value` with `x` written (or added, `add=True`) at `indexer`."""
    value = jnp.asarray(value)
    if indexer is None:
        return lax.add(value, x) if add else jnp.asarray(x)
    at = _indexing.IndexUpdateRef(value, _python_index(indexer, dynamic))
    return at.add(x) if add else at.set(x)


def _indexer_text(indexer, operand_names, shape) -> str:
    if indexer is None:
        return "[...]"
    names = iter(operand_names)
    parts = []
    for entry, dim in zip(indexer, shape, strict=True):
        if entry[0] == "i":
            parts.append(str(entry[1]))
        elif entry[0] == "d":
            parts.append(next(names))
        else:
            _, start, size, _ = entry
            stop = start + size
            parts.append(f"{start or ''}:{stop if stop != dim else ''}")
    return "[" + ",".join(parts) + "]"


# ----- the primitives -----------------------------------------------------------------------


def _ref_aval(aval, name: str) -> AbstractRef:
    if not isinstance(aval, AbstractRef):
        raise TypeError(f"{name} expects a mutable array reference (Ref), got {aval}.")
    return aval


def _transforms(indexer, dyn_avals, ref):
    return () if indexer is None else (_indexer_text(indexer, ["?"] * len(dyn_avals), ref.shape),)


def _check_value(name: str, ref: AbstractRef, indexer, dyn_avals, value: ShapedArray):
    expected = _indexed_shape(ref.shape, indexer, dyn_avals)
    if value.dtype != ref.dtype:
        raise ValueError(f"Invalid dtype for `{name}`. Ref dtype: {ref.dtype}. "
                         f"Value dtype: {value.dtype}. ")
    if tuple(value.shape) != tuple(expected):
        raise ValueError(
            f"Invalid shape for `{name}`. Ref shape: {ref.shape}. Expected shape: {expected}. "
            f"Value shape: {value.shape}. Transforms: {_transforms(indexer, dyn_avals, ref)}. ")
    return expected


def _new_ref_abstract_eval(aval, *, kind, memory_space):
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"new_ref expects an array, got {aval}.")
    return AbstractRef(aval), _EFFECTS


def _new_ref_impl(x, *, kind, memory_space):
    if memory_space is not None:
        raise NotImplementedError("array ref with memory space only works inside of a `jit`.")
    return Ref(AbstractRef(get_aval(x)), jnp.asarray(x))


new_ref_p = Primitive("new_ref")
new_ref_p.def_effectful_abstract_eval(_new_ref_abstract_eval)
new_ref_p.def_impl(_new_ref_impl)
new_ref_p.ref_allocating = True  # JVP makes a tangent reference even for a zero tangent

empty_ref_p = Primitive("empty_ref")
empty_ref_p.def_effectful_abstract_eval(lambda *, ty, memory_space: (AbstractRef(ty), _EFFECTS))
empty_ref_p.def_impl(
    lambda *, ty, memory_space: Ref(AbstractRef(ty), jnp.zeros(ty.shape, ty.dtype)))
empty_ref_p.ref_allocating = True

freeze_p = Primitive("freeze")
freeze_p.def_effectful_abstract_eval(
    lambda ref: (_ref_aval(ref, "freeze").inner_aval, _EFFECTS))
freeze_p.def_impl(lambda ref: ref._buf)

free_ref_p = Primitive("free_ref")
free_ref_p.multiple_results = True
free_ref_p.def_effectful_abstract_eval(lambda ref: ([], _EFFECTS))
free_ref_p.def_impl(lambda ref: [])


def _get_abstract_eval(ref, *dyn, indexer):
    ref = _ref_aval(ref, "get")
    shape = _indexed_shape(ref.shape, indexer, dyn)
    return ref.inner_aval.update(shape=shape), _EFFECTS


def _swap_abstract_eval(ref, value, *dyn, indexer):
    ref = _ref_aval(ref, "swap")
    shape = _check_value("swap", ref, indexer, dyn, value)
    return ref.inner_aval.update(shape=shape), _EFFECTS


def _addupdate_abstract_eval(ref, value, *dyn, indexer):
    _check_value("addupdate", _ref_aval(ref, "addupdate"), indexer, dyn, value)
    return [], _EFFECTS


def _swap_impl(ref, value, *dyn, indexer):
    _swap_abstract_eval(ref.aval, get_aval(value), *map(get_aval, dyn), indexer=indexer)
    old = index_value(ref._buf, indexer, dyn)
    ref._buf = update_value(ref._buf, indexer, dyn, value)
    return old


def _addupdate_impl(ref, value, *dyn, indexer):
    _addupdate_abstract_eval(ref.aval, get_aval(value), *map(get_aval, dyn), indexer=indexer)
    ref._buf = update_value(ref._buf, indexer, dyn, value, add=True)
    return []


get_p = Primitive("get")
get_p.def_effectful_abstract_eval(_get_abstract_eval)
get_p.def_impl(lambda ref, *dyn, indexer: index_value(ref._buf, indexer, dyn))
swap_p = Primitive("swap")
swap_p.def_effectful_abstract_eval(_swap_abstract_eval)
swap_p.def_impl(_swap_impl)
addupdate_p = Primitive("addupdate")
addupdate_p.multiple_results = True
addupdate_p.def_effectful_abstract_eval(_addupdate_abstract_eval)
addupdate_p.def_impl(_addupdate_impl)

state_primitives = frozenset(
    {new_ref_p, empty_ref_p, freeze_p, free_ref_p, get_p, swap_p, addupdate_p})


# JAX's notation: `c:f32[] <- b[0]`, `d:f32[], b[0] <- b[0], e` (`b[0] <- e` when the old value
# is unused), `b[0] += e`.
def _pp_place(eqn, name, ref, dyn) -> str:
    return f"{name(ref)}{_indexer_text(eqn.params['indexer'], map(name, dyn), ref.aval.shape)}"


def _pp_get(eqn, name, binder):
    ref, *dyn = eqn.invars
    out = binder(eqn.outvars[0])  # binders are named before operands, as JAX names them
    return f"{out} <- {_pp_place(eqn, name, ref, dyn)}"


def _pp_swap(eqn, name, binder):
    ref, value, *dyn = eqn.invars
    old = eqn.outvars[0]
    out = None if name(old) == "_" else binder(old)
    where = _pp_place(eqn, name, ref, dyn)
    if out is None:
        return f"{where} <- {name(value)}"
    return f"{out}, {where} <- {where}, {name(value)}"


def _pp_addupdate(eqn, name, binder):
    ref, value, *dyn = eqn.invars
    return f"{_pp_place(eqn, name, ref, dyn)} += {name(value)}"


get_p.pp_eqn, swap_p.pp_eqn, addupdate_p.pp_eqn = _pp_get, _pp_swap, _pp_addupdate


# ----- user-facing operations ---------------------------------------------------------------


def _as_ref_value(name: str, ref, value):
    """`value` in the reference's dtype when it is weakly typed (a Python scalar) and converts
    without promotion, as JAX's writes accept `r[0] = 1.0` into a bfloat16 reference."""
    if isinstance(value, Ref):
        raise TypeError(f"{name}: the value written must be an array, got a reference.")
    aval = get_aval(value)
    # a weakly typed value is stored strongly typed (JAX converts even within one dtype)
    if aval.weak_type and dtypes.result_type(value, ref.dtype) == ref.dtype:
        if isinstance(value, Tracer):
            return lax.convert_element_type(value, ref.dtype)
        return np.asarray(value, ref.dtype)
    return value


def ref_get(ref, idx=None):
    """`ref[idx]`: the value held at `idx` (the whole array for `None` or `...`)."""
    indexer, dyn = make_indexer(get_aval(ref).shape, idx)
    return get_p.bind(ref, *dyn, indexer=indexer)


def ref_swap(ref, idx, value, _function_name: str = "ref_swap"):
    """Writes `value` at `idx` and returns the value held there before."""
    aval = _ref_aval(get_aval(ref), _function_name)
    indexer, dyn = make_indexer(aval.shape, idx)
    return swap_p.bind(ref, _as_ref_value("swap", aval, value), *dyn, indexer=indexer)


def ref_set(ref, idx, value) -> None:
    """`ref[idx] = value`."""
    ref_swap(ref, idx, value, "ref_set")


def ref_addupdate(ref, idx, x) -> None:
    """`ref[idx] += x` as one operation (what the transpose of a read accumulates with)."""
    aval = _ref_aval(get_aval(ref), "addupdate")
    indexer, dyn = make_indexer(aval.shape, idx)
    addupdate_p.bind(ref, _as_ref_value("addupdate", aval, x), *dyn, indexer=indexer)


# ----- jvp: a reference's tangent is a reference to tangents --------------------------------
Zero = jvp_interpreter.Zero


def _differentiable(aval) -> bool:
    return dtypes.issubdtype(aval.dtype, np.inexact)


def _staged(t):
    """`t` (a tangent, maybe a symbolic zero) as a staged value under linearize: a tangent
    reference must belong to the linear program even when its initial value is known, or reads
    would miss its staged writes. Zeros are made in the linear program, as JAX's are."""
    trace = _trace.current_trace()
    if not (isinstance(trace, partial_eval.JaxprTrace) and trace.evaluate_known):
        return jvp_interpreter.instantiate_zeros(t)
    if isinstance(t, Zero):
        aval = t.aval.strip_weak_type()
        scalar = partial_eval.JaxprTracer(trace, trace.atom(np.zeros((), aval.dtype)))
        return scalar if aval.shape == () else lax.broadcast_in_dim(scalar, aval.shape, ())
    return t if trace.is_unknown(t) else partial_eval.JaxprTracer(trace, trace.atom(t))


def _new_ref_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    ref = new_ref_p.bind(x, **params)
    if not _differentiable(get_aval(x)):
        return ref, Zero(AbstractRef(get_aval(x).to_tangent_aval()))
    return ref, new_ref_p.bind(_staged(t), **params)


def _empty_ref_jvp(primals, tangents, **params):
    ref = empty_ref_p.bind(**params)
    ty = params["ty"]
    if not _differentiable(ty):
        return ref, Zero(AbstractRef(ty.to_tangent_aval()))
    zeros = _staged(Zero(ty.to_tangent_aval()))
    return ref, new_ref_p.bind(zeros, kind=None, memory_space=params["memory_space"])


def _get_jvp(primals, tangents, *, indexer):
    ref, *dyn = primals
    out = get_p.bind(ref, *dyn, indexer=indexer)
    if isinstance(tangents[0], Zero):
        return out, Zero.from_primal_value(out)
    return out, get_p.bind(tangents[0], *dyn, indexer=indexer)


def _write_jvp(primitive):
    def rule(primals, tangents, *, indexer):
        ref, value, *dyn = primals
        out = primitive.bind(ref, value, *dyn, indexer=indexer)
        ref_dot, value_dot = tangents[:2]
        if isinstance(ref_dot, Zero):
            if not isinstance(value_dot, Zero) and _differentiable(get_aval(ref)):
                raise ValueError(
                    f"{primitive.name}: writing a differentiated value into a reference created "
                    "outside the differentiated function; create the reference inside it (or "
                    "pass it in) so that it has a tangent.")
            return out, ([] if primitive.multiple_results else Zero.from_primal_value(out))
        value_dot = jvp_interpreter.instantiate_zeros(value_dot)
        return out, primitive.bind(ref_dot, value_dot, *dyn, indexer=indexer)
    return rule


def _freeze_jvp(primals, tangents):
    out = freeze_p.bind(primals[0])
    if isinstance(tangents[0], Zero):
        return out, Zero.from_primal_value(out)
    return out, freeze_p.bind(tangents[0])


def _free_ref_jvp(primals, tangents):
    if not isinstance(tangents[0], Zero):
        free_ref_p.bind(tangents[0])
    return free_ref_p.bind(primals[0]), []


new_ref_p.def_jvp(_new_ref_jvp)
empty_ref_p.def_jvp(_empty_ref_jvp)
get_p.def_jvp(_get_jvp)
swap_p.def_jvp(_write_jvp(swap_p))
addupdate_p.def_jvp(_write_jvp(addupdate_p))
freeze_p.def_jvp(_freeze_jvp)
free_ref_p.def_jvp(_free_ref_jvp)


# ----- transpose: a linear reference's cotangent is a reference too -------------------------
# `backward_pass` hands these rules the cotangent reference of a linear reference operand
# (made of zeros the first time it is needed) and always runs them: a write has no output
# cotangent to skip on. A read transposes to an accumulation, a write to a swap of the
# cotangent, creation to freezing the cotangent reference.




def _made(ct_ref):
    """The cotangent reference, made of zeros if nothing was accumulated into it yet."""
    if ct_ref.ref is None:
        zeros = jvp_interpreter.zeros_like_aval(ct_ref.aval.inner_aval.strip_weak_type())
        ct_ref.ref = new_ref_p.bind(zeros, kind=None, memory_space=None)
    return ct_ref.ref


def _accumulate(ct_ref, ct, dyn, indexer):
    if isinstance(ct, Zero):
        return
    if ct_ref.ref is None and indexer is None:  # the first cotangent of all of it
        ct_ref.ref = new_ref_p.bind(ct, kind=None, memory_space=None)
    else:
        addupdate_p.bind(_made(ct_ref), ct, *dyn, indexer=indexer)


def _get_transpose(cts, ct_ref, *dyn, indexer):
    _accumulate(ct_ref, cts[0], dyn, indexer)
    return [None] * (1 + len(dyn))


def _swap_transpose(cts, ct_ref, value, *dyn, indexer):
    ct = jvp_interpreter.instantiate_zeros(cts[0])
    ct_value = swap_p.bind(_made(ct_ref), ct, *dyn, indexer=indexer)
    return [None, ct_value] + [None] * len(dyn)


def _addupdate_transpose(cts, ct_ref, value, *dyn, indexer):
    return [None, get_p.bind(_made(ct_ref), *dyn, indexer=indexer)] + [None] * len(dyn)


def _freeze_transpose(cts, ct_ref):
    _accumulate(ct_ref, cts[0], (), None)
    return [None]


def _new_ref_transpose(cts, x, *, kind, memory_space):
    return [freeze_p.bind(_made(cts[0]))]


state_transpose_rules = {
    get_p: _get_transpose, swap_p: _swap_transpose, addupdate_p: _addupdate_transpose,
    freeze_p: _freeze_transpose, new_ref_p: _new_ref_transpose,
    free_ref_p: lambda cts, ct_ref: (free_ref_p.bind(_made(ct_ref)), [None])[1],
    empty_ref_p: lambda cts, **params: [],
}
transpose_interpreter.ref_transpose_rules.update(state_transpose_rules)


# ----- vmap: a batched reference keeps its batch dimension first ----------------------------


def _new_ref_batch(axis_data, args, dims, **params):
    (x,), (d,) = args, dims
    return new_ref_p.bind(batching.bdim_at_front(x, d, axis_data.size), **params), 0


def _empty_ref_batch(axis_data, args, dims, *, ty, memory_space):
    ty = ty.update(shape=(axis_data.size, *ty.shape))
    return empty_ref_p.bind(ty=ty, memory_space=memory_space), 0


def _batched_indexer(indexer, size):
    return None if indexer is None else (("s", 0, size, 1), *indexer)


def _unbatched_ref_error(what: str, ref_aval):
    return Exception(
        f"performing {what} operation with vmapped value on an unbatched array reference of "
        f"type {ref_aval}. Move the array reference to be an argument to the vmapped function?")


def _check_dyn_unbatched(name, dims):
    if any(d is not None for d in dims):
        raise ValueError(f"vmap of `{name}` with a batched index is not supported: index the "
                         "value read from the reference (or use a batched reference) instead.")


def _get_batch(axis_data, args, dims, *, indexer):
    ref, *dyn = args
    _check_dyn_unbatched("get", dims[1:])
    return get_p.bind(ref, *dyn, indexer=_batched_indexer(indexer, axis_data.size)), 0


def _write_batch(primitive, what):
    def rule(axis_data, args, dims, *, indexer):
        ref, value, *dyn = args
        _check_dyn_unbatched(primitive.name, dims[2:])
        if dims[0] is None:
            raise _unbatched_ref_error(what, get_aval(ref))
        value = batching.bdim_at_front(value, dims[1], axis_data.size)
        out = primitive.bind(ref, value, *dyn,
                             indexer=_batched_indexer(indexer, axis_data.size))
        return out, ([] if primitive.multiple_results else 0)
    return rule


new_ref_p.def_batch(_new_ref_batch)
empty_ref_p.def_batch(_empty_ref_batch)
get_p.def_batch(_get_batch)
swap_p.def_batch(_write_batch(swap_p, "a set/swap"))
addupdate_p.def_batch(_write_batch(addupdate_p, "an addupdate"))
freeze_p.def_batch(lambda axis_data, args, dims: (freeze_p.bind(args[0]), dims[0]))
free_ref_p.def_batch(lambda axis_data, args, dims: (free_ref_p.bind(args[0]), []))

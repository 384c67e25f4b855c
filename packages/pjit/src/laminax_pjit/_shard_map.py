"""`shard_map`: a function written for one device's block of the data, run on every device of a
mesh, with collectives (`psum`, `all_gather`, `ppermute` ...) over the mesh axes.

The user function is traced once on per-device avals into `shard_map_p`'s body
(`_shard_map_rules.py`). Before that, the specs are checked as JAX checks them: every leaf a
`PartitionSpec` (`TypeError`), naming only the manual axes, no longer than the value's rank,
and splitting dimensions divisible by their mesh axes (`ValueError`, naming the argument).
With `check_vma=True` (the default) the body is traced with varying-manual-axes types (a value
varies over a mesh axis when it derives from an input split over it or from `axis_index`, and
stops varying after a psum/pmax/pmin over it) and checked to be replicated where out_specs say
it is.
"""

from __future__ import annotations

import functools
import inspect
import math

from laminax_core import config
from laminax_core.internal import get_aval, trace_context
from laminax_pytree import keystr, tree_flatten_with_path, tree_unflatten
from laminax_pytree.internal import broadcast_prefix

from laminax_pjit._shard_map_rules import (
    bind_shard_map,
    local_avals,
    mentioned,
    spec_entries,
    spec_names,
    trace_body,
    typed_axes,
)
from laminax_pjit._shard_map_vma import infer_varying

__all__ = ["shard_map", "smap"]


class _InferSpecs:
    def __repr__(self) -> str:
        return "Infer"


Infer = _InferSpecs()


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(),
              check_vma: bool = True):
    """Maps `f` over the blocks of its arguments on the devices of `mesh`.

    Args:
      f: the per-device function (or omitted: `shard_map` then returns a decorator).
      out_specs: a pytree prefix of `f`'s outputs, of `PartitionSpec`s: how the per-device
        outputs assemble into global arrays. A mesh axis an out_spec does not name is a
        promise that the output is the same on every device along that axis.
      in_specs: a pytree prefix of the arguments, of `PartitionSpec`s: how each argument is
        split into the per-device blocks `f` receives.
      mesh: a `Mesh` (or `AbstractMesh`); None takes the mesh of `set_mesh`.
      axis_names: the mesh axes `f` is manual over (all of them when empty).
      check_vma: check that outputs are replicated where out_specs say they are.

    Returns:
      The mapped function: global arrays in, global arrays out.

    Example:
      >>> mesh = Mesh(np.array(devices()[:4]), ("i",))
      >>> f = shard_map(lambda x: lax.psum(x, "i"), mesh=mesh, in_specs=P("i"),
      ...               out_specs=P())
      >>> f(np.arange(8.0, dtype=np.float32))
      Array([12., 16.], dtype=float32)
    """
    kwargs = dict(mesh=mesh, in_specs=in_specs, out_specs=out_specs, axis_names=axis_names,
                  check_vma=check_vma)
    if f is None:
        return lambda g: _shard_map(g, **kwargs)
    return _shard_map(f, **kwargs)


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """`shard_map` over the one mesh axis `axis_name` of the context mesh (`set_mesh`), with
    `vmap`-style axes: argument axis `in_axes` (an int, None, or a tuple per positional
    argument) is split over the mesh axis, outputs are assembled along `out_axes`. The body
    sees blocks (the mapped axis is not removed). Omitted in_axes are inferred from the
    arguments' shardings on an Explicit axis.

    Example:
      >>> with set_mesh(make_mesh((4,), ("i",))):
      ...     f = smap(lambda b: b * 2, in_axes=0, out_axes=0, axis_name="i")
    """
    kwargs = dict(in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if f is None:
        return lambda g: _smap(g, **kwargs)
    return _smap(f, **kwargs)


def _axes_to_spec(axis_name, axis):
    spec_class = _partition_spec_class()
    return spec_class() if axis is None else spec_class(*[None] * axis, axis_name)


def _smap(f, *, in_axes, out_axes, axis_name):
    from laminax_pytree import tree_leaves, tree_map

    if isinstance(axis_name, list | tuple):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, int | tuple):
        raise TypeError(
            "smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of entries "
            "corresponding to the positional arguments passed to the function, but got "
            f"{in_axes}.")
    if in_axes is not Infer and not all(isinstance(a, int) for a in tree_leaves(in_axes)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) "
                        f"container with those types as leaves, but got {in_axes}.")
    if not all(isinstance(a, int) for a in tree_leaves(out_axes)):
        raise TypeError("smap out_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {out_axes}.")
    as_spec = functools.partial(_axes_to_spec, axis_name)
    in_specs = Infer if in_axes is Infer else tree_map(as_spec, in_axes,
                                                        is_leaf=lambda x: x is None)
    out_specs = tree_map(as_spec, out_axes, is_leaf=lambda x: x is None)
    return _shard_map(f, mesh=None, in_specs=in_specs, out_specs=out_specs,
                      axis_names={axis_name}, check_vma=True)


def _partition_spec_class():
    from laminax_pjit._partition_spec import PartitionSpec

    return PartitionSpec


def _context_mesh():
    # inside a shard_map the body's mesh (manual axes Manual); else the concrete mesh of
    # `set_mesh` runs the program, and an abstract one only traces it
    from laminax_pjit import _mesh

    abstract = _mesh.get_abstract_mesh()
    if not abstract.empty and abstract._any_axis_manual:
        return abstract
    concrete = _mesh.get_concrete_mesh()
    return abstract if concrete.empty else concrete


def _check_mesh(mesh, axis_names):
    from laminax_pjit._mesh import AbstractMesh, Mesh, get_abstract_mesh

    if mesh is None:
        mesh = _context_mesh()
        if mesh.empty:
            raise ValueError(
                "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a "
                "mesh context, or pass mesh= to shard_map."
            )
    elif isinstance(mesh, Mesh | AbstractMesh):
        context = get_abstract_mesh()
        if not context.empty and mesh.abstract_mesh != context:
            raise ValueError(
                f"The context mesh {context} should match the mesh passed to shard_map {mesh}"
            )
    if not isinstance(mesh, Mesh | AbstractMesh):
        raise TypeError(
            "shard_map requires a `jax.sharding.Mesh` or a `jax.sharding.AbstractMesh` "
            f"instance for its mesh argument, but got {mesh} of type {type(mesh)}."
        )
    if mesh.empty:
        raise ValueError(f"shard_map requires a non-empty mesh. Got {mesh}")
    if not isinstance(axis_names, set | frozenset):
        raise TypeError(
            "`axis_names` argument of shard_map should be of type `frozenset` or `set`. Got "
            f"type: {type(axis_names)}"
        )
    axis_names = frozenset(axis_names) or frozenset(mesh.axis_names)
    if not axis_names <= frozenset(mesh.axis_names):
        raise ValueError(
            f"jax.shard_map requires axis_names={set(axis_names)} to be a subset of "
            f"mesh.axis_names={mesh.axis_names}"
        )
    # axes an enclosing shard_map already made manual stay its own
    return mesh, axis_names - frozenset(mesh.manual_axes)


def _check_specs(prefix: str, specs, manual) -> None:
    spec_class = _partition_spec_class()
    leaves = tree_flatten_with_path(specs)[0]  # None (a static argument) is no leaf
    not_specs = [(k, x) for k, x in leaves if not isinstance(x, spec_class)]
    if not_specs:
        lines = [f"  {prefix}_specs{keystr(k)} is {x!r} of type {type(x).__name__}, "
                 for k, x in not_specs]
        raise TypeError(
            f"shard_map {prefix}_specs argument must be a pytree of "
            "`jax.sharding.PartitionSpec` instances, but:\n\n" + "\n\n".join(lines)
            + f"\n\nCheck the {prefix}_specs values passed to shard_map."
        )
    unknown = [f"  {prefix}_specs{keystr(k)} refers to {n!r}" for k, p in leaves
               for names in spec_names(p).values() for n in names if n not in manual]
    if unknown:
        raise ValueError(
            f"shard_map {prefix}_specs argument must refer to an axis marked as manual "
            f"({set(manual)}), but:\n\n" + "\n\n".join(unknown)
            + f"\n\nCheck the {prefix}_specs values passed to shard_map."
        )


def _all_explicit(mesh, manual) -> bool:
    from laminax_pjit._mesh import AxisType

    types = dict(zip(mesh.axis_names, mesh.axis_types, strict=True))
    return all(types[n] == AxisType.Explicit for n in manual)


def _value_spec(x, mesh, ndim: int):
    """The spec an argument's type has on an Explicit mesh (JAX: `typeof(x).sharding.spec`):
    a NamedSharding's on this mesh, replicated for host values; for a traced value its typed
    sharding (unsplit when its type has none, as JAX's untyped values are), or None when it is
    typed on another mesh."""
    from laminax_core.internal import Tracer

    spec_class = _partition_spec_class()
    if isinstance(x, Tracer):
        typed = get_aval(x).sharding
        if typed is None:
            return spec_class(*[None] * ndim)
        if tuple(typed.mesh.axis_names) != tuple(mesh.axis_names):
            return None
        return typed.spec
    sharding = getattr(x, "sharding", None)
    spec = getattr(sharding, "spec", None)
    if spec is None or getattr(sharding, "mesh", None) is None or \
            tuple(sharding.mesh.axis_names) != tuple(mesh.axis_names):
        spec = spec_class()
    entries = list(spec_entries(spec))
    return spec_class(*entries, *[None] * (ndim - len(entries)))


def _inferred_spec(x, mesh, manual):
    spec = _value_spec(x, mesh, get_aval(x).ndim)
    if spec is None:
        raise TypeError(
            "shard_map could not infer in_specs for a traced argument typed on another mesh; "
            "pass in_specs= explicitly, or reshard the argument onto the shard_map's mesh first."
        )
    # axes the body is not manual over stay out of its specs
    keep = [tuple(n for n in ((e,) if not isinstance(e, tuple) else e) if n in manual) or None
            if e is not None else None for e in spec_entries(spec)]
    return _partition_spec_class()(*[k[0] if k and len(k) == 1 else k for k in keep])


def _check_explicit_specs(mesh, specs, leaves) -> None:
    """On an all-Explicit mesh JAX requires each argument's sharding to be its in_spec."""
    spec_class = _partition_spec_class()
    for spec, x in zip(specs, leaves, strict=True):
        if spec is None:
            continue
        ndim = get_aval(x).ndim
        have = _value_spec(x, mesh, ndim)
        entries = list(spec_entries(spec))
        want = spec_class(*entries, *[None] * (ndim - len(entries)))
        if have is not None and len(entries) <= ndim and have != want:
            raise ValueError(
                f"in_specs passed to shard_map: {want} does not match the specs of the input: "
                f"{have} for arg: {get_aval(x).str_short()}. `in_specs` is an optional argument "
                "so you can omit specifying it and shard_map will infer the in_specs from the "
                "arguments. If you want to reshard your inputs, you can use `jax.reshard` on "
                "the arguments and then pass those args to shard_map."
            )


def _fun_name(f) -> str:
    return getattr(f, "__name__", str(f))


def _arg_where(f, path) -> str:
    """`, where args[0] is bound to f's parameter 'x',` when the signature says so."""
    try:
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.kind not in (p.KEYWORD_ONLY, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        return ""
    index = getattr(path[0], "idx", None) if path else None
    if index is None or index >= len(params) or params[index].kind == params[index].VAR_POSITIONAL:
        return ""
    return f", where args{keystr(path[:1])} is bound to {_fun_name(f)}'s parameter " \
           f"'{params[index].name}',"


def _long(aval) -> str:
    # JAX's messages name types with full dtype names (`float32[8]{V:x}`), weak or not
    return str(aval.strip_weak_type())


def _rank_error(f, prefix, specs_flat, avals, paths) -> ValueError:
    base = "the passed args" if prefix == "in" else f"{_fun_name(f)}(*args)"
    lines = []
    for spec, aval, path in zip(specs_flat, avals, paths, strict=True):
        if len(spec_entries(spec)) > aval.ndim:
            where = _arg_where(f, path) if prefix == "in" else ""
            lines.append(
                f"* {prefix}_specs is {spec} which has length {len(spec_entries(spec))}, but "
                f"{base}{keystr(path)}{where} has shape {_long(aval)}, which has rank "
                f"{aval.ndim} (and {aval.ndim} < {len(spec_entries(spec))})"
            )
    if len(lines) == 1:
        lines = [lines[0][2:]]
    kind = "input" if prefix == "in" else "output"
    msg = (
        f"shard_map applied to the function '{_fun_name(f)}' was given an {prefix}_specs entry "
        f"which is too long to be compatible with the corresponding {kind} value from the "
        "function:\n\n" + "\n\n".join(lines)
        + f"\n\nEntries in {prefix}_specs must be of length no greater than the number of axes "
        f"in the corresponding {kind} value.\n\nEither revise the spec to be shorter, or modify "
        f"'{_fun_name(f)}' so that its {kind}s have sufficient rank."
    )
    if any(a.ndim == 0 for a in avals):
        msg += (f"\n\nFor scalar values (rank 0), consider using an {prefix}_specs entry of "
                "`P()`, where `P = jax.sharding.PartitionSpec`.")
    return ValueError(msg)


def _divisibility_error(f, mesh, specs_flat, avals, paths) -> ValueError:
    lines = []
    for spec, aval, path in zip(specs_flat, avals, paths, strict=True):
        for d, names in spec_names(spec).items():
            size = math.prod(mesh.shape[n] for n in names)
            if aval.shape[d] % size:
                axis = f"axes {names}" if len(names) > 1 else f"axis '{names[0]}'"
                total = "total " if len(names) > 1 else ""
                lines.append(
                    f"* the passed args{keystr(path)} of shape {_long(aval)}"
                    f"{_arg_where(f, path)} corresponds to in_specs of value {spec}, which maps "
                    f"array axis {d} (of size {aval.shape[d]}) to mesh {axis} (of {total}size "
                    f"{size}), but {size} does not evenly divide {aval.shape[d]}"
                )
    if len(lines) == 1:
        lines = [lines[0][2:]]
    return ValueError(
        f"shard_map applied to the function '{_fun_name(f)}' was given argument arrays with "
        "axis sizes that are not evenly divisible by the corresponding mesh axis sizes:\n\n"
        f"The mesh given has shape {tuple(mesh.shape.values())} with corresponding axis names "
        f"{mesh.axis_names}.\n\n" + "\n\n".join(lines)
        + "\n\nArray arguments' axis sizes must be evenly divisible by the mesh axis or axes "
        "indicated by the corresponding elements of the argument's in_specs entry. Consider "
        "checking that in_specs are correct, and if so consider changing the mesh axis sizes "
        f"or else padding the input and adapting '{_fun_name(f)}' appropriately."
    )


def _vma_error(f, mesh, specs_flat, varying, paths) -> ValueError:
    lines = []
    for spec, vma, path in zip(specs_flat, varying, paths, strict=True):
        unmentioned = [n for n in mesh.axis_names if n not in mentioned(spec)]
        if len(unmentioned) > 1:
            need = ",".join(n for n in mesh.axis_names if n in mentioned(spec))
            got = ",".join(n for n in mesh.axis_names if n in vma)
            diff = ",".join(n for n in unmentioned if n in vma)
            lines.append(
                f"* out_specs{keystr(path)} is {spec} which implies that the corresponding output "
                f"value is only varying across mesh axes {{{need}}} and not {{{diff}}}, but it "
                f"was inferred to be possibly varying over {{{got}}}"
            )
        else:
            lines.append(
                f"* out_specs{keystr(path)} is {spec} which implies that the corresponding output "
                f"value is replicated across mesh axis '{unmentioned[0]}', but could not infer "
                "replication over any axes"
            )
    if len(lines) == 1:
        lines = [lines[0][2:]]
    return ValueError(
        f"shard_map applied to the function '{_fun_name(f)}' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {tuple(mesh.shape.values())} with corresponding axis names "
        f"{mesh.axis_names}.\n\n" + "\n\n".join(lines)
        + "\n\nCheck if these output values are meant to be replicated over those mesh axes. If "
        "not, consider revising the corresponding out_specs entries. If so, consider disabling "
        "the check by passing the check_vma=False argument to `jax.shard_map`."
    )


def _shard_map(f, *, mesh, in_specs, out_specs, axis_names, check_vma):
    if not callable(f):
        raise TypeError(
            "shard_map requires a callable for its first argument, but got "
            f"{f} of type {type(f)}."
        )

    @functools.wraps(f)
    def wrapped(*args):
        the_mesh, manual = _check_mesh(mesh, axis_names)
        explicit = _all_explicit(the_mesh, manual)
        if in_specs is Infer and not explicit:
            types = ", ".join(sorted({str(t) for t in the_mesh.axis_types}))
            raise TypeError(
                "shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` "
                f"instances, but it was `None` when axis_names={set(manual)} are of type "
                f"{types}; pass in_specs= (only Explicit mesh axes let them be inferred)."
            )
        if in_specs is not None and in_specs is not Infer:
            _check_specs("in", in_specs, manual)
        _check_specs("out", out_specs, manual)
        with_paths, in_tree = tree_flatten_with_path(args)
        if in_specs is Infer:
            all_specs = [_inferred_spec(x, the_mesh, manual) for _, x in with_paths]
        else:
            all_specs = broadcast_prefix(in_specs, args, is_leaf=lambda x: x is None)
            if explicit and manual == frozenset(the_mesh.axis_names):
                _check_explicit_specs(the_mesh, all_specs, [x for _, x in with_paths])
        # a None spec makes its argument static: the body closes over it on every device
        dynamic = [s is not None for s in all_specs]
        all_leaves = [x for _, x in with_paths]
        paths = [k for (k, _), d in zip(with_paths, dynamic, strict=True) if d]
        args_flat = [x for x, d in zip(all_leaves, dynamic, strict=True) if d]
        specs_flat = [s for s in all_specs if s is not None]
        avals = [get_aval(x) for x in args_flat]
        if any(len(spec_entries(s)) > a.ndim for s, a in zip(specs_flat, avals, strict=True)):
            raise _rank_error(f, "in", specs_flat, avals, paths)
        if any(a.shape[d] % math.prod(the_mesh.shape[n] for n in names)
               for s, a in zip(specs_flat, avals, strict=True)
               for d, names in spec_names(s).items()):
            raise _divisibility_error(f, the_mesh, specs_flat, avals, paths)
        # top-level calls reuse the traced body (and so the compiled program) per signature
        key = None
        if all(dynamic) and trace_context.trace is None:
            key = (the_mesh, manual, in_tree, tuple(avals), tuple(specs_flat), config.trace_context())
            hit = traces.get(key)
            if hit is not None:
                closed, all_in_specs, out_specs_flat, out_tree = hit
                outs = bind_shard_map(args_flat, jaxpr=closed, mesh=the_mesh,
                                      in_specs=all_in_specs, out_specs=out_specs_flat,
                                      check_vma=check_vma, axes=manual)
                return tree_unflatten(out_tree, outs)
        found = {}

        def flat_body(*leaves):
            given = iter(leaves)
            leaves = [next(given) if d else x for x, d in zip(all_leaves, dynamic, strict=True)]
            out = f(*tree_unflatten(in_tree, leaves))
            out_with_paths, out_tree = tree_flatten_with_path(out)
            outs = [x for _, x in out_with_paths]
            found.update(tree=out_tree, paths=[k for k, _ in out_with_paths],
                         specs=broadcast_prefix(out_specs, out, is_leaf=lambda x: x is None))
            if any(spec is None for spec in found["specs"]):
                # JAX's type (a pytree structure error): None is no spec for an output
                raise ValueError(
                    f"shard_map out_specs {out_specs!r}: None is not a PartitionSpec for an "
                    "output; use P() for an output replicated over the mesh.")
            out_avals = [get_aval(x) for x in outs]
            if any(len(spec_entries(s)) > a.ndim
                   for s, a in zip(found["specs"], out_avals, strict=True)):
                raise _OutRankError(out_avals)
            if typed is not None:
                found["types"] = [a.manual_axis_type.varying for a in out_avals]
                # as JAX: an output its out_spec splits over axes it does not vary over is
                # cast to vary over them (its cotangent is per-device there)
                outs = [_vary(x, (mentioned(s) & set(typed)) - v, typed)
                        for x, s, v in zip(outs, found["specs"], found["types"], strict=True)]
            return outs

        typed = typed_axes(the_mesh, manual, check_vma)
        try:
            closed, hoisted = trace_body(
                flat_body, local_avals(the_mesh, specs_flat, avals, typed), the_mesh, manual,
                check_vma=check_vma)
        except _OutRankError as err:
            msg = _rank_error(f, "out", found["specs"], err.args[0], found["paths"])
            if any(a.ndim == 0 for a in err.args[0]):
                msg = ValueError(
                    msg.args[0] + " In particular, for rank 0 outputs which are not constant "
                    "over the mesh, add at least one (singleton) axis to them so that they can "
                    "be concatenated using out_specs.")
            raise msg from None
        out_specs_flat = found["specs"]
        spec_class = _partition_spec_class()
        all_in_specs = [spec_class()] * len(hoisted) + list(specs_flat)
        if check_vma:
            # the types say it; the inference over the jaxpr backs them for equations whose
            # types come from elsewhere
            inferred = infer_varying(
                closed.jaxpr, [frozenset(mentioned(s) & manual) for s in all_in_specs])
            varying = [(t & manual) | i for t, i in zip(found["types"], inferred, strict=True)]
            bad = [not (v <= mentioned(s)) for v, s in zip(varying, out_specs_flat, strict=True)]
            if any(bad):
                raise _vma_error(
                    f, the_mesh,
                    *zip(*[(s, v, p) for s, v, p, b in zip(
                        out_specs_flat, varying, found["paths"], bad, strict=True) if b],
                         strict=True))
        if key is not None and not hoisted:
            if len(traces) > 64:
                traces.clear()
            traces[key] = (closed, all_in_specs, out_specs_flat, found["tree"])
        outs = bind_shard_map(
            [*hoisted, *args_flat], jaxpr=closed, mesh=the_mesh, in_specs=all_in_specs,
            out_specs=out_specs_flat, check_vma=check_vma, axes=manual)
        return tree_unflatten(found["tree"], outs)

    traces: dict = {}
    return wrapped


class _OutRankError(Exception):
    pass


def _vary(x, missing, order):
    if not missing:
        return x
    from laminax_core.lax import pvary_p

    return pvary_p.bind(x, axes=tuple(n for n in order if n in missing))


"""Explicit sharding: shardings along `AxisType.Explicit` mesh axes are part of array types.

An Array laid out by a `NamedSharding` whose spec names Explicit axes has, as its abstract value,
a `ShapedArray` whose `sharding` is that spec on the mesh's `AbstractMesh` (only the Explicit
axes kept): jaxprs print it as JAX's ``f32[8@x,4]`` and `jax.typeof(x).sharding` returns it.
Core's sharding rules (`laminax_core._sharding_rules`) carry it through elementwise ops,
`dot_general`, reductions and transposes; `reshard` changes it.

The type lives in core as an opaque value (core cannot import this layer): `NamedSharding`
answers core's small protocol (`aval_partitions`, `aval_mesh`, `with_aval_partitions`), and
this module registers with core how a concrete Array's type gets its sharding
(`sharding_typers`). Arrays on meshes without Explicit axes, and every value outside such
meshes, keep `sharding=None`, so their jaxprs print as before.
"""

from __future__ import annotations

import functools
from typing import Any

from jaxlib import _jax
from laminax_core.internal import (
    ShapedArray,
    Zero,
    define_primitive,
    get_aval,
    sharding_typers,
    trace_context,
)
from laminax_dispatch import device_put
from laminax_dispatch.internal import (
    emit_sharding_constraint,
    register_lowering,
    register_typed_sharding,
)
from laminax_pytree import tree_flatten, tree_unflatten
from laminax_pytree.internal import broadcast_prefix

from laminax_pjit._mesh import (
    AxisType,
    Mesh,
    get_abstract_mesh,
    get_concrete_mesh,
    use_abstract_mesh,
)
from laminax_pjit._named_sharding import NamedSharding
from laminax_pjit._partition_spec import UNCONSTRAINED, PartitionSpec, axes_of

__all__ = ["auto_axes", "explicit_axes", "reshard", "reshard_p", "typed_sharding"]


def _explicit_entry(entry, types: dict):
    """One spec entry with only its Explicit axes (None when it has none)."""
    if entry is None or entry is UNCONSTRAINED:
        return None
    kept = tuple(a for a in axes_of(entry) if types[a] is AxisType.Explicit)
    if not kept:
        return None
    return kept if isinstance(entry, tuple) else kept[0]


@functools.lru_cache(maxsize=4096)
def typed_sharding(sharding, ndim: int) -> NamedSharding | None:
    """The sharding an array laid out by `sharding` has in its type: the spec (padded to `ndim`)
    on the abstract mesh, keeping the Explicit axes only; None when no dimension is split along
    an Explicit axis (also for shardings that are not `NamedSharding`s)."""
    if not isinstance(sharding, NamedSharding):
        return None
    mesh = sharding.mesh
    if not mesh._any_axis_explicit:
        return None
    types = mesh._name_to_type
    entries = list(sharding.spec.partitions)[:ndim]
    entries = [_explicit_entry(e, types) for e in entries] + [None] * (ndim - len(entries))
    if all(e is None for e in entries):
        return None
    return NamedSharding(mesh.abstract_mesh, PartitionSpec(*entries))


@functools.lru_cache(maxsize=4096)
def _typed_aval(aval: ShapedArray, sharding) -> ShapedArray:
    typed = typed_sharding(sharding, len(aval.shape))
    return aval if typed == aval.sharding else aval.update(sharding=typed)


def _check_out_axes(sharding: NamedSharding) -> None:
    """An `out_sharding=` names Explicit axes only (JAX's ValueError otherwise): a result's
    type cannot record an Auto or Manual split."""
    types = sharding.mesh._name_to_type
    for axis in (a for e in sharding.spec.partitions for a in axes_of(e)):
        if types.get(axis, AxisType.Explicit) is not AxisType.Explicit:
            raise ValueError(
                f"PartitionSpec passed as out_sharding cannot contain axis names that are of "
                f"type Auto or Manual. Got PartitionSpec: {sharding.spec} with axis name: "
                f"{axis} of type: {types[axis]}; make the axis Explicit (make_mesh(..., "
                "axis_types=...)) or place the result with device_put/with_sharding_constraint."
            )


def _named_as_aval_sharding(sharding: NamedSharding, ndim: int) -> NamedSharding | None:
    _check_out_axes(sharding)
    return typed_sharding(sharding, ndim)


# core's protocol: the type an `out_sharding=` argument gives a result
NamedSharding.as_aval_sharding = _named_as_aval_sharding


def _spec_as_aval_sharding(spec: PartitionSpec, ndim: int) -> NamedSharding | None:
    # a bare spec names axes of the mesh in context (JAX resolves it so, and refuses it
    # without one rather than dropping it)
    mesh = get_abstract_mesh()
    if mesh.empty:
        raise ValueError(
            f"Using PartitionSpec when you are not under a mesh context is not allowed. Got "
            f"{spec}: pass a NamedSharding instance or enter a mesh with `jax.set_mesh(mesh)`."
        )
    return _named_as_aval_sharding(NamedSharding(mesh, spec), ndim)


PartitionSpec.as_aval_sharding = _spec_as_aval_sharding


def _array_type(x, aval: ShapedArray) -> ShapedArray:
    sharding = x.sharding
    if type(sharding) is not _jax.NamedSharding:  # one device, GSPMD layouts: never typed
        return aval
    return _typed_aval(aval, sharding)


sharding_typers[_jax.ArrayImpl] = _array_type


def _concrete_typed(aval: ShapedArray, placement) -> NamedSharding | None:
    """The layout an output gets in explicit mode (JAX's: the type decides it, not the
    compiler): its type's spec (unsplit when untyped) on the concrete mesh the computation
    runs on, when that mesh has Explicit axes, no Auto ones (along which the compiler still
    chooses), and is the type's."""
    typed = aval.sharding
    if typed is not None and not isinstance(typed, NamedSharding):
        return None
    mesh = _placement_mesh(placement)
    if mesh is None or not mesh._any_axis_explicit or mesh._any_axis_auto:
        return None
    if typed is None:
        spec = PartitionSpec(*[None] * len(aval.shape))
    elif mesh.abstract_mesh != typed.mesh:
        return None
    else:
        spec = typed.spec
    out = _on_mesh(mesh, spec)
    if tuple(out._device_assignment) != tuple(placement.devices):
        return None
    return out


@functools.lru_cache(maxsize=1024)
def _on_mesh(mesh: Mesh, spec: PartitionSpec) -> NamedSharding:
    return NamedSharding(mesh, spec)


def _placement_mesh(placement) -> Mesh | None:
    template = placement.template
    if isinstance(template, NamedSharding) and isinstance(template.mesh, Mesh):
        return template.mesh
    mesh = get_concrete_mesh()
    return None if mesh.empty else mesh


register_typed_sharding(_concrete_typed)


# ----- reshard ------------------------------------------------------------------------------


def _reshard_abstract_eval(x, *, dst_sharding, concrete_mesh):
    return x.update(sharding=typed_sharding(dst_sharding, len(x.shape)))


def _reshard_jvp(primals, tangents, **params):


    (x,), (t,) = primals, tangents
    out = reshard_p.bind(x, **params)
    if isinstance(t, Zero):
        return out, Zero.from_primal_value(out)
    return out, reshard_p.bind(t, **params)


def _reshard_transpose(ct, x, *, dst_sharding, concrete_mesh):
    # the cotangent goes back to the operand's type (unsplit where it had no sharding)
    back = x.aval.sharding
    if back is None:
        back = NamedSharding(dst_sharding.mesh, PartitionSpec(*[None] * len(x.aval.shape)))
    return [reshard_p.bind(ct, dst_sharding=back, concrete_mesh=concrete_mesh)]


def _reshard_batch(axis_data, args, dims, *, dst_sharding, concrete_mesh):
    (x,), (d,) = args, dims
    if d is None:
        return reshard_p.bind(x, dst_sharding=dst_sharding, concrete_mesh=concrete_mesh), None
    # the mapped dimension keeps the split it has in the operand's type (vmap's spmd_axis_name
    # when it has none)
    typed = get_aval(x).sharding
    kept = typed.spec.partitions[d] if typed is not None else None
    entries = list(dst_sharding.spec.partitions)
    entries.insert(d, kept if kept is not None else getattr(axis_data, "spmd_name", None))
    vmapped = dst_sharding.update(spec=PartitionSpec(*entries))
    return reshard_p.bind(x, dst_sharding=vmapped, concrete_mesh=concrete_mesh), d


reshard_p = define_primitive(
    "reshard",
    abstract_eval=_reshard_abstract_eval,
    reference=lambda x, **params: x,
    jvp=_reshard_jvp,
    transpose=_reshard_transpose,
    batch=_reshard_batch,
    print_params=lambda params: {},  # JAX's jaxprs print the new type only
)


def _reshard_lower(ctx, x, *, dst_sharding, concrete_mesh):
    mesh = concrete_mesh if concrete_mesh is not None else get_concrete_mesh()
    if mesh.empty:
        raise ValueError(
            "reshard needs the devices of its mesh to lower: call it under `jax.set_mesh(mesh)` "
            "or pass a NamedSharding on a concrete Mesh."
        )
    entries = dst_sharding.spec.partitions
    if dst_sharding.mesh._any_axis_auto:  # the compiler picks the layout along Auto axes
        entries = [UNCONSTRAINED if e is None else e for e in entries]
    mesh = mesh.update(axis_types=dst_sharding.mesh.axis_types)  # the types in force here
    concrete = NamedSharding(mesh, PartitionSpec(*entries))
    return emit_sharding_constraint(ctx, x, ctx.avals_in[0], concrete)


register_lowering(reshard_p, _reshard_lower)


def _canonical_dst(s: Any, ndim: int) -> tuple[NamedSharding, Mesh | None]:
    """`s` as a NamedSharding on an abstract mesh (spec padded to `ndim`) and its concrete mesh.

    Raises:
      TypeError: `s` is neither a NamedSharding nor a PartitionSpec.
      ValueError: None or an empty mesh; a PartitionSpec with no mesh in context; a spec naming
        Auto or Manual axes; a spec longer than the rank.
    """
    if s is None or (isinstance(s, NamedSharding) and s.mesh.empty):
        raise ValueError(
            "Reshard should only be used with out_shardings which are non-None and have a "
            f"non-empty mesh. Got sharding {s}."
        )
    if not isinstance(s, NamedSharding | PartitionSpec):
        raise TypeError(
            "`out_sharding` argument of reshard only supports instances of `NamedSharding` or "
            f"`PartitionSpec`. Got {s} of type: {type(s)}"
        )
    current = get_abstract_mesh()
    if isinstance(s, PartitionSpec):
        if current.empty:
            raise ValueError(
                "Using PartitionSpec when you are not under a mesh context is not allowed. "
                f"Please pass a NamedSharding instance or enter into a mesh context via "
                f"`jax.set_mesh`. Got {s}"
            )
        concrete = get_concrete_mesh()
        s = NamedSharding(current, s)
        concrete = None if concrete.empty else concrete
    else:
        concrete = s.mesh if isinstance(s.mesh, Mesh) else None
        s = NamedSharding(s.mesh.abstract_mesh, s.spec)
    types = s.mesh._name_to_type
    for axis in (a for e in s.spec.partitions for a in axes_of(e)):
        if types[axis] is not AxisType.Explicit:
            raise ValueError(
                f"PartitionSpec passed to reshard cannot contain axis names that are of type "
                f"Auto or Manual. Got PartitionSpec: {s.spec} with axis name: {axis} of type: "
                f"{types[axis]}; reshard only along Explicit axes."
            )
    entries = list(s.spec.partitions)
    if len(entries) > ndim:
        raise ValueError(
            f"reshard: the spec {s.spec} has {len(entries)} entries for an array of rank "
            f"{ndim}; give at most one entry per dimension."
        )
    return s.update(spec=PartitionSpec(*entries, *[None] * (ndim - len(entries)))), concrete


def _flat_shardings(tree, out_shardings, n: int) -> list:
    leaf = lambda v: v is None or isinstance(v, NamedSharding | PartitionSpec)  # noqa: E731
    if leaf(out_shardings):
        return [out_shardings] * n
    if isinstance(out_shardings, list):
        out_shardings = tuple(out_shardings)
    try:
        return broadcast_prefix(out_shardings, tree_unflatten(tree, [0] * n), is_leaf=leaf)
    except ValueError as err:
        raise ValueError(f"reshard: out_shardings must be a pytree prefix of xs. {err}") from None


def reshard(xs, out_shardings):
    """Moves arrays to other shardings along Explicit mesh axes, changing their types (JAX:
    `jax.sharding.reshard`); under a trace, one ``reshard`` equation per array.

    Args:
      xs: an array or a pytree of arrays.
      out_shardings: a `NamedSharding` or a `PartitionSpec` (naming axes of the mesh in
        context, `set_mesh`), or a pytree prefix of `xs` of them.

    Returns:
      `xs` with each leaf's sharding, and type, replaced.

    Raises:
      ValueError: a None sharding or an empty mesh; a PartitionSpec with no mesh in context; a
        spec naming Auto or Manual axes, or longer than the array's rank; a dimension the mesh
        axes do not divide.
      TypeError: an entry that is neither a NamedSharding nor a PartitionSpec.
    """
    leaves, tree = tree_flatten(xs)
    outs = []
    for x, s in zip(leaves, _flat_shardings(tree, out_shardings, len(leaves)), strict=True):
        aval = get_aval(x)
        dst, concrete = _canonical_dst(s, len(aval.shape))
        _check_divisible(dst, aval.shape)
        if trace_context.trace is None and concrete is not None:
            outs.append(device_put(x, NamedSharding(concrete, dst.spec)))
            continue
        outs.append(reshard_p.bind(x, dst_sharding=dst, concrete_mesh=concrete))
    return tree_unflatten(tree, outs)


def _check_divisible(sharding: NamedSharding, shape: tuple) -> None:
    sizes = dict(sharding.mesh.shape_tuple)
    for dim, (entry, size) in enumerate(zip(sharding.spec.partitions, shape, strict=True)):
        axes = axes_of(entry)
        parts = 1
        for a in axes:
            parts *= sizes[a]
        if size % parts:
            raise ValueError(
                f"Sharding spec {axes} implies that array axis {dim} is partitioned {parts} "
                f"times, but does not evenly divide the dimension size {size}. Got shape: "
                f"{shape} and sharding {sharding}"
            )


# ----- auto_axes / explicit_axes ------------------------------------------------------------


def _mesh_for(axes, axis_type: AxisType, api_name: str, shardings=None):
    """(the mesh in use, it with `axes` turned to `axis_type`), or None with no mesh at all."""
    current = get_abstract_mesh()
    sharding_mesh = None
    for s in tree_flatten(shardings, is_leaf=lambda v: isinstance(v, PartitionSpec))[0]:
        if isinstance(s, NamedSharding):
            m = s.mesh.abstract_mesh
            if sharding_mesh is not None and sharding_mesh != m:
                raise ValueError(
                    f"Shardings passed to {api_name} should have the same mesh. Got one mesh "
                    f"{sharding_mesh} and another {s.mesh}"
                )
            sharding_mesh = m
    if sharding_mesh is None and current.empty:
        return None
    if sharding_mesh is not None and not current.empty and sharding_mesh != current:
        raise ValueError(
            f"Context mesh {current} must match the mesh passed to shardings {sharding_mesh}. "
            "Recommended approach is to use `jax.set_mesh` context manager."
        )
    mesh = current if sharding_mesh is None else sharding_mesh
    axes = mesh.axis_names if axes is None else axes if isinstance(axes, tuple) else (axes,)
    types = mesh._name_to_type
    for a in axes:
        if a not in types:
            raise ValueError(f"{api_name}: {a!r} is not an axis of the mesh {mesh}.")
        if types[a] is AxisType.Manual:
            raise NotImplementedError(
                "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not allowed "
                f"({api_name} over axis {a!r} inside shard_map)."
            )
    return mesh, axes, mesh.update_axis_types({a: axis_type for a in axes})


def _spec_without(spec_entries, mesh) -> PartitionSpec:
    """A type's entries with the axes that are not Explicit on `mesh` removed."""
    types = mesh._name_to_type
    return PartitionSpec(*[_explicit_entry(e, types) for e in spec_entries])


def _entries_of(x) -> tuple:
    aval = get_aval(x)
    s = aval.sharding
    return (None,) * len(aval.shape) if s is None else s.spec.partitions


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """Runs `f` with mesh `axes` (default: all) of the context mesh switched to ``Auto``: the
    arguments lose their sharding along them (the compiler chooses inside), and the results are
    resharded to `out_sharding` (JAX: `jax.sharding.auto_axes`).

    Args:
      f: the function (or use as a decorator factory when omitted).
      axes: a mesh axis name or a tuple of them.
      out_sharding: the results' shardings (pytree prefix), or passed as ``out_sharding=`` when
        the wrapped function is called.

    Raises:
      TypeError: no out_sharding given anywhere.
    """
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        target = out_sharding
        if target is None:
            if "out_sharding" not in kwargs:
                raise TypeError("Missing required keyword argument: 'out_sharding'")
            target = kwargs.pop("out_sharding")
        found = _mesh_for(axes, AxisType.Auto, "auto_axes", target)
        if found is None:
            return f(*args, **kwargs)
        mesh, names, inner = found
        if set(mesh.auto_axes) == set(names):
            return f(*args, **kwargs)
        with use_abstract_mesh(inner):
            leaves, tree = tree_flatten(args)
            specs = [_spec_without(_entries_of(x), inner) for x in leaves]
            args = tree_unflatten(tree, [reshard(x, s) for x, s in zip(leaves, specs, strict=True)])
            out = f(*args, **kwargs)
        return reshard(out, target)

    return wrapped


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """Runs `f` with mesh `axes` (default: all) of the context mesh switched to ``Explicit``:
    the arguments are resharded to `in_sharding` (so their types carry it inside), and the
    results lose the sharding along axes that are not Explicit outside (JAX:
    `jax.sharding.explicit_axes`).

    Raises:
      TypeError: no in_sharding given anywhere.
      ValueError: no mesh in context.
    """
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        target = in_sharding
        if target is None:
            if "in_sharding" not in kwargs:
                raise TypeError("Missing required keyword argument: 'in_sharding'")
            target = kwargs.pop("in_sharding")
        found = _mesh_for(axes, AxisType.Explicit, "explicit_axes")
        if found is None:
            raise ValueError(
                "Context mesh cannot be empty. Please use `jax.set_mesh` API to enter into a "
                "mesh context when using `explicit_axes` API."
            )
        _, _, inner = found
        with use_abstract_mesh(inner):
            args = reshard(args, target)
            out = f(*args, **kwargs)
        outer = get_abstract_mesh()
        leaves, tree = tree_flatten(out)
        specs = [_spec_without(_entries_of(x), outer) for x in leaves]
        return tree_unflatten(tree, [reshard(x, s) for x, s in zip(leaves, specs, strict=True)])

    return wrapped

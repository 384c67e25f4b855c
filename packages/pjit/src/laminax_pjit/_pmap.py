"""`pmap`: the older parallel map, run as JAX 0.10.2 runs it, as `jit` of a `shard_map`.

`pmap(f, axis_name)(x)` maps `f` over the leading axis of `x` (or the `in_axes` of each
argument), one position per device: a one-axis mesh named `axis_name` over the first `n`
devices (`n` the mapped size), the mapped axis split over it (`P(None, ..., axis_name)` at the
mapped position), `f` applied to each device's slice with that axis squeezed away, and the
outputs stacked along `out_axes` (or, for `out_axes=None`, one replicated value). Collectives
over `axis_name` inside `f` are shard_map's. The outputs are Arrays sharded over that mesh
(`NamedSharding(Mesh(devices, (axis_name,)), P(axis_name))`).
"""

from __future__ import annotations

import functools

import laminax_dispatch as ld
import numpy as np
from laminax_core import lax
from laminax_core.internal import check_argnums, current_trace, eval_interpreter, get_aval
from laminax_dispatch import jit
from laminax_dispatch.stages import Compiled, Lowered
from laminax_pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten
from laminax_pytree.internal import broadcast_prefix

from laminax_pjit import multihost_utils
from laminax_pjit._mesh import Mesh
from laminax_pjit._named_sharding import NamedSharding
from laminax_pjit._partition_spec import PartitionSpec
from laminax_pjit._shard_map import shard_map

__all__ = ["pmap"]

_DEFAULT_AXIS = "_internal_pmap_axis_name"


def _axes_to_spec(axis_name, axis):
    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, axis_name)


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=()):
    """Maps `fun` over an axis of its arguments, one position per device.

    Args:
      fun: the function applied at each position.
      axis_name: the name collectives inside `fun` use for the mapped axis.
      in_axes: which axis of each argument is mapped (a pytree prefix of the positional
        arguments: an int, or None for an argument every position sees whole). Keyword
        arguments are mapped over axis 0.
      out_axes: where the mapped axis goes in each output (None: the output is the same at
        every position, returned once).
      static_broadcasted_argnums: positional arguments passed to `fun` as Python values
        (hashable; a new compilation per distinct value).
      devices: the devices to run on (the first `n` are used); default: the backend's.
      backend: the backend whose devices to use.
      axis_size: the mapped size, checked against the arguments'.
      donate_argnums: positional arguments whose buffers the computation may reuse.

    Returns:
      The mapped function.

    Example:
      >>> f = pmap(lambda x: lax.psum(x, "i"), axis_name="i")
      >>> f(np.arange(4.0, dtype=np.float32))
      Array([6., 6., 6., 6.], dtype=float32)
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if devices is not None:
        if not devices:
            raise ValueError("'devices' argument to pmap must be non-empty, or None.")
        devices = tuple(devices)
    axis_name = _DEFAULT_AXIS if axis_name is None else axis_name
    if static_broadcasted_argnums is None or donate_argnums is None:
        raise TypeError("pmap static_broadcasted_argnums and donate_argnums must be an int "
                        "or a sequence of ints, not None (pass () for none).")
    # negative positions never match an argument, as in JAX (which ignores them too)
    static = tuple(i for i in check_argnums("pmap static_broadcasted_argnums",
                                            static_broadcasted_argnums) if i >= 0)
    donate = check_argnums("pmap donate_argnums", donate_argnums)
    if not all(type(leaf) is int for leaf in tree_leaves(in_axes)):
        raise TypeError("pmap in_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {in_axes}.")
    if not all(type(leaf) is int for leaf in tree_leaves(out_axes)):
        raise TypeError("pmap out_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {out_axes}.")
    # donated positions among the dynamic arguments
    donate = tuple(i - sum(s < i for s in static) for i in donate if i not in static)
    cache: dict = {}

    def prepare(args, kwargs):
        if static and max(static) >= len(args):
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={static} but was called with "
                f"only {len(args)} positional argument{'s' if len(args) > 1 else ''}. All "
                "static broadcasted arguments must be passed positionally."
            )
        dyn_argnums = [i for i in range(len(args)) if i not in static]
        dyn_args = tuple(args[i] for i in dyn_argnums)
        static_values = tuple(args[i] for i in static)
        for i, value in zip(static, static_values):
            try:
                hash(value)
            except TypeError:
                raise ValueError(
                    "Non-hashable static arguments are not supported: static argument (index "
                    f"{i}) of type {type(value)} for function {getattr(fun, '__name__', fun)} "
                    "is non-hashable. Pass it as a mapped argument, or make it hashable."
                ) from None
        dyn_in_axes = (tuple(in_axes[i] for i in dyn_argnums)
                       if static and isinstance(in_axes, tuple) else in_axes)
        flat, in_tree = tree_flatten((dyn_args, kwargs))
        try:
            axes_flat = tuple(broadcast_prefix((dyn_in_axes, 0), (dyn_args, kwargs),
                                               is_leaf=lambda x: x is None))
        except ValueError as err:
            raise ValueError(
                f"pmap in_axes specification must be a tree prefix of the corresponding "
                f"value, got specification {in_axes} for value tree {in_tree}. ({err})\n\nThe "
                "'full pytree' here is the tuple of arguments passed positionally to the "
                "pmapped function, and the value of `in_axes` must be a tree prefix of that "
                "tuple. Check that the value of the `in_axes` argument to `pmap` is a tree "
                "prefix of the tuple of arguments passed positionally to the pmapped function."
            ) from None
        size = _mapped_size(flat, axes_flat)
        if axis_size is not None and axis_size != size:
            raise ValueError(f"Specified axis_size {axis_size} doesn't match received "
                             f"axis_size {size}.")
        mesh_devices = _mesh_devices(devices, backend, size)
        donated = _donated_leaves(donate, dyn_args, kwargs)
        key = (static_values, in_tree, axes_flat, donated, mesh_devices)
        jitted = cache.get(key)
        if jitted is None:
            if len(cache) > 64:
                cache.clear()
            jitted = cache[key] = _build(fun, static, static_values, len(args), in_tree,
                                         axes_flat, out_axes, donated, mesh_devices, axis_name)
        return jitted, flat

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        jitted, flat = prepare(args, kwargs)
        if jitted.across_processes:
            return jitted.call_across_processes(flat)
        return jitted(*flat)

    def lower(*args, **kwargs):
        jitted, flat = prepare(args, kwargs)
        # the compiled function takes the dynamic arguments (static ones are compiled in)
        _, in_tree = tree_flatten((tuple(a for i, a in enumerate(args) if i not in static),
                                   kwargs))
        return _PmapLowered(jitted.lower(*flat), in_tree)

    wrapped.lower = lower
    return wrapped


class _PmapLowered(Lowered):
    """A lowered pmap: the lowered jit over the flattened arguments, whose `compile()` takes
    the arguments as the pmapped function does (pytrees), as JAX's does."""

    def __init__(self, lowered: Lowered, in_tree):
        self.__dict__.update(lowered.__dict__)
        self.pmap_in_tree = in_tree

    in_tree = property(lambda self: self.pmap_in_tree, doc="The tree of (args, kwargs).")

    def compile(self, *args, **kwargs) -> Compiled:
        return _PmapCompiled(super().compile(*args, **kwargs), self.pmap_in_tree)


class _PmapCompiled(Compiled):
    """A compiled pmap, called with the (pytree) arguments it was lowered for."""

    def __init__(self, compiled: Compiled, in_tree):
        self.__dict__.update(compiled.__dict__)
        self.pmap_in_tree = in_tree

    in_tree = property(lambda self: self.pmap_in_tree)

    def __call__(self, *args, **kwargs):
        flat, in_tree = tree_flatten((args, kwargs))
        if in_tree != self.pmap_in_tree:
            raise TypeError(f"Compiled pmap was lowered for arguments with tree "
                            f"{self.pmap_in_tree}, but called with {in_tree}.")
        return super().__call__(*flat)


def _mapped_size(flat, axes_flat) -> int:
    sizes = []
    for x, axis in zip(flat, axes_flat, strict=True):
        if axis is not None:
            shape = get_aval(x).shape
            if not -len(shape) <= axis < len(shape):
                # JAX's types: IndexError where the mapped size is read (the first mapped
                # argument), ValueError for the others
                raise (ValueError if sizes else IndexError)(
                    f"pmap got an argument of shape {shape} with in_axes {axis}: the mapped "
                    "axis must exist (in_axes must be less than the argument's rank)."
                )
            sizes.append((int(shape[axis]), shape, axis))
    if not sizes:
        raise ValueError("pmap requires at least one argument with a mapped axis.")
    if len({size for size, _, _ in sizes}) > 1:
        listed = ", ".join(f"shape {shape} mapped along axis {axis} (size {size})"
                           for size, shape, axis in sizes)
        raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped: {listed}.")
    return sizes[0][0]


def _mesh_devices(devices, backend, size) -> tuple:
    if devices is None and ld.process_count(backend) > 1:
        # each process maps over its own devices; the program spans every process's
        local = ld.local_device_count(backend)
        if size != local:
            raise ValueError(
                f"pmap across {ld.process_count(backend)} processes maps over each process's "
                f"{local} local devices, but the mapped axis has size {size}: give each process "
                f"inputs whose mapped axis has size {local}."
            )
        return tuple(ld.devices(backend))
    if devices is None:
        devices = tuple(ld.devices(backend) if backend is not None else ld.devices())
    if size > len(devices):
        raise ValueError(
            f"compiling computation that requires {size} logical devices, but only "
            f"{len(devices)} XLA devices are available (pmap's mapped axis has size {size}); "
            "map over at most as many positions as there are devices."
        )
    return tuple(devices[:size])


def _donated_leaves(donate, dyn_args, kwargs) -> tuple[bool, ...]:
    flags = []
    for i, arg in enumerate(dyn_args):
        flags += [i in donate] * len(tree_leaves(arg))
    flags += [False] * len(tree_leaves(kwargs))
    return tuple(flags)


def _build(fun, static, static_values, n_args, in_tree, axes_flat, out_axes, donated,
           mesh_devices, axis_name):
    mesh = Mesh(np.array(mesh_devices, dtype=object), (axis_name,))
    in_specs = tuple(_axes_to_spec(axis_name, a) for a in axes_flat)
    out_specs = tree_map(lambda a: _axes_to_spec(axis_name, a), out_axes,
                         is_leaf=lambda x: x is None)

    def _fun(*flat_args):
        leaves = [x if a is None else lax.squeeze(x, (a,))
                  for x, a in zip(flat_args, axes_flat, strict=True)]
        dyn_args, kwargs = tree_unflatten(in_tree, leaves)
        dyn = iter(dyn_args)
        values = iter(static_values)
        args = [next(values) if i in static else next(dyn) for i in range(n_args)]
        out = fun(*args, **kwargs)
        out_flat, out_tree = tree_flatten(out)
        axes = broadcast_prefix(out_axes, out, is_leaf=lambda x: x is None)
        out_flat = [x if a is None else lax.expand_dims(x, (a,))
                    for x, a in zip(out_flat, axes, strict=True)]
        return tree_unflatten(out_tree, out_flat)

    mapped = shard_map(_fun, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                       check_vma=False, axis_names=frozenset({axis_name}))
    out_shardings = tree_map(lambda s: NamedSharding(mesh, s), out_specs,
                             is_leaf=lambda x: x is None)
    donate = tuple(i for i, d in enumerate(donated) if d)
    placed = jit(mapped, in_shardings=tuple(NamedSharding(mesh, s) for s in in_specs),
                 out_shardings=out_shardings, donate_argnums=donate)
    # under a transformation JAX calls the jit without shardings (so jaxprs show none)
    traced = jit(mapped, donate_argnums=donate)
    return _Mapped(placed, traced, mesh, in_specs, out_specs)


class _Mapped:
    """The two jits of one pmap signature: with the mesh shardings when called on values,
    without them when traced."""

    def __init__(self, placed, traced, mesh, in_specs, out_specs):
        self.placed, self.traced = placed, traced
        self.mesh, self.in_specs, self.out_specs = mesh, in_specs, out_specs
        self.across_processes = mesh.is_multi_process

    def call_across_processes(self, flat):
        """Each process's local inputs (mapped axis = its local devices) become global Arrays
        over the mesh of every process's devices, and the outputs this process's part again."""
        global_args = [multihost_utils.host_local_array_to_global_array(x, self.mesh, spec)
                       for x, spec in zip(flat, self.in_specs, strict=True)]
        out = self.placed(*global_args)
        return multihost_utils.global_array_to_host_local_array(out, self.mesh, self.out_specs)

    def _pick(self):
        return self.placed if isinstance(current_trace(), eval_interpreter.EvalTrace) \
            else self.traced

    def __call__(self, *args):
        return self._pick()(*args)

    def lower(self, *args):
        return self.placed.lower(*args)

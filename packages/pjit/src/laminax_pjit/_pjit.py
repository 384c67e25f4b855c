"""`pjit`: `jit` whose PartitionSpecs name axes of the mesh in context at call time.

pjit and jit are one implementation: a `PjitFunction` resolves its shardings against the mesh
of the enclosing ``with mesh:`` block on each call (a bare `PartitionSpec` becomes a
`NamedSharding` on that mesh, None a replicated one) and calls dispatch's `jit` built with the
resolved shardings, one per mesh seen. Tracing, placement, lowering, compiling and the C++ fast
path are all dispatch's.

The seed's spelling, ``pjit(fun, in_axis_resources, out_axis_resources, static_argnums,
donate_argnums)``, is accepted here and only here: the old keyword names are converted to
``in_shardings``/``out_shardings`` (with one `DeprecationWarning` per process), positional
arguments already line up.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from typing import Any

from laminax_dispatch import Sharding, jit
from laminax_dispatch.internal import register_context_sharding, register_sharding_resolver
from laminax_pytree import tree_leaves, tree_map

from laminax_pjit._mesh import Mesh, empty_concrete_mesh, get_concrete_mesh, resource_mesh
from laminax_pjit._named_sharding import NamedSharding, check_unique_axes
from laminax_pjit._partition_spec import UNCONSTRAINED, PartitionSpec

__all__ = ["UNSPECIFIED", "PjitFunction", "pjit"]


class _Unspecified:
    def __repr__(self) -> str:
        return "UnspecifiedValue"


UNSPECIFIED = _Unspecified()

_OLD_NAMES = (
    "pjit: in_axis_resources and out_axis_resources are the seed-era names of in_shardings and "
    "out_shardings (removed from JAX); laminax accepts them, but please rename them."
)
_warned_old_names = False


def _is_leaf(x: Any) -> bool:
    return x is None or x is UNSPECIFIED or isinstance(x, (PartitionSpec, Sharding))


def _check_entries(tree, what: str):
    """JAX's checks of a shardings pytree at decoration time; lists become tuples."""

    def check(entry):
        if entry is None or entry is UNSPECIFIED:
            return entry
        if isinstance(entry, Sharding):
            if isinstance(entry, NamedSharding) and entry.mesh.empty:
                raise ValueError(
                    f"One of pjit {what} leaf specifications got an empty NamedSharding: {entry} "
                    "which is not allowed."
                )
            return entry
        if not isinstance(entry, PartitionSpec):
            raise TypeError(
                f"{what} leaf specifications are expected to be PartitionSpec instances or None, "
                f"but got {entry!r} of type {type(entry).__name__}; wrap mesh axis names in "
                "PartitionSpec(...)."
            )
        if UNCONSTRAINED in entry.partitions:
            raise ValueError(f"Unconstrained dims are not allowed when passed to {what}: {entry}")
        check_unique_axes(entry, what)
        return entry

    if isinstance(tree, list):
        tree = tuple(tree)
    return tree_map(check, tree, is_leaf=_is_leaf)


def _resolve(tree, mesh: Mesh, what: str):
    """`tree` with PartitionSpecs (and None, meaning replicated) as NamedShardings on `mesh`;
    unspecified entries become None (dispatch's "the compiler chooses")."""

    def resolve(entry):
        if entry is UNSPECIFIED:
            return None
        if isinstance(entry, Sharding):
            return entry
        if mesh.empty:
            if entry is None:
                return None
            raise RuntimeError(
                f"pjit requires a non-empty mesh in context if you are passing `PartitionSpec`s "
                f"to {what}. You can define a context mesh via `jax.set_mesh(mesh)` or `with "
                f"mesh:`. Alternatively, provide `Sharding`s to {what} and then the mesh "
                "context manager is not required."
            )
        return NamedSharding(mesh, PartitionSpec() if entry is None else entry)

    if tree is UNSPECIFIED:
        return None
    return tree_map(resolve, tree, is_leaf=_is_leaf)


def _needs_mesh(tree) -> bool:
    """Whether an entry refers to the mesh in context (a PartitionSpec, or None: replicated)."""
    leaves = tree_leaves(tree, is_leaf=_is_leaf)
    return any(not isinstance(e, Sharding) and e is not UNSPECIFIED for e in leaves)


# the mesh of the `with mesh:` block a pjit call runs under (read by placement on a cache miss)
_call = threading.local()


@functools.lru_cache(maxsize=64)
def _replicated_on(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, PartitionSpec())


def _context_sharding() -> NamedSharding | None:
    """Where computations run by context, as JAX's jit runs on its context mesh: a pjit call's
    ``with mesh:`` mesh, else `set_mesh`'s."""
    mesh = getattr(_call, "mesh", None)
    if mesh is None:
        mesh = get_concrete_mesh()
        if mesh.empty:
            return None
    return _replicated_on(mesh)


class _under_mesh:
    """Marks a pjit call's mesh for placement while the call runs."""

    __slots__ = ("mesh", "prev")

    def __init__(self, mesh: Mesh):
        self.mesh = mesh

    def __enter__(self):
        self.prev = getattr(_call, "mesh", None)
        _call.mesh = None if self.mesh.empty else self.mesh

    def __exit__(self, *exc):
        _call.mesh = self.prev


class PjitFunction:
    """What `pjit` returns: called like `fun`; `.lower`, `.trace`, `.eval_shape` as jit's."""

    def __init__(self, fun: Callable, in_shardings, out_shardings, jit_kwargs: dict):
        self._fun = fun
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        self._jit_kwargs = jit_kwargs
        # shardings that name no mesh axes need no mesh: one jit serves every call
        self._mesh_free = not (_needs_mesh(in_shardings) or _needs_mesh(out_shardings))
        self._jits: dict[Mesh, Any] = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, fun, updated=())

        # pjit's compiled entries must not serve `jit(fun)`, which runs elsewhere under the same
        # `with mesh:` (JAX's jit ignores the resource environment): its own function object
        @functools.wraps(fun)
        def pjit_fun(*args, **kwargs):
            return fun(*args, **kwargs)

        self._traced_fun = pjit_fun

    def _jit_for(self, mesh: Mesh):
        if self._mesh_free:
            mesh = empty_concrete_mesh
        jitted = self._jits.get(mesh)
        if jitted is None:
            with self._lock:
                jitted = self._jits.get(mesh)
                if jitted is None:
                    jitted = jit(
                        self._traced_fun,
                        in_shardings=_resolve(self._in_shardings, mesh, "in_shardings"),
                        out_shardings=_resolve(self._out_shardings, mesh, "out_shardings"),
                        **self._jit_kwargs,
                    )
                    self._jits[mesh] = jitted
        return jitted

    def __call__(self, *args, **kwargs):
        mesh = resource_mesh()
        jitted = self._jit_for(mesh)
        if mesh.empty:
            return jitted(*args, **kwargs)
        with _under_mesh(mesh):
            return jitted(*args, **kwargs)

    def _stage(self, stage: str, args, kwargs):
        mesh = resource_mesh()
        with _under_mesh(mesh):
            return getattr(self._jit_for(mesh), stage)(*args, **kwargs)

    def lower(self, *args, **kwargs):
        """Traces and lowers for these arguments under the mesh in context: a `Lowered`."""
        return self._stage("lower", args, kwargs)

    def trace(self, *args, **kwargs):
        """Traces for these arguments under the mesh in context: a `Traced`."""
        return self._stage("trace", args, kwargs)

    def eval_shape(self, *args, **kwargs):
        """The outputs' shapes and dtypes, without running anything."""
        return self._stage("eval_shape", args, kwargs)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __repr__(self) -> str:
        return f"<PjitFunction of {self._fun!r}>"


def pjit(
    fun: Callable,
    in_shardings=UNSPECIFIED,
    out_shardings=UNSPECIFIED,
    static_argnums=None,
    static_argnames=None,
    donate_argnums=None,
    donate_argnames=None,
    keep_unused: bool = False,
    device=None,
    backend: str | None = None,
    inline: bool = False,
    *,
    in_axis_resources=UNSPECIFIED,
    out_axis_resources=UNSPECIFIED,
) -> PjitFunction:
    """Compiles `fun` for the devices of a mesh, partitioned by XLA (JAX:
    `jax.experimental.pjit.pjit`; the seed's `pjit(fun, in_axis_resources, out_axis_resources,
    static_argnums, donate_argnums)` too).

    Args:
      fun: the function (pytrees of arrays in and out).
      in_shardings: how the positional arguments are laid out: a pytree prefix of them made
        of `Sharding`s, `PartitionSpec`s (axes of the ``with mesh:`` mesh in context at call
        time) and None (replicated over that mesh). Lists are taken as tuples.
      out_shardings: the same for the outputs.
      static_argnums, static_argnames, donate_argnums, donate_argnames, keep_unused, device,
        backend, inline: as for `jit`.
      in_axis_resources, out_axis_resources: the seed-era names of in_shardings and
        out_shardings (deprecated; a `DeprecationWarning` once).

    Returns:
      A `PjitFunction`.

    Raises:
      TypeError: a sharding entry that is neither a Sharding, a PartitionSpec nor None.
      ValueError: both the old and the new name of an argument; a spec naming an axis twice.
      RuntimeError (at call time): PartitionSpecs with no mesh in context.

    Example:
      >>> import numpy as np
      >>> from laminax_dispatch import devices
      >>> mesh = Mesh(np.array(devices()[:2]), ("x",))
      >>> f = pjit(lambda x: x * 2, in_shardings=PartitionSpec("x"), out_shardings=None)
      >>> import warnings; warnings.simplefilter("ignore", DeprecationWarning)
      >>> with mesh:
      ...     f(np.arange(4.0, dtype=np.float32))
      Array([0., 2., 4., 6.], dtype=float32)
    """
    global _warned_old_names
    if in_axis_resources is not UNSPECIFIED or out_axis_resources is not UNSPECIFIED:
        for old, new, name in (
            (in_axis_resources, in_shardings, "in"),
            (out_axis_resources, out_shardings, "out"),
        ):
            if old is not UNSPECIFIED and new is not UNSPECIFIED:
                raise ValueError(
                    f"pjit: pass {name}_shardings or its old name {name}_axis_resources, not both."
                )
        if not _warned_old_names:
            _warned_old_names = True
            warnings.warn(_OLD_NAMES, DeprecationWarning, stacklevel=2)
        if in_axis_resources is not UNSPECIFIED:
            in_shardings = in_axis_resources
        if out_axis_resources is not UNSPECIFIED:
            out_shardings = out_axis_resources
    if not callable(fun):
        raise TypeError(f"pjit: expected a callable, got {fun!r} of type {type(fun).__name__}.")
    if (device is not None or backend is not None) and (
        in_shardings is not UNSPECIFIED or out_shardings is not UNSPECIFIED
    ):
        raise ValueError(
            "If backend or device is specified on jit, then in_shardings and out_shardings "
            "should not be specified."
        )
    in_shardings = _check_entries(in_shardings, "pjit in_shardings")
    out_shardings = _check_entries(out_shardings, "pjit out_shardings")
    jit_kwargs = dict(
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        donate_argnums=donate_argnums,
        donate_argnames=donate_argnames,
        keep_unused=keep_unused,
        device=device,
        backend=backend,
        inline=inline,
    )
    return PjitFunction(fun, in_shardings, out_shardings, jit_kwargs)


# jit(in_shardings=P(...)) resolves bare specs against set_mesh's mesh, as JAX's jit does
def _resolve_for_jit(spec: PartitionSpec):
    mesh = get_concrete_mesh()
    if mesh.empty:
        raise RuntimeError(
            "jit requires a non-empty mesh in context if you are passing `PartitionSpec`s to "
            "in_shardings or out_shardings. You can define a context mesh via "
            "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s and then the mesh context "
            "manager is not required."
        )
    return NamedSharding(mesh, spec)


register_sharding_resolver(PartitionSpec, _resolve_for_jit)
register_context_sharding(_context_sharding)

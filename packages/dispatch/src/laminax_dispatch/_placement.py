"""Placement: where one computation runs and how its inputs and outputs are laid out.

Every execution (a jitted call, an eager primitive, `jit_p`'s impl) asks `place_inputs` once,
on its first call with a signature, and keeps the `Placement` it gets: the device assignment
(the devices in the order of the compiled program's partitions), one sharding per input and
per output (None: not specified, XLA's partitioner chooses and the executable reports it), and
whether outputs are committed. Lowering writes the shardings as attributes of ``main``,
compiling uses the device assignment (one partition per device), and the executable and the
C++ fast path place arguments and wrap results with them.

Where the devices come from, first match wins (JAX's rules):

1. the shardings `jit` was given (``in_shardings``, ``out_shardings``, ``device=``) and the
   shardings of committed Array arguments: they must all span the same devices, or the call
   raises JAX's "incompatible devices" `ValueError`; a committed argument whose sharding is not
   the ``in_shardings`` entry for it raises JAX's "does not match" `ValueError`;
2. ``backend=``: that backend's first device;
3. the default device (uncommitted outputs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from jaxlib import _jax
from jaxlib import xla_client as xc
from laminax_core import ShapeDtypeStruct
from laminax_core.internal import ClosedJaxpr, Jaxpr
from laminax_pytree import tree_flatten, tree_leaves, tree_unflatten
from laminax_pytree.internal import broadcast_prefix

from laminax_dispatch._backends import default_device, get_backend
from laminax_dispatch._sharding import GSPMDSharding, Sharding, SingleDeviceSharding

__all__ = [
    "check_shardings_fit",
    "Placement",
    "committed_sharding",
    "committed_shardings",
    "describe_array",
    "explicit_shardings",
    "flat_in_shardings",
    "flat_out_shardings",
    "freeze_shardings",
    "jaxpr_shardings",
    "place_inputs",
    "register_sharding_resolver",
    "replicated_sharding",
    "sharding_key",
    "register_context_sharding",
    "context_sharding",
    "register_typed_sharding",
    "typed_out_shardings",
]


@dataclasses.dataclass(frozen=True)
class Placement:
    """The placement of one compiled computation; immutable, decided once per signature.

    Attributes:
      devices: the device assignment, one partition per device, in partition order.
      in_shardings: one per input leaf (None: unspecified, XLA chooses).
      out_shardings: one per output leaf (None: unspecified, XLA chooses).
      committed: whether the outputs are committed to their devices.
      template: a sharding used inside the computation (a sharding constraint's), whose
        kind reports layouts the compiler chose when no input or output sharding is given
        (JAX reports a constrained program's outputs as NamedShardings on its mesh).
    """

    devices: tuple[xc.Device, ...]
    in_shardings: tuple[Sharding | None, ...]
    out_shardings: tuple[Sharding | None, ...] = ()
    committed: bool = False
    template: Sharding | None = None

    @property
    def num_partitions(self) -> int:
        """One SPMD partition per device."""
        return len(self.devices)

    @property
    def num_replicas(self) -> int:
        """Always 1: laminax partitions (SPMD) and never replicates programs."""
        return 1

    def with_out_shardings(self, out_shardings: Sequence[Sharding | None]) -> Placement:
        """The same placement with the outputs' shardings set."""
        return dataclasses.replace(self, out_shardings=tuple(out_shardings))

    def replicated(self) -> Sharding:
        """The sharding of an array every device of the placement holds whole."""
        return replicated_sharding(self.devices)


def replicated_sharding(devices: Sequence[xc.Device]) -> Sharding:
    """`SingleDeviceSharding` for one device; a replicated `GSPMDSharding` for several."""
    if len(devices) == 1:
        return SingleDeviceSharding(devices[0])
    return GSPMDSharding.get_replicated(tuple(devices))


def committed_sharding(x) -> Sharding | None:
    """The sharding an argument pins its computation to: a committed Array's, or the one a
    `ShapeDtypeStruct` given to `lower` carries; None for anything else."""
    if type(x) is _jax.ArrayImpl:
        return x._sharding if x._committed else None
    if type(x) is ShapeDtypeStruct:
        return x.sharding
    return None


def committed_shardings(leaves) -> tuple:
    """`committed_sharding` of each leaf: what a cache key of placement depends on."""
    return tuple(map(committed_sharding, leaves))


def describe_array(x) -> str:
    """``with shape float32[8] and with device ids [0, 1] on platform CPU``: JAX's wording."""
    ids = sorted(d.id for d in x.sharding.device_set)
    platform = next(iter(x.sharding.device_set)).platform.upper()
    return (
        f"with shape {x.dtype.name}[{','.join(map(str, x.shape))}] and with device ids {ids} "
        f"on platform {platform}"
    )


def _describe_sharding(sharding: Sharding) -> str:
    ids = sorted(d.id for d in sharding.device_set)
    platform = next(iter(sharding.device_set)).platform.upper()
    return f"with device ids {ids} on platform {platform}"


def _mismatch(fun_name, arg_name, x, sharding) -> ValueError:
    aval = f"{x.dtype.name}[{','.join(map(str, x.shape))}]"
    return ValueError(
        f"Sharding passed to jit does not match the sharding on the respective arg. Got jit "
        f"sharding: {sharding},\narg sharding: {x.sharding} for arg type: {aval} (argument "
        f"{arg_name} of {fun_name}). device_put the argument onto the jit's sharding first, "
        "or leave its in_shardings entry unspecified (None)."
    )


def _equivalent(a: Sharding, b: Sharding, ndim: int) -> bool:
    try:
        return a.is_equivalent_to(b, ndim)
    except (AttributeError, ValueError):
        return False


def _device_set(sharding) -> frozenset:
    return frozenset(sharding.device_set)


def place_inputs(
    leaves: Sequence[Any],
    *,
    in_shardings: Sequence[Sharding | None] | None = None,
    out_shardings: Sequence[Sharding | None] = (),
    device: xc.Device | None = None,
    backend: str | None = None,
    arg_names: Sequence[str] | None = None,
    fun_name: str = "<unnamed>",
    inner_shardings: Sequence[Sharding] | dict[Sharding, str] = (),
) -> Placement:
    """Decides a computation's placement from its arguments and what `jit` was given.

    Args:
      leaves: the flat arguments (Arrays, NumPy arrays, scalars).
      in_shardings: one per leaf, None where unspecified (default: all unspecified).
      out_shardings: the explicit output shardings (not None ones), for the device check
        only; the placement's `out_shardings` are set after tracing.
      device: `jit`'s ``device=``; backend: `jit`'s ``backend=``.
      arg_names: a name per leaf for messages (default ``args[i]``).
      fun_name: the function's name for messages.
      inner_shardings: shardings used inside the computation (`jaxpr_shardings`: sharding
        constraints, device_put targets, nested jit shardings; a dict names the primitive of
        each for messages); they fix the devices too.

    Returns:
      A `Placement` with `in_shardings` set (explicit, else a committed argument's own
      sharding, else unspecified on several devices or the one device's sharding).

    Raises:
      ValueError: arguments and shardings span different devices, or a committed argument
        is laid out differently from its explicit ``in_shardings`` entry.

    Example:
      >>> from laminax_dispatch import device_put, devices
      >>> place_inputs([device_put(1.0, devices()[0]), 2.0]).devices
      (CpuDevice(id=0),)
    """
    n = len(leaves)
    explicit = list(in_shardings) if in_shardings is not None else [None] * n
    chosen: list[Sharding | None] = list(explicit)
    # (description, device set, device assignment) of the first thing that fixes the devices
    first: tuple[str, frozenset, tuple] | None = None

    def name(i: int) -> str:
        return arg_names[i] if arg_names is not None and i < len(arg_names) else f"args[{i}]"

    def check(what: str, sharding) -> None:
        nonlocal first
        devices = _device_set(sharding)
        if first is None:
            first = (what, devices, tuple(sharding._device_assignment))
        elif devices != first[1]:
            raise ValueError(
                f"Received incompatible devices for jitted computation. Got {first[0]} and "
                f"{what}"
            )

    committed_args = False
    for i, x in enumerate(leaves):
        sharding = committed_sharding(x)
        if sharding is None:
            continue
        committed_args = True
        if explicit[i] is None:
            chosen[i] = sharding
            check(f"argument {name(i)} of {fun_name} {describe_array(x)}", sharding)
        elif sharding != explicit[i] and not _equivalent(sharding, explicit[i], x.ndim):
            raise _mismatch(fun_name, name(i), x, explicit[i])
    for sharding in explicit:
        if sharding is not None:
            check(f"explicit input sharding {_describe_sharding(sharding)}", sharding)
    for sharding in out_shardings:
        if sharding is not None:
            check(f"explicit output sharding {_describe_sharding(sharding)}", sharding)
    if device is not None:
        check(f"explicit device {device!r} of {fun_name}", SingleDeviceSharding(device))
    for sharding in inner_shardings:
        where = "a sharding"
        if isinstance(inner_shardings, dict):
            where = inner_shardings[sharding]
        check(f"{where} inside jit {_describe_sharding(sharding)}", sharding)
    context = None if device is not None or backend is not None else context_sharding()
    if context is not None:
        check(f"jit's context mesh {_describe_sharding(context)}", context)
    if first is not None:
        devices = first[2]
        committed = True
    elif backend is not None:
        # committed, as the seed's jit does: backend= stands for a device_put by the user
        devices, committed = (get_backend(backend).local_devices()[0],), True
    else:
        devices, committed = (default_device(),), False
    if len(devices) == 1:
        single = SingleDeviceSharding(devices[0])
        chosen = [single if s is None else s for s in chosen]
    template = next(iter(inner_shardings), context)
    return Placement(tuple(devices), tuple(chosen), (), committed, template)


# () -> Sharding or None, asked in order: where a computation runs when the context says so
# (laminax_pjit: replicated over the mesh of `set_mesh`, or of the `with mesh:` a pjit call
# runs under), as JAX's jit runs on its context mesh.
_context_providers: list = []


def register_context_sharding(provider) -> None:
    """Registers ``provider() -> Sharding | None``: the devices the context puts every
    computation on (its devices join the placement's device check, and its kind reports the
    layouts the compiler chooses)."""
    _context_providers.append(provider)


def context_sharding() -> Sharding | None:
    """The first sharding a registered context provider gives, or None."""
    for provider in _context_providers:
        sharding = provider()
        if sharding is not None:
            return sharding
    return None


# (aval, Placement) -> Sharding or None: the layout an output's type names (laminax_pjit: a
# sharding along Explicit mesh axes), so the program lays the result out as its type says
# instead of reporting whatever the compiler chose, as JAX does in explicit mode
_typed_providers: list = []


def register_typed_sharding(provider) -> None:
    """Registers ``provider(aval, placement) -> Sharding | None``: the concrete sharding an
    output of type `aval` has on the placement's devices (None: the compiler chooses)."""
    _typed_providers.append(provider)


def typed_out_shardings(out_avals, placement: Placement, flat: Sequence) -> list:
    """`flat` with the unspecified (None) entries filled from the outputs' types (where a
    provider knows the layout a type names)."""
    flat = list(flat)
    if not _typed_providers or None not in flat:
        return flat
    for i, (s, aval) in enumerate(zip(flat, out_avals, strict=True)):
        if s is None:
            for provider in _typed_providers:
                found = provider(aval, placement)
                if found is not None:
                    flat[i] = found
                    break
    return flat


# ----- jit's in_shardings / out_shardings -----------------------------------------------------

# type -> converter for sharding-like values `jit` accepts besides `Sharding`s (laminax_pjit
# registers `PartitionSpec`, resolved against the mesh in context when a signature is compiled)
_resolvers: dict[type, Any] = {}


def register_sharding_resolver(cls: type, resolve) -> None:
    """Lets `jit`'s ``in_shardings``/``out_shardings`` hold instances of `cls`, turned into a
    `Sharding` by ``resolve(value)`` each time a new signature is compiled (so a value can
    depend on context, such as the mesh of an enclosing ``with mesh:``)."""
    _resolvers[cls] = resolve


def _is_sharding_leaf(x) -> bool:
    return x is None or isinstance(x, Sharding) or isinstance(x, tuple(_resolvers))


def _resolve(value, what: str):
    if value is None or isinstance(value, Sharding):
        return value
    for cls, resolve in _resolvers.items():
        if isinstance(value, cls):
            return resolve(value)
    raise TypeError(
        f"jit: every {what} entry must be a Sharding or None, got {value!r} of type "
        f"{type(value).__name__}. Build one (for example a NamedSharding on a mesh) or leave "
        "it None for the compiler to choose."
    )


def freeze_shardings(value):
    """`value` with lists turned into tuples (JAX accepts lists where it means tuples), so
    that it can enter a cache key."""
    if isinstance(value, list) or (type(value) is tuple and not _is_sharding_leaf(value)):
        return tuple(freeze_shardings(v) for v in value)
    return value


def sharding_key(value):
    """A hashable stand-in for a pytree of shardings (dicts are not hashable): its structure
    and leaves."""
    leaves, tree = tree_flatten(value, is_leaf=_is_sharding_leaf)
    return tree, tuple(leaves)


def flat_in_shardings(in_shardings, dyn_args: tuple, n_kwarg_leaves: int, fun_name: str) -> list:
    """One sharding (or None) per leaf of ``(dyn_args, dyn_kwargs)`` from `jit`'s
    ``in_shardings``, a pytree prefix of the positional arguments (static ones removed).

    Raises:
      ValueError: keyword arguments with in_shardings, or a prefix that does not fit.
      TypeError: an entry that is neither a Sharding nor None.
    """
    if n_kwarg_leaves:
        raise ValueError(
            f"jit({fun_name}) does not support keyword arguments when in_shardings is "
            "specified; pass them positionally."
        )
    if _is_sharding_leaf(in_shardings):
        flat = [in_shardings] * len(tree_flatten(dyn_args)[0])
    else:
        if isinstance(in_shardings, tuple) and len(in_shardings) != len(dyn_args):
            raise ValueError(
                f"jit({fun_name}): in_shardings must be a Sharding or a tuple with one entry per "
                f"positional (non-static) argument, but it has {len(in_shardings)} entries for "
                f"{len(dyn_args)} arguments."
            )
        try:
            flat = broadcast_prefix(in_shardings, tuple(dyn_args), is_leaf=_is_sharding_leaf)
        except ValueError as err:
            raise ValueError(
                f"jit({fun_name}): in_shardings must be a tree prefix of the positional "
                f"arguments. {err}"
            ) from None
    return [_resolve(s, "in_shardings") for s in flat]


def flat_out_shardings(out_shardings, out_tree, fun_name: str) -> list:
    """One sharding (or None) per output leaf from `jit`'s ``out_shardings``, a pytree prefix
    of the output."""
    n = out_tree.num_leaves
    if _is_sharding_leaf(out_shardings):
        return [_resolve(out_shardings, "out_shardings")] * n
    outs = tree_unflatten(out_tree, [object()] * n)
    try:
        flat = broadcast_prefix(out_shardings, outs, is_leaf=_is_sharding_leaf)
    except ValueError as err:
        raise ValueError(
            f"jit({fun_name}): out_shardings must be a tree prefix of the output. {err}"
        ) from None
    return [_resolve(s, "out_shardings") for s in flat]


def explicit_shardings(value) -> list:
    """The Shardings (resolved) in a pytree of shardings, for the device check."""
    return [
        s
        for s in (_resolve(x, "sharding") for x in tree_leaves(value, is_leaf=_is_sharding_leaf))
        if s is not None
    ]


def jaxpr_shardings(closed) -> dict[Sharding, str]:
    """The shardings a jaxpr's equations name (in their params, nested jaxprs included), each
    with the name of the first primitive naming it: where a program without committed
    arguments must run. A bare device (`device_put(x, device)` under jit) does not count, as
    in JAX; a shard_map mesh counts as all its devices."""
    found: dict[Any, str] = {}
    seen: set[int] = set()

    def visit(value, where: str) -> None:
        if isinstance(value, Sharding):
            # a sharding on an abstract mesh (a typed `reshard`'s) names no devices
            if getattr(value, "_is_concrete", True):
                found.setdefault(value, where)
        elif isinstance(value, xc.Device):
            return
        elif _mesh_devices(value):  # a mesh (shard_map's): the program runs on all of it
            found.setdefault(replicated_sharding(_mesh_devices(value)), where)
        elif isinstance(value, tuple | list):
            for v in value:
                visit(v, where)
        elif isinstance(value, ClosedJaxpr):
            visit(value.jaxpr, where)
        elif isinstance(value, Jaxpr) and id(value) not in seen:
            seen.add(id(value))
            for eqn in value.eqns:
                for v in eqn.params.values():
                    visit(v, eqn.primitive.name)

    visit(closed, "jit")
    return found


def _mesh_devices(value) -> tuple:
    """The devices of a concrete mesh (laminax_pjit's `Mesh`), or () for anything else."""
    try:
        devices = tuple(getattr(value, "_flat_devices_tuple", ()))
    except (TypeError, ValueError, RuntimeError):  # an abstract mesh has no devices
        return ()
    return devices if all(isinstance(d, xc.Device) for d in devices) else ()


def check_shardings_fit(shardings, avals, names, what: str) -> None:
    """Raises JAX's ValueError for a sharding that cannot lay out its value: a rank it does
    not describe (the sharding's own `check_compatible_aval`), or a dimension it splits
    unevenly (its `shard_shape`'s `IndivisibleError`).

    Args:
      shardings: one per value (None: unspecified, skipped).
      avals: the values' avals; names: their names (``x``, ``result[0]``) for messages.
      what: ``"pjit arguments"`` or ``"pjit outputs"`` (JAX's words).
    """
    for sharding, aval, name in zip(shardings, avals, names, strict=True):
        if sharding is None:
            continue
        shape = tuple(aval.shape)
        check = getattr(sharding, "check_compatible_aval", None)
        if check is not None:
            try:
                check(shape)
            except ValueError as err:
                if type(err) is not ValueError:  # a sharding's own error class: JAX's as is
                    raise
                raise ValueError(
                    f"One of {what} with pytree key path {name} is incompatible with its "
                    f"sharding annotation {sharding}: {err}"
                ) from None
        sharding.shard_shape(shape)  # raises the sharding's IndivisibleError for uneven cuts

"""Where a new array lives: the `device=` and `out_sharding=` keywords of the creation functions.

Devices belong to dispatch, a layer above core, so `device=` asks the placer dispatch installs
at import (`set_device_placer`: dispatch's `device_put`). JAX 0.10.2 treats the keyword two ways,
and laminax follows it: the filled arrays (`zeros`, `ones`, `full`, `empty` and their `_like`s)
are placed when concrete, no longer weakly typed, and `device=` is ignored while tracing; the
computed ones (`arange`, `linspace`, `eye`, `array`, `asarray`) go through `device_put`, which
under `jit` is a resharding inside the program. `out_sharding=` is a typed sharding (a
`NamedSharding`, or a `PartitionSpec` under a mesh context), kept in traced values too.
"""

from __future__ import annotations

from collections.abc import Callable

from laminax_core import _trace, lax
from laminax_core._avals import get_aval
from laminax_core._sharding_rules import requested_sharding

__all__ = ["check_placement", "place", "set_device_placer", "typed_sharding"]

_placer: list[Callable] = []


def set_device_placer(placer: Callable) -> None:
    """Installs `placer(array, device_or_sharding) -> array` (dispatch's `device_put`)."""
    _placer[:] = [placer]


def check_placement(name: str, device, out_sharding) -> None:
    if device is not None and out_sharding is not None:
        raise ValueError(
            f"jnp.{name}: Only one of `device` or `out_sharding` can be set. Got "
            f"device={device} and out_sharding={out_sharding}."
        )
    if device is not None and not (
        hasattr(device, "platform") or hasattr(device, "device_set")
    ):
        raise TypeError(
            f"jnp.{name}: device must be a Device or a Sharding (e.g. `jax.devices()[0]`), "
            f"got {type(device).__name__} {device!r}."
        )


def typed_sharding(out_sharding, ndim: int):
    """The aval sharding `out_sharding` asks for (None when none is given)."""
    return None if out_sharding is None else requested_sharding(out_sharding, ndim)


def place(x, device=None, out_sharding=None, *, traced: bool = False):
    """`x` on `device`, or typed with `out_sharding`, as the creation functions return it.

    `traced`: place traced values too (`device_put` semantics); otherwise `device=` applies to
    concrete results only, which lose their weak type as JAX's filled arrays do."""
    if out_sharding is not None:
        aval = get_aval(x)
        sharding = typed_sharding(out_sharding, aval.ndim)
        if sharding is not None and aval.sharding != sharding:
            x = lax.broadcast_in_dim(x, aval.shape, tuple(range(aval.ndim)), sharding)
        return x
    if device is None:
        return x
    if isinstance(x, _trace.Tracer) and not traced:
        return x  # JAX ignores `device=` of the filled arrays while tracing
    if not traced and get_aval(x).weak_type:
        x = lax.convert_element_type(x, get_aval(x).dtype, weak_type=False)
    if not _placer:
        raise RuntimeError(
            "device= needs laminax-dispatch, the layer that owns devices: install it and "
            "import it (`import laminax_dispatch`) before placing arrays on devices."
        )
    return _placer[0](x, device)

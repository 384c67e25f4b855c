"""`PartitionSpec`: which mesh axes split each dimension of an array.

A spec is a tuple-like value, one entry per leading array dimension: None (not split), a mesh
axis name, a tuple of axis names (split over their product, major first) or
`PartitionSpec.UNCONSTRAINED` (the partitioner may choose). Dimensions past the spec's length
are not split. Specs are interned, as JAX's are: equal specs are the same object, so they hash
and compare by identity (cheap in cache keys), and a spec never equals a plain tuple.
"""

from __future__ import annotations

import weakref
from typing import Any

from jaxlib import _jax

__all__ = ["P", "PartitionSpec", "UNCONSTRAINED", "axes_of"]


class _Unconstrained:
    """The marker for a dimension whose sharding the partitioner may choose."""

    def __repr__(self) -> str:
        return "UNCONSTRAINED"

    def __reduce__(self):
        return (_unconstrained, ())


def _unconstrained() -> _Unconstrained:
    return UNCONSTRAINED


UNCONSTRAINED = _Unconstrained()
# jaxlib's `canonicalize_partitions` passes this marker through unchanged once told about it.
_jax.set_pspec_unconstrained(UNCONSTRAINED)

_interned: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _as_frozenset(value, what: str) -> frozenset:
    if isinstance(value, frozenset):
        return value
    if isinstance(value, set):
        return frozenset(value)
    raise TypeError(
        f"PartitionSpec: {what} must be a set or frozenset of mesh axis names, got {value!r} "
        f"of type {type(value).__name__}."
    )


def _check_reductions(partitions, unreduced: frozenset, reduced: frozenset) -> None:
    for what, axes in (("unreduced", unreduced), ("reduced", reduced)):
        if None in axes:
            raise ValueError(
                f"PartitionSpec: {what} cannot contain None; list mesh axis names only."
            )
    if unreduced & reduced:
        raise ValueError(
            f"PartitionSpec: unreduced {set(unreduced)} and reduced {set(reduced)} overlap; an "
            "axis can be one or the other."
        )
    for entry in partitions:
        for axis in entry if isinstance(entry, tuple) else (entry,):
            for what, axes in (("unreduced", unreduced), ("reduced", reduced)):
                if axis in axes:
                    raise ValueError(
                        f"PartitionSpec: axis {axis!r} both splits a dimension ({partitions}) "
                        f"and is {what}; use it in one place."
                    )


class PartitionSpec:
    """How an array's dimensions map to mesh axes (JAX: `jax.sharding.PartitionSpec`, `P`).

    Args:
      *partitions: one entry per leading dimension: None, an axis name, a tuple of axis
        names, or `PartitionSpec.UNCONSTRAINED`. Lists are taken as tuples.
      unreduced, reduced: sets of mesh axes along which the value is a partial sum
        (explicit-sharding mode).

    Example:
      >>> P("x", None, ("y", "z"))
      P('x', None, ('y', 'z'))
      >>> P("x") is P("x"), P("x") == ("x",)
      (True, False)
    """

    __slots__ = ("_partitions", "unreduced", "reduced", "__weakref__")

    UNCONSTRAINED = UNCONSTRAINED

    def __new__(cls, *partitions, unreduced=frozenset(), reduced=frozenset()):
        partitions = _jax.canonicalize_partitions(partitions)
        unreduced = _as_frozenset(unreduced, "unreduced")
        reduced = _as_frozenset(reduced, "reduced")
        key = (partitions, unreduced, reduced)
        spec = _interned.get(key)
        if spec is None:
            _check_reductions(partitions, unreduced, reduced)
            spec = object.__new__(PartitionSpec)
            object.__setattr__(spec, "_partitions", partitions)
            object.__setattr__(spec, "unreduced", unreduced)
            object.__setattr__(spec, "reduced", reduced)
            spec = _interned.setdefault(key, spec)
        return spec

    def __init_subclass__(cls, **kwargs):
        raise TypeError("PartitionSpec cannot be subclassed; it is interned by value.")

    def __setattr__(self, name, value):
        raise AttributeError("PartitionSpec is immutable; build a new one (spec.update(...)).")

    @property
    def partitions(self) -> tuple:
        """The entries, one per leading dimension."""
        return self._partitions

    def __repr__(self) -> str:
        body = repr(self._partitions)[1:-1]
        extras = []
        if self.unreduced:
            extras.append(f"unreduced={set(self.unreduced)!r}")
        if self.reduced:
            extras.append(f"reduced={set(self.reduced)!r}")
        if not extras:
            return f"P({body})"
        body = "" if not body else f"{body} " if body.endswith(",") else f"{body}, "
        return f"P({body}{', '.join(extras)})"

    def __reduce__(self):
        return (_rebuild, (self._partitions, self.unreduced, self.reduced))

    def _guard(self, what: str) -> None:
        if self.unreduced or self.reduced:
            raise ValueError(
                f"PartitionSpec: {what} would drop the unreduced/reduced axes of {self}; use "
                "spec.partitions instead."
            )

    def __getitem__(self, i):
        self._guard("indexing")
        return self._partitions[i]

    def __iter__(self):
        self._guard("iterating")
        return iter(self._partitions)

    def __len__(self) -> int:
        return len(self._partitions)

    def __add__(self, other):
        if isinstance(other, PartitionSpec):
            return PartitionSpec(
                *self._partitions,
                *other._partitions,
                unreduced=self.unreduced | other.unreduced,
                reduced=self.reduced | other.reduced,
            )
        if isinstance(other, tuple):
            self._guard("adding a tuple")
            return PartitionSpec(*self._partitions, *other)
        return NotImplemented

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        self._guard("adding a tuple")
        return PartitionSpec(*other, *self._partitions)

    def index(self, value) -> int:
        """The position of the first entry equal to `value`."""
        return self._partitions.index(_jax.canonicalize_partition(value))

    def count(self, value) -> int:
        """How many entries equal `value`."""
        return self._partitions.count(_jax.canonicalize_partition(value))

    def update(self, partitions=None, unreduced=None, reduced=None) -> PartitionSpec:
        """A spec with some parts replaced."""
        return PartitionSpec(
            *(self._partitions if partitions is None else partitions),
            unreduced=self.unreduced if unreduced is None else unreduced,
            reduced=self.reduced if reduced is None else reduced,
        )

    def _normalized_spec_for_aval(self, ndim: int) -> PartitionSpec:
        """Padded with None to `ndim` entries, UNCONSTRAINED read as None."""
        out = [None if p is UNCONSTRAINED else p for p in self._partitions]
        out.extend([None] * (ndim - len(out)))
        return self.update(partitions=out)

    def _check_compatible_wrt_shape(self, shape) -> None:
        if len(shape) < len(self._partitions):
            hint = " For scalars the PartitionSpec should be P()" if not shape else ""
            raise ValueError(
                f"PartitionSpec {self} is only valid for values of rank at least "
                f"{len(self._partitions)}, but was applied to a value of rank {len(shape)}."
                f"{hint}"
            )


def _rebuild(partitions, unreduced, reduced) -> PartitionSpec:
    return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)


P = PartitionSpec


def axes_of(entry: Any) -> tuple:
    """The mesh axes one spec entry names (none for None or UNCONSTRAINED)."""
    if entry is None or entry is UNCONSTRAINED:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)

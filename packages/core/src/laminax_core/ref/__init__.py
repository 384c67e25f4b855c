"""Mutable array references (JAX's `jax.ref`): `new_ref`, `empty_ref`, `freeze`, `free_ref`,
`get`, `set`, `swap`, `addupdate`, and the `Ref` / `AbstractRef` types.

Example:
  >>> r = new_ref(np.zeros(3, np.float32))
  >>> r[1] = 5.0
  >>> np.asarray(freeze(r))
  array([0., 5., 0.], dtype=float32)
"""

from __future__ import annotations

from laminax_core._avals import AbstractRef as AbstractRef
from laminax_core._avals import Ref as Ref
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._interpreters import eval as eval_interpreter
from laminax_core._trace import Tracer
from laminax_core.ref import _discharge, _primitives
from laminax_core.ref._primitives import ref_addupdate as addupdate
from laminax_core.ref._primitives import ref_get as get
from laminax_core.ref._primitives import ref_set as set  # noqa: A001 (JAX's name)
from laminax_core.ref._primitives import ref_swap as swap

__all__ = [
    "AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get", "new_ref",
    "set", "swap",
]


def new_ref(init_val, *, memory_space=None, kind=None) -> Ref:
    """A mutable reference holding `init_val` (an array): read it with `r[idx]`, write with
    `r[idx] = v` (same dtype and shape as the indexed part), and inside `jit` or loops as
    well; `freeze(r)` gives the final array."""
    if isinstance(init_val, Ref):
        raise TypeError("new_ref expects an array, got a reference; freeze it first.")
    try:
        get_aval(init_val)
    except TypeError:
        raise TypeError(
            "Error interpreting argument to new_ref as a JAX value. The problematic value is of "
            f"type {type(init_val)} and was passed to new_ref at position 0.") from None
    return _primitives.new_ref_p.bind(init_val, kind=kind, memory_space=memory_space)


def empty_ref(ty, memory_space=None) -> Ref:
    """A reference of type `ty` (a ShapeDtypeStruct or array) with no meaningful contents
    until written (zeros when evaluated eagerly)."""
    return _primitives.empty_ref_p.bind(ty=ty if isinstance(ty, ShapedArray) else get_aval(ty),
                                        memory_space=memory_space)


def freeze(ref):
    """The array `ref` holds, as a value (JAX invalidates the reference afterwards)."""
    return _primitives.freeze_p.bind(ref)


def free_ref(ref) -> tuple:
    """Invalidates `ref` (nothing is computed)."""
    _primitives.free_ref_p.bind(ref)
    return ()


# `r[idx]`, `r[idx] = v`, `r.addupdate(x, idx)`: on concrete references and on traced ones (a
# tracer whose aval is an AbstractRef); other tracers keep jnp's indexing.
Ref.__getitem__ = get
Ref.__setitem__ = set
Ref.addupdate = lambda self, x, idx=(): addupdate(self, idx, x)
_array_getitem = Tracer.__getitem__
_array_setitem = getattr(Tracer, "__setitem__", None)


def _tracer_getitem(self, idx):
    if isinstance(self.aval, AbstractRef):
        return get(self, idx)
    return _array_getitem(self, idx)


def _tracer_setitem(self, idx, value):
    if isinstance(self.aval, AbstractRef):
        return set(self, idx, value)
    if _array_setitem is None:
        raise TypeError(f"'{type(self).__name__}' object does not support item assignment")
    return _array_setitem(self, idx, value)


Tracer.__getitem__ = _tracer_getitem
Tracer.__setitem__ = _tracer_setitem
Tracer.addupdate = lambda self, x, idx=(): addupdate(self, idx, x)

# The eval trace hands a higher-order primitive given concrete references to its rule.
eval_interpreter.ref_primitives = _discharge.discharge_rules
eval_interpreter.run_with_refs = _discharge.eager_with_refs
eval_interpreter.run_on_ref_values = _discharge.on_ref_values

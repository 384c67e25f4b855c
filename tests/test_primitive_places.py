"""Adding a primitive: each place a new one needs, and a failure that names the places it missed.

The recipe is in CONTRIBUTING.md. A lax primitive needs (1) its block in the family module,
listed in that module's `__all__` (lax's namespace is the families' `__all__` together), (2) an
`OpCase` row in `laminax_core.testing.OP_CASES`, (3) a lowering in dispatch; a jnp function
needs (4) its family module's `__all__`. The facade re-exports both namespaces as they are.
A forgotten rule fails at import (`define_primitive` has no default for one).
"""

import importlib
import pkgutil

import laminax.lax
import laminax.numpy
from laminax_core import lax, numpy as jnp
from laminax_core.internal import Primitive
from laminax_core.lax import _elementwise
from laminax_core.testing import OP_CASES
from laminax_dispatch._lowering import lowerings

# Named-axis collectives bind only under vmap, which batches them away (no lowering in dispatch;
# their tests are test_vmap.py and test_collectives_exchange.py); the higher-order primitives
# have test_control_flow.py (composite: test_lax_composite_vs_jax.py) instead of a row; iota
# takes no operands to draw; dimension_value has a value only inside a program exported with
# symbolic shapes (its tests are export's);
# rng_uniform and rng_bit_generator draw XLA's own random bits, which no NumPy reference
# reproduces (tests/test_lax_rng_ragged_vs_jax.py compares them with JAX's); create_token and
# after_all make tokens, no arrays (tests/test_lax_tokens_vs_jax.py); platform_index has no
# operands and its value depends on the platforms lowered for
# (tests/test_export_multiplatform_vs_jax.py). ragged_all_to_all has no vmap rule over its own
# axis and XLA:CPU cannot run it (tests/test_toplevel_names2_vs_jax.py checks its jaxprs,
# lowering and errors).
_COLLECTIVES = {"all_gather", "all_to_all", "axis_index", "pbroadcast", "pmax", "pmin", "ppermute",
                "psum", "reduce_scatter", "ragged_all_to_all"}
_NO_ROW = _COLLECTIVES | {"cond", "scan", "while", "composite", "iota", "dimension_value",
                          "rng_uniform", "rng_bit_generator", "create_token", "after_all",
                          "platform_index",
                          # shard_map's varying-manual-axes casts: they appear only while a
                          # check_vma body is typed (tests/test_shard_map_vma_vs_jax.py)
                          "pvary", "psum_invariant"}
_NOT_LOWERED_IN_DISPATCH = _COLLECTIVES - {"pmax", "pmin", "psum"}


def _lax_modules():
    return [importlib.import_module(m.name)
            for m in pkgutil.walk_packages(lax.__path__, "laminax_core.lax.")]


def primitives_outside_the_namespace(modules) -> list[str]:
    """`module.name` of each primitive a lax module holds that neither `lax` nor `lax.linalg`
    exports (nor `lax._NOT_LAX` keeps out on purpose)."""
    exported = {id(getattr(ns, n)) for ns in (lax, lax.linalg) for n in ns.__all__}
    return sorted(f"{module.__name__}.{name}" for module in modules
                  for name, value in vars(module).items()
                  if isinstance(value, Primitive) and id(value) not in exported
                  and name not in lax._NOT_LAX)


def places_missed(name: str, primitive) -> list[str]:
    """The places the lax primitive `lax.<name>` lacks, in words."""
    missed = []
    if primitive.name not in {case.name for case in OP_CASES} | _NO_ROW:
        missed.append("an OpCase row in laminax_core/testing.py OP_CASES")
    if primitive not in lowerings and primitive.name not in _NOT_LOWERED_IN_DISPATCH:
        missed.append("a lowering in laminax_dispatch/_lowering/<family>.py")
    if getattr(laminax.lax, name, None) is not primitive:
        missed.append("the facade's laminax.lax")
    return missed


def test_every_lax_primitive_is_in_its_family_all():
    missing = primitives_outside_the_namespace(_lax_modules())
    assert not missing, f"add these to their module's __all__ (that is lax's namespace): {missing}"


def test_every_lax_primitive_has_every_place():
    missed = {f"lax.{n}": places for n in lax.__all__ if isinstance(getattr(lax, n), Primitive)
              if (places := places_missed(n, getattr(lax, n)))}
    assert not missed, f"primitives missing a place (see CONTRIBUTING.md): {missed}"


def test_the_namespaces_are_the_families_all_and_the_facade_has_them():
    for family in lax._FAMILIES:
        assert {n for n in family.__all__ if n not in lax._NOT_LAX} <= set(lax.__all__)
    for family in jnp._FAMILIES:
        assert {n for n in family.__all__ if n not in jnp._NOT_JNP} <= set(jnp.__all__)
    assert set(lax.__all__) <= set(laminax.lax.__all__)
    assert set(jnp.__all__) <= set(laminax.numpy.__all__)


def test_a_new_primitive_missing_every_place_is_named(monkeypatch):
    new_p = Primitive("brand_new")
    monkeypatch.setattr(_elementwise, "brand_new_p", new_p, raising=False)
    assert primitives_outside_the_namespace([_elementwise]) == [
        "laminax_core.lax._elementwise.brand_new_p"]
    assert places_missed("brand_new_p", new_p) == [
        "an OpCase row in laminax_core/testing.py OP_CASES",
        "a lowering in laminax_dispatch/_lowering/<family>.py",
        "the facade's laminax.lax",
    ]

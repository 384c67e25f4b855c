"""Effects: side effects that equations and jaxprs carry.

An effect is an instance of a subclass of `Effect` (equal and hashable, so sets of effects
compare). A primitive reports the effects of one application from its effectful abstract eval;
every equation stores them and a jaxpr's `effects` is the union over its equations. Effect
*types* are classified in registries that the layers above consult: `ordered_effects` (runtime
tokens thread them in program order), `lowerable_effects`, and `control_flow_allowed_effects`.
Dead-code elimination never removes an equation with effects.

Example:
  >>> class PrintEffect(Effect): pass
  >>> ordered_effects.add_type(PrintEffect)
  >>> ordered_effects.contains(PrintEffect())
  True
"""

from __future__ import annotations

__all__ = [
    "Effect",
    "EffectTypeSet",
    "Effects",
    "control_flow_allowed_effects",
    "no_effects",
    "ordered_effects",
    "lowerable_effects",
]


class Effect:
    """Base class of effects. Subclass it; instances of one subclass with no fields are equal."""

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(vars(self).items(), key=lambda kv: kv[0]))))

    def __repr__(self) -> str:
        return type(self).__name__


Effects = frozenset  # a set of effects, as stored on equations and jaxprs
no_effects: frozenset[Effect] = frozenset()


class EffectTypeSet:
    """A registry of effect types (classes), asked about effect instances."""

    def __init__(self, name: str):
        self.name = name
        self._types: set[type] = set()

    def add_type(self, effect_type: type) -> None:
        """Registers `effect_type` (a subclass of `Effect`)."""
        if not (isinstance(effect_type, type) and issubclass(effect_type, Effect)):
            raise TypeError(
                f"{self.name}.add_type expects a subclass of Effect, got {effect_type!r}."
            )
        self._types.add(effect_type)

    def contains(self, effect: Effect) -> bool:
        """Whether `effect` is an instance of a registered type."""
        return isinstance(effect, tuple(self._types))

    def filter_in(self, effects) -> list[Effect]:
        """The effects of a registered type."""
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects) -> list[Effect]:
        """The effects of no registered type."""
        return [e for e in effects if not self.contains(e)]


ordered_effects = EffectTypeSet("ordered_effects")
lowerable_effects = EffectTypeSet("lowerable_effects")
control_flow_allowed_effects = EffectTypeSet("control_flow_allowed_effects")

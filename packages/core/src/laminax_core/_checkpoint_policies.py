"""`checkpoint_name` and the policies of `checkpoint(policy=...)`.

A policy is called as `policy(primitive, *avals, **params)` for each equation of a checkpointed
function whose inputs are known under differentiation, and answers whether its outputs may be
saved for the backward pass: a bool, or one of `Saveable`, `Recompute`, `Offloadable(src, dst)`.
`checkpoint_name(x, name)` binds the identity primitive `name`, which the name-based policies
look for.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from typing import NamedTuple

from laminax_pytree import keystr, tree_flatten, tree_flatten_with_path, tree_map, tree_unflatten

from laminax_core._avals import get_aval
from laminax_core._interpreters import partial_eval
from laminax_core._jaxpr import Literal
from laminax_core._primitive import NOT_LINEAR, define_primitive

__all__ = [
    "DotsSaveable",
    "SaveAnyNamesButThese",
    "SaveOnlyTheseNames",
    "everything_saveable",
    "nothing_saveable",
    "offload_dot_with_no_batch_dims",
    "save_and_offload_only_these_names",
    "save_any_names_but_these",
    "save_anything_except_these_names",
    "save_from_both_policies",
    "save_only_these_names",
    "Offloadable",
    "Recompute",
    "Saveable",
    "checkpoint_name",
    "checkpoint_policies",
    "name_p",
    "policy_saves",
    "print_saved_residuals",
    "saved_residuals",
]


class _Decision:
    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return self._name


Saveable = _Decision("Saveable")
"""A policy's answer: save the equation's outputs."""
Recompute = _Decision("Recompute")
"""A policy's answer: recompute the equation in the backward pass."""


class Offloadable(NamedTuple):
    """A policy's answer: save the outputs in memory kind `dst` (moved back from `src`).
    laminax runs on one memory space per device, so an offloaded residual stays where it is:
    the values computed are the same."""

    src: str
    dst: str


def policy_saves(policy, primitive, avals, params) -> bool:
    """Whether `policy` lets an equation's outputs be saved (None saves nothing)."""
    if policy is None:
        return False
    decision = policy(primitive, *avals, **params)
    if decision is Recompute:
        return False
    return decision is Saveable or isinstance(decision, Offloadable) or bool(decision)


# ----- checkpoint_name ----------------------------------------------------------------------


def checkpoint_name(x, name):
    """`x` (a pytree of arrays) unchanged, tagged `name` for the policies of `checkpoint`
    (`save_only_these_names` ...).

    Example:
      >>> checkpoint_name(np.float32(2.0), "two")
      array(2., dtype=float32)
    """
    return tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


def _name_jvp(primals, tangents, *, name):
    # only the primal is named: policies choose among primal values
    return name_p.bind(primals[0], name=name), tangents[0]


name_p = define_primitive(
    "name",
    abstract_eval=lambda aval, *, name: aval,
    reference=lambda x, *, name: x,
    jvp=_name_jvp,
    transpose=NOT_LINEAR,
    batch=lambda axis_data, args, dims, *, name: (name_p.bind(args[0], name=name), dims[0]),
)


# ----- the policies -------------------------------------------------------------------------


def nothing_saveable(primitive, *avals, **params) -> bool:
    """Saves nothing but the inputs: everything is recomputed."""
    return False


def everything_saveable(primitive, *avals, **params) -> bool:
    """Saves every intermediate value (no recomputation)."""
    return True


@dataclasses.dataclass(frozen=True)
class DotsSaveable:
    """Saves `dot_general` results (only those without batch dimensions if
    `only_if_no_batch_dims`)."""

    only_if_no_batch_dims: bool = False

    def __call__(self, primitive, *avals, **params) -> bool:
        if primitive.name != "dot_general":
            return False
        if not self.only_if_no_batch_dims:
            return True
        (_, _), (lhs_batch, _) = params["dimension_numbers"]
        return not lhs_batch


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
    """Saves the values tagged by `checkpoint_name` with one of `saveable_names`."""

    saveable_names: frozenset

    def __call__(self, primitive, *avals, **params) -> bool:
        return primitive is name_p and params["name"] in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
    """Saves the values tagged by `checkpoint_name`, except those named in `names`."""

    names: frozenset

    def __call__(self, primitive, *avals, **params) -> bool:
        return primitive is name_p and params["name"] not in self.names


def save_only_these_names(*names):
    """The policy saving only the values named (by `checkpoint_name`) one of `names`."""
    return SaveOnlyTheseNames(frozenset(names))


def save_any_names_but_these(*names):
    """The policy saving every named value except those named one of `names`."""
    return SaveAnyNamesButThese(frozenset(names))


def save_anything_except_these_names(*names):
    """JAX 0.10.2's policy of this name saves everything, whatever the names (its
    implementation ignores them); laminax's does the same, so programs save what they do there."""
    return everything_saveable


def save_from_both_policies(policy_1, policy_2):
    """The policy saving what either boolean policy saves."""

    def policy(primitive, *avals, **params):
        first = policy_1(primitive, *avals, **params)
        second = policy_2(primitive, *avals, **params)
        if not (isinstance(first, bool) and isinstance(second, bool)):
            raise ValueError(
                "save_from_both_policies combines policies returning booleans; got "
                f"{first} and {second}. Write the combined policy as a function instead.")
        return first or second

    return policy


def save_and_offload_only_these_names(
    *, names_which_can_be_saved, names_which_can_be_offloaded, offload_src, offload_dst
):
    """As `save_only_these_names`, with the values named in `names_which_can_be_offloaded`
    offloaded to memory kind `offload_dst` instead of recomputed."""
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    if saved & offloaded:
        raise ValueError(
            "names_which_can_be_saved and names_which_can_be_offloaded must not share names; "
            f"both have {saved & offloaded}.")

    def policy(primitive, *avals, **params):
        if primitive is name_p and params["name"] in saved:
            return Saveable
        if primitive is name_p and params["name"] in offloaded:
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute

    return policy


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """As `dots_with_no_batch_dims_saveable`, offloading the saved products to memory kind
    `offload_dst`."""

    def policy(primitive, *avals, **params):
        if primitive.name == "dot_general":
            (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
            if not lhs_batch and not rhs_batch:
                return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute

    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=DotsSaveable(False),
    checkpoint_dots=DotsSaveable(False),
    dots_with_no_batch_dims_saveable=DotsSaveable(True),
    checkpoint_dots_with_no_batch_dims=DotsSaveable(True),
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
)
"""Policies for `checkpoint(policy=...)`: `policy(primitive, *avals, **params)` says whether
an equation's outputs may be saved for the backward pass."""


# ----- what the backward pass keeps ---------------------------------------------------------


def _argument_names(f, args, kwargs) -> list[str | None]:
    """`p['a']`, `z`, ...: each flattened argument named after the parameter it is passed as,
    as JAX's debug information names them (None where the signature cannot say)."""
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [None] * len(tree_flatten((args, kwargs))[0])
    names: list[str | None] = []
    for param, value in bound.arguments.items():
        kind = bound.signature.parameters[param].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            value, prefix = tuple(value), param
        elif kind is inspect.Parameter.VAR_KEYWORD:
            value, prefix = dict(value), param
        else:
            prefix = param
        # JAX orders keyword arguments after the positional ones, as tree_flatten((args, kwargs))
        names += [prefix + keystr(path) for path, _ in tree_flatten_with_path(value)[0]]
    if len(names) != len(tree_flatten((args, kwargs))[0]):
        return [None] * len(tree_flatten((args, kwargs))[0])
    return names


def saved_residuals(f, *args, **kwargs) -> list[tuple]:
    """The values `vjp(f, *args, **kwargs)` keeps for the backward pass: `(aval, source)`
    pairs, the source saying which argument or equation each comes from."""
    leaves, in_tree = tree_flatten((args, kwargs))

    def flat(*xs):
        a, k = tree_unflatten(in_tree, xs)
        return tree_flatten(f(*a, **k))[0]

    def residuals_of(*xs):
        return partial_eval.linearize_flat(flat, xs, transformation="vjp")[2]

    closed, _ = partial_eval.trace_to_jaxpr(residuals_of, [get_aval(x) for x in leaves],
                                             "saved_residuals")
    jaxpr = closed.jaxpr
    # the rounding of a residual to its own precision is not its source
    through = {id(e.outvars[0]): e.invars[0] for e in jaxpr.eqns
               if e.primitive.name == "reduce_precision"}
    res = [through.get(id(v), v) for v in jaxpr.outvars]
    res_ids = {id(v) for v in res if not isinstance(v, Literal)}
    found = [(v.aval, "from a literal") for v in res if isinstance(v, Literal)]
    found += [(v.aval, "from a constant") for v in jaxpr.constvars if id(v) in res_ids]
    names = _argument_names(f, args, kwargs)
    for i, v in enumerate(jaxpr.invars):
        if id(v) in res_ids:
            where = (f"from the argument {names[i]}" if names[i]
                     else f"from the argument at flattened index {i}")
            found.append((v.aval, where))
    for eqn in jaxpr.eqns:
        for v in eqn.outvars:
            if id(v) not in res_ids:
                continue
            src = eqn.source_info or "<unknown>"
            if eqn.primitive is name_p:
                found.append((v.aval, f"named '{eqn.params['name']}' from {src}"))
            elif eqn.primitive.name == "jit":
                found.append((v.aval, f"output of jitted function '{eqn.params['name']}' "
                                      f"from {src}"))
            else:
                found.append((v.aval, f"output of {eqn.primitive.name} from {src}"))
    return found


def print_saved_residuals(f, *args, **kwargs) -> None:
    """Prints, one a line, the values `vjp(f, *args, **kwargs)` keeps for the backward pass
    and where each comes from (see `saved_residuals`).

    Example:
      >>> print_saved_residuals(lambda x: lax.sin(x), np.float32(1.0))
      f32[] output of cos from ...
    """
    for aval, source in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {source}")

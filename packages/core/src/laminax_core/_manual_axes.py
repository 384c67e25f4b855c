"""Varying-manual-axes types ("vma"), as JAX 0.10.2 has them inside `shard_map` with
`check_vma=True`.

While such a body is traced, `state.axes` holds the manual mesh axes (in mesh order) and every
equation staged into a jaxpr is typed here: each output's `ManualAxisType` says which manual
axes the value may differ over. The rules:

- operands that vary over fewer axes than the others are first cast with `pvary` (a no-op
  on devices, printed in the jaxpr), so an equation's operands agree, as JAX inserts it;
- collectives over named axes (`psum_invariant`, `pmax`, `all_gather`, `ppermute` ...) first
  make their operand vary over those axes; reductions then remove the axes, data-moving
  collectives keep them; `axis_index` varies over its axis;
- equations holding jaxprs (jit, cond, scan, while, custom derivatives, nested shard_map)
  take their types from their bodies, traced on typed inputs (their abstract evaluation);
- everything else varies over the union of its operands.

Outside such a body `active` is 0 and staging pays one module-attribute read.
"""

from __future__ import annotations

import threading

from laminax_core import config as _config
from laminax_core._avals import EMPTY_MAT, ManualAxisType, ShapedArray, get_aval
from laminax_core._jaxpr import ClosedJaxpr, Jaxpr

__all__ = ["active", "state", "typing_rules", "stage_typed", "varying", "typed", "checking", "vary_like"]


class _State(threading.local):
    """Per thread: `axes`, the manual mesh axes of the check_vma body being traced (None
    outside one)."""

    axes: tuple | None = None  # the manual mesh axes, in mesh order, of a check_vma body


state = _State()
# how many typed bodies are being traced, in any thread: staging reads this module global
# first (cheaper than the thread-local) and the thread's `state` only when it is non-zero
active = 0

# primitive -> rule(in_varying: list[frozenset], params) -> list[frozenset] per output; a
# rule may also be a `collective` entry (the params key naming its axes, and whether the
# collective removes them)
typing_rules: dict = {}
# primitives whose operands are made to vary over their named axes first: primitive ->
# (params key of the axes, removes the axes)
collectives: dict = {}
# primitives bound by `pvary` (registered by lax, which defines it)
pvary_primitive: list = []


class checking:
    """Types equations staged in the block with the manual `axes` (None: untyped, for a
    `check_vma=False` body)."""

    def __init__(self, axes):
        self.axes = None if axes is None else tuple(axes)

    def __enter__(self):
        global active
        self.prev, state.axes = state.axes, self.axes
        active += 1

    def __exit__(self, *exc):
        global active
        state.axes = self.prev
        active -= 1


def varying(x) -> frozenset:
    """The manual axes `x` varies over (empty outside a check_vma body)."""
    aval = get_aval(x)
    return aval.manual_axis_type.varying if isinstance(aval, ShapedArray) else frozenset()


def typed(vma: frozenset) -> ManualAxisType:
    return EMPTY_MAT if not vma else ManualAxisType(varying=vma, order=state.axes or ())


def _names(value) -> tuple:
    names = value if isinstance(value, tuple | list) else (value,)
    return tuple(n for n in names if not isinstance(n, int))


def _has_jaxpr(params) -> bool:
    for value in params.values():
        if isinstance(value, Jaxpr | ClosedJaxpr):
            return True
        if isinstance(value, tuple) and value and isinstance(value[0], Jaxpr | ClosedJaxpr):
            return True
    return False


def _ordered(names) -> tuple:
    order = state.axes or ()
    return tuple(n for n in order if n in names) + tuple(n for n in names if n not in order)


def _cast(trace, x, missing):
    return trace.stage(pvary_primitive[0], [x], {"axes": _ordered(missing)})


def stage_typed(trace, primitive, args, params):
    """`(args, fix)`: the operands `trace.stage` records (pvary'd where needed) and the
    function typing its output avals, or fix None when the abstract evaluation types them."""
    rule = typing_rules.get(primitive)
    if rule is None and _has_jaxpr(params):
        return args, None
    avals = [get_aval(x) for x in args]
    vmas = [a.manual_axis_type.varying if isinstance(a, ShapedArray) else None for a in avals]
    entry = collectives.get(primitive)
    if entry is not None:
        key, removes = entry
        axes = frozenset(_names(params[key])) & frozenset(state.axes or ())
        if removes and primitive.name.startswith("psum"):
            for v in vmas:
                if v is not None and v & axes and not axes <= v:
                    raise ValueError(
                        f"jax.lax.{primitive.name} can only accept axis_name which corresponds "
                        "to one of varying, unreduced, reduced or invarying state of the input. "
                        f"Got input varying over {set(v)} and axes {_ordered(axes)}; reduce over "
                        "the axes it varies over and the others separately.")
        if not _config.auto_pcast.value:
            _refuse_collective(primitive, removes, params[key], vmas, axes)
        args = [x if v is None or axes <= v else _cast(trace, x, axes - v)
                for x, v in zip(args, vmas, strict=True)]
        vmas = [v if v is None else v | axes for v in vmas]
        outs = [v - axes if removes else v for v in vmas if v is not None]
        return args, _fixer(outs)
    if rule is not None:
        return args, _fixer(rule([v or frozenset() for v in vmas], params))
    union = frozenset().union(*(v for v in vmas if v is not None))
    if union and len(args) > 1:
        if not _config.auto_pcast.value and any(v is not None and v != union for v in vmas):
            raise ValueError(f"Primitive {primitive.name} requires varying manual axes to match, "
                             f"but got {[v for v in vmas if v is not None]}.{_WORKAROUND}")
        args = [x if v is None or v == union else _cast(trace, x, union - v)
                for x, v in zip(args, vmas, strict=True)]
    return args, _fixer(None, union)


_WORKAROUND = (" Please open an issue at https://github.com/jax-ml/jax/issues and as a temporary "
               "workaround pass the check_vma=False argument to `jax.shard_map`")


def _refuse_collective(primitive, removes, names, vmas, axes) -> None:
    # jax_auto_pcast off: no pvary is inserted, so an operand must already vary over the axes
    for v in vmas:
        if v is None or axes <= v:
            continue
        if removes:
            raise ValueError(
                "psum is a variant->invariant collective. This means that the axis names "
                "mentioned in `axes` passed to `psum` must be present in "
                f"`jax.typeof(inp).mat.varying`. Got axes={_names(names)} and "
                f"jax.typeof(inp).mat.varying={v}")
        raise ValueError(f"Collective {primitive.name} must be applied to a device-varying  "
                         f"type, but got {v} for collective acting over axis name "
                         f"{_names(names)}.{_WORKAROUND}")


def _fixer(outs, same=None):
    def fix(avals_out):
        result = []
        for i, aval in enumerate(avals_out):
            vma = same if outs is None else outs[i] if i < len(outs) else outs[-1]
            if isinstance(aval, ShapedArray) and aval.manual_axis_type.varying != vma:
                aval = aval.update(manual_axis_type=typed(vma))
            result.append(aval)
        return result

    return fix


def vary_like(like, out):
    """`out` (a fresh constant: `zeros_like(like)`, `full_like`) made to vary as `like` does,
    as JAX's `*_like` functions give it `like`'s type inside a check_vma body."""
    if state.axes is None:
        return out
    vma = varying(like) - varying(out)
    if not vma:
        return out
    return pvary_primitive[0].bind(out, axes=_ordered(vma))

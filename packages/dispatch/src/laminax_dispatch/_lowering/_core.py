"""Lowering jaxprs to StableHLO: the rule table, the contexts rules receive, and the interpreter.

A lowering rule is `rule(ctx, *operands, **params) -> value or list of values`, where the
operands are `ir.Value`s and `ctx` is a `LoweringRuleContext` (the avals in and out, the
module being built, the runtime tokens of ordered effects). Rules live in one module per core
lax module (`elementwise.py` beside `lax/_elementwise.py`) and are registered with
`register_lowering(prim, rule)` or `@lowering_for(prim)`.

`jaxpr_subcomp` interprets a jaxpr inside the current insertion point (reading each equation's
operands from an environment, applying its rule, writing its results), and `lower_jaxpr`
builds a whole module around it with `_mlir.build_module`. Every operation gets a location made
of the name stack (`jit(f)/sin`) and the user's source line that staged the equation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core import config as core_config
from laminax_core import dtypes
from laminax_core import lax
from laminax_core.internal import (
    ClosedJaxpr,
    discharge_jaxpr,
    has_refs,
    DropVar,
    Jaxpr,
    Literal,
    PRNGKeyArray,
    ShapedArray,
    ordered_effects,
    register_describer,
    trace_to_jaxpr,
)

from laminax_dispatch._lowering._shardings import (
    MeshTable,
    ShardingContext,
    memory_kind_of,
    place_in_memory,
    register_meshes,
    sharding_attribute,
)
from laminax_dispatch._lowering import _dynamic
from laminax_dispatch._mlir import (
    _element_type, aval_to_ir_type, build_module, physical_aval, token_type)

__all__ = [
    "LoweringResult",
    "LoweringRuleContext",
    "ModuleContext",
    "broadcast_to_aval",
    "elementwise",
    "get_lowering",
    "ir_constant",
    "jaxpr_subcomp",
    "lower_jaxpr",
    "lower_fun",
    "lowering_for",
    "lowerings",
    "register_lowering",
    "result_accuracy",
    "is_embedded_constant",
    "lowering_module_name",
    "lower_private_function",
    "compare",
    "full_like",
    "convert",
]

# primitive -> rule; primitive -> "file:line" of the registration
lowerings: dict[Any, Callable] = {}
registered_at: dict[Any, str] = {}

embedded_constants_max_bytes = core_config.config.define_int_state(
    "jax_embedded_constants_max_bytes",
    32,
    "Closed-over constants larger than this many bytes are passed to the compiled program as "
    "arguments instead of being embedded in the StableHLO module.",
    include_in_jit_key=True,
    include_in_trace_context=True,
)


def _registration_site() -> str:
    frame = sys._getframe(2)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def register_lowering(primitive, rule: Callable) -> Callable:
    """Registers `rule(ctx, *operands, **params)` as `primitive`'s StableHLO lowering.

    Args:
      primitive: a core `Primitive`.
      rule: returns one `ir.Value` (or a list of them for `multiple_results` primitives).

    Returns:
      `rule`, so that this also works as a decorator through `lowering_for`.

    Example:
      >>> from jaxlib.mlir.dialects import stablehlo as hlo
      >>> from laminax_core.internal import Primitive
      >>> my_sin_p = Primitive("my_sin")
      >>> _ = register_lowering(my_sin_p, elementwise(hlo.sine))
    """
    lowerings[primitive] = rule
    registered_at[primitive] = _registration_site()
    return rule


def lowering_for(primitive) -> Callable[[Callable], Callable]:
    """Decorator form of `register_lowering`.

    Example:
      >>> from jaxlib.mlir.dialects import stablehlo as hlo
      >>> from laminax_core.internal import Primitive
      >>> my_neg_p = Primitive("my_neg")
      >>> @lowering_for(my_neg_p)
      ... def _my_neg_lower(ctx, x):
      ...     return hlo.negate(x)
    """

    def decorate(rule: Callable) -> Callable:
        lowerings[primitive] = rule
        registered_at[primitive] = _registration_site()
        return rule

    return decorate


def get_lowering(primitive) -> Callable:
    """`primitive`'s lowering rule, or JAX's NotImplementedError saying how to add one."""
    rule = lowerings.get(primitive)
    if rule is None:
        raise NotImplementedError(
            f"jit: primitive {primitive.name!r} has no StableHLO lowering. Register one with "
            f"laminax_dispatch.register_lowering({primitive.name}_p, rule)."
        )
    return rule


# ----- contexts -----------------------------------------------------------------------------


class ModuleContext:
    """What every rule of one module shares: the module, its symbol names and function cache."""

    def __init__(self, module: ir.Module, name: str, axis_context=None):
        self.module = module
        self.name = name
        # the devices being lowered for (`_shardings.ShardingContext`, or shard_map's
        # `SPMDAxisContext` inside a manual region); rules read it for collectives
        self.axis_context = axis_context or ShardingContext(())
        # the Shardy meshes the module's sharding attributes refer to
        self.meshes = MeshTable()
        self._symbols: set[str] = {"main"}
        # (id(jaxpr), ...) -> name of the private function lowered for it (nested jit calls)
        self.function_cache: dict[Any, tuple[str, Any]] = {}
        # Python functions the module calls on the host; compiled in, kept alive by the executable
        self.host_callbacks: list[Callable] = []
        # platform_index result -> the branch each lowering platform takes (cond lowers a
        # branch only for the platforms that take it)
        self.platform_choices: dict[ir.Value, tuple] = {}
        # objects lowering rules ask to outlive the lowering (JAX's `add_keepalive`)
        self.keepalives: list = []
        self.program_shardings: list = []

    @contextlib.contextmanager
    def using_axis_context(self, axis_context):
        """Lowers what runs inside the `with` block under `axis_context` (shard_map's body
        under its `SPMDAxisContext`), restoring the previous one after."""
        previous, self.axis_context = self.axis_context, axis_context
        try:
            yield axis_context
        finally:
            self.axis_context = previous

    def add_host_callback(self, callback: Callable) -> int:
        """Registers a host callback; returns its index (the custom call's `index` attribute)."""
        self.host_callbacks.append(callback)
        return len(self.host_callbacks) - 1

    def add_keepalive(self, keepalive) -> None:
        """Keeps `keepalive` alive as long as this module context (JAX's hook for what a
        lowered host call refers to; laminax's executables already hold their callbacks)."""
        self.keepalives.append(keepalive)

    def unique_symbol(self, base: str) -> str:
        """A function name not yet used in the module (`f`, `f_0`, `f_1`, ...)."""
        name, counter = base, 0
        while name in self._symbols:
            name = f"{base}_{counter}"
            counter += 1
        self._symbols.add(name)
        return name


@dataclasses.dataclass
class LoweringRuleContext:
    """What a rule knows about the equation it lowers.

    Attributes:
      module_context: the module being built (for private functions).
      primitive: the primitive being lowered.
      avals_in, avals_out: the abstract values of the operands and results.
      tokens_in: effect -> token value, for the equation's ordered effects.
      tokens_out: the rule sets the updated tokens here (unchanged by default).
      name_stack: `jit(f)/jit(g)`, for locations and nested functions.
    """

    module_context: ModuleContext
    primitive: Any
    avals_in: Sequence[ShapedArray]
    avals_out: Sequence[ShapedArray]
    tokens_in: dict
    name_stack: str
    tokens_out: dict | None = None

    @property
    def axis_context(self):
        """The devices being lowered for (`ShardingContext`, or `SPMDAxisContext` inside a
        manual region): what collectives over named mesh axes read."""
        return self.module_context.axis_context


# ----- constants and broadcasting -----------------------------------------------------------

_VIEW_AS_INT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _dense_attr(value: np.ndarray, element_type: ir.Type) -> ir.DenseElementsAttr:
    shape = list(value.shape)
    if value.dtype == np.bool_:
        data = value.astype(np.uint8)
    elif value.dtype.itemsize == 0:  # float0: no data, lowered as bool zeros (as JAX's)
        data = np.zeros(value.shape, np.uint8)
    elif value.dtype.kind == "V" or value.dtype.type.__module__.startswith("ml_dtypes"):
        data = value.view(_VIEW_AS_INT[value.dtype.itemsize])  # bfloat16, float8: raw bits
    else:
        data = value
    return ir.DenseElementsAttr.get(np.ascontiguousarray(data), type=element_type, shape=shape)


def ir_constant(value) -> ir.Value:
    """A `stablehlo.constant` for a NumPy value; a broadcast view of one value (zero strides in
    every dimension longer than 1, as `np.broadcast_to` makes) becomes a scalar constant
    broadcast with `broadcast_in_dim`, as JAX emits them; typed keys give their data."""
    value = np.asarray(value._base if isinstance(value, PRNGKeyArray) else value)
    element_type = _element_type(value.dtype)
    if value.size > 1 and all(
        s == 0 for s, n in zip(value.strides, value.shape, strict=True) if n > 1
    ):
        scalar = hlo.constant(_dense_attr(value.reshape(-1)[:1].reshape(()), element_type))
        result_type = ir.RankedTensorType.get(list(value.shape), element_type)
        return hlo.broadcast_in_dim(result_type, scalar, [])
    return hlo.constant(_dense_attr(value, element_type))


def broadcast_to_aval(x: ir.Value, aval_in: ShapedArray, aval_out: ShapedArray) -> ir.Value:
    """`x` broadcast to `aval_out`'s shape: rank-0 operands and size-1 dims (core's rule)."""
    if aval_in.shape == aval_out.shape:
        return x
    result_type = aval_to_ir_type(aval_out.update(dtype=aval_in.dtype))
    dims = [] if aval_in.ndim == 0 else list(range(aval_in.ndim))
    return _dynamic.broadcast_in_dim(result_type, x, aval_out.shape, dims)


def result_accuracy(accuracy) -> ir.Attribute:
    """stablehlo's result_accuracy for a lax.AccuracyMode or a lax.Tolerance."""
    if isinstance(accuracy, lax.Tolerance):
        return hlo.ResultAccuracyAttr.get(float(accuracy.atol), float(accuracy.rtol),
                                          int(accuracy.ulps), "TOLERANCE")
    if isinstance(accuracy, lax.AccuracyMode):
        return hlo.ResultAccuracyAttr.get(0.0, 0.0, 0, accuracy.name)
    raise TypeError(f"accuracy must be a lax.AccuracyMode or a lax.Tolerance, got {accuracy!r}")


def elementwise(op: Callable) -> Callable:
    """The lowering of a primitive that maps 1:1 onto an elementwise StableHLO op.

    Operands are broadcast to the output shape first (lax allows rank-0 operands); an
    `accuracy` (lax.AccuracyMode or lax.Tolerance) becomes the op's `result_accuracy`.

    Example:
      >>> from jaxlib.mlir.dialects import stablehlo as hlo
      >>> rule = elementwise(hlo.add)
    """

    def rule(ctx: LoweringRuleContext, *args, **params):
        out_shape = ctx.avals_out[0].shape
        operands = [
            broadcast_to_aval(x, a, a.update(shape=out_shape))
            for x, a in zip(args, ctx.avals_in, strict=True)
        ]
        out = op(*operands)
        if params.get("accuracy") is not None:
            out.owner.attributes["result_accuracy"] = result_accuracy(params["accuracy"])
        return out

    rule.__name__ = f"elementwise_{getattr(op, '__name__', 'op')}"
    return rule


# ----- the jaxpr interpreter ----------------------------------------------------------------


def _location(source_info: str, name: str) -> ir.Location:
    file, _, line = source_info.rpartition(":")
    if file and line.isdigit():
        return ir.Location.name(name, childLoc=ir.Location.file(file, int(line), 0))
    return ir.Location.name(name)


def _lower_eqn(mctx: ModuleContext, eqn, name_stack: str, tokens: dict, operands) -> list:
    rule = get_lowering(eqn.primitive)
    if eqn.name_stack:  # the equation's `named_scope`s, inside the enclosing computation's
        name_stack = f"{name_stack}/{eqn.name_stack}"
    effects = [e for e in eqn.effects if ordered_effects.contains(e)]
    ctx = LoweringRuleContext(
        mctx,
        eqn.primitive,
        [a.aval for a in eqn.invars],
        [v.aval for v in eqn.outvars],
        {e: tokens[e] for e in effects if e in tokens},  # none inside a manual region
        name_stack,
    )
    with _location(eqn.source_info, f"{name_stack}/{eqn.primitive.name}"):
        outs = rule(ctx, *operands, **eqn.params)
    if isinstance(outs, ir.Value | ir.OpResult):
        outs = [outs]
    elif isinstance(outs, ir.OpView | ir.Operation):
        outs = list(outs.results)
    outs = list(outs)
    if len(outs) != len(eqn.outvars):
        raise ValueError(
            f"the lowering of {eqn.primitive.name!r} returned {len(outs)} values for "
            f"{len(eqn.outvars)} results; a rule returns one value per result."
        )
    if ctx.tokens_out:
        tokens.update(ctx.tokens_out)
    return outs


def jaxpr_subcomp(
    mctx: ModuleContext,
    jaxpr: Jaxpr,
    name_stack: str,
    tokens: dict,
    consts: Sequence[ir.Value],
    *args: ir.Value,
) -> tuple[list[ir.Value], dict]:
    """Emits `jaxpr`'s equations at the current insertion point.

    Args:
      mctx: the module context.
      jaxpr: the program.
      name_stack: the location prefix (`jit(f)`).
      tokens: effect -> current token value, for the jaxpr's ordered effects.
      consts: values for the constvars; args: values for the invars.

    Returns:
      `(outputs, tokens)`: the output values and the updated tokens.
    """
    env: dict[int, ir.Value] = {}
    tokens = dict(tokens)

    def read(atom):
        if isinstance(atom, Literal):
            return ir_constant(atom.val)
        return env[id(atom)]

    for var, value in zip([*jaxpr.constvars, *jaxpr.invars], [*consts, *args], strict=True):
        env[id(var)] = value
    for eqn in jaxpr.eqns:
        outs = _lower_eqn(mctx, eqn, name_stack, tokens, [read(a) for a in eqn.invars])
        for var, value in zip(eqn.outvars, outs, strict=True):
            if not isinstance(var, DropVar):
                env[id(var)] = value
    return [read(v) for v in jaxpr.outvars], tokens


# ----- whole modules ------------------------------------------------------------------------


@dataclasses.dataclass
class LoweringResult:
    """A lowered module and what running it needs.

    Attributes:
      module: the StableHLO module (public `main(tokens..., hoisted consts..., args...)`).
      name: the module name (`jit_f`).
      in_avals: the avals of main's array arguments: hoisted constants first, then the args.
      out_avals: the avals of main's array results.
      hoisted_consts: the host or device values to pass for the hoisted constants.
      ordered_effects: one per runtime token main threads through.
      host_callbacks: the Python functions the module calls on the host, by index; they must
        be passed to the compiler (`compile_module(..., host_callbacks=...)`).
    """

    module: ir.Module
    name: str
    in_avals: list
    out_avals: list
    hoisted_consts: list
    ordered_effects: list
    host_callbacks: list = dataclasses.field(default_factory=list)


def is_embedded_constant(value) -> bool:
    """Whether a closed-over constant is written into the module (small NumPy values) rather
    than passed to main as a leading argument."""
    return isinstance(value, np.ndarray | np.generic) and (
        value.nbytes <= embedded_constants_max_bytes.value
    )


def lowering_module_name(fun_name: str) -> str:
    """JAX's module name for a function: `jit_<name>`, `<lambda>` becoming `_lambda`."""
    return "jit_" + fun_name.replace("<", "_").replace(">", "")


def _set_main_attributes(
    mctx: ModuleContext,
    num_tokens: int,
    donated_to: dict,
    in_avals,
    out_avals,
    in_shardings: Sequence | None,
    out_shardings: Sequence | None,
):
    module = mctx.module
    main = next(
        op
        for op in module.body.operations
        if ir.StringAttr(op.attributes["sym_name"]).value == "main"
    )
    devices = mctx.axis_context.devices
    sharded = len(devices) > 1

    def layout(entries: dict, sharding, aval) -> None:
        if sharded and sharding is not None:
            # a typed key's trailing words dimension is replicated
            ndim = physical_aval(aval).ndim
            name, attribute = sharding_attribute(mctx.meshes, sharding, ndim, devices)
            entries[name] = attribute
        kind = memory_kind_of(sharding)
        if kind is not None:
            entries["mhlo.memory_kind"] = ir.StringAttr.get(kind)

    in_shardings = in_shardings or [None] * len(in_avals)
    out_shardings = out_shardings or [None] * len(out_avals)
    register_meshes(
        mctx.meshes, [*in_shardings, *out_shardings], [*in_avals, *out_avals], devices
    )
    arg_attrs = [ir.DictAttr.get({}) for _ in range(num_tokens)]
    for i, (aval, sharding) in enumerate(zip(in_avals, in_shardings, strict=True)):
        entries = {}
        layout(entries, sharding, aval)
        if i in donated_to:
            entries["tf.aliasing_output"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(32), donated_to[i] + num_tokens
            )
        arg_attrs.append(ir.DictAttr.get(entries))
    main.arg_attrs = ir.ArrayAttr.get(arg_attrs)
    results = ["result"] if len(out_avals) == 1 else [f"result[{i}]" for i in range(len(out_avals))]
    res_attrs = [ir.DictAttr.get({}) for _ in range(num_tokens)]
    for info, aval, sharding in zip(results, out_avals, out_shardings, strict=True):
        entries = {"jax.result_info": ir.StringAttr.get(info)}
        layout(entries, sharding, aval)
        res_attrs.append(ir.DictAttr.get(entries))
    main.result_attrs = ir.ArrayAttr.get(res_attrs)
    i32 = ir.IntegerType.get_signless(32)
    module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, max(len(devices), 1))
    module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
    mctx.meshes.emit(module)


def lower_jaxpr(
    closed: ClosedJaxpr,
    *,
    name: str,
    fun_name: str | None = None,
    ordered: Sequence = (),
    aliases: dict[int, int] | None = None,
    source=None,
    devices: Sequence = (),
    in_shardings: Sequence | None = None,
    out_shardings: Sequence | None = None,
    dim_vars: Sequence[str] = (),
    arg_names: Sequence[str] | None = None,
    platforms: Sequence[str] | None = None,
) -> LoweringResult:
    """Lowers a closed jaxpr to a module with a public `main`.

    Constants are embedded as `stablehlo.constant` when at most
    ``jax_embedded_constants_max_bytes`` (32) bytes, and passed as leading arguments of main
    otherwise (so large arrays do not bloat the module or its cache key).

    Args:
      closed: the program.
      name: the module name (`jit_f`).
      fun_name: the name stack root (`jit(f)`'s `f`); defaults to `name`.
      ordered: the ordered effects main threads tokens for.
      aliases: jaxpr input index -> output index to alias (buffer donation).
      source: a `SourceInfo` for operations without their own location.
      devices: the device assignment compiled for (several: an SPMD program with one
        partition per device, whose arguments and results carry sharding attributes).
      in_shardings: one sharding (or None: unspecified) per input of main after the tokens,
        hoisted constants first; out_shardings: one per output.
      dim_vars: the dimension variables of symbolic shapes (shape polymorphism): main takes
        their values as leading scalar arguments, after the tokens.
      arg_names: a name per input of the jaxpr (`x`, `p['a']`): main's argument locations.
      platforms: the platforms to lower for (default: the devices'). Several: main takes the
        index of the platform it runs on among them as its first argument after the tokens
        (an i32 scalar), which `platform_dependent` branches on.

    Returns:
      A `LoweringResult`.
    """
    if has_refs(closed):  # XLA has no references: thread their values instead
        n_out = len(closed.out_avals)
        closed, _ = discharge_jaxpr(closed)  # reference inputs: their final values follow
        if out_shardings:
            out_shardings = [*out_shardings, *[None] * (len(closed.out_avals) - n_out)]
    jaxpr = closed.jaxpr
    embedded = [is_embedded_constant(c) for c in closed.consts]
    hoisted = [c for c, e in zip(closed.consts, embedded, strict=True) if not e]
    hoisted_avals = [
        v.aval.strip_weak_type() for v, e in zip(jaxpr.constvars, embedded, strict=True) if not e
    ]
    platforms = tuple(platforms) if platforms else (_dynamic.platform_of(devices),)
    n_lead = int(len(platforms) > 1) + len(dim_vars)  # the platform index, then dim vars
    dim_avals = [ShapedArray((), _dynamic.dim_value_dtype())] * len(dim_vars)
    if len(platforms) > 1:
        dim_avals.insert(0, ShapedArray((), np.dtype(np.int32)))
    in_avals = [*dim_avals, *hoisted_avals, *jaxpr.in_avals]
    if in_shardings is not None and len(in_shardings) == len(in_avals) - n_lead:
        in_shardings = [None] * n_lead + list(in_shardings)
    out_avals = jaxpr.out_avals
    name_stack = f"jit({fun_name or name})"
    ordered = list(ordered)
    axis_context = ShardingContext(tuple(devices))
    mctx_box: list = []
    host_callbacks: list = []

    def body(token_args, args):
        mctx = mctx_box[0]
        mctx.host_callbacks = host_callbacks
        # the layouts asked of main's inputs and outputs (rules that report a layout on the
        # program's mesh read it from them: inspect_array_sharding)
        mctx.program_shardings = [*(in_shardings or ()), *(out_shardings or ())]
        names = [_dynamic.PLATFORM_INDEX] * (len(platforms) > 1) + list(dim_vars)
        dims, args = dict(zip(names, args[:n_lead], strict=True)), args[n_lead:]
        with _dynamic.using_dim_values(dims):
            return lower_main(mctx, token_args, args)

    def lower_main(mctx, token_args, args):
        hoisted_iter = iter(args[: len(hoisted)])
        consts = [
            ir_constant(c) if e else next(hoisted_iter)
            for c, e in zip(closed.consts, embedded, strict=True)
        ]
        tokens = dict(zip(ordered, token_args, strict=True))
        outs, tokens = jaxpr_subcomp(mctx, jaxpr, name_stack, tokens, consts, *args[len(hoisted) :])
        if out_shardings:
            outs = [place_in_memory(x, s) for x, s in zip(outs, out_shardings, strict=True)]
        return [tokens[e] for e in ordered], outs

    with _dynamic.using_platforms(platforms):
        module = build_module(
            name, in_avals, out_avals, body, num_tokens=len(ordered), source=source,
            on_module=lambda m: mctx_box.append(ModuleContext(m, name, axis_context)),
            arg_names=arg_names and [None] * (len(in_avals) - len(arg_names)) + list(arg_names),
        )
    donated_to = {n_lead + len(hoisted) + i: o for i, o in (aliases or {}).items()}
    with module.context, ir.Location.unknown():
        _set_main_attributes(
            mctx_box[0], len(ordered), donated_to, in_avals, out_avals, in_shardings, out_shardings
        )
    return LoweringResult(
        module, name, in_avals, list(out_avals), hoisted, ordered, host_callbacks
    )


def lower_private_function(
    mctx: ModuleContext,
    name: str,
    closed: ClosedJaxpr,
    name_stack: str,
    ordered: Sequence = (),
) -> func.FuncOp:
    """Emits `closed` as a private function `name(tokens..., args...)` of the module and
    returns it (for nested jit calls and control-flow bodies)."""
    jaxpr = closed.jaxpr
    ordered = list(ordered)
    tokens = [token_type()] * len(ordered)
    values = _dynamic.dim_values()
    dims = sorted(values)  # the caller's dimension variables (platform index) come first
    dim_types = [values[d].type for d in dims]
    arg_types = dim_types + tokens + [aval_to_ir_type(a) for a in jaxpr.in_avals]
    result_types = tokens + [aval_to_ir_type(a) for a in jaxpr.out_avals]
    with ir.InsertionPoint(mctx.module.body):
        fn = func.FuncOp(name, ir.FunctionType.get(arg_types, result_types))
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = fn.add_entry_block()
    with ir.InsertionPoint(block), _dynamic.using_dim_values(
            dict(zip(dims, list(block.arguments)[: len(dims)], strict=True))):
        args = list(block.arguments)[len(dims):]
        consts = [ir_constant(c) for c in closed.consts]
        token_map = dict(zip(ordered, args[: len(ordered)], strict=True))
        outs, token_map = jaxpr_subcomp(
            mctx, jaxpr, name_stack, token_map, consts, *args[len(ordered) :]
        )
        func.ReturnOp([*(token_map[e] for e in ordered), *outs])
    return fn


# ----- helpers shared by the rule modules ---------------------------------------------------


def _compare_type(dtype: np.dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or dtypes.issubdtype(dtype, np.unsignedinteger):
        return "UNSIGNED"
    if dtypes.issubdtype(dtype, np.signedinteger):
        return "SIGNED"
    return "FLOAT"


def compare(x: ir.Value, y: ir.Value, direction: str, dtype) -> ir.Value:
    """`stablehlo.compare <direction>` with the comparison type of `dtype` (as JAX picks it)."""
    return hlo.compare(
        x,
        y,
        hlo.ComparisonDirectionAttr.get(direction),
        compare_type=hlo.ComparisonTypeAttr.get(_compare_type(dtype)),
    )


def full_like(value, aval: ShapedArray) -> ir.Value:
    """A scalar constant of `aval`'s dtype broadcast to its shape (JAX's splat pattern)."""
    scalar = ir_constant(np.asarray(value, dtype=aval.dtype))
    return _dynamic.broadcast_in_dim(aval_to_ir_type(aval), scalar, aval.shape, [])


def convert(x: ir.Value, aval_in: ShapedArray, aval_out: ShapedArray) -> ir.Value:
    """`x` converted from `aval_in`'s dtype to `aval_out`'s (nothing when they are equal).

    Conversions to bool compare with zero, and complex to real takes the real part first,
    as JAX lowers them."""
    if aval_in.dtype == aval_out.dtype:
        return x
    if dtypes.issubdtype(aval_in.dtype, np.complexfloating) and not dtypes.issubdtype(
        aval_out.dtype, np.complexfloating
    ):
        x = hlo.real(x)
        aval_in = aval_in.update(dtype=np.finfo(aval_in.dtype).dtype)
    if aval_out.dtype == np.bool_:
        x = compare(x, full_like(0, aval_in), "NE", aval_in.dtype)
        return hlo.convert(aval_to_ir_type(aval_out), x)
    return hlo.convert(aval_to_ir_type(aval_out), x)


def lower_fun(fun: Callable, multiple_results: bool = False) -> Callable:
    """A lowering rule that expands the primitive into lax operations.

    `fun(*operands, **params)` is traced on the operands' avals into a jaxpr, whose equations
    are lowered in place (JAX's `mlir.lower_fun`): for primitives whose StableHLO is a
    composition, such as threefry2x32 on CPU.

    Example:
      >>> from laminax_core import lax
      >>> rule = lower_fun(lambda x: lax.mul(x, x))
    """

    def rule(ctx: LoweringRuleContext, *args, **params):
        def flat(*xs):
            outs = fun(*xs, **params)
            return list(outs) if multiple_results else [outs]

        closed, _ = trace_to_jaxpr(flat, list(ctx.avals_in), "lowering")
        consts = [ir_constant(c) for c in closed.consts]
        outs, tokens = jaxpr_subcomp(
            ctx.module_context, closed.jaxpr, ctx.name_stack, ctx.tokens_in, consts, *args
        )
        ctx.tokens_out = tokens
        return outs

    return rule


def _describe_lowering(primitive) -> list[tuple[str, str]]:
    return [("lowering", registered_at.get(primitive, "none"))]


register_describer(_describe_lowering)

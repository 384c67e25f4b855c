"""One cache entry of a jitted function (`CompiledCall`): placement, lowering, compiling and
calling one signature, computed once.

`jit`'s cache (`_jit.py`), eager dispatch (`_eager.py`) and `jit_p`'s impl all hold their
compiled computations as `CompiledCall`s: one pipeline from a closed jaxpr and its `Placement`
to an `Executable` (pruned inputs, donation aliases, hoisted constants on the devices, the
fast-path data jaxlib's C++ runs it with).
"""

from __future__ import annotations

import copy
import logging
import threading
import time
import warnings
from collections.abc import Sequence

import numpy as np
from jaxlib import _jax
from laminax_core import config as core_config
from laminax_core.internal import ClosedJaxpr, Literal, dce_jaxpr, ordered_effects
from laminax_pytree import keystr, tree_flatten_with_path, tree_unflatten

from laminax_dispatch import _debugging, monitoring
from laminax_dispatch._compile import Executable, compile_module, log_compiles
from laminax_dispatch._device_put import device_put
from laminax_dispatch._fast_path import fast_path_data
from laminax_dispatch._lowering._core import (
    LoweringResult,
    is_embedded_constant,
    lower_jaxpr,
    lowering_module_name,
)
from laminax_dispatch._mlir import SourceInfo
from laminax_dispatch._placement import Placement, check_shardings_fit
from laminax_dispatch._tokens import shardable_ordered_effects

__all__ = ["CompiledCall", "check_donations"]

logger = logging.getLogger("laminax_dispatch.jit")

_UNUSABLE_DONATION = (
    "Some donated buffers were not usable: {avals}.\nDonation reuses an input buffer for an "
    "output of the same shape and dtype; these inputs have no such output, so they were left "
    "alone. Donate only arguments whose buffers an output can take over."
)


# ----- one cache entry ----------------------------------------------------------------------


class CompiledCall:
    """Everything one signature of a jitted function needs, computed once.

    Attributes:
      closed: the traced jaxpr (all dynamic leaves as inputs).
      in_tree, out_tree: the trees of the dynamic arguments and of the result.
      arg_names: a name per input leaf; donated: whether each leaf is donated.
      kept: the indices of the leaves the compiled program takes (unused ones pruned).
      placement: the devices, the input and output shardings (one per leaf), and whether
        outputs are committed (`_placement.Placement`).
      log: whether compiling it is logged as a jit compilation (eager ops are not).
    """

    def __init__(
        self, name, closed, in_tree, out_tree, arg_names, donated, kept, placement, log=True
    ):
        self.name = name
        self.closed = closed
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.arg_names = arg_names
        self.donated = donated
        self.kept = kept
        self.placement = placement
        check_shardings_fit(placement.in_shardings, closed.in_avals, arg_names, "pjit arguments")
        if any(s is not None for s in placement.out_shardings):
            check_shardings_fit(
                placement.out_shardings, closed.out_avals, _out_names(out_tree, closed), "pjit outputs"
            )
        self.device = placement.devices[0]
        self.committed = placement.committed
        self.log = log
        self.ordered = [e for e in closed.effects if ordered_effects.contains(e)]
        unshardable = [e for e in self.ordered if not shardable_ordered_effects.contains(e)]
        if unshardable and len(placement.devices) > 1:
            raise ValueError(
                f"The following ordered effects are not supported for more than 1 device: "
                f"{unshardable} (in {name}, placed on {len(placement.devices)} devices). Make "
                "the effect unordered, or run the computation on one device."
            )
        self._lowering: LoweringResult | None = None
        self._executable: Executable | None = None
        self._const_args: list = []
        self._donated_kept = [i for i in kept if donated[i]]
        self._lock = threading.Lock()
        self.compiler_options: dict | None = None
        # No equation: every output is an input, a constant or a literal. As the seed's
        # dispatch does, nothing is compiled; the outputs are placed where the program's would
        # be (a compiled program is still built on demand for lower() and the AOT stages).
        self.trivial = (
            not closed.jaxpr.eqns and not closed.effects and len(placement.devices) == 1
            and not any(donated)
        )

    in_avals = property(lambda self: self.closed.in_avals)
    out_avals = property(lambda self: self.closed.out_avals)

    def _pruned(self) -> ClosedJaxpr:
        """The jaxpr without dead equations, taking only the kept inputs."""
        jaxpr = self.closed.jaxpr
        keep = [i in set(self.kept) for i in range(len(jaxpr.invars))]
        pruned, _ = dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars), instantiate=keep)
        live = {id(v) for v in pruned.constvars}
        consts = [
            c for v, c in zip(jaxpr.constvars, self.closed.consts, strict=True) if id(v) in live
        ]
        return ClosedJaxpr(pruned, consts)

    def _aliases(self) -> dict[int, int]:
        """Donated kept input -> output of the same shape and dtype (first free one)."""
        aliases, taken, unusable = {}, set(), []
        in_avals = self.in_avals
        for position, leaf in enumerate(self.kept):
            if not self.donated[leaf]:
                continue
            aval = in_avals[leaf]
            match = next(
                (
                    o
                    for o, out in enumerate(self.out_avals)
                    if o not in taken and (out.shape, out.dtype) == (aval.shape, aval.dtype)
                ),
                None,
            )
            if match is None:
                unusable.append(aval.str_short())
                continue
            aliases[position] = match
            taken.add(match)
        unused_donations = [
            in_avals[i].str_short() for i, d in enumerate(self.donated) if d and i not in self.kept
        ]
        if unusable or unused_donations:
            text = ", ".join(_long_aval(s) for s in unusable + unused_donations)
            warnings.warn(_UNUSABLE_DONATION.format(avals=text), UserWarning, stacklevel=5)
        return aliases

    def _main_in_shardings(self, n_hoisted: int) -> list:
        placement = self.placement
        consts = [placement.replicated()] * n_hoisted
        return consts + [placement.in_shardings[i] for i in self.kept]

    def lower(self) -> LoweringResult:
        """The StableHLO module (built once)."""
        with self._lock:
            if self._lowering is None:
                pruned = self._pruned()
                n_hoisted = sum(1 for c in pruned.consts if not is_embedded_constant(c))
                module_name = lowering_module_name(self.name)
                with monitoring.timed_stage(monitoring.LOWER_EVENT, f"jit({self.name})"):
                    self._lowering = lower_jaxpr(
                        pruned,
                        name=module_name,
                        fun_name=self.name,
                        ordered=self.ordered,
                        aliases=self._aliases(),
                        source=SourceInfo.from_caller(self.name),
                        devices=self.placement.devices,
                        in_shardings=self._main_in_shardings(n_hoisted),
                        out_shardings=self.placement.out_shardings,
                        arg_names=[self.arg_names[i] for i in self.kept],
                    )
            return self._lowering

    def executable(self) -> Executable:
        """The compiled program on its devices (compiled once; logged with jax_log_compiles)."""
        lowering = self.lower()
        with self._lock:
            if self._executable is None:
                placement = self.placement
                main_ins = self._main_in_shardings(len(lowering.hoisted_consts))
                outs = tuple(placement.out_shardings) or (None,) * len(lowering.out_avals)
                tokens = (False,) * len(self.ordered)
                start = time.perf_counter()
                with monitoring.timed_stage(monitoring.COMPILE_EVENT, f"jit({self.name})"):
                    compiled = compile_module(
                        lowering.module,
                        placement.devices,
                        in_avals=lowering.in_avals,
                        host_callbacks=lowering.host_callbacks,
                        # as JAX: XLA may choose exactly the unspecified shardings
                        propagate_to_inputs=tokens + tuple(s is None for s in main_ins),
                        propagate_to_outputs=tokens + tuple(s is None for s in outs),
                        compiler_options=self.compiler_options,
                    )
                if self.log:
                    _log_compile(self.name, lowering.in_avals, time.perf_counter() - start)
                main_placement = Placement(
                    placement.devices,
                    tuple(main_ins),
                    placement.out_shardings,
                    placement.committed,
                    placement.template,
                )
                self._executable = Executable(
                    compiled,
                    lowering.name,
                    lowering.in_avals,
                    lowering.out_avals,
                    ordered_effects=self.ordered,
                    has_host_callbacks=bool(lowering.host_callbacks),
                    placement=main_placement,
                )
                const_shardings = self._executable.in_shardings[: len(lowering.hoisted_consts)]
                # copies: a captured Array the user deletes later must not take this
                # compiled function's constant with it (JAX keeps working then)
                self._const_args = [
                    _place_constant(c, s)
                    for c, s in zip(lowering.hoisted_consts, const_shardings, strict=True)
                ]
            return self._executable

    def with_compiler_options(self, options: dict) -> CompiledCall:
        """The same call, compiled on its own with these XLA options (`Lowered.compile`'s
        `compiler_options`); the lowering is shared, the executable is not."""
        other = copy.copy(self)
        other._lock = threading.Lock()
        other._executable = None
        other.trivial = False  # the options must reach XLA even for a forwarding function
        other.compiler_options = dict(options)
        return other

    def input_shardings(self) -> list:
        """One sharding per input leaf, as the compiled program takes them."""
        executable = self.executable()
        n_consts = len(self._const_args)
        taken = dict(zip(self.kept, executable.in_shardings[n_consts:], strict=True))
        return [
            taken.get(i) or s or self.placement.replicated()
            for i, s in enumerate(self.placement.in_shardings)
        ]

    def output_shardings(self) -> list:
        """One sharding per output leaf, as the compiled program reports them."""
        return list(self.executable().out_shardings)

    def fast_path_data(self, outs):
        """What jaxlib's C++ needs to run this signature without Python (`outs`: the flat
        outputs of a call), or None when a call needs Python: ordered or host-callback effects
        (runtime tokens), a jaxpr with effects. Donation stays on the fast path (XLA deletes
        the donated Arrays; a buffer passed twice is refused by XLA, and `JitFunction` then
        raises the Python path's error)."""
        executable = self._executable
        if (
            executable is None
            or self.trivial
            or self.closed.effects
            or executable.ordered_effects
            or executable.has_host_callbacks
        ):
            return None
        kept = set(self.kept)
        bits = [i in kept for i in range(len(self.donated))]
        return fast_path_data(executable, self.out_tree, outs, bits, self._const_args)

    def _forward(self, leaves: Sequence) -> list:
        """The outputs of an equation-free program, without compiling it."""
        jaxpr = self.closed.jaxpr
        env = {id(v): x for v, x in zip(jaxpr.invars, leaves, strict=True)}
        env.update({id(v): c for v, c in zip(jaxpr.constvars, self.closed.consts, strict=True)})
        target = self.device if self.committed else None
        # fresh buffers (may_alias=False), as a compiled program's outputs are: deleting or
        # donating an output must not touch the input it came from
        return [
            device_put(v.val if isinstance(v, Literal) else env[id(v)], target,
                       may_alias=False, _weak_type=aval.weak_type)
            for v, aval in zip(jaxpr.outvars, self.out_avals, strict=True)
        ]

    def __call__(self, leaves: Sequence) -> list:
        if self.trivial and self._executable is None and not (
                core_config.debug_nans.value or core_config.debug_infs.value):
            return self._forward(leaves)
        executable = self._executable or self.executable()
        args = leaves if len(self.kept) == len(leaves) else [leaves[i] for i in self.kept]
        if self._donated_kept:
            check_donations(self, leaves)
        checking = core_config.debug_nans.value or core_config.debug_infs.value
        if checking and self._donated_kept:
            # the call consumes donated inputs; the op-by-op re-run that looks for the first
            # NaN needs them, so it gets host copies taken before
            leaves = [np.asarray(x) if i in self._donated_kept else x
                      for i, x in enumerate(leaves)]
        outs = executable(*self._const_args, *args, committed=self.committed, check_types=False)
        if checking:
            _check_nans(self, leaves, outs)
        return outs


def _long_aval(short: str) -> str:
    # 'f32[3]' -> 'float32[3]', the form JAX's donation warning uses
    for short_name, long_name in (
        ("bf", "bfloat"),
        ("f", "float"),
        ("i", "int"),
        ("u", "uint"),
        ("c", "complex"),
    ):
        if short.startswith(short_name) and short[len(short_name)].isdigit():
            return long_name + short[len(short_name) :]
    return short


def _log_compile(name, in_avals, seconds) -> None:
    level = logging.WARNING if log_compiles.value else logging.DEBUG
    avals = ", ".join(a.str_short() for a in in_avals)
    logger.log(level, "Compiling jit(%s) with argument avals [%s]: %.6f sec", name, avals, seconds)


def check_donations(entry: CompiledCall, leaves) -> None:
    seen: dict[int, int] = {}
    for i in entry.kept:
        x = leaves[i]
        if not isinstance(x, _jax.ArrayImpl) or x.is_deleted():
            continue
        pointer = x._arrays[0].unsafe_buffer_pointer()  # the first shard names the buffer
        if pointer in seen and (entry.donated[i] or entry.donated[seen[pointer]]):
            first, second = entry.arg_names[seen[pointer]], entry.arg_names[i]
            raise RuntimeError(
                f"jit({entry.name}): arguments {first} and {second} are the same buffer, and "
                "it is donated: a donated buffer can be passed only once per call. Pass a copy "
                "(x.copy()) as one of them, or do not donate it."
            )
        seen[pointer] = i


def _check_nans(entry: CompiledCall, leaves, outs) -> None:
    kind = _debugging.has_bad_values(outs)
    if kind is None:
        return
    args = [leaves[i] for i in range(len(leaves))]
    eqn, found = _debugging.find_first_bad_equation(entry.closed.jaxpr, entry.closed.consts, args)
    if eqn is None:
        # as the seed's dispatch says: the de-optimized re-run did not reproduce it
        raise FloatingPointError(
            f"An invalid value ({kind}) was encountered in the output of the jit-decorated "
            f"function {entry.name}. Because jax_debug_{kind}s is set, the de-optimized "
            "function (as if the jit decorator were removed, run op by op) was called to find "
            "the primitive that produced it, but it produced no invalid value. jit's "
            "optimizations can cause that, as can nan/inf constants returned as outputs "
            f"(jit(lambda: jnp.nan)). Removing the jit decorator may avoid the {kind}, at the "
            "cost of its optimizations."
        )
    where = f" in {eqn.primitive.name}, from {eqn.source_info or 'an unknown line'}"
    raise FloatingPointError(
        f"invalid value ({found}) encountered{where} (jit({entry.name}) was re-run op by op "
        f"because jax_debug_{found}s is set, to find the first primitive that produced it)."
    )


def _out_names(out_tree, closed) -> list[str]:
    """``result``, ``result[0]``, ``result['a']`` ...: the outputs' names in messages."""
    n = len(closed.out_avals)
    if out_tree is None:
        return ["result"] if n == 1 else [f"result[{i}]" for i in range(n)]
    placeholders = tree_unflatten(out_tree, list(range(n)))
    return ["result" + keystr(path) for path, _ in tree_flatten_with_path(placeholders)[0]]


def _place_constant(value, sharding):
    """A captured constant copied onto the program's devices. One spread over several
    processes cannot be: this process cannot read the other pieces (JAX's error)."""
    if isinstance(value, _jax.ArrayImpl) and not value.is_fully_addressable \
            and not value.is_fully_replicated:
        raise RuntimeError(
            "Closing over jax.Array that spans non-addressable (non process local) devices is "
            "not allowed. Please pass such arrays as arguments to the function. Got jax.Array: "
            f"{value.aval.str_short()}"
        )
    return device_put(value, sharding, may_alias=False)

"""laminax hands XLA what JAX 0.10.2 hands it, for the programs `bench/` times (issue 19).

Not a timing test. For each program of `bench/_programs.py` (an 8-layer MLP's gradient, a
transformer block's gradient, a 100-step `lax.scan` RNN's gradient) and each model step of
`bench/bench_models.py` (GPT-style LM with AdamW, conv net), both libraries lower and compile
the same step; the tests compare:

- the compile options handed to XLA (serialized, byte for byte), except the per-argument
  sharding-propagation flags: on one device laminax places every argument concretely where
  JAX leaves an uncommitted one unspecified, which XLA cannot act on with one partition;
- the optimized HLO XLA returns (`compiled.as_text()`): how many instructions of each opcode,
  of each opcode and result shape, and how many fusions of each kind, in the whole module;
- StableHLO: the scan's while loop carries the same values and its per-step slicing has no
  negative-index wrap-around (JAX's has none).
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from jaxref import requires_jax, run_jax

import laminax
from laminax_dispatch import _compile

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
import _programs  # noqa: E402
import bench_models  # noqa: E402

NAMES = [make.__name__ for make in _programs.PROGRAMS]
MODELS = list(bench_models.MODELS)

_JAX_SNIPPET = """
import sys
sys.path.insert(0, bench)
import _programs
import bench_models
from jax._src import compiler
captured = []
original = compiler.compile_or_get_cached
def spy(backend, computation, devices, options, *args, **kwargs):
    captured.append(options)
    return original(backend, computation, devices, options, *args, **kwargs)
compiler.compile_or_get_cached = spy
try:
    if name in bench_models.MODELS:
        step, args = bench_models.MODELS[name](jax)
    else:
        program = getattr(_programs, name)(jax)
        step, args = program.make_step(), program.args
    lowered = jax.jit(step).lower(*args)
    compiled = lowered.compile()
finally:
    compiler.compile_or_get_cached = original
result = (lowered.as_text(), compiled.as_text(), _options_bytes(captured[-1]))
"""


_OPTIONS_HELPER = """
def _options_bytes(options):
    build = options.executable_build_options
    build.allow_spmd_sharding_propagation_to_parameters = [False]
    build.allow_spmd_sharding_propagation_to_output = [False]
    return options.SerializeAsString()
"""


def _options_bytes(options) -> bytes:
    build = options.executable_build_options
    build.allow_spmd_sharding_propagation_to_parameters = [False]
    build.allow_spmd_sharding_propagation_to_output = [False]
    return options.SerializeAsString()


_cache: dict[str, tuple] = {}


def _jax(name: str) -> tuple[str, str, bytes]:
    key = f"jax/{name}"
    if key not in _cache:
        _cache[key] = run_jax(
            _OPTIONS_HELPER + _JAX_SNIPPET, fresh=True, bench=str(BENCH), name=name
        )
    return _cache[key]


def _laminax(name: str) -> tuple[str, str, bytes]:
    key = f"laminax/{name}"
    if key not in _cache:
        captured = []
        original = _compile._backend_compile

        def spy(client, computation, device_list, options, host_callbacks):
            captured.append(options)
            return original(client, computation, device_list, options, host_callbacks)

        _compile._backend_compile = spy
        try:
            if name in bench_models.MODELS:
                step, args = bench_models.MODELS[name](laminax)
            else:
                program = getattr(_programs, name)(laminax)
                step, args = program.make_step(), program.args
            lowered = laminax.jit(step).lower(*args)
            compiled = lowered.compile()
        finally:
            _compile._backend_compile = original
        _cache[key] = (lowered.as_text(), compiled.as_text(), _options_bytes(captured[-1]))
    return _cache[key]


_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.*)$")
_LAYOUT = re.compile(r"\{[^{}]*\}")
_OPCODE = re.compile(r"\s*([a-z][\w\-]*)\(")


def opcode_counts(hlo_text: str) -> collections.Counter:
    """How many instructions of each opcode the HLO module text has (all computations), how
    many fusions of each kind (as ``fusion:kLoop`` etc.), and how many of each opcode with each
    result shape, layouts left out (as ``negate f32[2]``)."""
    counts: collections.Counter = collections.Counter()
    for line in hlo_text.splitlines():
        match = _INSTRUCTION.match(line)
        if not match:
            continue
        rest = match.group(1)
        if rest.startswith("("):  # a tuple shape: skip to its closing parenthesis
            depth = 0
            for end, char in enumerate(rest):
                depth += {"(": 1, ")": -1}.get(char, 0)
                if depth == 0:
                    break
            shape, rest = rest[: end + 1], rest[end + 1 :]
        else:
            shape, rest = rest.split(" ", 1) if " " in rest else (rest, "")
        opcode = _OPCODE.match(rest)
        if not opcode:
            continue
        counts[opcode.group(1)] += 1
        counts[f"{opcode.group(1)} {_LAYOUT.sub('', shape)}"] += 1
        if opcode.group(1) == "fusion":
            kind = re.search(r"kind=(k\w+)", rest)
            counts[f"fusion:{kind.group(1) if kind else '?'}"] += 1
    return counts


def test_opcode_counts_reads_hlo_text():
    text = """HloModule m
%fused (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  ROOT %n = f32[2]{0} negate(f32[2]{0} %p)
}
ENTRY %main (a: f32[2]) -> (f32[2], s32[]) {
  %a = f32[2]{0} parameter(0)
  %f = f32[2]{0} fusion(f32[2]{0} %a), kind=kLoop, calls=%fused
  %c = s32[] constant(0)
  ROOT %t = (f32[2]{0}, s32[]) tuple(f32[2]{0} %f, s32[] %c)
}"""
    assert opcode_counts(text) == collections.Counter(
        {"parameter": 2, "negate": 1, "fusion": 1, "fusion:kLoop": 1, "constant": 1, "tuple": 1,
         "parameter f32[2]": 2, "negate f32[2]": 1, "fusion f32[2]": 1, "constant s32[]": 1,
         "tuple (f32[2], s32[])": 1}
    )


ALL = NAMES + MODELS


@requires_jax
@pytest.mark.parametrize("name", NAMES + MODELS)
def test_compile_options_are_jaxs(name):
    assert _laminax(name)[2] == _jax(name)[2]


@requires_jax
@pytest.mark.parametrize("name", ALL)
def test_optimized_hlo_has_jaxs_ops_and_fusions(name):
    ours, theirs = opcode_counts(_laminax(name)[1]), opcode_counts(_jax(name)[1])
    differences = {k: (ours[k], theirs[k]) for k in ours.keys() | theirs.keys() if ours[k] != theirs[k]}
    assert not differences, f"{name}: opcode counts (laminax, JAX) differ: {differences}"


def _stablehlo_ops(text: str) -> collections.Counter:
    return collections.Counter(re.findall(r"\bstablehlo\.([a-z_]+)", text))


@requires_jax
def test_mlp_lowers_to_jaxs_stablehlo_ops():
    # the bias gradient's unit dimension is a reshape, as JAX's (not a broadcast_in_dim)
    assert _stablehlo_ops(_laminax("mlp")[0]) == _stablehlo_ops(_jax("mlp")[0])


@requires_jax
def test_scan_loop_has_no_negative_index_wraparound():
    ours, theirs = _stablehlo_ops(_laminax("rnn")[0]), _stablehlo_ops(_jax("rnn")[0])
    # JAX outlines each per-step slice into a private function; the loop's ops are the same
    for op in ("while", "select", "compare", "dot_general", "tanh"):
        assert ours[op] == theirs[op], (op, ours[op], theirs[op])


_SCANS = {
    "closed_over_arange": "lambda: lax.scan(lambda c, x: (c + x, x * 2), 0, np.arange(5))",
    "arange_carry": "lambda: lax.scan(lambda c, x: (x, c), np.int64(0), np.arange(4))",
    "reverse": "lambda: lax.scan(lambda c, x: (c * 2 + x, c), 1, np.arange(6), reverse=True)",
    "matmul_64": (
        "lambda: lax.scan(lambda c, i: (jnp.tanh(c @ w) + i, jnp.sum(c)), "
        "jnp.ones((64, 64)) / 64, np.arange(8))"
    ),
    "nested": (
        "lambda: lax.scan(lambda c, i: (lax.scan(lambda d, j: (d + i * j, None), c, "
        "np.arange(3))[0], c), 0, np.arange(4))"
    ),
    "uint_xs": "lambda: lax.scan(lambda c, x: (c + x, x), np.uint64(0), np.arange(5, dtype=np.uint64))",
    "float64_xs": "lambda: lax.scan(lambda c, x: (c + x, x), 0.0, np.arange(5.0))",
    # a carry returned unchanged comes back as given (JAX returns the NumPy scalar itself)
    "forwarded_carry": "lambda: lax.scan(lambda c, x: (c, x), np.uint64(0), np.arange(3))",
}


@requires_jax
@pytest.mark.parametrize("jitted", [True, False])
@pytest.mark.parametrize("case", sorted(_SCANS))
def test_scan_over_numpy_int64_constants_matches_jax(case, jitted):
    # np.arange is int64: with x64 off both libraries canonicalize it to int32 inside the loop
    source = f"fun = {_SCANS[case]}\n" + ("fun = jax.jit(fun)\n" if jitted else "")
    expected = run_jax(
        "lax = jax.lax\nw = jnp.eye(64) * 0.5\n" + source
        + "result = [(np.asarray(v), str(np.asarray(v).dtype)) "
        "for v in jax.tree_util.tree_leaves(fun())]"
    )
    namespace = {"lax": laminax.lax, "jnp": laminax.numpy, "np": np, "jax": laminax}
    namespace["w"] = laminax.numpy.eye(64) * 0.5
    exec(source, namespace)  # noqa: S102 - the same source both libraries run
    leaves = laminax.tree_util.tree_leaves(namespace["fun"]())
    assert len(leaves) == len(expected)
    for leaf, (value, dtype) in zip(leaves, expected, strict=True):
        assert str(np.asarray(leaf).dtype) == dtype, (leaf, dtype)
        np.testing.assert_allclose(np.asarray(leaf), value, rtol=1e-6)

"""id_print's layout against the seed's definition run on JAX 0.10.2's own pretty printer.

The seed prints a tapped value as a Wadler-style document: ``group("( " nest(2, join(brk(),
items)) " )")`` for tuples (``[ ]`` for lists, ``{ k=v }`` for dicts), arrays through
`np.array2string`, at 80 columns. The snippet builds that document with
`jax._src.pretty_printer` (the printer the seed used); laminax's `id_print` must print the same
text."""

import io

import numpy as np
import pytest
from jaxref import requires_jax, run_jax
from laminax.experimental import host_callback as hcb

SEED_LAYOUT = """
from jax._src import pretty_printer as pp
def pp_val(arg):
    if isinstance(arg, tuple):
        return pp.group(pp.concat([pp.text("( "), pp.nest(2, pp.join(pp.brk(), [pp_val(e) for e in arg])), pp.text(" )")]))
    if isinstance(arg, list):
        return pp.group(pp.concat([pp.text("[ "), pp.nest(2, pp.join(pp.brk(), [pp_val(e) for e in arg])), pp.text(" ]")]))
    if isinstance(arg, dict):
        return pp.group(pp.concat([pp.text("{ "), pp.nest(2, pp.join(pp.brk(), [pp.text(f"{k}=") + pp_val(v) for k, v in sorted(arg.items())])), pp.text(" }")]))
    if isinstance(arg, np.ndarray):
        return pp.text(np.array2string(arg, threshold=None))
    return pp.text(str(arg))
# the tap function receives every leaf as a NumPy array (0-d for scalars)
values = [jax.tree.map(np.asarray, v) for v in values]
result = [str(pp_val(v)) for v in values]
"""

VALUES = [
    (np.float32(3.0), np.float32(9.0)),
    [np.arange(3), {"b": np.int32(1), "a": (np.float32(2.5),)}],
    (np.arange(12.0), np.arange(12.0) * 2),
    (np.arange(30.0), (np.arange(5), [np.arange(25.0), np.int32(7)])),
    {"weights": np.linspace(0, 1, 14), "bias": (np.zeros(3), np.ones(20))},
    [(np.arange(8.0), np.arange(8.0)), (np.arange(9.0), np.arange(9.0))],
    (np.arange(6.0).reshape(2, 3), np.int32(1)),
    np.arange(4),
    # around the 80-column edge, at several nesting depths
    *[(np.arange(n), (np.arange(n // 2), [np.int32(n)])) for n in range(14, 34, 2)],
    *[[{"k": (np.arange(n), np.arange(3))}] for n in range(16, 30, 3)],
]


def _as_tapped(leaf):
    # what a tap sees without x64: 32-bit arrays
    leaf = np.asarray(leaf)
    return leaf.astype({"f": np.float32, "i": np.int32}.get(leaf.dtype.kind, leaf.dtype))


def _canonical(value):
    if isinstance(value, tuple | list):
        return type(value)(_canonical(v) for v in value)
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    return _as_tapped(value)


VALUES = [_canonical(v) for v in VALUES]


def _random_value(rng, depth=0):
    kind = rng.integers(0, 5) if depth < 3 else 4
    if kind == 0:
        return tuple(_random_value(rng, depth + 1) for _ in range(rng.integers(1, 4)))
    if kind == 1:
        return [_random_value(rng, depth + 1) for _ in range(rng.integers(1, 4))]
    if kind == 2:
        keys = rng.choice(list("abcdefgh"), size=rng.integers(1, 4), replace=False)
        return {str(k): _random_value(rng, depth + 1) for k in keys}
    size = int(rng.integers(0, 14))
    if rng.integers(0, 2):
        return np.arange(size, dtype=np.int32) * int(rng.integers(1, 1000))
    return (rng.standard_normal(size) * 10).astype(np.float32)


RANDOM_VALUES = [_random_value(np.random.default_rng(seed)) for seed in range(60)]


def laminax_text(value) -> str:
    stream = io.StringIO()
    hcb.id_print(value, output_stream=stream)
    hcb.barrier_wait()
    return stream.getvalue()[:-1]  # the tap writes one trailing newline


@requires_jax
def test_id_print_lays_out_values_as_the_seeds_pretty_printer():
    expected = run_jax(SEED_LAYOUT, values=VALUES)
    for value, text in zip(VALUES, expected, strict=True):
        assert laminax_text(value) == text, f"{value!r}"


@pytest.mark.parametrize("value", VALUES[:2])
def test_short_values_stay_on_one_line(value):
    assert "\n" not in laminax_text(value)


@requires_jax
def test_random_nested_values_lay_out_as_the_seeds_pretty_printer():
    expected = run_jax(SEED_LAYOUT, values=RANDOM_VALUES)
    for value, text in zip(RANDOM_VALUES, expected, strict=True):
        assert laminax_text(value) == text, f"{value!r}"

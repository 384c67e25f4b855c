"""Each benchmark module in `bench/` runs once (`--quick`, laminax only) and reports every case.

Not a timing test: it checks that the benchmarks still run on laminax and that no case raised
(a case that raises is reported as an error row by `bench/_harness.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
MODULES = sorted(p.stem for p in BENCH.glob("bench_*.py"))


def _run(module: str, *extra: str) -> list[dict]:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    done = subprocess.run(
        [sys.executable, str(BENCH / f"{module}.py"), "--impl", "laminax", "--quick", *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=BENCH.parent,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_every_module_is_found():
    assert {
        "bench_jit_dispatch",
        "bench_eager",
        "bench_pytree",
        "bench_trace_lower",
        "bench_compile_step",
        "bench_memory",
    } <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_module_runs_on_laminax(module):
    extra = ("--compilations", "6", "--calls", "200") if module == "bench_memory" else ()
    rows = _run(module, *extra)
    assert rows, f"{module} reported nothing"
    errors = [row for row in rows if "error" in row]
    assert not errors, f"{module}: cases raised on laminax: {errors}"
    for row in rows:
        assert row["unit"] in ("s", "B") and row["value"] >= 0, row


def _run_py():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_table_shows_ratios_memory_differences_and_errors():
    run = _run_py()
    samples = run.Samples()
    for impl, seconds, growth in (("laminax", 2e-6, 3 * 2**20), ("jax", 1e-6, 2**20)):
        samples.add(impl, {"name": "call", "value": seconds, "unit": "s"})
        samples.add(impl, {"name": "calls/growth", "value": growth, "unit": "B"})
    samples.add("laminax", {"name": "scan", "error": "AttributeError: no scan"})
    samples.add("jax", {"name": "scan", "value": 0.5, "unit": "s"})
    rows = run.table("bench_jit_dispatch", samples)[2:]
    assert rows[0] == "| call | 2 µs | 1 µs | 2.000 | 2.000–2.000 (1) | 2.000 | ≤ 1.10 MISSED |"
    assert rows[1] == "| calls/growth | 3.0 MiB | 1.0 MiB | Δ 2.0 MiB | | | |"
    assert rows[2] == "| scan | error: AttributeError: no scan | 500 ms | — | — | — | |"


def test_ratio_is_the_median_of_paired_rounds_with_its_interval():
    run = _run_py()
    samples = run.Samples()
    # the machine slows down over the rounds: the per-round ratio stays 1.0 to 1.04, while
    # the ratio of the per-side medians (1.2 / 1.0) would read 1.2
    jax_times = [1.0, 1.0, 2.0, 3.0, 4.0]
    for index, (theirs, ratio) in enumerate(zip(jax_times, [1.0, 1.04, 1.01, 1.02, 1.0])):
        samples.add("jax", {"name": "step", "value": theirs, "unit": "s"}, index)
        if index != 3:  # a round that failed on one side is left out of the pairs
            samples.add("laminax", {"name": "step", "value": theirs * ratio, "unit": "s"},
                        index)
    assert samples.paired_ratios("step") == [1.0, 1.04, 1.01, 1.0]
    row = run.table("bench_compile_step", samples)[2]
    assert row.split(" | ")[3:5] == ["1.005", "1.000–1.040 (4)"]
    assert row.endswith("| 0.97–1.03 met |")


def test_median_interval_has_at_least_90_percent_coverage():
    run = _run_py()
    assert run.median_interval([3.0]) == (3.0, 3.0)
    assert run.median_interval([5, 1, 4, 2, 3]) == (1, 5)  # 5 rounds: the extremes (93.8%)
    assert run.median_interval(list(range(1, 10))) == (2, 8)  # 9 rounds: 96.1%
    assert run.median_interval(list(range(1, 21))) == (6, 15)  # 20 rounds: 95.9%


def test_all_leaves_out_standalone_modules():
    assert "bench_distributed" in _run_py().STANDALONE

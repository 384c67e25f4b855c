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
    assert rows[0] == "| call | 2 µs | 1 µs | 2.000 | 2.000 | ≤ 1.10 MISSED |"
    assert rows[1] == "| calls/growth | 3.0 MiB | 1.0 MiB | Δ 2.0 MiB | | |"
    assert rows[2] == "| scan | error: AttributeError: no scan | 500 ms | — | — | |"

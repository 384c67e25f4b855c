"""What every benchmark module shares: the `--impl` flag, importing `jax`, timing, output.

A benchmark module is written once against JAX's API. Run as a script with `--impl laminax` it
gets `laminax` under the name `jax`; with `--impl jax` it gets real JAX (then it must run in
an interpreter that has JAX: `bench/run.py` takes care of that). It prints one JSON object per
line: `{"name": ..., "seconds": ...}` (seconds per call).

This module imports nothing from laminax or JAX itself, so both interpreters can load it.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import sys
import time
from collections.abc import Callable
from types import ModuleType

IMPLS = ("laminax", "jax")


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--impl", choices=IMPLS, required=True, help="which library is `jax`")
    parser.add_argument(
        "--quick", action="store_true", help="short timings, to check the benchmark runs"
    )
    parser.add_argument("--only", default="", help="run only benchmarks whose name has this")
    parser.add_argument(
        "--gc", action="store_true", help="keep the garbage collector on while timing"
    )
    return parser.parse_args()


def import_jax(impl: str) -> ModuleType:
    """`laminax` or real `jax`, to be bound to the name `jax` by the benchmark."""
    return importlib.import_module("laminax" if impl == "laminax" else "jax")


def time_per_call(fn: Callable[[], object], *, quick: bool = False, keep_gc: bool = False) -> float:
    """Seconds per call of `fn`: the best of several rounds, each about `round_s` long.

    The minimum over rounds is the least disturbed measurement of the same work (other
    processes only ever add time); `bench/run.py` then takes medians across processes.
    The garbage collector is off while timing, as in `timeit`, unless `keep_gc`: a full
    collection scans every object of the process, so with it on the cost of building large
    trees depends on how much else the process has imported (JAX's own import makes full
    collections rarer), not on the code being measured.
    """
    was_enabled = gc.isenabled()
    if not keep_gc:
        gc.collect()
        gc.disable()
    try:
        return _best_round(fn, quick)
    finally:
        if was_enabled:
            gc.enable()


def _best_round(fn: Callable[[], object], quick: bool) -> float:
    round_s, rounds = (0.005, 3) if quick else (0.05, 11)
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= round_s:
            break
        calls *= 2 if elapsed * 4 < round_s else max(2, int(round_s / max(elapsed, 1e-9)))
    best = elapsed / calls
    for _ in range(rounds - 1):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def report(name: str, seconds: float) -> None:
    print(json.dumps({"name": name, "seconds": seconds}), flush=True)


def run_all(benchmarks: dict[str, Callable[[], object]], args: argparse.Namespace) -> None:
    for name, fn in benchmarks.items():
        if args.only and args.only not in name:
            continue
        fn()  # warm up: first-call costs (imports, caches) are not what we measure
        report(name, time_per_call(fn, quick=args.quick, keep_gc=args.gc))
    sys.stdout.flush()

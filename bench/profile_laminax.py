"""Profiles laminax's hot paths: where trace+lower, a jitted call and an eager op spend time.

    .venv/bin/python bench/profile_laminax.py [lower|call|eager ...] [--top N] [--sampled] [--tree]

- `lower`: `jit(value_and_grad(loss)).lower(params, batch)` of the 8-layer MLP of
  `_programs.py`, a fresh function each time (60 times).
- `call`: a compiled `jit(lambda a: a + 1.0)` called on a float32[8] device array (100,000
  times, blocking at the end).
- `eager`: `x + y` on float32[8] device arrays (100,000 times, blocking at the end).

For each it prints the functions with the most self time and the most cumulative time under
`cProfile` (deterministic: exact call counts and file:line, but it inflates the cost of many
small calls); with `--sampled` instead pyinstrument's sampled self times as percentages of
the total (wall time, low overhead; `pip install pyinstrument`), and with `--tree` also its
call tree. `bench/PROFILE.md` reads these.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

import _programs
import laminax as jax
import numpy as np


def _lower_workload():
    program = _programs.mlp(jax)

    def run():
        for _ in range(60):
            jax.jit(program.make_step()).lower(*program.args)

    return run


def _call_workload():
    f = jax.jit(lambda a: a + 1.0)
    x = jax.device_put(np.arange(8, dtype=np.float32))
    f(x)

    def run():
        for _ in range(100_000):
            y = f(x)
        jax.block_until_ready(y)

    return run


def _eager_workload():
    x = jax.device_put(np.arange(8, dtype=np.float32))
    y = jax.device_put(np.ones(8, np.float32))
    jax.block_until_ready(x + y)

    def run():
        for _ in range(100_000):
            z = x + y
        jax.block_until_ready(z)

    return run


WORKLOADS = {"lower": _lower_workload, "call": _call_workload, "eager": _eager_workload}


def _cprofile(name: str, run, top: int) -> None:
    start = time.perf_counter()
    run()
    plain = time.perf_counter() - start
    profiler = cProfile.Profile()
    profiler.runcall(run)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    print(f"=== {name}: {plain:.3f} s without the profiler, {stats.total_tt:.3f} s under it")
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    print(out.getvalue())


def _pyinstrument(name: str, run, top: int, tree: bool) -> None:
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0002)
    profiler.start()
    run()
    profiler.stop()
    print(f"=== {name}: pyinstrument, self time as % of the total")
    flat = profiler.output_text(flat=True, time="percent_of_total", show_all=True)
    print("\n".join(flat.splitlines()[: top + 6]))
    if tree:
        print(profiler.output_text(time="percent_of_total"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("workloads", nargs="*", help=f"any of {list(WORKLOADS)} (default all)")
    parser.add_argument("--top", type=int, default=25, help="rows per cProfile listing")
    parser.add_argument("--sampled", action="store_true", help="pyinstrument, not cProfile")
    parser.add_argument("--tree", action="store_true", help="with --sampled: the call tree too")
    args = parser.parse_args()
    unknown = set(args.workloads) - set(WORKLOADS)
    if unknown:
        parser.error(f"unknown workloads {sorted(unknown)}; choose from {list(WORKLOADS)}")
    for name in args.workloads or list(WORKLOADS):
        run = WORKLOADS[name]()
        run()  # warm up
        if args.sampled:
            _pyinstrument(name, run, args.top, args.tree)
        else:
            _cprofile(name, run, args.top)


if __name__ == "__main__":
    main()

"""Diagnostic: laminax's and JAX's pytree functions timed in ONE process, interleaved.

    /path/to/jax/python bench/pytree_same_process.py        (the real-JAX interpreter)

`bench/run.py` compares separate processes, as users run them; on a busy machine the 100k-leaf
timings there move by tens of percent between runs. Both libraries call the same jaxlib C++, so
this script isolates what differs (the Python around the C++ call): it loads laminax-pytree from
the source tree into the real-JAX interpreter and alternates the two on the same trees, with the
garbage collector off, printing laminax ÷ JAX of the best and of the median round.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "packages/pytree/src")]

import jax  # noqa: E402
import laminax_pytree  # noqa: E402
from bench_pytree import SIZES, make_tree  # noqa: E402

ROUNDS = 15


def _identity(x):
    return x


def _first(x, _y):
    return x


def _cases(tu, tree):
    leaves, treedef = tu.tree_flatten(tree)
    return {
        "flatten": lambda: tu.tree_flatten(tree),
        "unflatten": lambda: tu.tree_unflatten(treedef, leaves),
        "map": lambda: tu.tree_map(_identity, tree),
        "map2": lambda: tu.tree_map(_first, tree, tree),
        "flatten_with_path": lambda: tu.tree_flatten_with_path(tree),
    }


def _round(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main() -> None:
    gc.disable()
    print("| benchmark | laminax | JAX | ÷ (best) | ÷ (median) |\n|---|---:|---:|---:|---:|")
    for label, size in SIZES.items():
        tree = make_tree(size)
        ours, theirs = _cases(laminax_pytree, tree), _cases(jax.tree_util, tree)
        calls = max(1, 100_000 // size)
        for name in ours:
            times = {"laminax": [], "jax": []}
            for i in range(ROUNDS):
                order = ("laminax", "jax") if i % 2 == 0 else ("jax", "laminax")
                for impl in order:
                    fn = ours[name] if impl == "laminax" else theirs[name]
                    times[impl].append(_round(fn, calls))
            lam, ref = times["laminax"], times["jax"]
            median_ratio = statistics.median(lam) / statistics.median(ref)
            print(
                f"| {name}/{label} | {min(lam) * 1e6:.1f} µs | {min(ref) * 1e6:.1f} µs | "
                f"{min(lam) / min(ref):.3f} | {median_ratio:.3f} |"
            )


if __name__ == "__main__":
    main()

"""Diagnostic: does evicting laminax's cached executables give their memory back?

    .venv/bin/python bench/memory_eviction_laminax.py [--bound 200] [--compilations 600]

`bench_memory` can only show eviction with more compilations than laminax's cache bounds
(4096), which takes about half an hour per library on a loaded 2-core machine, and each XLA
CPU executable holds about 1.3 MB. This script lowers the two bounds that hold executables
(laminax_dispatch's per-function jit cache and its in-memory executable cache; private
constants, which is why this is a diagnostic and not a benchmark module) to `--bound`, then
compiles `--compilations` distinct programs and prints RSS after every tenth as
`bench_memory` does. If eviction frees memory, RSS grows for the first `--bound`
compilations and then stays flat.
"""

from __future__ import annotations

import argparse
import sys

import bench_memory
import laminax as jax
import laminax_dispatch._compile as compile_module
import laminax_dispatch._jit as jit_module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bound", type=int, default=200, help="cache bound to set")
    parser.add_argument("--compilations", type=int, default=600, help="distinct programs")
    args = parser.parse_args()
    jit_module._CACHE_SIZE = args.bound
    compile_module._CACHE_SIZE = args.bound
    print(f"laminax cache bounds set to {args.bound}", file=sys.stderr)
    bench_memory.compilations(jax, args.compilations, bench_memory.MAX_RSS_GIB)


if __name__ == "__main__":
    main()

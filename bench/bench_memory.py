"""Memory: resident set size (RSS) growth from jitted calls and from many compilations.

- `calls/...`: RSS before and after 100,000 calls of one compiled function (float32[8] in
  and out, blocking every 1,000 calls so no queue of pending work is measured). A steady
  state allocates nothing that outlives the call, so growth should be about zero.
- `compiles/...`: one jitted function with a static argument called with `--compilations`
  distinct values (each traces, lowers and compiles a new program). Both libraries keep
  bounded caches (laminax: 4096 entries per function, and 4096 executables), so past the
  bound old entries are evicted and RSS should stop growing. RSS is reported after every
  tenth of the compilations, with the growth in each half and in the last tenth. The default,
  500 compilations, fits the ~15-minute full run but stays below the bound; the eviction test
  is `--compilations 6000` or more (about 0.3 s per compilation on the loaded 2-core
  development machine, so half an hour per library). `compiles/seconds_each` is the mean
  time of one compilation (trace + lower + compile of a tiny program).

Each XLA CPU executable holds about 1.3 MB of resident memory (measured, both libraries), so a
4096-entry cache can reach gigabytes: the run stops, reporting an error, if RSS passes
`--max-rss-gib` (default 8) rather than exhausting a shared machine's memory.

RSS is read from `/proc/self/statm` after a full garbage collection (Linux only). Values are
bytes; `bench/run.py` shows them in MiB and, for growth rows, the difference instead of a
ratio.

    python bench/run.py bench_memory
"""

from __future__ import annotations

import gc
import os
import time

import _harness
import numpy as np

CALLS = 100_000
COMPILATIONS = 500
MAX_RSS_GIB = 8.0
_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes(collect: bool = True) -> int:
    """The process's resident set size now (after a full collection if `collect`)."""
    if collect:
        gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE


def _check_rss(limit_gib: float, done: int) -> None:
    rss = rss_bytes(collect=False)
    if rss > limit_gib * 2**30:
        raise MemoryError(
            f"stopped after {done} compilations: RSS {rss / 2**30:.2f} GiB passed the "
            f"--max-rss-gib limit of {limit_gib} GiB (memory keeps growing: is a cache "
            f"unbounded?)"
        )


def calls(jax, count: int) -> None:
    f = jax.jit(lambda x: x * 2.0 + 1.0)
    x = jax.device_put(np.arange(8, dtype=np.float32))
    for _ in range(1_000):  # warm up: compile, fill free lists
        y = f(x)
    jax.block_until_ready(y)
    before = rss_bytes()
    for i in range(count):
        y = f(x)
        if i % 1_000 == 999:
            jax.block_until_ready(y)
    jax.block_until_ready(y)
    after = rss_bytes()
    _harness.report("calls/rss_before", before, "B")
    _harness.report(f"calls/rss_after_{count}", after, "B")
    _harness.report("calls/growth", after - before, "B")


def compilations(jax, count: int, limit_gib: float) -> None:
    g = jax.jit(lambda x, n: x * n + 1.0, static_argnums=1)
    x = jax.device_put(np.arange(8, dtype=np.float32))
    for n in range(-20, 0):  # warm up (negative values are not reused below)
        jax.block_until_ready(g(x, n))
    tenths = [max(1, count * k // 10) for k in range(11)]  # tenths[k]: after k tenths
    checkpoints = dict.fromkeys(tenths[1:])
    before = rss_bytes()
    seconds = 0.0
    for n in range(count):
        if n % 10 == 0:  # timed in blocks of 10, taking turns with the other library's process
            _harness.turn()
            start = time.perf_counter()
        jax.block_until_ready(g(x, n))
        if n % 10 == 9 or n + 1 == count:
            seconds += time.perf_counter() - start
        if n + 1 in checkpoints:
            checkpoints[n + 1] = rss_bytes()
        if n % 250 == 0:
            _check_rss(limit_gib, n)
    _harness.report("compiles/rss_before", before, "B")
    for done, rss in checkpoints.items():
        _harness.report(f"compiles/rss_after_{done}", rss, "B")
    middle, after = checkpoints[tenths[5]], checkpoints[count]
    _harness.report("compiles/growth_first_half", middle - before, "B")
    _harness.report("compiles/growth_second_half", after - middle, "B")
    _harness.report("compiles/growth_last_tenth", after - checkpoints[tenths[9]], "B")
    _harness.report("compiles/seconds_each", seconds / count)


def main() -> None:
    args = _harness.parse_args(
        __doc__,
        extra=(
            ("--calls", int, f"jitted calls (default {CALLS:,})"),
            ("--compilations", int, f"distinct compilations (default {COMPILATIONS:,})"),
            ("--max-rss-gib", float, f"stop compiling past this RSS (default {MAX_RSS_GIB})"),
        ),
    )
    jax = _harness.import_jax(args.impl)
    call_count = args.calls or (2_000 if args.quick else CALLS)
    compile_count = args.compilations or (40 if args.quick else COMPILATIONS)
    limit = args.max_rss_gib or MAX_RSS_GIB
    runs = {
        "calls": lambda: calls(jax, call_count),
        "compiles": lambda: compilations(jax, compile_count, limit),
    }
    for name, run in runs.items():
        if not _harness.selected(name, args):
            continue
        try:
            run()
        except Exception as error:  # noqa: BLE001 - reported as this case's result
            _harness.report_error(name, error)


if __name__ == "__main__":
    main()

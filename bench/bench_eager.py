"""Eager (un-jitted) operations on small arrays: `x + y`, `jnp.sin(x)`, `x[0]`, `x.at[0].set(1.)`.

Each operation is applied to float32[8] arrays already on the device, outside any `jit`, so
what is timed is the library's per-operation path: argument checks, dtype promotion, finding
(or building) the compiled kernel, launching it and wrapping the result. Timed like
`bench_jit_dispatch`: many calls without blocking, the round ends by blocking on the last
result.

    python bench/run.py bench_eager
"""

from __future__ import annotations

import _harness
import numpy as np


def benchmarks(jax) -> tuple[dict, object]:
    """The cases, and the `sync` that blocks on the latest result."""
    jnp = jax.numpy
    x = jax.device_put(np.arange(8, dtype=np.float32))
    y = jax.device_put(np.ones(8, np.float32))
    last = [x]

    def add():
        last[0] = x + y

    def sin():
        last[0] = jnp.sin(x)

    def index():
        last[0] = x[0]

    def at_set():
        last[0] = x.at[0].set(1.0)

    cases = {"x_plus_y": add, "jnp_sin": sin, "x_index_0": index, "x_at_0_set": at_set}
    return cases, lambda: jax.block_until_ready(last[0])


def main() -> None:
    args = _harness.parse_args(__doc__)
    jax = _harness.import_jax(args.impl)
    cases, sync = benchmarks(jax)
    _harness.run_all(cases, args, sync=sync)


if __name__ == "__main__":
    main()

"""jit dispatch: calling an already compiled jitted function on small arrays.

Cases: one array argument; ten array arguments; a dict of 100 arrays; one array in, a pytree
of ten arrays out. All arrays are float32[8] already on the device, so what is timed is the
library's per-call work (flatten, signature check, cache lookup, launching the executable,
wrapping the outputs), not computation or transfers.

How it is timed, as JAX's own dispatch benchmarks (`benchmarks/api_benchmark.py`) do: the
function is called many times in a row WITHOUT blocking on each result, and the round ends by
blocking on the last result (inside the timed region). So each round pays for all the work
it queued, but calls overlap with execution the way they do in a training loop; per-call
blocking would add the device round trip to both sides and hide the dispatch cost.

    python bench/run.py bench_jit_dispatch
"""

from __future__ import annotations

import _harness
import numpy as np


def benchmarks(jax) -> tuple[dict, object]:
    """The cases, and the `sync` that blocks on the latest result."""
    jnp = jax.numpy
    x = jax.device_put(np.arange(8, dtype=np.float32))
    ten = [jax.device_put(np.full(8, i, np.float32)) for i in range(10)]
    tree = {f"w{i:03d}": jax.device_put(np.full(8, i, np.float32)) for i in range(100)}
    last = [x]

    one_arg = jax.jit(lambda a: a + 1.0)
    ten_args = jax.jit(
        lambda *xs: xs[0] * xs[1] + xs[2] * xs[3] + xs[4] * xs[5] + xs[6] * xs[7] + xs[8] * xs[9]
    )
    pytree_arg = jax.jit(lambda t: jnp.stack(list(t.values())).sum(axis=0))
    pytree_out = jax.jit(
        lambda a: {
            "h": [a + i for i in range(4)],
            "stats": (a.sum(), a.max(), a.min()),
            "scaled": {"x2": a * 2, "x3": a * 3, "neg": -a},
        }
    )

    def call(fun, *args):
        def case():
            last[0] = fun(*args)

        return case

    cases = {
        "one_array_arg": call(one_arg, x),
        "ten_array_args": call(ten_args, *ten),
        "pytree_100_arrays_arg": call(pytree_arg, tree),
        "pytree_10_arrays_out": call(pytree_out, x),
    }
    return cases, lambda: jax.block_until_ready(last[0])


def main() -> None:
    args = _harness.parse_args(__doc__)
    jax = _harness.import_jax(args.impl)
    cases, sync = benchmarks(jax)
    _harness.run_all(cases, args, sync=sync)


if __name__ == "__main__":
    main()

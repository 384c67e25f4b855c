"""Library programs under `jit`, compiled once, timed per call (blocking): issue 17's
`scipy.optimize.minimize` (BFGS on the 100-d Rosenbrock function). (`image.resize`, the
issue's other case, joins when laminax has `image`.)

    python bench/run.py bench_library
"""

from __future__ import annotations

import _harness
import numpy as np


def benchmarks(jax) -> dict:
    """The cases (each compiled by its warm-up call)."""
    jnp = jax.numpy

    def rosenbrock(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    # near the minimum, where both libraries do comparable work in float32 (about 130
    # iterations, 180-190 evaluations, each ending when the line search can no longer
    # improve); from zeros JAX's line search gives up after 2 iterations and laminax's runs
    # ~490, which would time different work
    x0 = jax.device_put((1 + 0.1 * np.random.RandomState(0).randn(100)).astype(np.float32))

    compiled_minimize = jax.jit(
        lambda x: jax.scipy.optimize.minimize(rosenbrock, x, method="BFGS").x)

    return {
        "minimize_bfgs_rosenbrock_100d": lambda: jax.block_until_ready(compiled_minimize(x0)),
    }


def main() -> None:
    args = _harness.parse_args(__doc__)
    jax = _harness.import_jax(args.impl)
    if args.impl == "jax":
        import jax.scipy.optimize  # noqa: F401  (laminax imports it with laminax.scipy)
    _harness.run_each(benchmarks(jax), args, repeat=5)


if __name__ == "__main__":
    main()

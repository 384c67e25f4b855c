"""Library programs under `jit`, compiled once, timed per call (blocking): issue 17's
`scipy.optimize.minimize` (BFGS on the 100-d Rosenbrock function) and `image.resize`
(antialiased linear downsampling, cubic upsampling, nearest).

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

    rng = np.random.RandomState(1)
    photo = jax.device_put(rng.rand(256, 256, 3).astype(np.float32))
    thumb = jax.device_put(rng.rand(64, 64, 3).astype(np.float32))
    down = jax.jit(lambda x: jax.image.resize(x, (96, 96, 3), "linear"))
    up = jax.jit(lambda x: jax.image.resize(x, (256, 256, 3), "cubic"))
    nearest = jax.jit(lambda x: jax.image.resize(x, (160, 160, 3), "nearest"))

    return {
        "minimize_bfgs_rosenbrock_100d": lambda: jax.block_until_ready(compiled_minimize(x0)),
        "resize_linear_antialias_256_to_96": lambda: jax.block_until_ready(down(photo)),
        "resize_cubic_64_to_256": lambda: jax.block_until_ready(up(thumb)),
        "resize_nearest_256_to_160": lambda: jax.block_until_ready(nearest(photo)),
    }


def main() -> None:
    args = _harness.parse_args(__doc__)
    jax = _harness.import_jax(args.impl)
    if args.impl == "jax":
        import jax.image  # noqa: F401  (laminax imports them with laminax)
        import jax.scipy.optimize  # noqa: F401
    _harness.run_each(benchmarks(jax), args, repeat=5)


if __name__ == "__main__":
    main()

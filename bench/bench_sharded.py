"""Sharded dispatch on 8 CPU devices: calling a pjit'd / jitted function on NamedSharding'ed
arguments, and device_put of a 100-leaf pytree onto a NamedSharding.

Cases:
- ``pjit_call_sharded``: `jax.experimental.pjit.pjit` with PartitionSpecs under ``with mesh:``,
  called on two float32[64, 8] arguments already laid out by its in_shardings (the seed's API;
  in laminax one Python layer over `jit`);
- ``jit_call_sharded``: the same through `jax.jit(in_shardings=NamedSharding...)`;
- ``device_put_tree_100_named``: `jax.device_put` of a dict of 100 host float32[64] arrays onto
  ``NamedSharding(mesh, P('x'))`` (the transfer of a data-parallel batch tree).

Timed as `bench_jit_dispatch`: calls back to back, blocking on the last result per round.

    python bench/run.py bench_sharded
"""

from __future__ import annotations

import importlib
import warnings

import _harness
import numpy as np


def benchmarks(jax) -> tuple[dict, object]:
    jax.config.update("jax_num_cpu_devices", 8)
    warnings.simplefilter("ignore", DeprecationWarning)
    pjit = importlib.import_module(jax.__name__ + ".experimental.pjit").pjit
    sharding = importlib.import_module(jax.__name__ + ".sharding")
    mesh = sharding.Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))
    spec = sharding.PartitionSpec
    rows = sharding.NamedSharding(mesh, spec("x"))
    a = jax.device_put(np.ones((64, 8), np.float32), rows)
    b = jax.device_put(np.full((64, 8), 2, np.float32), rows)
    host_tree = {f"w{i:03d}": np.full(64, i, np.float32) for i in range(100)}
    last = [a]

    pjitted = pjit(lambda p, q: p * q + 1.0, in_shardings=(spec("x"), spec("x")), out_shardings=spec("x"))
    jitted = jax.jit(lambda p, q: p * q + 1.0, in_shardings=(rows, rows), out_shardings=rows)

    def pjit_call():
        with mesh:
            last[0] = pjitted(a, b)

    def jit_call():
        last[0] = jitted(a, b)

    def put_tree():
        last[0] = jax.device_put(host_tree, rows)["w099"]

    cases = {
        "pjit_call_sharded": pjit_call,
        "jit_call_sharded": jit_call,
        "device_put_tree_100_named": put_tree,
    }
    for case in cases.values():  # compile and warm up outside the timed rounds
        case()
    return cases, lambda: jax.block_until_ready(last[0])


def main() -> None:
    args = _harness.parse_args(__doc__)
    jax = _harness.import_jax(args.impl)
    cases, sync = benchmarks(jax)
    _harness.run_all(cases, args, sync=sync)


if __name__ == "__main__":
    main()

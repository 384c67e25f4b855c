"""A sharded training step on 8 CPU devices: trace + lower, compile, and one compiled step of
`_programs.mlp` (value_and_grad of an 8-layer MLP) laid out two ways:

- ``data_parallel``: the batch split over a 1-D mesh of 8 (``P('x')``), parameters replicated;
- ``model_parallel``: the hidden units split over the mesh (each layer's weight alternately
  ``P(None, 'x')`` and ``P('x', None)``), the batch replicated.

Each timed trace builds a fresh step function (nothing cached); compile times a fresh lowering's
`compile()`; step times one blocking call of the compiled program. Best of 5 single calls.

    python bench/run.py bench_sharded_step
"""

from __future__ import annotations

import importlib

import _harness
import _programs
import numpy as np

REPEAT = 5


def _layouts(jax, program, mode):
    sharding = importlib.import_module(jax.__name__ + ".sharding")
    P = sharding.PartitionSpec
    mesh = sharding.Mesh(np.array(jax.devices()[:8]), ("x",))
    named = lambda spec: sharding.NamedSharding(mesh, spec)  # noqa: E731
    params, (x, y) = program.args
    if mode == "data_parallel":
        params = jax.device_put(params, named(P()))
        batch = (jax.device_put(x, named(P("x"))), jax.device_put(y, named(P("x"))))
    else:
        layouts = [
            {"w": named(P(None, "x")), "b": named(P("x"))}
            if i % 2 == 0
            else {"w": named(P("x", None)), "b": named(P())}
            for i in range(len(params))
        ]
        params = jax.device_put(params, layouts)
        batch = jax.device_put((x, y), named(P()))
    return params, batch


def benchmarks(jax) -> dict:
    jax.config.update("jax_num_cpu_devices", 8)
    program = _programs.mlp(jax)
    cases = {}
    for mode in ("data_parallel", "model_parallel"):
        args = _layouts(jax, program, mode)

        def trace_lower(args=args):
            return jax.jit(program.make_step()).lower(*args)

        def lowered(args=args):
            return jax.jit(program.make_step()).lower(*args)

        compiled = jax.jit(program.make_step()).lower(*args).compile()

        def step(compiled=compiled, args=args):
            return jax.block_until_ready(compiled(*args))

        cases[f"trace_lower/mlp8_{mode}"] = trace_lower
        cases[f"compile/mlp8_{mode}"] = (lowered, lambda low: low.compile())
        cases[f"step/mlp8_{mode}"] = step
    return cases


def main() -> None:
    args = _harness.parse_args(__doc__)
    jax = _harness.import_jax(args.impl)
    _harness.run_each(benchmarks(jax), args, REPEAT)


if __name__ == "__main__":
    main()

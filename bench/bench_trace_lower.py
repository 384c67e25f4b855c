"""Trace + lower: `jax.jit(step).lower(*args)` of three training steps, nothing cached.

The programs (see `_programs.py`): value_and_grad of an 8-layer MLP, of a transformer block
(layernorm, causal 4-head attention, GELU MLP) and of a 100-step `lax.scan` RNN. Every timed
call builds a fresh step function (a new function object with a new name) and jits and lowers
it, so no per-function cache of either library can answer; caches that JAX keeps across
functions (jitted `jnp` helpers, lowering rules) stay warm, as they are in a real program
after its first step. One warm-up call per case, then the best of 7 single calls (1 with
`--quick`). Compilation is not included (`bench_compile_step` times it).

If the library lacks a feature a program needs (e.g. `lax.scan`), that case reports the
error and the others still run; `bench/run.py` shows it in the table.

    python bench/run.py bench_trace_lower
"""

from __future__ import annotations

import _harness
import _programs

REPEAT = 7


def benchmarks(jax) -> dict:
    cases = {}
    for make in _programs.PROGRAMS:
        try:
            program = make(jax)
        except Exception as error:  # noqa: BLE001 - reported as this case's result
            cases[make.__name__] = _raiser(error)
            continue

        def trace_and_lower(program=program):
            return jax.jit(program.make_step()).lower(*program.args)

        cases[program.name] = trace_and_lower
    return cases


def _raiser(error):
    def case():
        raise error

    return case


def main() -> None:
    args = _harness.parse_args(__doc__)
    jax = _harness.import_jax(args.impl)
    _harness.run_each(benchmarks(jax), args, REPEAT)


if __name__ == "__main__":
    main()

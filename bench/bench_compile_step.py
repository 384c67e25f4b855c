"""Compile time and steady-state step time of the three `bench_trace_lower` programs.

Both libraries hand XLA a StableHLO module and run the executable it returns, so both numbers
should match JAX's (1.00 ± 5%) when the modules are equivalent.

- `compile/<program>`: `lowered.compile()` of a freshly traced and lowered step (a new
  function object with a new name each time, so the module differs by its name and no
  in-memory executable cache can answer); the best of 3 compilations (1 with `--quick`),
  after the one made while building the cases.
- `step/<program>`: one call of the compiled step on the same arguments, blocking on the
  outputs; the best round of many calls (`time_per_call`).

    python bench/run.py bench_compile_step
"""

from __future__ import annotations

import _harness
import _programs

REPEAT = 3


def benchmarks(jax, only: str = "") -> tuple[dict, dict]:
    """The compile cases (slow, timed one call at a time) and the step cases.

    Programs none of whose cases contain `only` are not built (building compiles them).
    """
    compile_cases, step_cases = {}, {}
    for make in _programs.PROGRAMS:
        label = _programs.LABELS[make]
        if only and only not in f"compile/{label}" and only not in f"step/{label}":
            continue
        try:
            program = make(jax)
            lowered = jax.jit(program.make_step()).lower(*program.args)
            compiled = lowered.compile()
        except Exception as error:  # noqa: BLE001 - reported as this case's result
            compile_cases[f"compile/{make.__name__}"] = _raiser(error)
            continue

        def lower_fresh(program=program):
            return jax.jit(program.make_step()).lower(*program.args)

        def compile_lowered(lowered):
            return lowered.compile()

        def step(compiled=compiled, args=program.args):
            jax.block_until_ready(compiled(*args))

        compile_cases[f"compile/{program.name}"] = (lower_fresh, compile_lowered)
        step_cases[f"step/{program.name}"] = step
    return compile_cases, step_cases


def _raiser(error):
    def case():
        raise error

    return case


def main() -> None:
    args = _harness.parse_args(__doc__)
    jax = _harness.import_jax(args.impl)
    compile_cases, step_cases = benchmarks(jax, args.only)
    # Building the cases compiled each program once: that was the warm-up.
    _harness.run_each(compile_cases, args, REPEAT, warmup=False)
    _harness.run_all(step_cases, args)


if __name__ == "__main__":
    main()

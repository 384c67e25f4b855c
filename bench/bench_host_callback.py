"""Host callbacks: the round trip of a jitted call into Python, and taps inside a long scan.

- `pure_callback_round_trip`, `io_callback_round_trip`, `io_callback_ordered_round_trip`: a
  jitted function whose only work is one callback on a float32[8] (the callback returns its
  argument), called and blocked on, back to back.
- `taps_10000_in_scan`: one jitted `lax.scan` of 10,000 steps, each sending its carry to the
  host, then waiting for every callback. JAX 0.10.2 no longer has `host_callback.id_tap`, so
  its side uses today's equivalent, `io_callback(ordered=True)`; laminax's uses the seed's
  `id_tap` (asynchronous), reached through the facade's `jax.experimental.host_callback`.
- `scan_2000_steps` / `scan_2000_steps_tap_every_100`: a scan whose step is a 64x64 matmul,
  without and with a tap every 100 steps (a `cond` per step), to read the tap's overhead
  within each library (the issue's target: at most 5% more than without).

    python bench/run.py bench_host_callback

`--overhead N` (laminax or JAX alone) reads the tap's overhead robustly instead: in one
process, N rounds that each time the plain scan, the scan with a `cond` tap every 100 steps,
and (laminax) `progress.scan(every=100)` back to back in a shuffled order, then prints the
median of the per-round ratios (tapped / plain) and their 10th-90th percentile spread.
"""

from __future__ import annotations

import importlib

import _harness
import numpy as np


def _tap_function(jax):
    """`(tap(value), wait())`: the seed's id_tap where the library has it, else ordered
    io_callback (what JAX 0.10.2 offers for the same job)."""
    try:  # laminax's facade has it
        hcb = importlib.import_module(jax.__name__ + ".experimental.host_callback")
    except ImportError:
        hcb = None
    seen = [0]

    def count(*_):
        seen[0] += 1

    if hcb is not None:
        return (lambda v: hcb.id_tap(count, v)), hcb.barrier_wait
    io_callback = _experimental(jax).io_callback

    def tap(v):
        io_callback(count, None, v, ordered=True)
        return v

    return tap, jax.effects_barrier


def _experimental(jax):
    return importlib.import_module(jax.__name__ + ".experimental")


def round_trip_cases(jax) -> dict:
    io_callback = _experimental(jax).io_callback

    x = jax.device_put(np.arange(8, dtype=np.float32))
    spec = jax.ShapeDtypeStruct((8,), np.float32)
    identity = lambda v: v  # noqa: E731
    pure = jax.jit(lambda v: jax.pure_callback(identity, spec, v))
    io = jax.jit(lambda v: io_callback(identity, spec, v))
    ordered = jax.jit(lambda v: io_callback(identity, spec, v, ordered=True))
    return {
        "pure_callback_round_trip": lambda: pure(x).block_until_ready(),
        "io_callback_round_trip": lambda: io(x).block_until_ready(),
        "io_callback_ordered_round_trip": lambda: ordered(x).block_until_ready(),
    }


def scan_cases(jax) -> dict:
    lax, jnp = jax.lax, jax.numpy
    tap, wait = _tap_function(jax)
    w = jax.device_put(np.eye(64, dtype=np.float32) * 0.5)

    def tap_every_step(c, _):
        return tap(c + 1), None

    taps = jax.jit(lambda: lax.scan(tap_every_step, jnp.int32(0), None, length=10_000)[0])

    def matmul_step(c, i):
        return jnp.tanh(c @ w), None

    def matmul_step_tapped(c, i):
        c, _ = matmul_step(c, i)
        lax.cond(i % 100 == 0, lambda v: (tap(v), None)[1], lambda v: None, c)
        return c, None

    steps = jnp.arange(2000)
    c0 = jnp.ones((64, 64), jnp.float32)
    plain = jax.jit(lambda c: lax.scan(matmul_step, c, steps)[0])
    tapped = jax.jit(lambda c: lax.scan(matmul_step_tapped, c, steps)[0])

    def run_taps():
        taps().block_until_ready()
        wait()

    def run_tapped():
        tapped(c0).block_until_ready()
        wait()

    return {
        "taps_10000_in_scan": run_taps,
        "scan_2000_steps": lambda: plain(c0).block_until_ready(),
        "scan_2000_steps_tap_every_100": run_tapped,
    }


def overhead_rounds(jax, impl: str, rounds: int) -> None:
    """Alternated rounds in one process: the same load hits both sides of each ratio."""
    import random
    import time

    lax, jnp = jax.lax, jax.numpy
    cases = scan_cases(jax)
    plain, tapped = cases["scan_2000_steps"], cases["scan_2000_steps_tap_every_100"]
    runs = {"plain": plain, "cond_tap_every_100": tapped}
    if impl == "laminax":
        from laminax_hostcb import host_callback, progress

        w = jax.device_put(np.eye(64, dtype=np.float32) * 0.5)
        c0 = jnp.ones((64, 64), jnp.float32)
        steps = jnp.arange(2000)
        ticks = []
        prog = jax.jit(lambda c: progress.scan(lambda c, i: (jnp.tanh(c @ w), None), c, steps,
                                               report=ticks.append, every=100)[0])

        def run_progress():
            prog(c0).block_until_ready()
            host_callback.barrier_wait()

        runs["progress_scan_every_100"] = run_progress
    for fn in runs.values():  # compile and warm
        for _ in range(3):
            fn()
    ratios = {name: [] for name in runs if name != "plain"}
    for _ in range(rounds):
        order = list(runs)
        random.shuffle(order)
        times = {}
        for name in order:
            best = float("inf")
            for _ in range(3):  # best of 3 per round: one scheduler hiccup is not the cost
                t0 = time.perf_counter()
                runs[name]()
                best = min(best, time.perf_counter() - t0)
            times[name] = best
        for name in ratios:
            ratios[name].append(times[name] / times["plain"])
    for name, values in ratios.items():
        q10, q50, q90 = np.percentile(values, [10, 50, 90])
        print(f"{impl} {name} / plain: median {q50:.3f} (10-90%: {q10:.3f}-{q90:.3f}, "
              f"{rounds} rounds)")


def main() -> None:
    args = _harness.parse_args(__doc__, extra=(("--overhead", int, "rounds of the overhead "
                                                "measurement only"),))
    jax = _harness.import_jax(args.impl)
    if args.overhead:
        overhead_rounds(jax, args.impl, args.overhead)
        return
    _harness.run_all(round_trip_cases(jax), args)
    _harness.run_each(scan_cases(jax), args, repeat=7)


if __name__ == "__main__":
    main()

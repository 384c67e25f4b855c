"""What every benchmark module shares: the `--impl` flag, importing `jax`, timing, output.

A benchmark module is written once against JAX's API. Run as a script with `--impl laminax` it
gets `laminax` under the name `jax`; with `--impl jax` it gets real JAX (then it must run in
an interpreter that has JAX: `bench/run.py` takes care of that). It prints one JSON object per
line: `{"name": ..., "value": ..., "unit": "s"}` (seconds per call; `"B"` for bytes of memory),
or `{"name": ..., "error": ...}` for a case that raised (the other cases still run).

Timing: fast cases (`run_all`) are called in rounds of about 50 ms and report the best round's
time per call; slow ones (`run_each`: a trace, a compilation) are called one at a time and
report the best single call. Both keep the garbage collector off while timing, as `timeit`.

Taking turns: `bench/run.py` starts the laminax and the JAX process of a round together and
lets only one run at a time, handing the machine over before every timed unit (`turn()`: a
round of calls, one slow call, one child process). The two libraries' measurements then
alternate every 50 ms or so, so a busy phase of a shared machine hits both alike instead of
one process. Run by hand (no `LAMINAX_BENCH_TURNS` in the environment), `turn()` does nothing.

This module imports nothing from laminax or JAX itself, so both interpreters can load it.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import sys
import time
from collections.abc import Callable
from types import ModuleType

IMPLS = ("laminax", "jax")

# (fd to read "your turn" from, fd to write "done, next please" to), from bench/run.py
_TURNS = tuple(int(fd) for fd in os.environ["LAMINAX_BENCH_TURNS"].split(",")) if (
    os.environ.get("LAMINAX_BENCH_TURNS")) else None


def _wait_for_turn() -> None:
    if _TURNS is not None and not os.read(_TURNS[0], 1):
        sys.exit("bench: run.py went away")


def turn() -> None:
    """Hands the machine to the other library's process and returns when it is this one's
    turn again: called right before each timed unit. Does nothing outside `bench/run.py`."""
    if _TURNS is not None:
        os.write(_TURNS[1], b"y")
        _wait_for_turn()


_wait_for_turn()  # the process starts only when run.py says so


def parse_args(description: str, extra: tuple = ()) -> argparse.Namespace:
    """The common flags, plus `extra` ones given as (flag, type, help) triples (default None)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--impl", choices=IMPLS, required=True, help="which library is `jax`")
    parser.add_argument(
        "--quick", action="store_true", help="short timings, to check the benchmark runs"
    )
    parser.add_argument("--only", default="", help="run only benchmarks whose name has this")
    parser.add_argument(
        "--gc", action="store_true", help="keep the garbage collector on while timing"
    )
    for flag, kind, help_text in extra:
        parser.add_argument(flag, type=kind, help=help_text)
    return parser.parse_args()


def import_jax(impl: str) -> ModuleType:
    """`laminax` or real `jax`, to be bound to the name `jax` by the benchmark."""
    return importlib.import_module("laminax" if impl == "laminax" else "jax")


def time_per_call(
    fn: Callable[[], object],
    *,
    quick: bool = False,
    keep_gc: bool = False,
    sync: Callable[[], object] | None = None,
) -> float:
    """Seconds per call of `fn`: the best of several rounds, each about `round_s` long.

    The minimum over rounds is the least disturbed measurement of the same work (other
    processes only ever add time); `bench/run.py` then takes medians across processes.
    The garbage collector is off while timing, as in `timeit`, unless `keep_gc`: a full
    collection scans every object of the process, so with it on the cost of building large
    trees depends on how much else the process has imported (JAX's own import makes full
    collections rarer), not on the code being measured.

    `sync`, when given, is called once at the end of every round, inside the timed region:
    for asynchronous work (dispatching to a device), `fn` queues and `sync` waits for what
    was queued, so each round pays for all the work it started.
    """
    with _gc_off(keep_gc):
        return _best_round(fn, quick, sync or _nothing)


def _nothing() -> None:
    return None


class _gc_off:
    def __init__(self, keep_gc: bool):
        self.keep_gc = keep_gc

    def __enter__(self):
        self.was_enabled = gc.isenabled()
        if not self.keep_gc:
            gc.collect()
            gc.disable()

    def __exit__(self, *exc):
        if self.was_enabled:
            gc.enable()


def _timed_round(fn, calls, sync) -> float:
    turn()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return time.perf_counter() - start


def _best_round(fn: Callable[[], object], quick: bool, sync: Callable[[], object]) -> float:
    round_s, rounds = (0.005, 3) if quick else (0.05, 11)
    calls = 1
    while True:
        elapsed = _timed_round(fn, calls, sync)
        if elapsed >= round_s:
            break
        calls *= 2 if elapsed * 4 < round_s else max(2, int(round_s / max(elapsed, 1e-9)))
    best = elapsed / calls
    for _ in range(rounds - 1):
        best = min(best, _timed_round(fn, calls, sync) / calls)
    return best


def time_each(
    fn: Callable[..., object],
    repeat: int,
    *,
    keep_gc: bool = False,
    setup: Callable[[], object] | None = None,
) -> float:
    """Seconds of the fastest of `repeat` single calls of `fn` (for calls of 10 ms and more).

    With `setup`, each call is `fn(setup())` and only `fn` is timed. A full collection runs
    before each call, outside the timed region, and the collector stays off during it
    (unless `keep_gc`).
    """
    best = float("inf")
    for _ in range(repeat):
        arguments = () if setup is None else (setup(),)
        with _gc_off(keep_gc):
            turn()
            start = time.perf_counter()
            fn(*arguments)
            best = min(best, time.perf_counter() - start)
    return best


def report(name: str, value: float, unit: str = "s") -> None:
    """Prints one result: `value` in `unit` ("s" per call, or "B" of memory)."""
    print(json.dumps({"name": name, "value": value, "unit": unit}), flush=True)


def report_error(name: str, error: BaseException) -> None:
    """Prints that case `name` raised `error` (the library lacks or breaks something)."""
    message = f"{type(error).__name__}: {error}".splitlines()[0][:300]
    print(json.dumps({"name": name, "error": message}), flush=True)


def selected(name: str, args: argparse.Namespace) -> bool:
    return not args.only or args.only in name


def run_all(
    benchmarks: dict[str, Callable[[], object]],
    args: argparse.Namespace,
    *,
    sync: Callable[[], object] | None = None,
) -> None:
    """Times each fast case with `time_per_call` (after one warm-up call) and reports it.

    A case whose warm-up raises is reported as an error and the others still run.
    """
    for name, fn in benchmarks.items():
        if not selected(name, args):
            continue
        try:
            fn()  # warm up: first-call costs (imports, caches) are not what we measure
        except Exception as error:  # noqa: BLE001 - a benchmark reports, it does not stop
            report_error(name, error)
            continue
        report(name, time_per_call(fn, quick=args.quick, keep_gc=args.gc, sync=sync))
    sys.stdout.flush()


def run_each(
    benchmarks: dict, args: argparse.Namespace, repeat: int, *, warmup: bool = True
) -> None:
    """Times each slow case with `time_each` (best of `repeat`, after one warm-up call).

    A case is a function of no arguments, or a pair `(setup, fn)`: then `fn(setup())` is
    called and only `fn` is timed. `warmup=False` skips the warm-up call (when building the
    cases already ran each once).
    """
    for name, case in benchmarks.items():
        if not selected(name, args):
            continue
        setup, fn = case if isinstance(case, tuple) else (None, case)
        try:
            if warmup:
                fn() if setup is None else fn(setup())
            seconds = time_each(fn, 1 if args.quick else repeat, keep_gc=args.gc, setup=setup)
        except Exception as error:  # noqa: BLE001 - a benchmark reports, it does not stop
            report_error(name, error)
            continue
        report(name, seconds)
    sys.stdout.flush()

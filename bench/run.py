"""Runs benchmark modules with laminax and with real JAX, side by side, and prints the ratios.

    python bench/run.py [all | MODULE ...] [--rounds N] [--quick] [--only TEXT] [--markdown FILE]

Each MODULE (default, or `all`: every `bench/bench_*.py` but the standalone ones) runs in
rounds: one process with laminax (this interpreter, or `LAMINAX_PYTHON`) and one with real JAX
(the reference interpreter from `tests/jaxref.py`, or `LAMINAX_JAX_PYTHON`), the order
flipping every round so that drift on a shared machine hits both sides alike (`--rounds`, or
the module's default in `DEFAULT_ROUNDS`). Each process reports its best timing per benchmark.

Per benchmark the table shows each side's median over rounds, and the ratio laminax ÷ JAX
(lower is better) as the median of the per-round ratios (a round's two processes run back to
back, so slow phases of the machine cancel within it), with its spread: a distribution-free
confidence interval of that median of at least 90% (the smallest and largest ratio for 5 to 8
rounds, tighter order statistics beyond). A ratio whose interval lies within 1.00 ± 0.03 is
1.00 ± 3% beyond the machine's noise; a wider interval needs more rounds (or a quieter
machine). The ratio of the best processes is shown too. Memory rows (bytes) show MiB, and for
growth the difference laminax − JAX instead of ratios. A case that raised in one library shows
its error; a module whose process fails shows the failure and the run goes on. `--raw FILE`
keeps every sample as JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
IMPLS = ("laminax", "jax")

# Rounds (one process per library each) when `--rounds` is not given. The compiled-step
# modules get 5 (issue 19: the median of at least 5 alternated rounds); slow modules whose
# targets are bounds get 3, bench_memory 1 (its 500 compilations are one measurement).
# `all` at these defaults takes about 11 minutes on a quiet 2-core machine.
DEFAULT_ROUNDS = {
    "bench_compile_step": 5,
    "bench_export": 3,
    "bench_host_callback": 3,
    "bench_memory": 1,
    "bench_models": 5,
    "bench_pytree": 3,
    "bench_sharded_step": 5,  # issue 11: a >=90% spread for its 1.00 +- 5% step target
    "bench_startup": 3,
    "bench_trace_lower": 3,
}
ROUNDS = 5

# Modules `all` leaves out: they start their own processes and compare by themselves.
STANDALONE = {"bench_distributed"}

# The targets (laminax ÷ JAX, ratio of medians), by module and row-name prefix.
TARGETS = {
    "bench_jit_dispatch": (None, 1.10),
    "bench_eager": (None, 1.00),  # issue 19 (issue 6 had 1.20)
    "bench_pytree": (None, 1.05),
    "bench_trace_lower": (None, 1.00),
    # issue 19: compiled steps and compilation 1.00 +- 3%
    "bench_compile_step": (0.97, 1.03),
    "bench_sharded": (None, 1.00),
    # issue 19: compiled steps and compilation 1.00 +- 3%
    "bench_models": ({"step/": (0.97, 1.03), "compile/": (0.97, 1.03)}, None),
    # issue 14: export + serialize, deserialize + first call <= 1.0 (call_in_jit: compare
    # with jit_original within each library, at most 1.1x)
    "bench_export": (
        {"export_serialize/": (None, 1.00), "deserialize_first_call/": (None, 1.00)}, None,
    ),
    # issue 11: trace+lower <= 0.8, compiled step 1.00 +- 5%
    "bench_sharded_step": (
        {"trace_lower/": (None, 0.80), "step/": (0.95, 1.05), "compile/": (0.95, 1.05)},
        None,
    ),
}


def _jaxref_python() -> Path:
    spec = importlib.util.spec_from_file_location("jaxref", ROOT / "tests" / "jaxref.py")
    jaxref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jaxref)
    reason = jaxref.unavailable_reason()
    if reason is not None:
        raise SystemExit(f"bench/run.py: no real-JAX interpreter: {reason}")
    return jaxref.jax_python()


def _interpreters(impls) -> dict[str, Path]:
    pythons = {"laminax": Path(os.environ.get("LAMINAX_PYTHON", sys.executable))}
    if "jax" in impls:
        pythons["jax"] = _jaxref_python()
    return pythons


class Samples:
    """Every result of one module: values per library, case and round, errors, units."""

    def __init__(self):
        self.values: dict[str, dict[str, list[float]]] = {impl: {} for impl in IMPLS}
        self.rounds: dict[str, dict[str, list[int]]] = {impl: {} for impl in IMPLS}
        self.errors: dict[str, dict[str, str]] = {impl: {} for impl in IMPLS}
        self.units: dict[str, str] = {}
        self.names: list[str] = []

    def add(self, impl: str, row: dict, round_index: int = 0) -> None:
        name = row["name"]
        if name not in self.names:
            self.names.append(name)
        if "error" in row:
            self.errors[impl][name] = row["error"]
            return
        self.units[name] = row.get("unit", "s")
        value = row["value"] if "value" in row else row["seconds"]
        self.values[impl].setdefault(name, []).append(value)
        self.rounds[impl].setdefault(name, []).append(round_index)

    def paired_ratios(self, name: str) -> list[float]:
        """laminax ÷ JAX within each round that has both, in round order."""
        ours = dict(zip(self.rounds["laminax"].get(name, []),
                        self.values["laminax"].get(name, []), strict=True))
        theirs = dict(zip(self.rounds["jax"].get(name, []),
                          self.values["jax"].get(name, []), strict=True))
        return [ours[r] / theirs[r] for r in sorted(ours.keys() & theirs.keys()) if theirs[r]]

    def as_json(self) -> dict:
        return {"values": self.values, "rounds": self.rounds, "errors": self.errors,
                "units": self.units}


def median_interval(values: list[float], confidence: float = 0.9) -> tuple[float, float]:
    """A distribution-free confidence interval of the median of `values`: the k-th smallest
    and k-th largest value, k the largest order whose coverage (from the binomial count of
    values below the median) is at least `confidence`; the extremes when none reaches it
    (fewer than 5 values cannot reach 90%).

    Example:
      >>> median_interval([1.0, 0.98, 1.02, 1.01, 0.99])
      (0.98, 1.02)
    """
    ordered = sorted(values)
    n = len(ordered)
    k, below = 1, 0.0  # below: P(fewer than k values fall under the median)
    while k < (n + 1) // 2:
        below += math.comb(n, k - 1) / 2**n
        if 1 - 2 * (below + math.comb(n, k) / 2**n) < confidence:
            break
        k += 1
    return ordered[k - 1], ordered[n - k]


def _command(python: Path, module: Path, impl: str, extra: list[str]) -> list[str]:
    return [str(python), str(module), "--impl", impl, *extra]


def _rows(stdout: str, returncode: int, stderr: str) -> list[dict]:
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    if returncode != 0:
        tail = " ".join(stderr.strip().splitlines()[-1:])[:300]
        rows.append({"name": "(process)", "error": f"exit {returncode}: {tail}"})
    return rows


def _env() -> dict:
    return dict(os.environ, JAX_PLATFORMS="cpu", PYTHONDONTWRITEBYTECODE="1")


def _run_module(python: Path, module: Path, impl: str, extra: list[str]) -> list[dict]:
    done = subprocess.run(_command(python, module, impl, extra), capture_output=True,
                          text=True, env=_env(), cwd=ROOT)
    return _rows(done.stdout, done.returncode, done.stderr)


def _run_in_turns(pythons: dict, module: Path, order: list[str], extra: list[str]) -> dict:
    """Runs one process per library together, letting one run at a time: each hands over
    before every timed unit (`_harness.turn`), `order[0]` starts. Returns rows per library."""
    children = {}
    with tempfile.TemporaryDirectory() as folder:
        for impl in order:
            go_read, go_write = os.pipe()
            done_read, done_write = os.pipe()
            out, err = (open(Path(folder) / f"{impl}.{kind}", "w+") for kind in ("out", "err"))
            env = dict(_env(), LAMINAX_BENCH_TURNS=f"{go_read},{done_write}")
            process = subprocess.Popen(
                _command(pythons[impl], module, impl, extra), stdout=out, stderr=err,
                text=True, env=env, cwd=ROOT, pass_fds=(go_read, done_write))
            os.close(go_read)
            os.close(done_write)
            children[impl] = (process, go_write, done_read, out, err)
        running = list(order)
        while running:
            for impl in list(running):
                _, go_write, done_read, _, _ = children[impl]
                try:
                    os.write(go_write, b"g")
                    handed_back = os.read(done_read, 1)
                except (BrokenPipeError, OSError):
                    handed_back = b""
                if not handed_back:  # the process ended
                    running.remove(impl)
        rows = {}
        for impl, (process, go_write, done_read, out, err) in children.items():
            process.wait()
            os.close(go_write)
            os.close(done_read)
            out.seek(0)
            err.seek(0)
            rows[impl] = _rows(out.read(), process.returncode, err.read())
            out.close()
            err.close()
    return rows


def measure(module: Path, rounds: int, extra: list[str], impls=IMPLS,
            turns: bool = True) -> Samples:
    """Runs `module` once per library in each of `rounds` rounds, alternating which goes
    first; with `turns` the round's two processes take turns at every timed unit, else they
    run one after the other."""
    pythons = _interpreters(impls)
    samples = Samples()
    for index in range(rounds):
        order = list(impls) if index % 2 == 0 else list(reversed(impls))
        if turns and len(order) > 1:
            rows = _run_in_turns(pythons, module, order, extra)
        else:
            rows = {impl: _run_module(pythons[impl], module, impl, extra) for impl in order}
        for impl in order:
            for row in rows[impl]:
                samples.add(impl, row, index)
        print(f"  {module.stem}: round {index + 1}/{rounds} done", file=sys.stderr, flush=True)
    return samples


def _format(value: float, unit: str) -> str:
    if unit == "B":
        return f"{value / 2**20:.1f} MiB"
    for suffix, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {suffix}"
    return f"{value / 1e-9:.3g} ns"


def _target_cell(module: str, ratio: float, name: str = "") -> str:
    low, high = TARGETS.get(module, (None, None))
    if isinstance(low, dict):  # per row: {name prefix: (low, high)}
        low, high = next((t for p, t in low.items() if name.startswith(p)), (None, None))
    if high is None:
        return ""
    wanted = f"≤ {high:.2f}" if low is None else f"{low:.2f}–{high:.2f}"
    met = ratio <= high and (low is None or ratio >= low)
    return f"{wanted} {'met' if met else 'MISSED'}"


def _cell(samples: Samples, impl: str, name: str) -> str:
    values = samples.values[impl].get(name)
    if values:
        return _format(statistics.median(values), samples.units[name])
    error = samples.errors[impl].get(name)
    return f"error: {error}" if error else "—"


def _row(module: str, name: str, samples: Samples) -> str:
    cells = [_cell(samples, impl, name) for impl in IMPLS]
    ours, theirs = samples.values["laminax"].get(name), samples.values["jax"].get(name)
    if not (ours and theirs):
        return f"| {name} | {cells[0]} | {cells[1]} | — | — | — | |"
    median_ours, median_theirs = statistics.median(ours), statistics.median(theirs)
    if samples.units[name] == "B":
        if "growth" in name:
            delta = _format(median_ours - median_theirs, "B")
            return f"| {name} | {cells[0]} | {cells[1]} | Δ {delta} | | | |"
        return (f"| {name} | {cells[0]} | {cells[1]} | {median_ours / median_theirs:.3f} "
                "| | | |")
    paired = samples.paired_ratios(name)
    ratio = statistics.median(paired) if paired else median_ours / median_theirs
    low, high = median_interval(paired) if paired else (ratio, ratio)
    best = min(ours) / min(theirs)
    target = "" if name.startswith("compiles/") else _target_cell(module, ratio, name)
    return (f"| {name} | {cells[0]} | {cells[1]} | {ratio:.3f} | {low:.3f}–{high:.3f} "
            f"({len(paired)}) | {best:.3f} | {target} |")


def table(module: str, samples: Samples) -> list[str]:
    """The module's results as a markdown table."""
    lines = [
        f"| {module} | laminax (median) | JAX (median) | ÷ (median of rounds) "
        "| spread (≥90% CI, rounds) | ÷ of bests | target |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    return lines + [_row(module, name, samples) for name in samples.names]


def _machine() -> str:
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{os.cpu_count()} CPUs, load average (1/5/15 min) {load}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("modules", nargs="*", help="`all` or module names, e.g. bench_pytree")
    parser.add_argument(
        "--rounds",
        "--reps",
        dest="rounds",
        type=int,
        help=f"rounds, one process per library each (default {ROUNDS}, or per module: "
        f"{DEFAULT_ROUNDS})",
    )
    parser.add_argument("--quick", action="store_true", help="short timings (a smoke test)")
    parser.add_argument("--only", default="", help="only benchmarks whose name has this")
    parser.add_argument("--gc", action="store_true", help="keep the GC on while timing")
    parser.add_argument(
        "--laminax-only",
        action="store_true",
        help="run laminax only (no ratios; checks that the modules run)",
    )
    parser.add_argument("--compilations", type=int, help="bench_memory: distinct compilations")
    parser.add_argument(
        "--one-after-the-other",
        action="store_true",
        help="run a round's two processes one after the other instead of taking turns",
    )
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    parser.add_argument("--raw", type=Path, help="write every sample to this JSON file")
    return parser


def _module_args(name: str, args: argparse.Namespace) -> list[str]:
    extra = (["--quick"] if args.quick else []) + (["--only", args.only] if args.only else [])
    extra += ["--gc"] if args.gc else []
    if name == "bench_memory" and args.compilations:
        extra += ["--compilations", str(args.compilations)]
    return extra


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    every = sorted(p.stem for p in BENCH_DIR.glob("bench_*.py"))
    names = [n.removesuffix(".py") for n in args.modules if n != "all"] or [
        n for n in every if n not in STANDALONE]
    impls = ("laminax",) if args.laminax_only else IMPLS
    started = time.time()
    output = [
        f"Command: `python bench/run.py {shlex.join(argv)}`",
        f"Machine at start: {_machine()}",
        "",
    ]
    raw = {}
    for name in names:
        module = BENCH_DIR / f"{name}.py"
        if not module.exists():
            raise SystemExit(f"bench/run.py: no benchmark module {module}; have {every}")
        rounds = args.rounds or (1 if args.quick else DEFAULT_ROUNDS.get(name, ROUNDS))
        samples = measure(module, rounds, _module_args(name, args), impls,
                          turns=not args.one_after_the_other)
        raw[name] = samples.as_json()
        output += table(name, samples) + [""]
    minutes = (time.time() - started) / 60
    output.append(f"Machine at end: {_machine()}; total {minutes:.1f} minutes.")
    print("\n".join(output))
    if args.raw:
        args.raw.write_text(json.dumps(raw, indent=1))
    if args.markdown:
        args.markdown.write_text("\n".join(output) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

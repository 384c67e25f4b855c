"""Runs benchmark modules with laminax and with real JAX, side by side, and prints the ratios.

    python bench/run.py [all | MODULE ...] [--reps N] [--quick] [--only TEXT] [--markdown FILE]

Each MODULE (default, or `all`: every `bench/bench_*.py`) runs in separate processes,
alternately with laminax (this interpreter, or `LAMINAX_PYTHON`) and real JAX (the reference
interpreter from `tests/jaxref.py`, or `LAMINAX_JAX_PYTHON`), several times each (`--reps`, or
the module's default in `DEFAULT_REPS`), the order flipping every repetition so that drift on a
shared machine hits both sides alike. Each process reports its best round per benchmark; the
table shows, per side, the median over repetitions, and the ratio laminax ÷ JAX (lower is
better) of those medians and of the best repetitions (the least disturbed ones: on a busy
machine, single processes can be tens of percent off). Memory rows (bytes) show MiB, and for
growth the difference laminax − JAX instead of ratios. A case that raised in one library shows
its error; a module whose process fails shows the failure and the run goes on.
`--raw FILE` keeps every sample as JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
IMPLS = ("laminax", "jax")

# Processes per library when `--reps` is not given: fewer for the modules that compile.
DEFAULT_REPS = {
    "bench_compile_step": 3,
    "bench_export": 3,
    "bench_memory": 1,
    "bench_models": 3,
    "bench_sharded_step": 3,
    "bench_startup": 3,
    "bench_trace_lower": 3,
}
REPS = 5

# The targets (laminax ÷ JAX, ratio of medians), by module and row-name prefix.
TARGETS = {
    "bench_jit_dispatch": (None, 1.10),
    "bench_eager": (None, 1.20),
    "bench_pytree": (None, 1.05),
    "bench_trace_lower": (None, 1.00),
    "bench_compile_step": (0.95, 1.05),
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
    """Every result of one module: values per library and case, errors, units."""

    def __init__(self):
        self.values: dict[str, dict[str, list[float]]] = {impl: {} for impl in IMPLS}
        self.errors: dict[str, dict[str, str]] = {impl: {} for impl in IMPLS}
        self.units: dict[str, str] = {}
        self.names: list[str] = []

    def add(self, impl: str, row: dict) -> None:
        name = row["name"]
        if name not in self.names:
            self.names.append(name)
        if "error" in row:
            self.errors[impl][name] = row["error"]
            return
        self.units[name] = row.get("unit", "s")
        value = row["value"] if "value" in row else row["seconds"]
        self.values[impl].setdefault(name, []).append(value)

    def as_json(self) -> dict:
        return {"values": self.values, "errors": self.errors, "units": self.units}


def _run_module(python: Path, module: Path, impl: str, extra: list[str]) -> list[dict]:
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONDONTWRITEBYTECODE="1")
    cmd = [str(python), str(module), "--impl", impl, *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0:
        tail = " ".join(done.stderr.strip().splitlines()[-1:])[:300]
        rows.append({"name": "(process)", "error": f"exit {done.returncode}: {tail}"})
    return rows


def measure(module: Path, reps: int, extra: list[str], impls=IMPLS) -> Samples:
    """Runs `module` `reps` times per library, alternating which goes first."""
    pythons = _interpreters(impls)
    samples = Samples()
    for rep in range(reps):
        order = list(impls) if rep % 2 == 0 else list(reversed(impls))
        for impl in order:
            for row in _run_module(pythons[impl], module, impl, extra):
                samples.add(impl, row)
        print(f"  {module.stem}: repetition {rep + 1}/{reps} done", file=sys.stderr, flush=True)
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
        return f"| {name} | {cells[0]} | {cells[1]} | — | — | |"
    median_ours, median_theirs = statistics.median(ours), statistics.median(theirs)
    if samples.units[name] == "B":
        if "growth" in name:
            delta = _format(median_ours - median_theirs, "B")
            return f"| {name} | {cells[0]} | {cells[1]} | Δ {delta} | | |"
        return f"| {name} | {cells[0]} | {cells[1]} | {median_ours / median_theirs:.3f} | | |"
    ratio = median_ours / median_theirs
    best = min(ours) / min(theirs)
    target = "" if name.startswith("compiles/") else _target_cell(module, ratio, name)
    return f"| {name} | {cells[0]} | {cells[1]} | {ratio:.3f} | {best:.3f} | {target} |"


def table(module: str, samples: Samples) -> list[str]:
    """The module's results as a markdown table."""
    lines = [
        f"| {module} | laminax (median) | JAX (median) | ÷ of medians | ÷ of bests | target |",
        "|---|---:|---:|---:|---:|---|",
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
        "--reps",
        type=int,
        help=f"processes per library (default {REPS}, or per module: {DEFAULT_REPS})",
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
    names = [n.removesuffix(".py") for n in args.modules if n != "all"] or every
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
        reps = args.reps or (1 if args.quick else DEFAULT_REPS.get(name, REPS))
        samples = measure(module, reps, _module_args(name, args), impls)
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

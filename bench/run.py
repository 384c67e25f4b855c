"""Runs benchmark modules with laminax and with real JAX, side by side, and prints the ratios.

    python bench/run.py [MODULE ...] [--reps N] [--quick] [--only TEXT] [--markdown FILE]

Each MODULE (default: every `bench/bench_*.py`) runs in separate processes, alternately with
laminax (this interpreter, or `LAMINAX_PYTHON`) and real JAX (the reference interpreter from
`tests/jaxref.py`, or `LAMINAX_JAX_PYTHON`), `--reps` times each, the order flipping every
repetition so that drift on a shared machine hits both sides alike. Each process reports its
best round per benchmark; the table shows, per side, the median over repetitions, and the
ratio laminax ÷ JAX (lower is better) of those medians and of the best repetitions (the
least disturbed ones: on a busy machine, single processes can be tens of percent off).
`--raw FILE` keeps every sample as JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent


def _jaxref_python() -> Path:
    spec = importlib.util.spec_from_file_location("jaxref", ROOT / "tests" / "jaxref.py")
    jaxref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jaxref)
    reason = jaxref.unavailable_reason()
    if reason is not None:
        raise SystemExit(f"bench/run.py: no real-JAX interpreter: {reason}")
    return jaxref.jax_python()


def _interpreters() -> dict[str, Path]:
    laminax_python = Path(os.environ.get("LAMINAX_PYTHON", sys.executable))
    return {"laminax": laminax_python, "jax": _jaxref_python()}


def _run_module(python: Path, module: Path, impl: str, extra: list[str]) -> dict[str, float]:
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONDONTWRITEBYTECODE="1")
    cmd = [str(python), str(module), "--impl", impl, *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"bench/run.py: {' '.join(cmd)} failed:\n{done.stderr}")
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {row["name"]: row["seconds"] for row in rows}


def measure(module: Path, reps: int, extra: list[str]) -> dict[str, dict[str, list[float]]]:
    """{impl: {benchmark: [seconds per call, one per repetition]}}."""
    pythons = _interpreters()
    samples: dict[str, dict[str, list[float]]] = {"laminax": {}, "jax": {}}
    for rep in range(reps):
        order = ["laminax", "jax"] if rep % 2 == 0 else ["jax", "laminax"]
        for impl in order:
            for name, seconds in _run_module(pythons[impl], module, impl, extra).items():
                samples[impl].setdefault(name, []).append(seconds)
        print(f"  {module.stem}: repetition {rep + 1}/{reps} done", file=sys.stderr, flush=True)
    return samples


def _format_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def table(module: str, samples: dict[str, dict[str, list[float]]]) -> list[str]:
    lines = [
        f"| {module} | laminax (median) | JAX (median) | ÷ of medians | ÷ of bests |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, laminax_times in samples["laminax"].items():
        jax_times = samples["jax"].get(name)
        if not jax_times:
            continue
        ours, theirs = statistics.median(laminax_times), statistics.median(jax_times)
        best_ratio = min(laminax_times) / min(jax_times)
        lines.append(
            f"| {name} | {_format_time(ours)} | {_format_time(theirs)} | {ours / theirs:.3f} "
            f"| {best_ratio:.3f} |"
        )
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("modules", nargs="*", help="benchmark module names, e.g. bench_pytree")
    parser.add_argument("--reps", type=int, default=5, help="processes per implementation")
    parser.add_argument("--quick", action="store_true", help="short timings (a smoke test)")
    parser.add_argument("--only", default="", help="only benchmarks whose name has this")
    parser.add_argument("--gc", action="store_true", help="keep the GC on while timing")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    parser.add_argument("--raw", type=Path, help="write every sample to this JSON file")
    args = parser.parse_args(argv)
    names = args.modules or sorted(p.stem for p in BENCH_DIR.glob("bench_*.py"))
    extra = (["--quick"] if args.quick else []) + (["--only", args.only] if args.only else [])
    extra += ["--gc"] if args.gc else []
    output: list[str] = []
    raw = {}
    for name in names:
        module = BENCH_DIR / f"{name.removesuffix('.py')}.py"
        raw[module.stem] = measure(module, args.reps, extra)
        output += table(module.stem, raw[module.stem]) + [""]
    print("\n".join(output))
    if args.raw:
        args.raw.write_text(json.dumps(raw, indent=1))
    if args.markdown:
        args.markdown.write_text("\n".join(output))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

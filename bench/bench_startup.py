"""Whole-process costs a user sees: time to first result, and the main job's wall time.

Each case starts a new interpreter (the one running this module) and times it from process
start to exit, so interpreter start-up, imports, backend start, tracing, compilation and the
first execution all count; the child's peak resident memory is reported beside it.

- `first_result`: `import jax` (laminax under the name), then one jitted `x * 2 + 1` on
  float32[8], blocked on.
- `main_job`: the README's main job, `examples/mlp_digits.py` (digits MLP with optax, a
  progress bar fed from the compiled epochs), start to final accuracy. It needs laminax's
  `install_as_jax`, optax and `host_callback`, which real JAX 0.10.2 does not have (and its
  reference environment has no optax), so the JAX side reports that error instead of a time.

Rows: `<case>` (seconds: first_result the best of 3, 1 with `--quick`; main_job one run) and
`<case>/peak_rss` (bytes, the largest child's maximum resident set size).

    python bench/run.py bench_startup
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _harness

REPEAT = 3
ROOT = Path(__file__).resolve().parent.parent

_FIRST_RESULT = """
import numpy as np
import {module} as jax
f = jax.jit(lambda x: x * 2 + 1)
jax.block_until_ready(f(np.ones(8, np.float32)))
"""


def _child_peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _run(argv: list[str]) -> float:
    env = dict(os.environ, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="1")
    env.pop("LAMINAX_BENCH_TURNS", None)  # the child is timed as a whole
    _harness.turn()
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1200)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError((done.stderr or done.stdout).strip().splitlines()[-1][:300])
    return seconds


def _first_result(impl: str) -> float:
    return _run([sys.executable, "-c", _FIRST_RESULT.format(module=impl)])


def _main_job(impl: str, quick: bool) -> float:
    if impl != "laminax":
        raise RuntimeError(
            "the main job uses laminax.install_as_jax, optax and host_callback, which JAX "
            "0.10.2 and its reference environment lack"
        )
    with tempfile.TemporaryDirectory() as out:
        epochs = ["--epochs", "8"] if quick else []  # 8 epochs already pass its 95% check
        return _run([sys.executable, str(ROOT / "examples" / "mlp_digits.py"), "--out", out, *epochs])


def main() -> None:
    args = _harness.parse_args(__doc__)
    repeat = 1 if args.quick else REPEAT
    cases = {
        "first_result": lambda: _first_result(args.impl),
        "main_job": lambda: _main_job(args.impl, args.quick),
    }
    for name, case in cases.items():
        if not _harness.selected(name, args):
            continue
        try:
            # the main job is seconds long and has no JAX side: once per process (run.py's
            # rounds repeat it), which keeps `run.py all` within its 15 minutes
            runs = 1 if name == "main_job" else repeat
            best = min(case() for _ in range(runs))
        except Exception as error:  # noqa: BLE001 - a benchmark reports, it does not stop
            _harness.report_error(name, error)
            continue
        _harness.report(name, best)
        # RUSAGE_CHILDREN's maximum covers every child so far: first_result runs first
        _harness.report(f"{name}/peak_rss", _child_peak_rss(), "B")


if __name__ == "__main__":
    main()

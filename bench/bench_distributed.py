"""A data-parallel training step across processes: 2 processes x 4 CPU devices on 127.0.0.1,
started by laminax's launcher, with laminax and with real JAX 0.10.2 (the same launcher and
worker; only the interpreter differs). The step is SGD on an 8-layer MLP (width 128, tanh,
batch 256 split over the 8 devices, parameters replicated), so every step's gradient mean
crosses the processes through gloo.

    python bench/bench_distributed.py [--steps 30] [--reps 3]

Runs alternate (laminax, JAX, laminax, ...). Prints, per side, the median over runs of
process 0's median step time (blocking), the median and spread of the per-round ratios
laminax / JAX, and checks that both sides reach the same final loss (the same program). Not part of `run.py` (each run starts processes of its own).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent


def _worker(impl: str, steps: int) -> None:
    if impl == "laminax":
        import laminax

        laminax.install_as_jax()
    import jax
    import jax.numpy as jnp

    env = os.environ
    if impl == "jax":  # real JAX reads only its own variables
        jax.config.update("jax_num_cpu_devices", int(env["LAMINAX_NUM_CPU_DEVICES"]))
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(env["LAMINAX_COORDINATOR_ADDRESS"], int(env["LAMINAX_NUM_PROCESSES"]),
                               int(env["LAMINAX_PROCESS_ID"]), initialization_timeout=120)
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()), ("x",))
    replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("x"))
    rng = np.random.default_rng(0)
    sizes = [64] + [128] * 7 + [10]
    params = [{"w": (rng.normal(size=(a, b)) / np.sqrt(a)).astype(np.float32),
               "b": np.zeros(b, np.float32)} for a, b in zip(sizes[:-1], sizes[1:])]
    x = rng.normal(size=(256, 64)).astype(np.float32)
    y = rng.normal(size=(256, 10)).astype(np.float32)
    params = jax.tree.map(lambda a: jax.make_array_from_process_local_data(replicated, a), params)
    rows = len(jax.local_devices()) * 256 // len(jax.devices())
    first = jax.process_index() * rows
    batch = tuple(jax.make_array_from_process_local_data(split, a[first:first + rows], a.shape)
                  for a in (x, y))

    def loss(params, batch):
        h, target = batch
        for layer in params[:-1]:
            h = jnp.tanh(h @ layer["w"] + layer["b"])
        return jnp.mean((h @ params[-1]["w"] + params[-1]["b"] - target) ** 2)

    @jax.jit
    def step(params, batch):
        value, grads = jax.value_and_grad(loss)(params, batch)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), value

    for _ in range(3):  # compile and warm up
        params, value = step(params, batch)
    value.block_until_ready()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        params, value = step(params, batch)
        value.block_until_ready()
        times.append(time.perf_counter() - start)
    if jax.process_index() == 0:
        print("RESULT " + json.dumps({"step_s": statistics.median(times), "loss": float(value)}),
              flush=True)
    jax.distributed.shutdown()


def _jax_python() -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    import jaxref

    return str(jaxref.jax_python())


def _run(python: str, impl: str, steps: int) -> dict:
    env = dict(os.environ, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="1")
    env.pop("LAMINAX_NUM_CPU_DEVICES", None)
    done = subprocess.run(
        [sys.executable, "-m", "laminax_pjit.launch", "-n", "2", "--devices-per-process", "4",
         "--timeout", "500", "--python", python, str(HERE), "--worker", impl,
         "--steps", str(steps)],
        capture_output=True, text=True, env=env, timeout=560,
    )
    results = [line.split("RESULT ", 1)[1] for line in done.stdout.splitlines() if "RESULT " in line]
    if done.returncode != 0 or not results:
        raise SystemExit(f"{impl} run failed ({done.returncode}):\n{done.stdout[-3000:]}"
                         f"{done.stderr[-2000:]}")
    return json.loads(results[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=["laminax", "jax"])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--reps", type=int, default=3)
    # the smoke test's interface (tests/test_bench_smoke.py): one short laminax run, a JSON row
    parser.add_argument("--impl", choices=["laminax"])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, args.steps)
        return
    if args.impl:
        steps = 3 if args.quick else args.steps
        result = _run(sys.executable, args.impl, steps)
        print(json.dumps({"case": "data-parallel MLP step, 2 processes x 4 CPU devices",
                          "impl": args.impl, "unit": "s", "value": result["step_s"],
                          "loss": result["loss"]}))
        return
    jax_python = os.environ.get("LAMINAX_JAX_PYTHON") or _jax_python()
    sides = {"laminax": (sys.executable, []), "jax": (jax_python, [])}
    for _ in range(args.reps):
        for impl, (python, samples) in sides.items():
            samples.append(_run(python, impl, args.steps))
    medians = {impl: statistics.median(r["step_s"] for r in samples)
               for impl, (_, samples) in sides.items()}
    losses = {impl: samples[0]["loss"] for impl, (_, samples) in sides.items()}
    # the same program on both sides: the same final loss after the same steps
    if not np.isclose(losses["laminax"], losses["jax"], rtol=1e-4):
        raise SystemExit(f"the two sides ran different programs: final losses {losses}")
    # each round's ratio compares runs made back to back, under the same load
    ratios = sorted(a["step_s"] / b["step_s"] for a, b in zip(sides["laminax"][1], sides["jax"][1]))
    print(f"data-parallel MLP step, 2 processes x 4 CPU devices ({args.reps} alternated rounds)")
    for impl in sides:
        print(f"  {impl:8s} {medians[impl] * 1e3:8.3f} ms   final loss {losses[impl]:.6f}")
    print(f"  ratio laminax / jax: median of rounds {statistics.median(ratios):.3f} "
          f"(spread {ratios[0]:.3f}-{ratios[-1]:.3f}); of medians "
          f"{medians['laminax'] / medians['jax']:.3f}")

if __name__ == "__main__":
    main()

"""`jax.profiler` against real JAX 0.10.2: what a trace leaves in its log directory (the
TensorBoard profile-plugin layout, the Perfetto trace), the annotations found in it, memory
profiles, and the errors of misuse."""

from __future__ import annotations

import numpy as np
from jaxref import requires_jax, run_jax

import laminax
import laminax.numpy as lnp

SNIPPET = """
import gzip, json, os, tempfile
from pathlib import Path
P = jax.profiler

def outcome(thunk):
    try:
        thunk()
        return "ok"
    except Exception as e:
        return type(e).__name__

log_dir = tempfile.mkdtemp()
f = P.annotate_function(lambda x: jax.jit(lambda y: y @ y)(x), name="annotated_call")
with P.trace(log_dir, create_perfetto_trace=True):
    with P.TraceAnnotation("outer_label", batch=3):
        f(jnp.ones((32, 32))).block_until_ready()
    for step in range(2):
        with P.StepTraceAnnotation("train_step", step_num=step):
            jnp.sin(jnp.ones(4)).block_until_ready()
    nested = outcome(lambda: P.start_trace(log_dir))
runs = list((Path(log_dir) / "plugins" / "profile").iterdir())
files = sorted(p.name.split(".", 1)[1] if "." in p.name else p.name for p in runs[0].iterdir())
xplane = next(runs[0].glob("*.xplane.pb"))
data = P.ProfileData.from_file(str(xplane))
names = {e.name for plane in data.planes for line in plane.lines for e in line.events}
perfetto = json.load(gzip.open(runs[0] / "perfetto_trace.json.gz"))
perfetto_names = {e.get("name") for e in perfetto["traceEvents"]}
memory = P.device_memory_profile()
memory_file = Path(tempfile.mkdtemp()) / "memory.prof"
P.save_device_memory_profile(memory_file)
result = {
    "runs": len(runs),
    "files": files,
    "annotations": sorted(n for n in ("outer_label", "annotated_call", "train_step")
                          if n in names),
    "perfetto": (sorted(perfetto), "metadata" in perfetto,
                 sorted(n for n in ("outer_label", "annotated_call") if n in perfetto_names)),
    "nested start": nested,
    "stop without start": outcome(P.stop_trace),
    "memory profile": (memory[:2], memory_file.read_bytes()[:2]),
    "annotation outside trace": outcome(lambda: P.TraceAnnotation("idle").__enter__()),
    "stop server unstarted": outcome(P.stop_server),
    "wrapped name": f.__name__,
}
"""


@requires_jax
def test_profiler_matches_jax():
    expected = run_jax(SNIPPET)
    scope = {"jax": laminax, "jnp": lnp, "np": np}
    exec(SNIPPET, scope)
    got = scope["result"]
    assert got == expected
    assert got["annotations"] == ["annotated_call", "outer_label", "train_step"]
    assert {"xplane.pb", "trace.json.gz"} <= set(got["files"])

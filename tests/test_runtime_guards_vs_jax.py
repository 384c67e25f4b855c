"""Transfer guards, `no_tracing`/`no_execution`, `explain_cache_misses`, `make_user_context`
and the small runtime queries of the top level, against real JAX 0.10.2: the same snippet runs
under both, and what a user observes (which operations are refused, the errors) must agree."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
from jaxref import requires_jax, run_jax

import laminax
import laminax.numpy as lnp

# Each operation reports "ok", "refused" (the host-to-device guard fired) or the error's type.
# On a CPU backend JAX never guards reading an Array back (its buffer is host memory already).
GUARD_SNIPPET = """
def outcome(op):
    try:
        op()
        return "ok"
    except Exception as e:
        return "refused" if "Disallowed host-to-device" in str(e) else type(e).__name__

# jitted once: each guard level then only runs them (compiling is not what is guarded)
make = jax.jit(lambda k: jnp.arange(3.0) * k, static_argnums=0)
f = jax.jit(lambda a: a * 2)

def ops():
    x = make(2)
    return {
        "jit(numpy)": lambda: f(np.ones(3, np.float32)),
        "jit(python float)": lambda: f(1.5),
        "jit(numpy scalar)": lambda: f(np.float32(2)),
        "jit(Array)": lambda: f(x),
        "jnp.asarray(numpy)": lambda: jnp.asarray(np.ones(3, np.float32)),
        "jnp.asarray(Array)": lambda: jnp.asarray(x),
        "Array + numpy": lambda: x + np.ones(3, np.float32),
        "Array + python int": lambda: x + 1,
        "Array * Array": lambda: x * x,
        "device_put(numpy)": lambda: jax.device_put(np.ones(3, np.float32)),
        "device_put(Array, device)": lambda: jax.device_put(x, jax.devices()[0]),
        "np.asarray(Array)": lambda: np.asarray(make(5)),
        "device_get": lambda: jax.device_get(make(6)),
        "tolist": lambda: make(7).tolist(),
        "str(Array)": lambda: str(x),
    }

result = {}
for level in ["allow", "log", "disallow", "log_explicit", "disallow_explicit"]:
    for manager in ["transfer_guard", "transfer_guard_host_to_device",
                    "transfer_guard_device_to_host"]:
        with getattr(jax, manager)(level):
            result[level, manager] = {name: outcome(op) for name, op in ops().items()}
    # a direction's own level wins over the all-directions one
    with jax.transfer_guard("disallow"), jax.transfer_guard_host_to_device("allow"):
        result[level, "nested"] = {name: outcome(op) for name, op in ops().items()}
# the context ends: everything is allowed again
result["after"] = {name: outcome(op) for name, op in ops().items()}
result["bad level"] = outcome(lambda: jax.transfer_guard("sometimes").__enter__())
"""

GLOBAL_SNIPPET = """
def outcome(op):
    try:
        op()
        return "ok"
    except Exception as e:
        return "refused" if "Disallowed host-to-device" in str(e) else type(e).__name__

f = jax.jit(lambda a: a * 2)
result = {}
for level in ["disallow", "disallow_explicit", "allow"]:
    jax.config.update("jax_transfer_guard", level)
    result[level] = (outcome(lambda: f(np.ones(2, np.float32))),
                     outcome(lambda: jax.device_put(np.ones(2, np.float32))),
                     jax.config.jax_transfer_guard_host_to_device)
    with jax.transfer_guard_host_to_device("allow"):  # a thread-local level beats the global
        result[level, "local allow"] = outcome(lambda: f(np.ones(2, np.float32)))
jax.config.update("jax_transfer_guard_host_to_device", "disallow")
result["direction"] = outcome(lambda: f(np.ones(2, np.float32)))
jax.config.update("jax_transfer_guard_host_to_device", None)
result["reset"] = outcome(lambda: f(np.ones(2, np.float32)))
"""


def run_laminax(snippet: str) -> dict:
    scope = {"jax": laminax, "jnp": lnp, "np": np}
    exec(snippet, scope)
    return scope["result"]


@requires_jax
def test_transfer_guard_levels_refuse_what_jax_refuses():
    expected = run_jax(GUARD_SNIPPET)
    got = run_laminax(GUARD_SNIPPET)
    assert got == expected
    # the test is not vacuous: some operations are refused, explicit ones only by *_explicit
    assert got["disallow", "transfer_guard"]["jit(numpy)"] == "refused"
    assert got["disallow", "transfer_guard"]["device_put(numpy)"] == "ok"
    assert got["disallow_explicit", "transfer_guard"]["device_put(numpy)"] == "refused"


@requires_jax
def test_global_transfer_guard_matches_jax():
    expected = run_jax(GLOBAL_SNIPPET, fresh=True)
    try:
        got = run_laminax(GLOBAL_SNIPPET)
    finally:
        laminax.config.update("jax_transfer_guard", None)
    assert got == expected
    assert got["disallow"][0] == "refused"


NO_TRACING_SNIPPET = """
def outcome(op):
    try:
        return ("ok", np.asarray(op()).tolist())
    except Exception as e:
        return (type(e).__name__, "no_tracing" in str(e) or "no_execution" in str(e))

f = jax.jit(lambda x: x * 2)
f(1.0)
result = {}
with jax.no_tracing(True):
    result["cached"] = outcome(lambda: f(2.0))
    result["new signature"] = outcome(lambda: f(np.ones(2, np.float32)))
    result["new function"] = outcome(lambda: jax.jit(lambda x: x * 3)(1.0))
    result["make_jaxpr"] = outcome(lambda: jax.make_jaxpr(lambda x: x * 3)(1.0) and 0)
result["after no_tracing"] = outcome(lambda: jax.jit(lambda x: x * 3)(1.0))
with jax.no_execution(True):
    result["jit call"] = outcome(lambda: f(2.0))
    result["eager op"] = outcome(lambda: jnp.ones(3, np.float32) + 1)
    result["make_jaxpr ok"] = outcome(lambda: len(jax.make_jaxpr(lambda x: x * 3)(1.0).eqns))
result["after no_execution"] = outcome(lambda: f(3.0))
"""


@requires_jax
def test_no_tracing_and_no_execution_match_jax():
    expected = run_jax(NO_TRACING_SNIPPET)
    got = run_laminax(NO_TRACING_SNIPPET)
    assert got == expected
    assert got["new function"] == ("RuntimeError", True)
    assert got["jit call"] == ("RuntimeError", True)


USER_CONTEXT_SNIPPET = """
traces = []
ctx = jax.make_user_context(default_value=0)

@jax.jit
def f(x):
    traces.append(ctx.value)
    return x * 2

f(1.0)
with ctx(1):
    f(1.0)
    f(2.0)
with ctx(2):
    f(1.0)
f(1.0)
with ctx(1):
    f(3.0)
result = (traces, ctx.value)
"""


@requires_jax
def test_make_user_context_keys_jit_cache_like_jax():
    expected = run_jax(USER_CONTEXT_SNIPPET)
    got = run_laminax(USER_CONTEXT_SNIPPET)
    assert got == expected
    assert got[0] == [0, 1, 2]


def test_explain_cache_misses_names_the_changed_argument(caplog):
    f = laminax.jit(lambda x, y: x + y)
    with caplog.at_level(logging.WARNING), laminax.explain_cache_misses(True):
        f(np.float32(1), np.float32(2))
        f(np.float32(1), np.float32(2))  # a hit: nothing logged
        f(np.float32(1), np.ones(3, np.float32))
    misses = [r.getMessage() for r in caplog.records if "TRACING CACHE MISS" in r.getMessage()]
    assert len(misses) == 2
    assert "never seen function" in misses[0]
    assert "argument 1 has type f32[3] instead of f32[]" in misses[1]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        f(np.ones(2, np.float32), np.float32(2))  # off: a miss is not explained
    assert not [r for r in caplog.records if "TRACING CACHE MISS" in r.getMessage()]


HOSTS_SNIPPET = """
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    values = (jax.host_id(), jax.host_ids(), jax.host_count(), jax.process_indices())
x = jnp.arange(3.0)
tree = {"a": x, "b": [x * 2, "not an array", 3]}
out = jax.copy_to_host_async(tree)
result = (values, [w.category.__name__ for w in caught], out is tree,
          jax.tree_util.tree_map(lambda l: np.asarray(l).tolist() if hasattr(l, "shape") else l,
                                 out))
"""


@requires_jax
def test_host_queries_and_copy_to_host_async_match_jax():
    assert run_laminax(HOSTS_SNIPPET) == run_jax(HOSTS_SNIPPET)


def test_print_environment_info_reports_versions_and_devices(capsys):
    text = laminax.print_environment_info(return_string=True)
    assert "jaxlib:" in text and f"numpy:  {np.__version__}" in text
    assert f"-{laminax.device_count()}, {laminax.local_device_count()} local devices" in text
    assert laminax.print_environment_info() is None
    assert capsys.readouterr().out.strip() == text.strip()


def test_transfer_guard_rejects_bad_values_like_config():
    with pytest.raises(ValueError, match="jax_transfer_guard"):
        laminax.config.update("jax_transfer_guard", "never")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with laminax.transfer_guard("log"):  # logging is not an exception
            laminax.jit(lambda a: a + 1)(np.ones(2, np.float32))


GC_SCRIPT = """
import gc, sys
{imports}
class Node:
    pass

def collect_cycle_holding_an_array(phase):
    print("PHASE", phase, file=sys.stderr, flush=True)
    a, b = Node(), Node()
    a.other, b.other = b, a
    a.x = jax.jit(lambda: jnp.arange(3.0) * 2)()
    del a, b
    gc.collect()

gc.disable()
collect_cycle_holding_an_array("default")
with jax.array_garbage_collection_guard("log"):
    collect_cycle_holding_an_array("context log")
collect_cycle_holding_an_array("after context")
jax.config.update("jax_array_garbage_collection_guard", "log")
collect_cycle_holding_an_array("global log")
jax.config.update("jax_array_garbage_collection_guard", "allow")
collect_cycle_holding_an_array("global allow")
print("PHASE end", file=sys.stderr, flush=True)
print(jax.config.jax_array_garbage_collection_guard)
"""


def _gc_reports(python: str, imports: str, env=None) -> tuple[dict, str]:
    """Which phases of GC_SCRIPT reported an Array freed by the garbage collector."""
    import subprocess

    done = subprocess.run([python, "-c", GC_SCRIPT.format(imports=imports)],
                          capture_output=True, text=True, timeout=120, env=env)
    phases = done.stderr.split("PHASE ")[1:]
    reports = {p.split("\n", 1)[0]: "deleted by the Python garbage collector" in p
               for p in phases}
    return reports, done.stdout.strip()


@requires_jax
def test_array_garbage_collection_guard_reports_like_jax():
    import os
    import sys

    from jaxref import jax_python

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    got = _gc_reports(sys.executable, "import laminax as jax, laminax.numpy as jnp", env)
    expected = _gc_reports(str(jax_python()), "import jax, jax.numpy as jnp")
    assert got == expected
    assert got[0] == {"default": False, "context log": True, "after context": False,
                      "global log": True, "global allow": False, "end": False}


THREAD_GUARD_SNIPPET = """
import threading
values = [jax.config.jax_thread_guard]
with jax.thread_guard(True):
    values.append(jax.config.jax_thread_guard)
    seen = []
    worker = threading.Thread(target=lambda: seen.append(
        (jax.config.jax_thread_guard, float(jnp.sum(jnp.ones(3))))))
    worker.start()
    worker.join()
    values.append(seen)
    # a single process is never refused, from any thread
    values.append(float(jax.jit(lambda x: x * 2)(3.0)))
values.append(jax.config.jax_thread_guard)
result = values
"""


@requires_jax
def test_thread_guard_matches_jax():
    got = run_laminax(THREAD_GUARD_SNIPPET)
    assert got == run_jax(THREAD_GUARD_SNIPPET)
    assert got[1] is True and got[-1] is False

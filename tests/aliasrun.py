"""Runs a snippet of `import jax` code on laminax in the supported alias mode, in a fresh process.

The twin of `jaxref.run_jax`: the same source, written against JAX, runs under real JAX there and
under `laminax.install_as_jax()` here, so a test compares the two results directly:

    source = "import jax.numpy as jnp\\nresult = jnp.arange(3.0) * 2"
    assert np.array_equal(run_as_jax(source), run_jax(source))

A fresh process per call keeps the alias out of the test process (where `jax` must stay
unimported). `result` must be plain data (arrays come back as NumPy arrays). An exception in the
snippet is raised here as `AliasRunError` with the original type name and message.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

_DRIVER = textwrap.dedent(
    """
    import pickle, sys, traceback
    import numpy as np
    import laminax
    laminax.install_as_jax()
    import jax
    import jax.numpy as jnp
    source, inputs = pickle.loads(sys.stdin.buffer.read())
    scope = {"jax": jax, "jnp": jnp, "np": np, **inputs}

    def plain(x):
        if isinstance(x, jax.Array):
            return np.asarray(x)
        if isinstance(x, (list, tuple)):
            return type(x)(plain(v) for v in x)
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        return x

    try:
        exec(compile(source, "<snippet>", "exec"), scope)
        answer = ("ok", plain(scope.get("result")))
    except BaseException as err:
        answer = ("error", type(err).__name__, str(err), traceback.format_exc())
    sys.stdout.buffer.write(b"\\0RESULT\\0" + pickle.dumps(answer))
    """
)


class AliasRunError(Exception):
    """The snippet raised under laminax's alias mode; `type_name` and `message` are its."""

    def __init__(self, type_name: str, message: str, trace: str):
        super().__init__(f"{type_name}: {message}\n{trace}")
        self.type_name = type_name
        self.message = message


def run_as_jax(source: str, *, timeout: float = 300, **inputs) -> object:
    """Runs `source` with `jax` resolved to laminax; returns its global `result` (plain data)."""
    env = dict(os.environ)
    env.setdefault("LAMINAX_NUM_CPU_DEVICES", "1")
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER],
        input=pickle.dumps((textwrap.dedent(source), inputs)),
        capture_output=True,
        timeout=timeout,
        env=env,
        cwd=Path(__file__).parent,
    )
    marker = proc.stdout.find(b"\0RESULT\0")
    if marker < 0:
        raise RuntimeError(
            f"alias-mode process died (exit {proc.returncode}):\n{proc.stderr.decode()[-4000:]}"
        )
    answer = pickle.loads(proc.stdout[marker + len(b"\0RESULT\0") :])
    if answer[0] == "error":
        raise AliasRunError(*answer[1:])
    return answer[1]


def assert_same(a, b, **tolerance) -> None:
    """Asserts two plain-data results agree (arrays to `tolerance`, dtypes exactly)."""
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y, **tolerance)
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (a, b)
        for k in a:
            assert_same(a[k], b[k], **tolerance)
        return
    if isinstance(a, (np.ndarray, np.generic)):
        b = np.asarray(b)
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, **tolerance)
        return
    assert a == b, (a, b)

"""Differential testing against real JAX 0.10.2, which lives in a separate virtual environment.

laminax never imports `jax`. To compare with it, a test sends a snippet of Python to a worker process
running in the reference environment and gets back plain data:

    from jaxref import requires_jax, run_jax

    @requires_jax
    def test_leaves_match_jax():
        expected = run_jax("result = jax.tree_util.tree_leaves(tree)", tree={"a": [1, 2]})
        assert laminax.tree_util.tree_leaves({"a": [1, 2]}) == expected

The snippet sees `jax`, `jnp` (jax.numpy), `np` and the keyword inputs as globals and assigns `result`.
Inputs and results cross the process boundary as pickles, so they must be plain data: Python builtins and
NumPy arrays, scalars and dtypes. JAX arrays in `result` are converted to NumPy arrays on the way back;
any other JAX object must be turned into plain data by the snippet (e.g. `str(treedef)`).

An exception in the snippet comes back as `JaxReferenceError` carrying the JAX exception's type name and
message, so tests can compare error behaviour too.

One worker per configuration (x64 on or off, number of CPU devices) is kept alive per test process; snippets must not change
JAX's global configuration (use `fresh=True` for a one-off process when they have to).

The environment is created once and cached in `~/.cache/laminax/jaxref-0.10.2` (override with
`LAMINAX_JAX_VENV`, or point `LAMINAX_JAX_PYTHON` at an interpreter that has jax). Create it with
`python tests/jaxref.py ensure`; where that is impossible, tests marked `requires_jax` skip and say why.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import textwrap
import venv
from pathlib import Path
from typing import Any

JAX_VERSION = "0.10.2"
REQUIREMENTS = [f"jax=={JAX_VERSION}", f"jaxlib=={JAX_VERSION}", "numpy", "opt_einsum",
                "flatbuffers",  # jax.export serialization
                "rich",  # jax.debug.visualize_array_sharding
                "jaxtyping"]  # equinox (linked in from the dev env) reads its metadata
_DEFAULT_VENV = Path.home() / ".cache" / "laminax" / f"jaxref-{JAX_VERSION}"
_STAMP_NAME = ".laminax-jaxref-ready"


class JaxReferenceError(Exception):
    """Real JAX raised while running a snippet; `type_name` and `message` are JAX's."""

    def __init__(self, type_name: str, message: str):
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name
        self.message = message


def venv_dir() -> Path:
    return Path(os.environ.get("LAMINAX_JAX_VENV", _DEFAULT_VENV))


def jax_python() -> Path:
    """The interpreter that has real JAX installed (it may not exist yet: see `ensure`)."""
    explicit = os.environ.get("LAMINAX_JAX_PYTHON")
    if explicit:
        return Path(explicit)
    return venv_dir() / "bin" / "python"


def unavailable_reason() -> str | None:
    """Why the reference environment cannot be used, or None when it can."""
    if os.environ.get("LAMINAX_JAX_PYTHON"):
        if not Path(os.environ["LAMINAX_JAX_PYTHON"]).exists():
            return f"LAMINAX_JAX_PYTHON={os.environ['LAMINAX_JAX_PYTHON']} does not exist"
        return None
    stamp = venv_dir() / _STAMP_NAME
    if not stamp.exists() or stamp.read_text() != _stamp_text():
        return (
            f"the real-JAX reference environment is not set up at {venv_dir()}; "
            "create it with `python tests/jaxref.py ensure`"
        )
    return None


def _stamp_text() -> str:
    """What a ready environment's stamp holds: a change to the requirements updates the env."""
    return "\n".join(REQUIREMENTS)


def ensure() -> str | None:
    """Creates the reference environment if it is missing; returns why it failed, or None."""
    if unavailable_reason() is None:
        return None
    target = venv_dir()
    python = target / "bin" / "python"
    try:
        if not python.exists():  # else only the requirements changed: install what is new
            venv.EnvBuilder(with_pip=True, clear=True).create(target)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS],
            check=True,
        )
        subprocess.run([str(python), "-c", "import jax; jax.numpy.ones(1)"], check=True)
    except (OSError, subprocess.CalledProcessError) as err:
        return f"could not create the real-JAX environment at {target}: {err}"
    (target / _STAMP_NAME).write_text(_stamp_text())
    return None


try:
    import pytest
except ImportError:  # the module is also a command-line tool, usable without pytest
    pytest = None

if pytest is not None:
    _reason = unavailable_reason()
    requires_jax = pytest.mark.skipif(_reason is not None, reason=str(_reason))
    jax_mark = pytest.mark.jax


# The worker runs in the reference environment. It reads length-prefixed pickled requests
# (source, inputs) from stdin and answers with length-prefixed pickled ("ok", result) or
# ("error", type_name, message). It must not import anything from laminax.
_WORKER_SOURCE = textwrap.dedent(
    '''
    import pickle, struct, sys, traceback
    import numpy as np
    import jax
    import jax.numpy as jnp

    def plain(value):
        if isinstance(value, jax.Array):
            return np.asarray(value)
        if isinstance(value, (list, tuple)):
            converted = [plain(v) for v in value]
            return converted if isinstance(value, list) else tuple(converted)
        if isinstance(value, dict):
            return {plain(k): plain(v) for k, v in value.items()}
        return value

    def read_exact(stream, n):
        data = b""
        while len(data) < n:
            chunk = stream.read(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = read_exact(stdin, 8)
        if header is None:
            break
        source, inputs = pickle.loads(read_exact(stdin, struct.unpack("<Q", header)[0]))
        scope = {"jax": jax, "jnp": jnp, "np": np, **inputs}
        try:
            exec(compile(source, "<jax snippet>", "exec"), scope)
            reply = ("ok", plain(scope.get("result")))
            payload = pickle.dumps(reply)
        except BaseException as err:
            payload = pickle.dumps(("error", type(err).__name__, str(err)))
        stdout.write(struct.pack("<Q", len(payload)) + payload)
        stdout.flush()
    '''
)


class _Worker:
    def __init__(self, x64: bool, devices: int = 1):
        env = dict(os.environ)
        env["JAX_PLATFORMS"] = "cpu"
        env["JAX_ENABLE_X64"] = "1" if x64 else "0"
        env.pop("XLA_FLAGS", None)
        env.pop("JAX_NUM_CPU_DEVICES", None)
        if devices != 1:
            env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
        self.process = subprocess.Popen(
            [str(jax_python()), "-c", _WORKER_SOURCE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )

    def call(self, source: str, inputs: dict[str, Any]) -> Any:
        payload = pickle.dumps((textwrap.dedent(source), inputs))
        self.process.stdin.write(struct.pack("<Q", len(payload)) + payload)
        self.process.stdin.flush()
        header = self.process.stdout.read(8)
        if len(header) < 8:
            raise RuntimeError(
                f"the real-JAX worker ({jax_python()}) exited with code {self.process.wait()}; "
                "run `python tests/jaxref.py ensure` and check that `import jax` works there"
            )
        (size,) = struct.unpack("<Q", header)
        reply = pickle.loads(self.process.stdout.read(size))
        if reply[0] == "error":
            raise JaxReferenceError(reply[1], reply[2])
        return reply[1]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


_workers: dict[tuple[bool, int], _Worker] = {}


def run_jax(
    source: str, *, x64: bool = False, fresh: bool = False, devices: int = 1, **inputs: Any
) -> Any:
    """Runs `source` under real JAX and returns the plain-data value of its global `result`.

    Args:
      source: Python statements; `jax`, `jnp`, `np` and `inputs` are globals; assign `result`.
      x64: run with `jax_enable_x64` on.
      fresh: use a new process for this snippet alone (for snippets that change global state).
      devices: how many CPU devices JAX sees (8 to compare sharded results with laminax's
        8-device test run; 1, JAX's default, otherwise).
      **inputs: plain data (builtins, NumPy arrays) bound as globals of the snippet.

    Raises:
      JaxReferenceError: the snippet raised under JAX (type name and message preserved).
      RuntimeError: the reference environment is missing or broken.
    """
    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"run_jax: {reason}")
    if fresh:
        worker = _Worker(x64, devices)
        try:
            return worker.call(source, inputs)
        finally:
            worker.close()
    worker = _workers.get((x64, devices))
    if worker is None or worker.process.poll() is not None:
        worker = _workers[(x64, devices)] = _Worker(x64, devices)
    return worker.call(source, inputs)


def _main(argv: list[str]) -> int:
    if argv == ["ensure"]:
        problem = ensure()
        if problem is not None:
            # Not fatal: the differential tests skip and say why.
            print(f"jaxref: {problem}", file=sys.stderr)
        else:
            print(f"jaxref: real JAX {JAX_VERSION} ready at {jax_python()}")
        return 0
    if argv == ["python"]:
        print(jax_python())
        return 0
    print("usage: python tests/jaxref.py ensure | python", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

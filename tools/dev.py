"""The one entry point for setting up and checking laminax on a fresh machine.

Needs only Python 3.11 and pip. Every command creates what it needs first, so each is safe to
run on a clean clone:

    python3 tools/dev.py example        the main job (examples/)
    python3 tools/dev.py test [ARGS]    the whole test suite (ARGS go to pytest)
    python3 tools/dev.py isolated PKG   one package's tests with only it and the layers below
    python3 tools/dev.py layers         the import-layering contract
    python3 tools/dev.py loc            code lines per package against tools/loc_budget.toml
    python3 tools/dev.py clients [--whole] [--reference] [--update-known] [LIB...]
                                        optax, chex, equinox: their own test suites on laminax (tools/clients.py)
    python3 tools/dev.py ci             all of the above, as .ci/run runs it

The development environment is `.venv/` (every package editable); isolated environments live in
`.venvs/<package>/`; the real-JAX reference environment used by differential tests is made by
`tests/jaxref.py` (see there).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEV_VENV = ROOT / ".venv"
ISOLATED_VENVS = ROOT / ".venvs"

# Bottom-up: each package may import only the ones it depends on (BELOW). Kept in step with
# the import-linter contract in the root pyproject.toml. hostcb and export are independent
# optional top layers over pjit.
LAYERS = ["pytree", "core", "dispatch", "pjit", "hostcb", "export", "laminax"]
BELOW = {
    "pytree": [],
    "core": ["pytree"],
    "dispatch": ["pytree", "core"],
    "pjit": ["pytree", "core", "dispatch"],
    "hostcb": ["pytree", "core", "dispatch", "pjit"],
    "export": ["pytree", "core", "dispatch", "pjit"],
    "laminax": ["pytree", "core", "dispatch", "pjit", "hostcb", "export"],
}
TEST_TOOLS = ["pytest>=8", "pytest-xdist>=3", "hypothesis>=6", "import-linter>=2"]
EXAMPLE_TOOLS = [
    "scikit-learn>=1.3", "tqdm>=4.60", "matplotlib>=3.7",
    "jaxtyping==0.3.11", "wadler_lindig==0.1.8", "typing_extensions>=4.5",
]
# JAX libraries run on laminax through `laminax.install_as_jax()`: the example trains with
# optax; tests/test_clients_training_vs_jax.py also trains an equinox model. Installed without
# their `jax` dependency (laminax stands for it); jaxtyping is equinox's own dependency.
EXAMPLE_JAX_LIBRARIES = ["optax==0.2.8", "equinox==0.13.8"]
EXAMPLE = ROOT / "examples" / "mlp_digits.py"

# pytest exits 5 when it collected no tests; a package with no tests yet is not a failure.
PYTEST_NO_TESTS = 5


def _run(cmd: list[str | Path], **kwargs) -> None:
    printable = " ".join(str(part) for part in cmd)
    print(f"+ {printable}", flush=True)
    subprocess.run([str(part) for part in cmd], check=True, cwd=ROOT, **kwargs)


def _python(env_dir: Path) -> Path:
    return env_dir / "bin" / "python"


def _ensure_venv(
    env_dir: Path, requirements: list[str], editable: list[str], no_deps: list[str] = ()
) -> Path:
    """Creates `env_dir` once and installs into it; a stamp file skips unchanged reinstalls.

    `no_deps` are installed without their dependencies: JAX libraries, whose `jax` requirement
    laminax itself stands for.
    """
    stamp = env_dir / ".laminax-stamp"
    wanted = "\n".join(
        requirements + [f"--no-deps {r}" for r in no_deps] + [f"-e {p}" for p in editable]
        + [_pyprojects_digest()]
    )
    if stamp.exists() and stamp.read_text() == wanted:
        return _python(env_dir)
    if not _python(env_dir).exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = _python(env_dir)
    _run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
    editable_args: list[str] = []
    for package in editable:
        editable_args += ["-e", str(ROOT / "packages" / package)]
    _run([python, "-m", "pip", "install", "--quiet", *requirements, *editable_args])
    if no_deps:
        _run([python, "-m", "pip", "install", "--quiet", "--no-deps", *no_deps])
    stamp.write_text(wanted)
    return python


def _pyprojects_digest() -> str:
    """Changes when any package's metadata changes, so environments reinstall."""
    import hashlib

    digest = hashlib.sha256()
    for package in LAYERS:
        digest.update((ROOT / "packages" / package / "pyproject.toml").read_bytes())
    return digest.hexdigest()


def dev_python() -> Path:
    return _ensure_venv(DEV_VENV, TEST_TOOLS + EXAMPLE_TOOLS, LAYERS, EXAMPLE_JAX_LIBRARIES)


def _pytest(python: Path, args: list[str]) -> int:
    cmd = [python, "-m", "pytest", *args]
    print("+ " + " ".join(str(part) for part in cmd), flush=True)
    code = subprocess.run([str(part) for part in cmd], cwd=ROOT).returncode
    return 0 if code == PYTEST_NO_TESTS else code


def cmd_test(args: list[str]) -> int:
    python = dev_python()
    # The real-JAX environment is built before the workers start, not by eight of them at once.
    _run([python, ROOT / "tests" / "jaxref.py", "ensure"])
    return _pytest(python, ["-n", "auto", *args])


def cmd_isolated(package: str) -> int:
    if package not in LAYERS:
        raise SystemExit(f"isolated: unknown package {package!r}; choose one of {LAYERS}.")
    below_and_self = BELOW[package] + [package]
    python = _ensure_venv(ISOLATED_VENVS / package, TEST_TOOLS, below_and_self)
    tests = ROOT / "packages" / package / "tests"
    return _pytest(python, ["-n", "auto", "-p", "no:cacheprovider", str(tests)])


def cmd_layers() -> int:
    python = dev_python()
    lint_imports = python.parent / "lint-imports"
    print(f"+ {lint_imports}", flush=True)
    return subprocess.run([str(lint_imports)], cwd=ROOT).returncode


def cmd_loc() -> int:
    """Fails when a package's code lines pass its budget in tools/loc_budget.toml."""
    return subprocess.run([sys.executable, str(ROOT / "tools" / "loc.py"), "--check"],
                          cwd=ROOT).returncode


def cmd_example() -> int:
    python = dev_python()
    return subprocess.run([str(python), str(EXAMPLE)], cwd=ROOT).returncode


def _clients_python() -> Path:
    """The environment the client libraries' suites run in on laminax: every laminax package,
    the libraries installed without their `jax` dependency, and their own dependencies."""
    import clients

    requirements = TEST_TOOLS + ["pytest-timeout>=2"] + clients.DEPENDENCIES
    return _ensure_venv(ISOLATED_VENVS / "clients", requirements, LAYERS, clients.LIBRARIES)


def _clients_jax_python() -> Path:
    """The same libraries on real JAX, for the reference run."""
    import clients

    jax = [f"jax=={clients.JAX_VERSION}", f"jaxlib=={clients.JAX_VERSION}"]
    requirements = TEST_TOOLS + ["pytest-timeout>=2"] + jax + clients.DEPENDENCIES
    return _ensure_venv(ISOLATED_VENVS / "clients-jax", requirements + clients.LIBRARIES, [])


def cmd_clients(args: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "tools"))
    import clients

    names = [a for a in args if not a.startswith("--")] or list(clients.CLIENTS)
    unknown = sorted(set(names) - set(clients.CLIENTS))
    if unknown:
        raise SystemExit(f"clients: unknown {unknown}; choose from {sorted(clients.CLIENTS)}.")
    jax_python = _clients_jax_python() if "--reference" in args else None
    workers = os.environ.get("LAMINAX_CLIENT_WORKERS", "2")
    return clients.main(
        _clients_python(), jax_python, names, workers, update_known="--update-known" in args,
        whole="--whole" in args,
    )


def cmd_ci() -> int:
    steps = [("layers", cmd_layers), ("line budget", cmd_loc), ("test", lambda: cmd_test([]))]
    steps += [(f"isolated {p}", lambda p=p: cmd_isolated(p)) for p in LAYERS]
    # The client libraries' own suites, on laminax only, against the recorded JAX-passing
    # tests and known failures (tests/clients/KNOWN.md has their run times); a marked job that
    # LAMINAX_CI_CLIENTS=0 leaves out.
    if os.environ.get("LAMINAX_CI_CLIENTS") != "0":
        sys.path.insert(0, str(ROOT / "tools"))
        import clients

        in_ci = [name for name, spec in clients.CLIENTS.items() if spec.get("ci", True)]
        steps += [("clients (optax, chex, equinox on laminax)", lambda: cmd_clients(in_ci))]
    failed = []
    for name, step in steps:
        print(f"\n=== {name}", flush=True)
        if step() != 0:
            failed.append(name)
    if failed:
        print(f"\nCI failed: {', '.join(failed)}", flush=True)
        return 1
    print("\nCI passed: every step", flush=True)
    return 0


def main(argv: list[str]) -> int:
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    if not argv:
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "test":
        return cmd_test(rest)
    if command == "isolated" and len(rest) == 1:
        return cmd_isolated(rest[0])
    if command == "layers":
        return cmd_layers()
    if command == "loc":
        return cmd_loc()
    if command == "example":
        return cmd_example()
    if command == "clients":
        return cmd_clients(rest)
    if command == "ci":
        return cmd_ci()
    if command == "setup":
        dev_python()
        return 0
    print(f"dev.py: unknown command {' '.join(argv)!r}.\n{__doc__}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

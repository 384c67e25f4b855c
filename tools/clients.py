"""The JAX ecosystem's own test suites, run on laminax: the measure of `import jax` compatibility.

Each client library is pinned to a released version; its tests come from its source
distribution on PyPI (equinox's, which ships none, are vendored from its tagged source in
`tests/clients/equinox`). The suite runs on laminax in the supported alias mode
(`pytest -p laminax.pytest_plugin`) and, for reference, on real JAX 0.10.2:

    python3 tools/dev.py clients                 laminax run (CI's selection of each suite),
                                                 compared with the recorded JAX run
    python3 tools/dev.py clients --whole         the same over each whole suite
    python3 tools/dev.py clients --reference     also (re)run the whole suites on real JAX and
                                                 record what passes

The tests that pass on real JAX are recorded in `tests/clients/<lib>.jax-passing.txt`; those of
them known to fail on laminax, each with its cause, in `tests/clients/KNOWN.md` (the ids in
`tests/clients/<lib>.known-failures.txt`). The step fails when a test that passes on JAX and is
not a known failure fails on laminax, and prints per library how many of JAX's passing tests
pass on laminax.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "tests" / "clients"
WORK = ROOT / ".cache" / "clients"
JAX_VERSION = "0.10.2"

# The libraries' own runtime dependencies (installed normally), besides jax.
DEPENDENCIES = [
    "absl-py>=2.3.1", "numpy", "toolz>=1.0.0", "typing_extensions>=4.15.0",
    "jaxtyping==0.3.11", "wadler_lindig==0.1.8",
    # what their test suites use
    "cloudpickle>=3.1.2", "dm-tree>=0.1.9", "scipy>=1.7.1", "scikit-learn", "beartype==0.23.1",
]
# What CI leaves out of optax's suite (its run time: KNOWN.md has the whole suite's numbers):
# the Hungarian-algorithm, perturbation and segmentation-loss tests, which take a third of the
# suite's time and test no optimizer.
CI_OPTAX_LEFT_OUT = [
    "optax/assignment", "optax/perturbations", "optax/losses/_segmentation_test.py",
]
CLIENTS = {
    "optax": {
        "version": "0.2.8",
        "tests": ["optax"],
        # flax is a JAX library itself (not pinned here): tests importing it are left out on
        # both sides
        "ignore": ["optax/_src/linear_algebra_test.py", "optax/contrib/_common_test.py",
                   "optax/transforms/_accumulation_test.py"],
        "ci_ignore": CI_OPTAX_LEFT_OUT,
        "target": 98.0,  # percent of the JAX-passing tests that must pass on laminax
    },
    "chex": {"version": "0.1.92", "tests": ["chex"], "ignore": [], "target": 95.0},
    # equinox's source distribution has no tests: they are vendored from its tagged source
    # (tests/clients/equinox/README.md names the commit). Its speed tests time loops against
    # each other, which a loaded machine decides: left out on both sides.
    "equinox": {"version": "0.13.8", "tests": ["tests"], "ignore": [], "target": 90.0,
                "vendored": RECORDS / "equinox",
                "deselect": ["tests/test_while_loop.py::test_speed_while",
                             "tests/test_while_loop.py::test_speed_buffer_while",
                             "tests/test_while_loop.py::test_speed_grad_checkpointed_while"]},
}
# Installed with --no-deps so that they never bring in real JAX on the laminax side.
LIBRARIES = [f"{name}=={spec['version']}" for name, spec in CLIENTS.items()]
PYTEST_TIMEOUT_S = 120
SUITE_TIMEOUT_S = 1800  # CI's part of a suite; a whole suite gets three times as long


def _run(cmd, **kwargs):
    print("+ " + " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], **kwargs)


def sources(name: str) -> Path:
    """The extracted source distribution of the pinned `name` (downloaded once)."""
    version = CLIENTS[name]["version"]
    target = WORK / f"{name}-{version}"
    vendored = CLIENTS[name].get("vendored")
    if vendored is not None:
        # copied afresh each run, so that the run's caches stay out of the checkout
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(vendored, target)
        return target
    if target.exists():
        return target
    WORK.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
          ":all:", "-d", WORK / "sdist", f"{name}=={version}"], check=True)
    archive = WORK / "sdist" / f"{name}-{version}.tar.gz"
    with tarfile.open(archive) as tar:
        tar.extractall(WORK, filter="data")
    return target


def passing_tests(junit_xml: Path) -> tuple[set[str], dict[str, str]]:
    """(ids of the passing tests, id -> first line of the failure) from a JUnit XML report."""
    passed, failed = set(), {}
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            failed[test_id] = (problem.get("message") or "").split("\n")[0][:200]
        elif case.find("skipped") is None:
            passed.add(test_id)
    return passed, failed


def selection(name: str, whole: bool) -> tuple[list[str], list[str]]:
    """(the test paths run, the paths left out): the whole suite, or CI's part of it."""
    spec = CLIENTS[name]
    return spec["tests"], spec["ignore"] + ([] if whole else spec.get("ci_ignore", []))


def _in_selection(test_id: str, paths: tuple[list[str], list[str]]) -> bool:
    module = test_id.split("::")[0]

    def under(prefixes):
        prefixes = [path.removesuffix(".py").replace("/", ".") for path in prefixes]
        return any(module == p or module.startswith(p + ".") for p in prefixes)

    return under(paths[0]) and not under(paths[1])


def run_suite(python: Path, name: str, *, on_laminax: bool, workers: str,
              whole: bool = True) -> Path:
    """Runs `name`'s suite (`whole`, or CI's selection) with `python`; returns the JUnit XML
    report."""
    src = sources(name)
    side = "laminax" if on_laminax else "jax"
    report = WORK / f"{name}.{side}.xml"
    log = WORK / f"{name}.{side}.log"
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers,
            f"--timeout={PYTEST_TIMEOUT_S}", f"--junitxml={report}", "-o", "junit_family=xunit1",
            # the sources lie under this checkout: keep its pyproject (rootdir, so test ids
            # stay the library's) and its conftest (8 virtual devices) out of the suite's run
            f"--rootdir={src}", f"--confcutdir={src}"]
    if on_laminax:
        args = ["-m", "laminax", "pytest", *args[2:]]
    tests, left_out = selection(name, whole)
    args += [f"--ignore={path}" for path in left_out]
    args += [f"--deselect={test}" for test in CLIENTS[name].get("deselect", ())] + tests
    with log.open("w") as out:
        try:
            _run([python, *args], cwd=src, stdout=out, stderr=subprocess.STDOUT,
                 timeout=SUITE_TIMEOUT_S * (3 if whole else 1))
        except subprocess.TimeoutExpired:
            print(f"clients: {name} on {side} ran past its time limit; see {log}")
    return report


def _read_ids(path: Path) -> set[str]:
    if not path.exists():
        return set()
    ids = (line.split("  #")[0].strip() for line in path.read_text().splitlines())
    return {test_id for test_id in ids if test_id and not test_id.startswith("#")}


def compare(name: str, laminax_report: Path, whole: bool = True) -> bool:
    """Prints the library's numbers over the tests run; True unless an unlisted JAX-passing
    test fails or the share of JAX-passing tests that pass falls under the library's target."""
    paths = selection(name, whole)
    on_jax = {t for t in _read_ids(RECORDS / f"{name}.jax-passing.txt") if _in_selection(t, paths)}
    known = {t for t in _read_ids(RECORDS / f"{name}.known-failures.txt")
             if _in_selection(t, paths)}
    passed, failed = passing_tests(laminax_report) if laminax_report.exists() else (set(), {})
    kept = on_jax & passed
    regressions = sorted(on_jax - passed - known)
    share = 100.0 * len(kept) / max(len(on_jax), 1)
    part = "" if whole or not CLIENTS[name].get("ci_ignore") else " (CI's part)"
    print(f"clients: {name} {CLIENTS[name]['version']}{part}: {len(kept)} of the {len(on_jax)} tests "
          f"passing on JAX {JAX_VERSION} pass on laminax ({share:.1f}%); "
          f"{len(known)} known failures, {len(regressions)} new; target "
          f"{CLIENTS[name]['target']:.0f}%", flush=True)
    for test_id in regressions[:50]:
        print(f"  new failure: {test_id}: {failed.get(test_id, 'did not run')}")
    fixed = sorted(known & passed)
    if fixed:
        print(f"  {len(fixed)} known failures now pass: remove them from "
              f"tests/clients/{name}.known-failures.txt")
    if share < CLIENTS[name]["target"]:
        print(f"  {share:.1f}% is under the target {CLIENTS[name]['target']:.0f}%")
    return not regressions and share >= CLIENTS[name]["target"]


def record_reference(python: Path, name: str, workers: str) -> None:
    report = run_suite(python, name, on_laminax=False, workers=workers)
    passed, _ = passing_tests(report)
    RECORDS.mkdir(parents=True, exist_ok=True)
    header = f"# {name} {CLIENTS[name]['version']}: tests passing on JAX {JAX_VERSION}\n"
    (RECORDS / f"{name}.jax-passing.txt").write_text(header + "\n".join(sorted(passed)) + "\n")
    print(f"clients: {name}: {len(passed)} tests pass on real JAX {JAX_VERSION}")


def record_known_failures(name: str, whole: bool) -> None:
    """Writes the JAX-passing tests that fail on laminax (with their first error line); the
    entries for tests outside the run's selection are kept."""
    paths = selection(name, whole)
    on_jax = {t for t in _read_ids(RECORDS / f"{name}.jax-passing.txt") if _in_selection(t, paths)}
    path = RECORDS / f"{name}.known-failures.txt"
    kept = [line for line in (path.read_text().splitlines()[1:] if path.exists() else [])
            if not _in_selection(line.split("  #")[0].strip(), paths)]
    passed, failed = passing_tests(WORK / f"{name}.laminax.xml")
    lines = sorted(kept + [f"{test_id}  # {failed.get(test_id, 'did not run')}"
                           for test_id in on_jax - passed])
    header = (f"# {name}: tests passing on JAX that fail on laminax; causes in KNOWN.md\n")
    (RECORDS / f"{name}.known-failures.txt").write_text(header + "\n".join(lines) + "\n")


def main(laminax_python: Path, jax_python: Path | None, names: list[str], workers: str,
         update_known: bool = False, whole: bool = False) -> int:
    ok = True
    for name in names:
        if jax_python is not None:
            record_reference(jax_python, name, workers)
        report = run_suite(laminax_python, name, on_laminax=True, workers=workers, whole=whole)
        if update_known:
            record_known_failures(name, whole)
        ok &= compare(name, report, whole)
    return 0 if ok else 1

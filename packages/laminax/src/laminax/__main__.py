"""`python -m laminax`: run unmodified `import jax` programs on laminax.

    python -m laminax run script.py [args...]     runs script.py as __main__, jax = laminax
    python -m laminax run -m package.module [args...]
    python -m laminax pytest [pytest args...]     a test suite, jax = laminax (workers too)
"""

from __future__ import annotations

import runpy
import sys

USAGE = __doc__


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "run":
        from laminax import install_as_jax

        install_as_jax()
        if argv[1] == "-m" and len(argv) >= 3:
            sys.argv = [argv[2], *argv[3:]]
            runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv[1:]
            runpy.run_path(argv[1], run_name="__main__")
        return 0
    if argv and argv[0] == "pytest":
        import pytest

        return int(pytest.main(["-p", "laminax.pytest_plugin", *argv[1:]]))
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Prints code lines per package (comments, docstrings and blank lines are free), like tinygrad's
sz.py, against each package's budget in tools/loc_budget.toml.

    python3 tools/loc.py           the table
    python3 tools/loc.py --check   the table; exits 1 when a package passes its budget (CI runs it)
    python3 tools/loc.py --check --budget FILE   against another budget file
"""

from __future__ import annotations

import sys
import tokenize
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_FILE = ROOT / "tools" / "loc_budget.toml"


def code_lines(path: Path) -> int:
    """Counts lines holding at least one token that is not a comment or a docstring."""
    lines: set[int] = set()
    previous = tokenize.INDENT
    with path.open("rb") as handle:
        for token in tokenize.tokenize(handle.readline):
            kind = token.type
            is_docstring = kind == tokenize.STRING and previous in (
                tokenize.INDENT,
                tokenize.NEWLINE,
                tokenize.DEDENT,
                tokenize.ENCODING,
            )
            if kind not in (
                tokenize.COMMENT,
                tokenize.NL,
                tokenize.NEWLINE,
                tokenize.INDENT,
                tokenize.DEDENT,
                tokenize.ENCODING,
                tokenize.ENDMARKER,
            ) and not is_docstring:
                lines.update(range(token.start[0], token.end[0] + 1))
            if kind not in (tokenize.COMMENT, tokenize.NL):
                previous = kind
    return len(lines)


def budgets(path: Path = BUDGET_FILE) -> dict[str, int]:
    """Each package's code-line budget, from tools/loc_budget.toml (or `path`)."""
    with path.open("rb") as f:
        return tomllib.load(f)["budget"]


def main(argv: list[str]) -> int:
    budget_file = Path(argv[argv.index("--budget") + 1]) if "--budget" in argv else BUDGET_FILE
    limits = budgets(budget_file)
    rows = []
    for package in sorted((ROOT / "packages").iterdir()):
        src = sorted((package / "src").rglob("*.py"))
        tests = sorted((package / "tests").rglob("*.py"))
        rows.append((package.name, len(src), sum(map(code_lines, src)), sum(map(code_lines, tests))))
    print(f"{'package':<12} {'files':>6} {'code':>8} {'budget':>8} {'tests':>8}")
    over = []
    for name, files, code, test in rows:
        budget = limits.get(name)
        if budget is None or code > budget:
            over.append(name)
        shown = "none" if budget is None else str(budget)
        print(f"{name:<12} {files:>6} {code:>8} {shown:>8} {test:>8}")
    print(f"{'total':<12} {sum(r[1] for r in rows):>6} {sum(r[2] for r in rows):>8} {'':>8} "
          f"{sum(r[3] for r in rows):>8}")
    if over and "--check" in argv:
        print(f"over budget (or without one in {budget_file.name}): "
              f"{', '.join(over)}; shrink the code or raise the budget on purpose")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Prints code lines per package (comments, docstrings and blank lines are free), like tinygrad's sz.py.

    python3 tools/loc.py

A number for reviews to discuss, not a gate.
"""

from __future__ import annotations

import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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


def main() -> None:
    rows = []
    for package in sorted((ROOT / "packages").iterdir()):
        src = sorted((package / "src").rglob("*.py"))
        tests = sorted((package / "tests").rglob("*.py"))
        rows.append((package.name, len(src), sum(map(code_lines, src)), sum(map(code_lines, tests))))
    print(f"{'package':<12} {'files':>6} {'code':>8} {'tests':>8}")
    for name, files, code, test in rows:
        print(f"{name:<12} {files:>6} {code:>8} {test:>8}")
    print(f"{'total':<12} {sum(r[1] for r in rows):>6} {sum(r[2] for r in rows):>8} "
          f"{sum(r[3] for r in rows):>8}")


if __name__ == "__main__":
    main()

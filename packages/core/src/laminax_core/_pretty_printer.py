"""A small Wadler-style pretty printer used to print jaxprs in JAX's textual layout.

A document is built from `text`, `brk` (a space or a newline), `nest` (indentation) and
`group`. When a group is laid out, it is printed flat (every break as its text) if its whole
flat width fits in what is left of the line; otherwise its breaks become newlines. Only the
group and the plain text right after it are measured, not what follows beyond, which is how
JAX's printer decides too (so a line may run a few columns past the width).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

__all__ = ["Doc", "brk", "concat", "group", "join", "nest", "nil", "text"]


@dataclasses.dataclass(frozen=True)
class Doc:
    """A pretty-printer document; `str(doc)` formats it at width 80."""

    kind: str  # "text", "brk", "concat", "nest", "group"
    value: object = None
    children: tuple[Doc, ...] = ()

    def __add__(self, other: Doc) -> Doc:
        return concat([self, other])

    def __str__(self) -> str:
        return self.format()

    def format(self, width: int = 80) -> str:
        """Lays the document out at `width` columns."""
        return _layout(self, width)


def nil() -> Doc:
    """The empty document."""
    return Doc("text", "")


def text(s: str) -> Doc:
    """Literal text (no newlines)."""
    return Doc("text", s)


def brk(s: str = " ") -> Doc:
    """A break: `s` when its group is flat, a newline plus indentation otherwise."""
    return Doc("brk", s)


def concat(docs: Sequence[Doc]) -> Doc:
    """The documents one after the other."""
    return Doc("concat", None, tuple(docs))


def nest(n: int, doc: Doc) -> Doc:
    """`doc` with newlines inside it indented `n` more columns."""
    return Doc("nest", n, (doc,))


def group(doc: Doc) -> Doc:
    """`doc` printed flat if it fits on the current line, broken otherwise."""
    return Doc("group", None, (doc,))


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
    """The documents separated by `sep`."""
    docs = list(docs)
    if not docs:
        return nil()
    parts = [docs[0]]
    for doc in docs[1:]:
        parts += [sep, doc]
    return concat(parts)


def _flat_width(doc: Doc) -> int:
    if doc.kind in ("text", "brk"):
        return len(doc.value)
    return sum(_flat_width(child) for child in doc.children)


def _trailing_text(stack) -> int:
    # plain text right after a group must fit on its line too (a closing " }"); anything else
    # (a nested document) is not looked at
    total = 0
    for _, _, d in reversed(stack):
        if d.kind != "text":
            break
        total += len(d.value)
    return total


def _layout(doc: Doc, width: int) -> str:
    out: list[str] = []
    column = 0
    stack = [(0, False, doc)]  # (indent, flat?, doc), processed last-in first-out
    while stack:
        indent, flat, d = stack.pop()
        if d.kind == "text":
            out.append(d.value)
            column += len(d.value)
        elif d.kind == "brk":
            if flat:
                out.append(d.value)
                column += len(d.value)
            else:
                out.append("\n" + " " * indent)
                column = indent
        elif d.kind == "concat":
            stack.extend((indent, flat, child) for child in reversed(d.children))
        elif d.kind == "nest":
            stack.append((indent + d.value, flat, d.children[0]))
        else:  # group
            fits = flat or column + _flat_width(d) + _trailing_text(stack) <= width
            stack.append((indent, fits, d.children[0]))
    return "".join(out)

"""`id_print`'s tap function: the seed's text layout of a tapped pytree.

Keyword arguments come first on their own line, sorted by key, as ``key: value`` (with
``transforms`` and ``device`` among them when present). Then the value: arrays through
`numpy.array2string` (with `threshold`), tuples as ``( a b )``, lists as ``[ a b ]``, dicts as
``{ k=v }`` with sorted keys, anything else through `str`. A container that does not fit in
80 columns puts one element per line, indented by two under its opening bracket's line.
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["format_value", "print_tap_func"]

_WIDTH = 80
_print_lock = threading.Lock()


def _flat(value, threshold) -> str:
    if isinstance(value, tuple | list | dict):
        opening, closing, parts = _parts(value, threshold, _flat)
        return f"{opening} {' '.join(parts)} {closing}"
    if isinstance(value, np.ndarray):
        return np.array2string(value, threshold=threshold)
    return str(value)


def _parts(value, threshold, render):
    if isinstance(value, tuple):
        return "(", ")", [render(v, threshold) for v in value]
    if isinstance(value, list):
        return "[", "]", [render(v, threshold) for v in value]
    return "{", "}", [f"{k}={render(v, threshold)}" for k, v in sorted(value.items())]


def _layout(value, threshold, indent: int, column: int) -> str:
    """`value` starting at `column`, with nested lines indented by `indent`."""
    flat = _flat(value, threshold)
    if not isinstance(value, tuple | list | dict) or column + len(flat) <= _WIDTH:
        return flat
    opening, closing, _ = _parts(value, threshold, lambda v, t: v)
    items = list(value.items()) if isinstance(value, dict) else list(value)
    if isinstance(value, dict):
        items = sorted(items)
    inner = indent + 2
    lines = []
    col = column + len(opening) + 1
    for i, item in enumerate(items):
        prefix = f"{item[0]}=" if isinstance(value, dict) else ""
        start = col if i == 0 else inner
        element = item[1] if isinstance(value, dict) else item
        lines.append(prefix + _layout(element, threshold, inner, start + len(prefix)))
    return f"{opening} " + ("\n" + " " * inner).join(lines) + f" {closing}"


def format_value(value, threshold=None) -> str:
    """The seed's text for a tapped pytree of NumPy arrays."""
    return _layout(value, threshold, 0, 0)


def print_tap_func(arg, transforms, *, device=None, output_stream=None, threshold=None, **kwargs):
    """The tap function of `id_print`: writes the keyword line, then the value."""
    if transforms:
        kwargs["transforms"] = [(name, params) if params else name for name, params in transforms]
    if device is not None:
        kwargs["device"] = device
    keywords = " ".join(f"{k}: {v}" for k, v in sorted(kwargs.items()))
    lines = ([keywords] if keywords else []) + [format_value(arg, threshold)]
    with _print_lock:
        for line in lines:
            if output_stream is not None:
                output_stream.write(line + "\n")
            else:
                print(line)

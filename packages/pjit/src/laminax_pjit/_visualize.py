"""The picture of which device holds which block of a 1-D or 2-D array, drawn with `rich` the
way JAX draws it (JAX: `jax.debug.visualize_sharding`, `visualize_array_sharding`).

The array is cut into the blocks its sharding gives devices; each block is a table cell sized
in proportion to the block (10 rows by `scale` for the whole height, 2.5 columns per row of
width), labelled with the platform and the ids of the devices holding it. With colour (and
matplotlib's ``tab20b`` colour map available) cells are filled instead of ruled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["visualize_array_sharding", "visualize_sharding"]

_ROWS_FOR_WHOLE_HEIGHT = 10
_COLUMNS_PER_ROW = 2.5  # terminal cells are about 2.5 times taller than wide


def _block_position(size: int, piece: slice) -> int:
    """Which block along a dimension of `size` the slice `piece` is."""
    if piece.start is None and piece.stop is None:
        return 0
    return piece.start // (piece.stop - piece.start)


def _as_slice(index) -> slice:
    return slice(index, index + 1) if isinstance(index, int) else index


def _extent(piece: slice, size: int) -> int:
    return size if piece.stop is None else piece.stop - piece.start


def _blocks(shape: tuple[int, ...], sharding):
    """(row, col) -> (device ids, height fraction or None for 1-D, width fraction)."""
    blocks: dict = {}
    for device, index in sharding.devices_indices_map(shape).items():
        index = tuple(map(_as_slice, index))
        if len(shape) == 2:
            key = (_block_position(shape[0], index[0]), _block_position(shape[1], index[1]))
            height = _extent(index[0], shape[0]) / shape[0]
            width = _extent(index[1], shape[1]) / shape[1]
        else:
            key = (0, _block_position(shape[0], index[0]))
            height, width = None, _extent(index[0], shape[0]) / shape[0]
        ids, _, _ = blocks.setdefault(key, (set(), height, width))
        ids.add(device.id)
    return blocks


def _colors(color_map, count: int):
    """`count` colours from `color_map`, stepping about half way round each time so that
    neighbouring blocks contrast."""
    values = np.linspace(0, 1, count)
    step = count // 2 + (count % 2 == 0)
    position = 0
    for _ in range(count):
        yield color_map(values[position])
        position = (position + step) % count


def _hex(color) -> str:
    if isinstance(color, str):
        return color
    r, g, b = (int(c * 255) for c in color[:3])
    return f"#{r:02X}{g:02X}{b:02X}"


def _text_color(background: str) -> str:
    r, g, b = (int(background[i : i + 2], 16) for i in (1, 3, 5))
    return "#000000" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "#ffffff"


def visualize_sharding(
    shape: Sequence[int],
    sharding,
    *,
    use_color: bool = True,
    scale: float = 1.0,
    min_width: int = 9,
    max_width: int = 80,
    color_map: Callable | None = None,
) -> None:
    """Prints which device holds which block of an array of `shape` under `sharding`.

    Args:
      shape: a 1-D or 2-D global shape.
      sharding: any Sharding.
      use_color: fill cells with colours (when the terminal and matplotlib allow).
      scale: the picture's size; min_width, max_width: bounds on a cell's width.
      color_map: a function [0, 1] -> RGBA (default matplotlib's ``tab20b``).

    Raises:
      ValueError: `rich` is not installed, or `shape` is not 1-D or 2-D.
    """
    # `rich` is an optional dependency: imported only when a sharding is drawn
    try:
        import rich.align
        import rich.box
        import rich.console
        import rich.padding
        import rich.style
        import rich.table
    except ImportError:
        raise ValueError("`visualize_sharding` requires `rich` to be installed.") from None
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    console = rich.console.Console(width=max_width)
    use_color = use_color and console.color_system is not None
    if use_color and color_map is None:
        try:  # optional too: only its colour maps are used
            import matplotlib

            color_map = matplotlib.colormaps["tab20b"]
        except ImportError:
            use_color = False
    base_height = int(_ROWS_FOR_WHOLE_HEIGHT * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    platform = next(iter(sharding.device_set)).platform.upper()
    blocks = _blocks(shape, sharding)
    rows = max(r for r, _ in blocks) + 1
    cols = max(c for _, c in blocks) + 1
    colors = _colors(color_map, rows * cols) if use_color else None
    table = rich.table.Table(
        show_header=False,
        show_lines=not use_color,
        padding=0,
        highlight=not use_color,
        pad_edge=False,
        box=None if use_color else rich.box.SQUARE,
    )
    for r in range(rows):
        cells = []
        for c in range(cols):
            ids, height, width = blocks[r, c]
            label = f"{platform} " + ",".join(str(i) for i in sorted(ids))
            width = min(max(int(width * base_width * _COLUMNS_PER_ROW), min_width), max_width)
            height = 1 if height is None else int(height * base_height)
            left, extra = divmod(width - len(label) - 2, 2)
            right = left + extra
            top, extra = divmod(height - 2, 2)
            bottom = top + extra
            style = rich.style.Style()
            if colors is not None:
                background = _hex(next(colors))
                style = rich.style.Style(bgcolor=background, color=_text_color(background))
                top, right, bottom, left = top + 1, right + 1, bottom + 1, left + 1
            pad = tuple(max(p, 0) for p in (top, right, bottom, left))
            cells.append(
                rich.padding.Padding(
                    rich.align.Align(label, "center", vertical="middle"), pad, style=style
                )
            )
        table.add_row(*cells)
    console.print(table, end="\n\n")


def visualize_array_sharding(arr, **kwargs) -> None:
    """`visualize_sharding` of a concrete Array's own shape and sharding.

    Inside `jit` the picture is drawn when XLA has laid the value out (at compile time), as
    in JAX.

    Raises:
      TypeError: `arr` has no sharding (a NumPy array).
    """
    from laminax_core.internal import Tracer

    from laminax_pjit._inspect_sharding import inspect_array_sharding

    if isinstance(arr, Tracer):  # inside jit: drawn when XLA has laid it out (compile time)
        shape = arr.shape

        def _visualize(sharding):
            visualize_sharding(shape, sharding, **kwargs)

        inspect_array_sharding(arr, callback=_visualize)
        return
    sharding = getattr(arr, "sharding", None)
    if sharding is None:
        raise TypeError(
            f"visualize_array_sharding: {type(arr).__name__} has no sharding; pass a laminax "
            "Array or a traced value inside jit."
        )
    visualize_sharding(arr.shape, sharding, **kwargs)

"""A small FlatBuffers writer and a bounds-checked reader, enough for JAX's `Exported` schema.

The wire format (the one the `flatbuffers` runtime reads and writes): a buffer starts with a
little-endian u32 offset to the root table; a table starts with an i32 `table - vtable`
distance; its vtable is `u16 vtable size, u16 table size, u16 field offset per slot` (0: the
field is absent); a reference field holds a u32 offset relative to its own position, always
forward; vectors and strings are `u32 length` followed by the elements (strings end in NUL).

The writer lays objects out front to back (parents before children, so every reference is a
forward offset). The reader never trusts the bytes: every read is checked against the buffer,
vector lengths against the bytes left, and the number of objects decoded is bounded by the
buffer's size, so hostile input raises `ValueError` instead of crashing or running forever.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Bytes", "FlatBufferError", "Reader", "Table", "Vector", "write", "RTable"]

_SCALARS = {"i8": "<b", "u8": "<B", "bool": "<B", "i16": "<h", "u16": "<H", "i32": "<i", "u32": "<I"}


class FlatBufferError(ValueError):
    """Malformed FlatBuffers bytes."""


# ----- writing ------------------------------------------------------------------------------


@dataclass
class Table:
    """A table to write: `fields` maps slot -> (scalar kind, value) or slot -> child object
    (a `Table`, `Vector`, `Bytes` or `str`). Absent slots are simply not in the mapping."""

    fields: dict[int, Any] = field(default_factory=dict)


@dataclass
class Vector:
    """A vector of scalars (`kind` in `_SCALARS`) or, with kind "ref", of child objects."""

    kind: str
    items: Sequence[Any]


@dataclass
class Bytes:
    """A `[ubyte]` vector."""

    data: bytes


def write(root: Table) -> bytes:
    """Serializes `root` (and everything it references) into FlatBuffers bytes."""
    out = bytearray(4)
    pending: list[tuple[int, Any]] = []  # (position of a u32 reference, object it names)
    _place_table(out, root, pending, root_ref=0)
    while pending:
        ref, obj = pending.pop()
        pos = _place(out, obj, pending)
        struct.pack_into("<I", out, ref, pos - ref)
    return bytes(out)


def _align(out: bytearray, n: int) -> None:
    out.extend(b"\0" * (-len(out) % n))


def _place(out: bytearray, obj, pending) -> int:
    if isinstance(obj, Table):
        return _place_table(out, obj, pending)
    if isinstance(obj, str):
        obj = obj.encode("utf-8")
        _align(out, 4)
        pos = len(out)
        out += struct.pack("<I", len(obj)) + obj + b"\0"
        return pos
    if isinstance(obj, Bytes):
        _align(out, 4)
        pos = len(out)
        out += struct.pack("<I", len(obj.data)) + bytes(obj.data)
        return pos
    if isinstance(obj, Vector):
        _align(out, 4)
        pos = len(out)
        out += struct.pack("<I", len(obj.items))
        if obj.kind == "ref":
            for item in obj.items:
                pending.append((len(out), item))
                out += b"\0\0\0\0"
        else:
            fmt = _SCALARS[obj.kind]
            for item in obj.items:
                out += struct.pack(fmt, item)
        return pos
    raise TypeError(f"cannot write {type(obj).__name__} into a flatbuffer")


def _place_table(out: bytearray, table: Table, pending, root_ref: int | None = None) -> int:
    # fields inside the table: references and 4-byte scalars first, then 2, then 1 (aligned)
    slots = sorted(table.fields.items(), key=lambda kv: (-_size(kv[1]), kv[0]))
    offsets: dict[int, int] = {}
    layout = 4
    for slot, value in slots:
        size = _size(value)
        layout += -layout % size
        offsets[slot] = layout
        layout += size
    table_size = layout + (-layout % 4)
    n_slots = max(table.fields, default=-1) + 1
    vtable = struct.pack(f"<HH{n_slots}H", 4 + 2 * n_slots, table_size,
                         *(offsets.get(i, 0) for i in range(n_slots)))
    _align(out, 2)
    vtable_pos = len(out)
    out += vtable
    _align(out, 4)
    pos = len(out)
    out += bytes(table_size)
    struct.pack_into("<i", out, pos, pos - vtable_pos)
    if root_ref is not None:
        struct.pack_into("<I", out, root_ref, pos - root_ref)
    for slot, value in slots:
        where = pos + offsets[slot]
        if isinstance(value, tuple):
            kind, number = value
            struct.pack_into(_SCALARS[kind], out, where, int(number))
        else:
            pending.append((where, value))
    return pos


def _size(value) -> int:
    if isinstance(value, tuple):
        return struct.calcsize(_SCALARS[value[0]])
    return 4


# ----- reading ------------------------------------------------------------------------------


class Reader:
    """Bounds-checked access to FlatBuffers bytes; `budget` caps the objects decoded."""

    def __init__(self, buf: bytes):
        self.buf = memoryview(bytes(buf))
        self.budget = len(self.buf) // 4 + 64

    def fail(self, what: str):
        raise FlatBufferError(f"malformed serialized Exported: {what}")

    def scalar(self, fmt: str, pos: int):
        size = struct.calcsize(fmt)
        if pos < 0 or pos + size > len(self.buf):
            self.fail(f"read of {size} bytes at offset {pos} is outside the {len(self.buf)} "
                      "bytes given (truncated or corrupted data)")
        return struct.unpack_from(fmt, self.buf, pos)[0]

    def deref(self, pos: int) -> int:
        return pos + self.scalar("<I", pos)

    def spend(self) -> None:
        self.budget -= 1
        if self.budget < 0:
            self.fail("more objects than the data can hold (a reference cycle or shared "
                      "subtrees)")

    def root(self) -> RTable:
        return RTable(self, self.deref(0))

    def vector_span(self, pos: int, elem_size: int) -> tuple[int, int]:
        n = self.scalar("<I", pos)
        start = pos + 4
        if start + n * elem_size > len(self.buf):
            self.fail(f"a vector of {n} elements at offset {pos} runs past the end of the data")
        return start, n

    def string(self, pos: int) -> str:
        start, n = self.vector_span(pos, 1)
        try:
            return bytes(self.buf[start:start + n]).decode("utf-8")
        except UnicodeDecodeError:
            self.fail(f"the string at offset {pos} is not UTF-8")


class RTable:
    """One table being read."""

    def __init__(self, reader: Reader, pos: int):
        reader.spend()
        self.r = reader
        self.pos = pos
        vtable = pos - reader.scalar("<i", pos)
        self.vsize = reader.scalar("<H", vtable)
        if self.vsize < 4 or self.vsize % 2:
            reader.fail(f"the table at offset {pos} has a bad vtable")
        reader.scalar("<H", vtable + self.vsize - 2)  # the whole vtable is inside the buffer
        self.vtable = vtable

    def _field(self, slot: int) -> int:
        entry = 4 + 2 * slot
        if entry >= self.vsize:
            return 0
        off = self.r.scalar("<H", self.vtable + entry)
        return self.pos + off if off else 0

    def scalar(self, slot: int, kind: str, default=0):
        where = self._field(slot)
        return self.r.scalar(_SCALARS[kind], where) if where else default

    def has(self, slot: int) -> bool:
        return bool(self._field(slot))

    def table(self, slot: int) -> RTable | None:
        where = self._field(slot)
        return RTable(self.r, self.r.deref(where)) if where else None

    def string(self, slot: int) -> str | None:
        where = self._field(slot)
        return self.r.string(self.r.deref(where)) if where else None

    def bytes(self, slot: int) -> bytes:
        where = self._field(slot)
        if not where:
            return b""
        start, n = self.r.vector_span(self.r.deref(where), 1)
        return bytes(self.r.buf[start:start + n])

    def scalars(self, slot: int, kind: str) -> list:
        where = self._field(slot)
        if not where:
            return []
        fmt = _SCALARS[kind]
        size = struct.calcsize(fmt)
        start, n = self.r.vector_span(self.r.deref(where), size)
        return [struct.unpack_from(fmt, self.r.buf, start + i * size)[0] for i in range(n)]

    def _refs(self, slot: int) -> list[int]:
        where = self._field(slot)
        if not where:
            return []
        start, n = self.r.vector_span(self.r.deref(where), 4)
        return [self.r.deref(start + 4 * i) for i in range(n)]

    def tables(self, slot: int) -> list[RTable]:
        return [RTable(self.r, p) for p in self._refs(slot)]

    def strings(self, slot: int) -> list[str]:
        out = []
        for p in self._refs(slot):
            self.r.spend()
            out.append(self.r.string(p))
        return out

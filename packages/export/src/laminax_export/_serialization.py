"""`Exported` to bytes and back, in JAX's serialization format (a FlatBuffers `Exported`
table, JAX 0.10.2's schema: serialization version 11, written as 3 for older readers), so
artifacts move between laminax and JAX in both directions.

The facts of the format (slot numbers, enums, which fields JAX writes and reads) come from
JAX's public schema; the code is laminax's own (`_flatbuf.py`).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import ml_dtypes
import numpy as np
from laminax_core import dtypes
from laminax_core.internal import ShapedArray
from laminax_pytree import PyTreeDef, default_registry, tree_structure

from laminax_export._exported import (
    DisabledSafetyCheck,
    Exported,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
)
from laminax_export._flatbuf import Bytes, FlatBufferError, Reader, Table, Vector, write

__all__ = [
    "deserialize",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
    "serialize",
]

# what the `serialization_version` field holds: JAX writes 3 (older readers accepted only
# 2 and 3) and reads 2 and up; version 1 predates the f0 dtype and is refused.
_WRITTEN_VERSION = 3
_MIN_READ_VERSION, _MAX_READ_VERSION = 2, 11

# PyTreeDefKind, AbstractValueKind, DType, MemorySpace, DisabledSafetyCheckKind enums
_LEAF, _NONE, _TUPLE, _LIST, _DICT, _CUSTOM = range(6)
_DTYPES = {
    0: np.dtype(bool), 1: np.dtype(np.int8), 2: np.dtype(np.int16), 3: np.dtype(np.int32),
    4: np.dtype(np.int64), 5: np.dtype(np.uint8), 6: np.dtype(np.uint16),
    7: np.dtype(np.uint32), 8: np.dtype(np.uint64), 9: np.dtype(np.float16),
    10: np.dtype(np.float32), 11: np.dtype(np.float64), 12: np.dtype(np.complex64),
    13: np.dtype(np.complex128), 14: np.dtype(ml_dtypes.bfloat16),
    15: np.dtype(ml_dtypes.int4), 16: np.dtype(ml_dtypes.uint4),
    17: np.dtype(ml_dtypes.float8_e4m3b11fnuz), 18: np.dtype(ml_dtypes.float8_e4m3fn),
    19: np.dtype(ml_dtypes.float8_e4m3fnuz), 20: np.dtype(ml_dtypes.float8_e5m2),
    21: np.dtype(ml_dtypes.float8_e5m2fnuz), 22: dtypes.float0, 23: np.dtype(ml_dtypes.float8_e4m3),
    24: np.dtype(ml_dtypes.float8_e3m4), 25: np.dtype(ml_dtypes.float8_e8m0fnu),
    26: np.dtype(ml_dtypes.float4_e2m1fn),
}
_DTYPE_KINDS = {d: k for k, d in _DTYPES.items()}
_MEMORY_DEVICE = 1
_CHECK_PLATFORM, _CHECK_CUSTOM_CALL = 0, 1

# custom pytree nodes: type -> (name, serialize_auxdata); name -> (type, deserialize_auxdata)
_serializers: dict[type, tuple[str, Callable]] = {}
_deserializers: dict[str, tuple[type, Callable, Callable | None]] = {}


def register_pytree_node_serialization(nodetype, *, serialized_name: str,
                                       serialize_auxdata: Callable,
                                       deserialize_auxdata: Callable,
                                       from_children: Callable | None = None):
    """Registers how nodes of a custom pytree type are written into `in_tree`/`out_tree`:
    `serialize_auxdata(aux) -> bytes` and `deserialize_auxdata(bytes) -> aux`. Returns
    `nodetype`, so it works as a class decorator."""
    if nodetype in _serializers:
        raise ValueError(
            f"Duplicate serialization registration for type `{nodetype}`. Previous "
            f"registration was with serialized_name `{_serializers[nodetype][0]}`.")
    if serialized_name in _deserializers:
        raise ValueError(
            f"Duplicate serialization registration for serialized_name `{serialized_name}`. "
            f"Previous registration was for type `{_deserializers[serialized_name][0]}`.")
    _serializers[nodetype] = (serialized_name, serialize_auxdata)
    _deserializers[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def register_namedtuple_serialization(nodetype, *, serialized_name: str):
    """Registers a `collections.namedtuple` type for serialization (its field names are the
    auxiliary data, as JAX writes them)."""
    fields = getattr(nodetype, "_fields", None)
    if not (isinstance(nodetype, type) and issubclass(nodetype, tuple) and fields is not None
            and all(isinstance(f, str) for f in fields)):
        raise ValueError("Use `export.register_pytree_node_serialization` for types other "
                         "than `collections.namedtuple`.")
    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name,
        serialize_auxdata=lambda _aux: json.dumps(list(nodetype._fields)).encode("utf-8"),
        deserialize_auxdata=lambda data: None,
        from_children=lambda aux, children: nodetype(*children),
    )


# ----- writing ------------------------------------------------------------------------------


def serialize(exp: Exported, vjp_order: int = 0) -> bytearray:
    """`exp` as bytes in JAX's format, with `vjp_order` orders of backward passes."""
    if not isinstance(vjp_order, int) or vjp_order < 0:
        raise ValueError(f"vjp_order must be a non-negative int, got {vjp_order!r}")
    return bytearray(write(_exported_table(exp, vjp_order)))


def _exported_table(exp: Exported, vjp_order: int) -> Table:
    if any(s is not None for s in (*exp.in_shardings_hlo, *exp.out_shardings_hlo)):
        raise ValueError(
            "serializing an Exported with explicit shardings is not supported by laminax yet; "
            "export it without in_shardings/out_shardings.")
    unique = list(dict.fromkeys((a.shape, a.dtype) for a in (*exp.in_avals, *exp.out_avals)))
    index = {k: i for i, k in enumerate(unique)}
    fields = {
        0: ("u16", _WRITTEN_VERSION),
        1: exp.fun_name,
        2: _tree_table(exp.in_tree),
        3: Vector("ref", [_aval_table(a.shape, a.dtype) for a in exp.in_avals]),
        4: _tree_table(exp.out_tree),
        5: Vector("ref", [_aval_table(a.shape, a.dtype) for a in exp.out_avals]),
        7: Vector("ref", [Table() for _ in exp.in_avals]),
        8: Vector("ref", [Table() for _ in exp.out_avals]),
        9: Vector("ref", list(exp.platforms)),
        10: Vector("ref", [_effect_table(e) for e in exp.ordered_effects]),
        11: Vector("ref", [_effect_table(e) for e in exp.unordered_effects]),
        12: Vector("ref", [_check_table(c) for c in exp.disabled_safety_checks]),
        13: Bytes(bytes(exp.mlir_module_serialized)),
        14: ("u16", exp.calling_convention_version),
        15: Vector("u16", list(exp.module_kept_var_idx)),
        16: ("bool", exp.uses_global_constants),
        18: ("u32", exp.nr_devices),
        19: Vector("ref", [_aval_table(s, d) for s, d in unique]),
        20: Vector("ref", []),
        21: Vector("ref", []),
        22: Vector("u32", [index[(a.shape, a.dtype)] for a in exp.in_avals]),
        23: Vector("u32", [index[(a.shape, a.dtype)] for a in exp.out_avals]),
        24: Vector("u32", [0] * len(exp.in_avals)),
        25: Vector("u32", [0] * len(exp.out_avals)),
    }
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError("serialization of an Exported that does not have vjps of "
                             f"high-enough order (vjp_order={vjp_order} was asked)")
        fields[17] = _exported_table(exp.vjp(), vjp_order - 1)
    return Table(fields)


def _tree_table(tree) -> Table:
    node = tree.node_data()
    children = tree.children()
    fields: dict = {}
    if node is None:
        kind = _LEAF
    elif node[0] is type(None):
        kind = _NONE
    elif node[0] is tuple:
        kind = _TUPLE
    elif node[0] is list:
        kind = _LIST
    elif node[0] is dict:
        kind = _DICT
        keys = list(node[1])
        for k in keys:
            if not isinstance(k, str):
                raise TypeError("Serialization is supported only for dictionaries with string "
                                f"keys. Found key {k} of type {type(k)}.")
        fields[2] = Vector("ref", keys)
    elif node[0] in _serializers:
        kind = _CUSTOM
        name, ser = _serializers[node[0]]
        data = ser(node[1])
        if not isinstance(data, bytes | bytearray):
            raise ValueError("The custom serialization function for `node_type` must return a "
                             f"`bytes` object. It returned a {type(data)}.")
        fields[3] = name
        fields[4] = Bytes(bytes(data))
    else:
        raise ValueError(
            f"Cannot serialize PyTreeDef containing an unregistered type `{node[0]}`. Use "
            "`export.register_pytree_node_serialization` or "
            "`export.register_namedtuple_serialization`.")
    fields[0] = ("i8", kind)
    if children:
        fields[1] = Vector("ref", [_tree_table(c) for c in children])
    return Table(fields)


def _aval_table(shape, dtype) -> Table:
    return Table({0: ("i8", 0), 1: Vector("ref", [str(d) for d in shape]),
                  2: ("i8", _DTYPE_KINDS[np.dtype(dtype)]), 3: ("i8", _MEMORY_DEVICE)})


def _effect_table(effect) -> Table:
    return Table({0: str(type(effect))})


def _check_table(check: DisabledSafetyCheck) -> Table:
    target = check.is_custom_call()
    if target is not None:
        return Table({0: ("i8", _CHECK_CUSTOM_CALL), 1: target})
    return Table({0: ("i8", _CHECK_PLATFORM)})


# ----- reading ------------------------------------------------------------------------------


def deserialize(blob: bytes | bytearray) -> Exported:
    """The `Exported` serialized in `blob` (JAX's format, written by laminax or by JAX).

    Raises:
      ValueError: the bytes are not a serialized Exported (truncated, corrupted), or it was
        written with a version outside the supported ranges.
    """
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise TypeError(f"deserialize expects bytes, got {type(blob).__name__}")
    reader = Reader(blob)
    if len(reader.buf) < 8:
        raise ValueError(f"malformed serialized Exported: {len(reader.buf)} bytes is too short")
    try:
        return _read_exported(reader.root(), depth=0)
    except FlatBufferError:
        raise
    except RecursionError:
        raise ValueError("malformed serialized Exported: nested too deeply") from None


def _read_exported(t, depth: int) -> Exported:
    fail = t.r.fail
    if depth > 32:
        fail("more than 32 nested vjp orders")
    version = t.scalar(0, "u16")
    if not _MIN_READ_VERSION <= version <= _MAX_READ_VERSION:
        raise ValueError(
            f"Unsupported serialization version {version}: laminax reads serialization "
            f"versions {_MIN_READ_VERSION} to {_MAX_READ_VERSION} (as JAX 0.10.2 does).")
    ccv = t.scalar(14, "u16")
    if not (minimum_supported_calling_convention_version <= ccv
            <= maximum_supported_calling_convention_version):
        raise ValueError(
            f"The exported function uses calling convention version {ccv}, outside the "
            "supported range [" f"{minimum_supported_calling_convention_version}.."
            f"{maximum_supported_calling_convention_version}]; export it again with a JAX or "
            "laminax whose calling convention this laminax supports.")
    unique = [_read_aval(a) for a in t.tables(19)]
    in_idx, out_idx = t.scalars(22, "u32"), t.scalars(23, "u32")
    if in_idx or out_idx or unique:
        in_avals = tuple(_pick(unique, i, fail) for i in in_idx)
        out_avals = tuple(_pick(unique, i, fail) for i in out_idx)
    else:
        in_avals = tuple(_read_aval(a) for a in t.tables(3))
        out_avals = tuple(_read_aval(a) for a in t.tables(5))
    for slot in (24, 25):
        if any(t.scalars(slot, "u32")):
            raise ValueError("the artifact has explicit shardings, which laminax cannot "
                             "deserialize yet; export it without in/out shardings.")
    for slot in (7, 8):
        for s in t.tables(slot):
            if s.has(1) or s.has(2):
                raise ValueError("the artifact has explicit shardings, which laminax cannot "
                                 "deserialize yet; export it without in/out shardings.")
    in_tree = _read_tree(t.table(2), fail, 0)
    out_tree = _read_tree(t.table(4), fail, 0)
    if in_tree.num_leaves != len(in_avals) or out_tree.num_leaves != len(out_avals):
        fail("the trees and the avals disagree on the number of leaves")
    name = t.string(1)
    if name is None:
        fail("no function name")
    module = t.bytes(13)
    if not module:
        fail("no module")
    kept = tuple(t.scalars(15, "u16"))
    if any(k >= len(in_avals) for k in kept) or list(kept) != sorted(set(kept)):
        fail("module_kept_var_idx does not name distinct inputs in order")
    nr_devices = t.scalar(18, "u32") or t.scalar(6, "i16")
    if nr_devices < 1:
        fail(f"nr_devices is {nr_devices}")
    checks = tuple(_read_check(c, fail) for c in t.tables(12))
    vjp_table = t.table(17)
    get_vjp = None
    if vjp_table is not None:
        vjp = _read_exported(vjp_table, depth + 1)
        get_vjp = lambda _exp: vjp  # noqa: E731
    return Exported(
        fun_name=name, in_tree=in_tree, in_avals=in_avals, out_tree=out_tree,
        out_avals=out_avals, in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(out_avals), nr_devices=nr_devices,
        platforms=tuple(t.strings(9)),
        ordered_effects=tuple(_read_effect(e, fail) for e in t.tables(10)),
        unordered_effects=tuple(_read_effect(e, fail) for e in t.tables(11)),
        disabled_safety_checks=checks, mlir_module_serialized=module,
        calling_convention_version=ccv, module_kept_var_idx=kept,
        uses_global_constants=bool(t.scalar(16, "bool")), _get_vjp=get_vjp,
    )


def _pick(unique, i, fail):
    if i >= len(unique):
        fail(f"aval index {i} is out of range ({len(unique)} avals)")
    return unique[i]


def _read_aval(a) -> ShapedArray:
    fail = a.r.fail
    if a.scalar(0, "i8") != 0:
        fail("an abstract value that is not a ShapedArray")
    kind = a.scalar(2, "i8")
    if kind not in _DTYPES:
        fail(f"unknown dtype kind {kind}")
    shape = []
    for d in a.strings(1):
        if not d.isdigit() or len(d) > 18:
            raise ValueError(
                f"the artifact has the symbolic dimension {d!r}; laminax deserializes only "
                "artifacts with constant shapes (shape polymorphism is not supported yet).")
        shape.append(int(d))
    return ShapedArray(tuple(shape), _DTYPES[kind])


def _read_tree(t, fail, depth) -> PyTreeDef:
    if t is None:
        fail("a missing tree")
    if depth > 100:
        fail("a tree nested more than 100 levels")
    kind = t.scalar(0, "i8")
    children = [_read_tree(c, fail, depth + 1) for c in t.tables(1)]
    mk = PyTreeDef.from_node_data_and_children
    if kind == _LEAF:
        if children:
            fail("a leaf with children")
        return tree_structure(0)
    if kind == _NONE:
        return tree_structure(None)
    if kind == _TUPLE:
        return mk(default_registry, (tuple, None), children)
    if kind == _LIST:
        return mk(default_registry, (list, None), children)
    if kind == _DICT:
        keys = t.strings(2)
        if len(keys) != len(children) or keys != sorted(keys) or len(set(keys)) != len(keys):
            fail("a dict node whose keys do not match its children")
        return mk(default_registry, (dict, keys), children)
    if kind == _CUSTOM:
        name = t.string(3)
        if name not in _deserializers:
            raise ValueError(
                f"Cannot deserialize a PyTreeDef containing an unregistered type `{name}`. "
                "Use `export.register_pytree_node_serialization` or "
                "`export.register_namedtuple_serialization`.")
        nodetype, deser, from_children = _deserializers[name]
        aux = deser(t.bytes(4))
        if from_children is not None:
            node = tree_structure(from_children(aux, [0] * len(children)))
            return mk(default_registry, node.node_data(), children)
        return mk(default_registry, (nodetype, aux), children)
    fail(f"Cannot deserialize PyTreeDef with unknown kind: {kind}")


def _read_effect(e, fail):
    name = e.string(0)
    from laminax_core.internal import lowerable_effects

    for effect_type in getattr(lowerable_effects, "_effect_types", ()):
        if str(effect_type) == name:
            return effect_type()
    raise ValueError(f"cannot deserialize effect type {name}: no such effect is registered")


def _read_check(c, fail) -> DisabledSafetyCheck:
    kind = c.scalar(0, "i8")
    if kind == _CHECK_CUSTOM_CALL:
        target = c.string(1)
        if not target:
            fail("a custom-call safety check without a target")
        return DisabledSafetyCheck.custom_call(target)
    if kind == _CHECK_PLATFORM:
        return DisabledSafetyCheck.platform()
    raise ValueError(f"Cannot deserialize DisabledSafetyCheck with unknown kind: {kind}")

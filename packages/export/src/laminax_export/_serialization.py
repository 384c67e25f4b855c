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
from laminax_core.internal import ShapedArray, SymbolicScope, lowerable_effects, parse_shape
from laminax_pytree import PyTreeDef, default_registry, tree_structure

from laminax_export._exported import (
    DisabledSafetyCheck,
    Exported,
    install_method,
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
    unique = list(dict.fromkeys((a.shape, a.dtype) for a in (*exp.in_avals, *exp.out_avals)))
    index = {k: i for i, k in enumerate(unique)}
    shardings = [s for s in (*exp._in_named_shardings, *exp._out_named_shardings)
                 if s is not None]
    meshes = list(dict.fromkeys(_mesh_key(s.mesh) for s in shardings))
    mesh_index = {m: i for i, m in enumerate(meshes)}
    named = list(dict.fromkeys(_sharding_key(s) for s in shardings))
    named_index = {n: i for i, n in enumerate(named)}

    def sharding_idx(s):
        return 0 if s is None else 1 + named_index[_sharding_key(s)]

    def sharding_table(s):
        return Table({} if s is None else {2: _named_table(_sharding_key(s), mesh_index)})
    fields = {
        0: ("u16", _WRITTEN_VERSION),
        1: exp.fun_name,
        2: _tree_table(exp.in_tree),
        3: Vector("ref", [_aval_table(a.shape, a.dtype) for a in exp.in_avals]),
        4: _tree_table(exp.out_tree),
        5: Vector("ref", [_aval_table(a.shape, a.dtype) for a in exp.out_avals]),
        7: Vector("ref", [sharding_table(s) for s in exp._in_named_shardings]),
        8: Vector("ref", [sharding_table(s) for s in exp._out_named_shardings]),
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
        20: Vector("ref", [_mesh_table(m) for m in meshes]),
        21: Vector("ref", [_named_table(n, mesh_index) for n in named]),
        22: Vector("u32", [index[(a.shape, a.dtype)] for a in exp.in_avals]),
        23: Vector("u32", [index[(a.shape, a.dtype)] for a in exp.out_avals]),
        24: Vector("u32", [sharding_idx(s) for s in exp._in_named_shardings]),
        25: Vector("u32", [sharding_idx(s) for s in exp._out_named_shardings]),
    }
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError("serialization of an Exported that does not have vjps of "
                             f"high-enough order (vjp_order={vjp_order} was asked)")
        fields[17] = _exported_table(exp.vjp(), vjp_order - 1)
    return Table(fields)


# AxisType enum of the schema (0 is "missing")
_AXIS_TYPES = {"Auto": 1, "Explicit": 2, "Manual": 3}


def _mesh_key(mesh):
    """(axis sizes, names, type names, abstract device): what an abstract mesh holds."""
    mesh = getattr(mesh, "abstract_mesh", mesh)
    types = tuple(getattr(t, "name", str(t)) for t in mesh.axis_types)
    return (tuple(int(n) for n in mesh.axis_sizes), tuple(mesh.axis_names), types,
            mesh.abstract_device)


def _sharding_key(s):
    parts = []
    for p in s.spec:
        parts.append(() if p is None else (p,) if isinstance(p, str) else tuple(p))
    return (_mesh_key(s.mesh), tuple(parts), tuple(sorted(getattr(s.spec, "reduced", ()))),
            tuple(sorted(getattr(s.spec, "unreduced", ()))), s.memory_kind or "device")


def _mesh_table(key) -> Table:
    sizes, names, types, abstract_device = key
    device = None
    if abstract_device is not None:
        device = Table({0: abstract_device.device_kind, 2: abstract_device.platform})
        if abstract_device.num_cores is not None:
            device.fields[1] = ("u32", abstract_device.num_cores)
    fields = {0: Vector("u32", list(sizes)), 1: Vector("ref", list(names)),
              2: Vector("u8", [_AXIS_TYPES.get(t, 1) for t in types])}
    if device is not None:
        fields[3] = device
    return Table(fields)


def _named_table(key, mesh_index) -> Table:
    mesh, parts, reduced, unreduced, memory_kind = key
    spec = Table({0: Vector("ref", [Table({0: Vector("ref", list(p))}) for p in parts]),
                  1: Vector("ref", list(reduced)), 2: Vector("ref", list(unreduced))})
    return Table({0: _mesh_table(mesh), 1: spec, 2: memory_kind,
                  3: ("u32", mesh_index[mesh])})


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
    scope = SymbolicScope()
    unique = [_read_aval(a, scope) for a in t.tables(19)]
    in_idx, out_idx = t.scalars(22, "u32"), t.scalars(23, "u32")
    if in_idx or out_idx or unique:
        in_avals = tuple(_pick(unique, i, fail) for i in in_idx)
        out_avals = tuple(_pick(unique, i, fail) for i in out_idx)
    else:
        in_avals = tuple(_read_aval(a, scope) for a in t.tables(3))
        out_avals = tuple(_read_aval(a, scope) for a in t.tables(5))
    meshes = [_read_mesh(m) for m in t.tables(20)]
    named = [_read_named(n, meshes) for n in t.tables(21)]

    def by_index(i):
        if i > len(named):
            fail(f"sharding index {i} is out of range ({len(named)} shardings)")
        return None if i == 0 else named[i - 1]

    in_named = [by_index(i) for i in t.scalars(24, "u32")]
    out_named = [by_index(i) for i in t.scalars(25, "u32")]
    if not in_named and not out_named:  # older artifacts: one Sharding table per leaf
        in_named = [_read_sharding(s, meshes) for s in t.tables(7)]
        out_named = [_read_sharding(s, meshes) for s in t.tables(8)]
    in_named = in_named or [None] * len(in_avals)
    out_named = out_named or [None] * len(out_avals)
    if len(in_named) != len(in_avals) or len(out_named) != len(out_avals):
        fail("the shardings and the avals disagree on the number of leaves")
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
        _in_named_shardings=tuple(in_named), _out_named_shardings=tuple(out_named),
    )


_AXIS_TYPE_NAMES = {v: k for k, v in _AXIS_TYPES.items()}


def _read_mesh(m):
    # laminax_pjit is imported only for an artifact that carries shardings: exporting and
    # calling unsharded functions never pays for importing the sharding layer
    from laminax_pjit import AbstractDevice, AbstractMesh, AxisType

    fail = m.r.fail
    sizes = m.scalars(0, "u32")
    names = m.strings(1)
    types = m.scalars(2, "u8")
    if not (len(sizes) == len(names) == len(types)) or len(set(names)) != len(names):
        fail("a mesh whose axis sizes, names and types disagree")
    if any(t not in _AXIS_TYPE_NAMES for t in types) or any(n < 1 for n in sizes):
        fail("a mesh with an unknown axis type or an empty axis")
    device = m.table(3)
    abstract_device = None
    if device is not None:
        kind = device.string(0) or ""
        cores = device.scalar(1, "u32") if device.has(1) else None
        abstract_device = AbstractDevice(kind, cores, device.string(2) or "cpu")
    try:
        return AbstractMesh(tuple(sizes), tuple(names),
                            tuple(AxisType[_AXIS_TYPE_NAMES[t]] for t in types),
                            abstract_device=abstract_device)
    except (ValueError, TypeError) as e:
        fail(f"a bad mesh: {e}")


def _read_named(n, meshes):
    # as in _read_mesh: the sharding layer is imported only for a sharded artifact
    from laminax_pjit import NamedSharding, PartitionSpec

    fail = n.r.fail
    if meshes:
        i = n.scalar(3, "u32")
        if i >= len(meshes):
            fail(f"mesh index {i} is out of range ({len(meshes)} meshes)")
        mesh = meshes[i]
    else:
        table = n.table(0)
        if table is None:
            fail("a named sharding without a mesh")
        mesh = _read_mesh(table)
    spec_table = n.table(1)
    if spec_table is None:
        fail("a named sharding without a partition spec")
    parts = []
    for one in spec_table.tables(0):
        axes = one.strings(0)
        parts.append(None if not axes else axes[0] if len(axes) == 1 else tuple(axes))
    try:
        spec = PartitionSpec(*parts, reduced=frozenset(spec_table.strings(1)),
                             unreduced=frozenset(spec_table.strings(2)))
        return NamedSharding(mesh, spec, memory_kind=n.string(2))
    except (ValueError, TypeError) as e:
        fail(f"a bad named sharding: {e}")


def _read_sharding(s, meshes):
    if s.has(1):
        raise ValueError("the artifact records shardings as HloSharding protos (JAX before "
                         "January 2026), which laminax does not read; export it again.")
    table = s.table(2)
    return None if table is None else _read_named(table, meshes)


def _pick(unique, i, fail):
    if i >= len(unique):
        fail(f"aval index {i} is out of range ({len(unique)} avals)")
    return unique[i]


def _read_aval(a, scope) -> ShapedArray:
    fail = a.r.fail
    if a.scalar(0, "i8") != 0:
        fail("an abstract value that is not a ShapedArray")
    kind = a.scalar(2, "i8")
    if kind not in _DTYPES:
        fail(f"unknown dtype kind {kind}")
    shape = []
    for d in a.strings(1):
        if d.isdigit() and len(d) <= 18:
            shape.append(int(d))
            continue
        if len(d) > 1000:
            fail(f"a symbolic dimension of {len(d)} characters")
        # a symbolic dimension: parsed in the artifact's one scope (JAX stores no constraints)
        try:
            (dim,) = parse_shape(d, scope)
        except (ValueError, TypeError, ArithmeticError) as err:
            fail(f"the symbolic dimension {d!r} does not parse ({err})")
        shape.append(dim)
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


class _EffectNotDeserializable(NotImplementedError, ValueError):
    """JAX's NotImplementedError for an effect this process cannot rebuild; a ValueError
    too, as every other refusal of damaged or foreign bytes is."""


def _read_effect(e, fail):
    name = e.string(0)
    for effect_type in lowerable_effects._types:
        if str(effect_type) == name:
            try:
                return effect_type()
            except TypeError:
                raise _EffectNotDeserializable(
                    f"deserializing effect {name} that does not have a nullary class "
                    "constructor") from None
    raise _EffectNotDeserializable(
        f"cannot deserialize effect type {name}: no effect type of this name is registered "
        "as lowerable in this process")


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


install_method("serialize", serialize)

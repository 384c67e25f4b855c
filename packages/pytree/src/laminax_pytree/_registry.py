"""laminax's pytree registries and the functions that add node types to them.

laminax owns its registries (jaxlib's `default_registry()` belongs to JAX): `default_registry`
is the one every `tree_*` function uses; `none_leaf_registry` is the same registry with `None` a
leaf, for specifications such as vmap's `in_axes` where `None` means "not mapped". Every
registration goes to both, so they always agree on user types.
"""

from __future__ import annotations

import collections
import dataclasses
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

from jaxlib._jax import pytree as _jaxlib_pytree

from laminax_pytree._keys import DictKey

__all__ = [
    "default_registry",
    "none_leaf_registry",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
]

T = TypeVar("T")
Typ = TypeVar("Typ", bound=type)


def _make_registry(name: str, *, none_is_leaf: bool) -> _jaxlib_pytree.PyTreeRegistry:
    registry = _jaxlib_pytree.PyTreeRegistry(enable_none=not none_is_leaf)
    # A PyTreeDef pickles its registry by reference: jaxlib's `__reduce__` returns the
    # registry's `__name__`, and pickle imports it from `__module__`.
    registry.__module__ = __name__
    registry.__name__ = name
    return registry


default_registry = _make_registry("default_registry", none_is_leaf=False)
none_leaf_registry = _make_registry("none_leaf_registry", none_is_leaf=True)
_REGISTRIES = (default_registry, none_leaf_registry)


def _register_everywhere(register: Callable[[Any], Any], nodetype: type, caller: str) -> None:
    try:
        register(default_registry)
    except ValueError as err:
        if "Duplicate" not in str(err):
            raise
        raise ValueError(
            f"{caller}: {nodetype} is already registered as a pytree node. Register each "
            "type once; a second registration usually means a decorator applied twice or a "
            "module imported under two names."
        ) from err
    register(none_leaf_registry)


def register_pytree_node(
    nodetype: type[T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], T],
    flatten_with_keys_func: Callable[[T], tuple[Iterable[tuple[Any, Any]], Hashable]] | None = None,
) -> None:
    """Makes `nodetype` a pytree node: its instances are flattened into children.

    Args:
      nodetype: the class to register (subclasses are not included).
      flatten_func: `obj -> (children, aux_data)`; the children are flattened further, the
        hashable `aux_data` is stored in the treedef.
      unflatten_func: `(aux_data, children) -> obj`, the inverse of `flatten_func`.
      flatten_with_keys_func: optional `obj -> ((key, child) pairs, aux_data)` giving key
        paths to the children; without it children get `FlattenedIndexKey`s.

    Raises:
      ValueError: `nodetype` is already registered.

    Example:
      >>> from laminax_pytree import register_pytree_node, tree_leaves
      >>> class Pair:
      ...     def __init__(self, a, b):
      ...         self.a, self.b = a, b
      >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, ab: Pair(*ab))
      >>> tree_leaves([Pair(1, 2), 3])
      [1, 2, 3]
    """

    def register(registry):
        registry.register_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)

    _register_everywhere(register, nodetype, "register_pytree_node")


def register_pytree_node_class(cls: Typ) -> Typ:
    """Class decorator: registers `cls` through its `tree_flatten`/`tree_unflatten` methods.

    `cls.tree_flatten(self)` returns `(children, aux_data)`, and the classmethod
    `cls.tree_unflatten(aux_data, children)` rebuilds an instance.

    Args:
      cls: the class to register.

    Returns:
      `cls` itself, so this works as a decorator.

    Example:
      >>> from laminax_pytree import register_pytree_node_class, tree_structure
      >>> @register_pytree_node_class
      ... class Box:
      ...     def __init__(self, x):
      ...         self.x = x
      ...     def tree_flatten(self):
      ...         return (self.x,), None
      ...     @classmethod
      ...     def tree_unflatten(cls, aux_data, children):
      ...         return cls(*children)
      >>> tree_structure(Box(1))
      PyTreeDef(CustomNode(Box[None], [*]))
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(
    nodetype: type[T],
    flatten_with_keys: Callable[[T], tuple[Iterable[tuple[Any, Any]], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
    """Makes `nodetype` a pytree node whose children have key paths.

    Args:
      nodetype: the class to register.
      flatten_with_keys: `obj -> ((key, child) pairs, aux_data)`; the keys appear in key
        paths (`tree_flatten_with_path`, `keystr`, error messages).
      unflatten_func: `(aux_data, children) -> obj`.
      flatten_func: optional faster `obj -> (children, aux_data)` for flattening without
        keys; it must give the same children in the same order and the same aux data.

    Raises:
      ValueError: `nodetype` is already registered.

    Example:
      >>> from laminax_pytree import GetAttrKey, keystr, register_pytree_with_keys
      >>> from laminax_pytree import tree_leaves_with_path
      >>> class Point:
      ...     def __init__(self, x, y):
      ...         self.x, self.y = x, y
      >>> register_pytree_with_keys(
      ...     Point,
      ...     lambda p: (((GetAttrKey("x"), p.x), (GetAttrKey("y"), p.y)), None),
      ...     lambda _, xy: Point(*xy))
      >>> [keystr(path) for path, _ in tree_leaves_with_path(Point(1, 2))]
      ['.x', '.y']
    """
    if flatten_func is None:

        def flatten_func(obj):
            key_children, aux_data = flatten_with_keys(obj)
            return [child for _, child in key_children], aux_data

    def register(registry):
        registry.register_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)

    _register_everywhere(register, nodetype, "register_pytree_with_keys")


def register_pytree_with_keys_class(cls: Typ) -> Typ:
    """Class decorator: registers `cls` through `tree_flatten_with_keys`/`tree_unflatten`.

    `cls.tree_flatten_with_keys(self)` returns `((key, child) pairs, aux_data)`; the
    classmethod `cls.tree_unflatten(aux_data, children)` rebuilds an instance; an optional
    `tree_flatten` method is used for flattening without keys.

    Args:
      cls: the class to register.

    Returns:
      `cls` itself, so this works as a decorator.

    Example:
      >>> from laminax_pytree import GetAttrKey, register_pytree_with_keys_class
      >>> from laminax_pytree import tree_flatten_with_path
      >>> @register_pytree_with_keys_class
      ... class Named:
      ...     def __init__(self, w):
      ...         self.w = w
      ...     def tree_flatten_with_keys(self):
      ...         return ((GetAttrKey("w"), self.w),), None
      ...     @classmethod
      ...     def tree_unflatten(cls, aux_data, children):
      ...         return cls(*children)
      >>> tree_flatten_with_path(Named(5))[0]
      [((GetAttrKey(name='w'),), 5)]
    """
    flatten_func = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(
        cls, operator.methodcaller("tree_flatten_with_keys"), cls.tree_unflatten, flatten_func
    )
    return cls


def _dataclass_fields(nodetype: type, data_fields, meta_fields) -> tuple[list[str], list[str]]:
    if (data_fields is None) != (meta_fields is None):
        raise TypeError(
            "register_dataclass: pass both data_fields and meta_fields, or neither (then the "
            f"fields come from the dataclass). Got data_fields={data_fields!r}, "
            f"meta_fields={meta_fields!r}."
        )
    if data_fields is not None:
        return list(data_fields), list(meta_fields)
    if not dataclasses.is_dataclass(nodetype):
        raise TypeError(
            f"register_dataclass: {nodetype} is not a dataclass, so data_fields and meta_fields "
            "are required. Pass them, or decorate the class with @dataclasses.dataclass first."
        )
    fields = dataclasses.fields(nodetype)
    data = [f.name for f in fields if not f.metadata.get("static", False)]
    meta = [f.name for f in fields if f.metadata.get("static", False)]
    return data, meta


def _check_dataclass_fields(nodetype: type, data: list[str], meta: list[str], drop_fields):
    if overlap := set(data) & set(meta):
        raise ValueError(
            f"register_dataclass: fields {sorted(overlap)} are listed both as data_fields and "
            "as meta_fields; each field is either data (a leaf) or metadata (static)."
        )
    if not dataclasses.is_dataclass(nodetype):
        return
    init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
    listed = set(data) | set(meta)
    if listed == init_fields:
        return
    msg = (
        f"register_dataclass: data_fields and meta_fields of {nodetype.__name__} must name "
        "exactly its dataclass fields with init=True."
    )
    if missing := init_fields - listed:
        msg += f" Missing fields: {sorted(missing)}; add them, or to drop_fields to leave them out."
    if unexpected := listed - init_fields:
        msg += f" Unexpected fields: {sorted(unexpected)}."
    raise ValueError(msg)


def register_dataclass(
    nodetype: Typ,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> Typ:
    """Registers a dataclass-like type: data fields are children, meta fields are static.

    Uses jaxlib's built-in dataclass node (flattening runs in C++). The type is rebuilt
    with `nodetype(**fields)`.

    Args:
      nodetype: the class; when it is a dataclass, `data_fields` and `meta_fields` may be
        omitted: fields are data unless declared with `field(metadata={"static": True})`
        (see `laminax_pytree.tree.static`).
      data_fields: names of the attributes that are pytree children.
      meta_fields: names of the hashable attributes stored in the treedef.
      drop_fields: dataclass fields to leave out of the pytree.

    Returns:
      `nodetype` itself, so this works as a decorator.

    Raises:
      TypeError: only one of `data_fields`/`meta_fields` given, or neither for a
        non-dataclass.
      ValueError: the fields overlap or do not match the dataclass's init fields, or the
        type is already registered.

    Example:
      >>> import dataclasses
      >>> from laminax_pytree import register_dataclass, tree_flatten
      >>> @register_dataclass
      ... @dataclasses.dataclass
      ... class Layer:
      ...     w: float
      ...     name: str = dataclasses.field(default="dense", metadata={"static": True})
      >>> tree_flatten(Layer(w=0.5))
      ([0.5], PyTreeDef(CustomNode(Layer[('dense',)], [*])))
    """
    data, meta = _dataclass_fields(nodetype, data_fields, meta_fields)
    _check_dataclass_fields(nodetype, data, meta, drop_fields)

    def register(registry):
        registry.register_dataclass_node(nodetype, data, meta)

    _register_everywhere(register, nodetype, "register_dataclass")
    return nodetype


def _flatten_static(obj):
    return (), obj


def _unflatten_static(obj, _children):
    return obj


def register_static(cls: Typ) -> Typ:
    """Registers `cls` as a pytree node with no children: instances are static metadata.

    Instances live in the treedef (so they must be hashable) and never become leaves.

    Args:
      cls: a hashable type.

    Returns:
      `cls` itself, so this works as a decorator.

    Example:
      >>> from laminax_pytree import register_static, tree_flatten
      >>> @register_static
      ... class Mode(str):
      ...     pass
      >>> tree_flatten([1, Mode("train")])
      ([1], PyTreeDef([*, CustomNode(Mode[train], [])]))
    """
    register_pytree_with_keys(cls, _flatten_static, _unflatten_static)
    return cls


# OrderedDict keeps insertion order (in its aux data too); defaultdict flattens in sorted key
# order like dict and carries its default_factory.
def _flatten_ordered_dict_with_keys(d):
    return tuple((DictKey(k), v) for k, v in d.items()), tuple(d.keys())


def _unflatten_ordered_dict(keys, values):
    return collections.OrderedDict(zip(keys, values, strict=True))


def _flatten_defaultdict_with_keys(d):
    keys = tuple(sorted(d))
    return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


def _unflatten_defaultdict(aux_data, values):
    default_factory, keys = aux_data
    return collections.defaultdict(default_factory, zip(keys, values, strict=True))


register_pytree_with_keys(
    collections.OrderedDict, _flatten_ordered_dict_with_keys, _unflatten_ordered_dict
)
register_pytree_with_keys(
    collections.defaultdict, _flatten_defaultdict_with_keys, _unflatten_defaultdict
)

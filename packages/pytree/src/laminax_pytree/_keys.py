"""Key paths: the keys that lead from a tree's root to one of its leaves.

The key classes are jaxlib's (so C++ flattening produces them directly): `SequenceKey(idx)`
for lists and tuples, `DictKey(key)` for dicts, `GetAttrKey(name)` for namedtuples and
dataclasses, `FlattenedIndexKey(key)` for nodes registered without keys.
"""

from __future__ import annotations

from typing import Any, TypeVar

from jaxlib._jax import pytree as _jaxlib_pytree

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "SequenceKey",
    "keystr",
]

SequenceKey = _jaxlib_pytree.SequenceKey
DictKey = _jaxlib_pytree.DictKey
GetAttrKey = _jaxlib_pytree.GetAttrKey
FlattenedIndexKey = _jaxlib_pytree.FlattenedIndexKey

# jaxlib 0.10.2's key classes carry no docstrings; give them ours (help() shows these).
_KEY_DOCS = {
    SequenceKey: "Key of a list or tuple child: `SequenceKey(idx)`, printed `[idx]`.",
    DictKey: "Key of a dict child: `DictKey(key)`, printed `[key!r]`.",
    GetAttrKey: "Key of an attribute child (namedtuple, dataclass): `GetAttrKey(name)`, "
    "printed `.name`.",
    FlattenedIndexKey: "Key of the i-th child of a node registered without keys: "
    "`FlattenedIndexKey(key)`, printed `[<flat index key>]`.",
}
for _cls, _doc in _KEY_DOCS.items():
    if not _cls.__doc__:
        _cls.__doc__ = _doc

# Type aliases, as JAX spells them: any object can be a key entry; a path is a tuple of them.
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[KeyEntry, ...]


def _simple_key_str(key: Any) -> str:
    if isinstance(key, SequenceKey):
        return str(key.idx)
    if isinstance(key, DictKey | FlattenedIndexKey):
        return str(key.key)
    if isinstance(key, GetAttrKey):
        return str(key.name)
    return str(key)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Formats a key path as a string, as a user would index into the tree.

    Args:
      keys: a tuple of key entries (jaxlib's key classes, or any object with a `str`).
      simple: write each key bare (`0`, `w`) instead of as an accessor (`[0]`, `['w']`,
        `.w`); shorter, but ambiguous (list index 0 and dict key `0` look the same).
      separator: the string put between keys.

    Returns:
      The joined string.

    Example:
      >>> from laminax_pytree import keystr, tree_leaves_with_path
      >>> params = {"dense": {"w": 1, "b": [2, 3]}}
      >>> [keystr(path) for path, _ in tree_leaves_with_path(params)]
      ["['dense']['b'][0]", "['dense']['b'][1]", "['dense']['w']"]
      >>> [keystr(path, simple=True, separator="/") for path, _ in tree_leaves_with_path(params)]
      ['dense/b/0', 'dense/b/1', 'dense/w']
    """
    to_str = _simple_key_str if simple else str
    return separator.join(map(to_str, keys))

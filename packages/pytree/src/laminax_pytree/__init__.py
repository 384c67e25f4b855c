"""laminax-pytree: pytrees on jaxlib's C++ PyTreeDef, with laminax's own registry.

This namespace is `jax.tree_util`'s; `laminax_pytree.tree` has the short names of `jax.tree`;
`laminax_pytree.internal` is for the laminax layers above.
"""

import os as _os

# This is the first laminax module to load jaxlib. XLA's C++ logging reads its level when the
# library loads, and at the default level it prints INFO lines whenever a client starts.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from laminax_pytree import tree as tree
from laminax_pytree._keys import DictKey as DictKey
from laminax_pytree._keys import FlattenedIndexKey as FlattenedIndexKey
from laminax_pytree._keys import GetAttrKey as GetAttrKey
from laminax_pytree._keys import KeyEntry as KeyEntry
from laminax_pytree._keys import KeyPath as KeyPath
from laminax_pytree._keys import SequenceKey as SequenceKey
from laminax_pytree._keys import keystr as keystr
from laminax_pytree._partial import Partial as Partial
from laminax_pytree._registry import default_registry as default_registry
from laminax_pytree._registry import register_dataclass as register_dataclass
from laminax_pytree._registry import register_pytree_node as register_pytree_node
from laminax_pytree._registry import register_pytree_node_class as register_pytree_node_class
from laminax_pytree._registry import register_pytree_with_keys as register_pytree_with_keys
from laminax_pytree._registry import (
    register_pytree_with_keys_class as register_pytree_with_keys_class,
)
from laminax_pytree._registry import register_static as register_static
from laminax_pytree._tree_util import PyTreeDef as PyTreeDef
from laminax_pytree._tree_util import all_leaves as all_leaves
from laminax_pytree._tree_util import flatten_one_level as flatten_one_level
from laminax_pytree._tree_util import flatten_one_level_with_keys as flatten_one_level_with_keys
from laminax_pytree._tree_util import is_tree_node as is_tree_node
from laminax_pytree._tree_util import tree_all as tree_all
from laminax_pytree._tree_util import tree_broadcast as tree_broadcast
from laminax_pytree._tree_util import tree_flatten as tree_flatten
from laminax_pytree._tree_util import tree_flatten_with_path as tree_flatten_with_path
from laminax_pytree._tree_util import tree_leaves as tree_leaves
from laminax_pytree._tree_util import tree_leaves_with_path as tree_leaves_with_path
from laminax_pytree._tree_util import tree_map as tree_map
from laminax_pytree._tree_util import tree_map_with_path as tree_map_with_path
from laminax_pytree._tree_util import tree_reduce as tree_reduce
from laminax_pytree._tree_util import tree_reduce_associative as tree_reduce_associative
from laminax_pytree._tree_util import tree_structure as tree_structure
from laminax_pytree._tree_util import tree_transpose as tree_transpose
from laminax_pytree._tree_util import tree_unflatten as tree_unflatten
from laminax_pytree._tree_util import treedef_children as treedef_children
from laminax_pytree._tree_util import treedef_is_leaf as treedef_is_leaf
from laminax_pytree._tree_util import treedef_tuple as treedef_tuple

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "default_registry",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]

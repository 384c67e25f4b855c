"""laminax: JAX's programming model on a stack of small layered packages.

`import laminax as jax`: each submodule is JAX's namespace of the same name.
"""

from laminax import tree as tree
from laminax import tree_util as tree_util

__all__ = ["tree", "tree_util"]

"""laminax-pytree: pytrees on jaxlib's C++ PyTreeDef."""

"""laminax: JAX's programming model on a stack of small layered packages."""

"""laminax-core: dtypes, abstract values, tracing into jaxprs, and transformations."""

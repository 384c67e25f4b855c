"""laminax-dispatch: single-device execution on XLA."""

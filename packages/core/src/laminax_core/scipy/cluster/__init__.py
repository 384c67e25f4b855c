"""`scipy.cluster` (`laminax_core.scipy.cluster`): vector quantization (`vq`)."""

from laminax_core.scipy.cluster import vq

__all__ = ["vq"]

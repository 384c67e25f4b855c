"""`laminax.scipy.cluster`: vector quantization (`laminax.scipy.cluster.vq`)."""

from laminax.scipy.cluster import vq as vq

__all__ = ["vq"]

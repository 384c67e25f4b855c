"""laminax.distributed: JAX's `jax.distributed`, one program over several processes on
jaxlib's distributed runtime (coordination service, gloo collectives for CPU devices),
implemented by `laminax_pjit.distributed`. Local runs: ``python -m laminax_pjit.launch -n N``.

Not provided: accelerator plugins (GPU) built with the distributed client, and JAX's
preemption sync manager.
"""

from laminax_pjit.distributed import initialize as initialize
from laminax_pjit.distributed import is_initialized as is_initialized
from laminax_pjit.distributed import shutdown as shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]

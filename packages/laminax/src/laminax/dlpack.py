"""`laminax.dlpack`: exchanging arrays with other libraries through DLPack (JAX's module).

Implemented in `laminax_dispatch`; an Array itself is a DLPack producer (`__dlpack__`,
`__dlpack_device__`), so `np.from_dlpack(array)` and `torch.from_dlpack(array)` read it in place.
"""

from laminax_dispatch import from_dlpack, is_supported_dtype

__all__ = ["from_dlpack", "is_supported_dtype"]

"""laminax-dispatch: backends, Arrays, device transfers and compilation on XLA.

`laminax_dispatch.internal` holds what the layers above need (module building, compiling,
executing, runtime tokens); this namespace is the user API the `laminax` facade re-exports.
"""

from laminax_dispatch import _array_methods, _eager
from laminax_dispatch import ffi as ffi
from laminax_dispatch import monitoring as monitoring
from laminax_dispatch import profiler as profiler
from laminax_dispatch import stages as stages
from laminax_dispatch._array import Array as Array
from laminax_dispatch._array import ArrayImpl as ArrayImpl
from laminax_dispatch._array import Shard as Shard
from laminax_dispatch._array import make_array as make_array
from laminax_dispatch._backends import backends as backends
from laminax_dispatch._backends import default_device_option as default_device
from laminax_dispatch._backends import default_backend as default_backend
from laminax_dispatch._backends import device_count as device_count
from laminax_dispatch._backends import devices as devices
from laminax_dispatch._backends import get_backend as get_backend
from laminax_dispatch._backends import live_arrays as live_arrays
from laminax_dispatch._backends import local_device_count as local_device_count
from laminax_dispatch._backends import local_devices as local_devices
from laminax_dispatch._backends import process_count as process_count
from laminax_dispatch._backends import process_index as process_index
from laminax_dispatch._device_put import block_until_ready as block_until_ready
from laminax_dispatch._device_put import device_get as device_get
from laminax_dispatch._device_put_primitive import device_put as device_put
from laminax_dispatch._device_put import from_dlpack as from_dlpack
from laminax_dispatch._device_put import is_supported_dtype as is_supported_dtype
from laminax_dispatch._jit import clear_caches as clear_caches
from laminax_dispatch._compile import log_compiles as log_compiles
from laminax_dispatch._jit import jit as jit
from laminax_dispatch._fwd_and_bwd import fwd_and_bwd as fwd_and_bwd
from laminax_dispatch._jit_primitive import jit_p as jit_p
from laminax_dispatch._lowering import lowering_for as lowering_for
from laminax_dispatch._lowering import register_lowering as register_lowering
from laminax_dispatch._sharded_arrays import make_array_from_callback as make_array_from_callback
from laminax_dispatch._sharded_arrays import (
    make_array_from_single_device_arrays as make_array_from_single_device_arrays,
)
from laminax_dispatch._sharding import GSPMDSharding as GSPMDSharding
from laminax_dispatch._sharding import Sharding as Sharding
from laminax_dispatch._sharding import SingleDeviceSharding as SingleDeviceSharding
from laminax_dispatch._tokens import effects_barrier as effects_barrier
from laminax_dispatch._runtime_info import copy_to_host_async as copy_to_host_async
from laminax_dispatch._runtime_info import host_count as host_count
from laminax_dispatch._runtime_info import host_id as host_id
from laminax_dispatch._runtime_info import host_ids as host_ids
from laminax_dispatch._runtime_info import print_environment_info as print_environment_info
from laminax_dispatch._runtime_info import process_indices as process_indices
from laminax_dispatch._transfer_guard import transfer_guard as transfer_guard
from laminax_dispatch._transfer_guard import thread_guard as thread_guard
from laminax_dispatch._transfer_guard import (
    array_garbage_collection_guard as array_garbage_collection_guard,
)
from laminax_dispatch._transfer_guard import transfer_guard_device_to_device as transfer_guard_device_to_device
from laminax_dispatch._transfer_guard import transfer_guard_device_to_host as transfer_guard_device_to_host
from laminax_dispatch._transfer_guard import transfer_guard_host_to_device as transfer_guard_host_to_device
from laminax_dispatch._compile import no_execution as no_execution
from laminax_dispatch._jit import explain_cache_misses as explain_cache_misses

# Arrays get the operators of core's tracers; primitives applied outside a trace run on XLA.
_array_methods.install_array_methods()
_eager.install()

__all__ = [
    "fwd_and_bwd",
    "log_compiles",
    "default_device",
    "clear_caches",
    "Array",
    "GSPMDSharding",
    "ArrayImpl",
    "Shard",
    "Sharding",
    "SingleDeviceSharding",
    "backends",
    "block_until_ready",
    "effects_barrier",
    "jit",
    "jit_p",
    "lowering_for",
    "register_lowering",
    "stages",
    "monitoring",
    "ffi",
    "profiler",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "from_dlpack",
    "is_supported_dtype",
    "get_backend",
    "live_arrays",
    "local_device_count",
    "local_devices",
    "make_array",
    "make_array_from_callback",
    "make_array_from_single_device_arrays",
    "process_count",
    "process_index",
    "copy_to_host_async",
    "host_count",
    "host_id",
    "host_ids",
    "print_environment_info",
    "process_indices",
    "transfer_guard",
    "thread_guard",
    "array_garbage_collection_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
    "no_execution",
    "explain_cache_misses",
]

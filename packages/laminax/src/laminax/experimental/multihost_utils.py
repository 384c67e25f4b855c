"""laminax.experimental.multihost_utils: data between the processes of a multi-process run
(JAX: `jax.experimental.multihost_utils`), implemented by `laminax_pjit.multihost_utils`.

Not provided: `reached_preemption_sync_point` and `live_devices`.
"""

from laminax_pjit.multihost_utils import assert_equal as assert_equal
from laminax_pjit.multihost_utils import broadcast_one_to_all as broadcast_one_to_all
from laminax_pjit.multihost_utils import global_array_to_host_local_array as global_array_to_host_local_array
from laminax_pjit.multihost_utils import host_local_array_to_global_array as host_local_array_to_global_array
from laminax_pjit.multihost_utils import process_allgather as process_allgather
from laminax_pjit.multihost_utils import sync_global_devices as sync_global_devices

__all__ = [
    "assert_equal",
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "process_allgather",
    "sync_global_devices",
]

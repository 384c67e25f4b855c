"""One program over several processes: jaxlib's distributed runtime (JAX: `jax.distributed`).

Process 0 runs jaxlib's coordination service; every process connects a jaxlib distributed
client to it. The CPU backend is then built with that client, this process's node id, the
process count and gloo collectives over TCP (jaxlib's `make_gloo_tcp_collectives`), so
`devices()` lists every process's devices, `local_devices()` this one's, and collectives in a
compiled program cross processes. The runtime's heartbeats make every process fail when one
dies, instead of waiting for it forever.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import warnings
from collections.abc import Sequence

from jaxlib import _jax
from jaxlib import utils as jaxlib_utils
from laminax_dispatch.internal import backends_are_initialized, set_cpu_client_options

from laminax_core.config import config
from laminax_pjit import _clusters

__all__ = ["global_state", "initialize", "is_initialized", "shutdown", "distributed_client"]

logger = logging.getLogger("laminax_pjit.distributed")


class _State:
    """This process's place in a multi-process run (one per process)."""

    def __init__(self) -> None:
        self.process_id = 0
        self.num_processes = 1
        self.service: _jax.DistributedRuntimeService | None = None
        self.client: _jax.DistributedRuntimeClient | None = None
        self.coordinator_address: str | None = None
        self.local_device_ids: list[int] | None = None
        self.partition_index: int | None = None

    def cpu_client_options(self) -> dict:
        """Keyword arguments for jaxlib's `make_cpu_client` (dispatch reads them)."""
        if self.client is None:
            return {}
        return {
            "distributed_client": self.client,
            "node_id": self.process_id,
            "num_nodes": self.num_processes,
            "collectives": _jax.make_gloo_tcp_collectives(distributed_client=self.client),
        }


global_state = _State()
set_cpu_client_options(global_state.cpu_client_options)


def is_initialized() -> bool:
    """Whether `initialize` has connected this process to a multi-process run."""
    return global_state.client is not None


def distributed_client() -> _jax.DistributedRuntimeClient:
    """This process's jaxlib distributed client (its key-value store and barriers).

    Raises:
      RuntimeError: `initialize` has not been called.
    """
    if global_state.client is None:
        raise RuntimeError(
            "The distributed runtime is not initialized: call laminax.distributed.initialize("
            "coordinator_address, num_processes, process_id) in every process first (or run "
            "the script under `python -m laminax_pjit.launch -n N`)."
        )
    return global_state.client


def _quiet_runtime_logging() -> None:
    """The runtime's C++ INFO lines (gRPC, coordination service) only at
    TF_CPP_MIN_LOG_LEVEL=0, as dispatch does for the clients: they would otherwise flood every
    process's output."""
    try:
        level = int(os.environ.get("TF_CPP_MIN_LOG_LEVEL", "1"))
    except ValueError:
        level = 1
    jaxlib_utils.absl_set_min_log_level(level)


def _wait_for_coordinator(address: str, timeout: float) -> None:
    """Waits until something listens at process 0's address. jaxlib's client aborts the whole
    process when it cannot register in time; checking first turns the common case (process 0
    never started, wrong address) into a Python error."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=1.0):
                return
        except OSError as err:
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"Nothing answered at the coordinator address {address} within {timeout:g} s "
                    f"({err}). Start process 0 (it runs the coordination service) and check that "
                    "every process got the same coordinator_address."
                ) from None
            time.sleep(0.25)


def _check_int(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r} of type {type(value).__name__}.")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}.")


def _resolve(coordinator_address, num_processes, process_id, local_device_ids, method):
    if isinstance(local_device_ids, int):
        local_device_ids = [local_device_ids]
    if local_device_ids is None:
        env_ids = os.environ.get("LAMINAX_LOCAL_DEVICE_IDS") or os.environ.get("JAX_LOCAL_DEVICE_IDS")
        if env_ids:
            local_device_ids = [int(i) for i in env_ids.split(",")]
    given = _clusters.ClusterParams(coordinator_address, num_processes, process_id, local_device_ids)
    if method != "deactivate" and None in given[:3]:
        given = _clusters.detect(given, method)
    coordinator_address, num_processes, process_id, local_device_ids = given
    if coordinator_address is None:
        raise ValueError(
            "coordinator_address must be given (host:port of process 0), or set "
            "LAMINAX_COORDINATOR_ADDRESS / JAX_COORDINATOR_ADDRESS, or run under SLURM or Open MPI."
        )
    if num_processes is None:
        raise ValueError(
            "num_processes must be given, or set LAMINAX_NUM_PROCESSES / JAX_NUM_PROCESSES."
        )
    if process_id is None:
        raise ValueError(
            "process_id (this process's index) must be given, or set LAMINAX_PROCESS_ID / "
            "JAX_PROCESS_ID."
        )
    if not isinstance(coordinator_address, str) or ":" not in coordinator_address:
        raise ValueError(
            f"coordinator_address must be a 'host:port' string, got {coordinator_address!r}."
        )
    _check_int("num_processes", num_processes, 1)
    _check_int("process_id", process_id, 0)
    if process_id >= num_processes:
        raise ValueError(
            f"process_id must be in [0, num_processes); got process_id={process_id}, "
            f"num_processes={num_processes}."
        )
    return coordinator_address, num_processes, process_id, local_device_ids


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids: int | Sequence[int] | None = None,
    cluster_detection_method: str | None = None,
    initialization_timeout: int = 300,
    heartbeat_timeout_seconds: int = 100,
    shutdown_timeout_seconds: int = 300,
    coordinator_bind_address: str | None = None,
    slice_index: int | None = None,
    partition_index: int | None = None,
) -> None:
    """Joins this process to a multi-process run; call it in every process, before anything
    touches a device.

    Process 0 starts the coordination service on `coordinator_address`'s port; every process
    connects to it (waiting up to `initialization_timeout` seconds for all to arrive). Unset
    arguments come from ``LAMINAX_COORDINATOR_ADDRESS`` / ``JAX_COORDINATOR_ADDRESS``,
    ``..._NUM_PROCESSES``, ``..._PROCESS_ID``, then SLURM's or Open MPI's variables
    (`cluster_detection_method`: 'env', 'slurm', 'ompi', or 'deactivate' to use none).

    Args:
      coordinator_address: 'host:port' of process 0's coordination service.
      num_processes: how many processes take part.
      process_id: this process's index, in ``range(num_processes)``.
      local_device_ids: devices this process uses (accelerator plugins; CPU devices are
        always all of this process's).
      initialization_timeout: seconds to wait for every process to connect.
      heartbeat_timeout_seconds: seconds without a heartbeat after which a process is
        declared dead and the others fail.
      shutdown_timeout_seconds: seconds `shutdown` waits for the other processes.
      coordinator_bind_address: where process 0's service listens (default: every
        interface, on the coordinator's port).

    Raises:
      RuntimeError: called twice, or after the backends were initialized.
      ValueError, TypeError: missing or malformed parameters.

    Example (each of two processes, with its own `process_id`)::

      laminax.distributed.initialize("127.0.0.1:12345", num_processes=2, process_id=0)
    """
    if is_initialized():
        raise RuntimeError(
            "distributed.initialize should only be called once; call distributed.shutdown() "
            "first to leave the current run."
        )
    if backends_are_initialized():
        raise RuntimeError(
            "distributed.initialize() must be called before anything initializes laminax's "
            "backends (any computation, devices(), device_put ...): call it first thing."
        )
    if partition_index is None and slice_index is not None:
        warnings.warn("slice_index is deprecated; use partition_index.", DeprecationWarning,
                      stacklevel=2)
        partition_index = slice_index
    for name, value in (("initialization_timeout", initialization_timeout),
                        ("heartbeat_timeout_seconds", heartbeat_timeout_seconds),
                        ("shutdown_timeout_seconds", shutdown_timeout_seconds)):
        _check_int(name, value, 1)
    address, count, index, local_ids = _resolve(
        coordinator_address, num_processes, process_id, local_device_ids, cluster_detection_method
    )
    if local_ids:
        # as JAX: the ids restrict the GPU plugins' devices (set before any backend starts);
        # CPU devices are not restricted
        visible = ",".join(str(i) for i in local_ids)
        logger.info("Distributed run with visible devices: %s", visible)
        for platform in ("cuda", "rocm"):
            config.update(f"jax_{platform}_visible_devices", visible)
    _quiet_runtime_logging()
    bind = coordinator_bind_address or os.environ.get("LAMINAX_COORDINATOR_BIND_ADDRESS") or \
        os.environ.get("JAX_COORDINATOR_BIND_ADDRESS") or "[::]:" + address.rsplit(":", 1)[1]
    service = None
    if index == 0:
        logger.info("Starting the distributed runtime service on %s", bind)
        service = _jax.get_distributed_runtime_service(
            bind, count, heartbeat_timeout=heartbeat_timeout_seconds,
            shutdown_timeout=shutdown_timeout_seconds,
        )
    else:
        _wait_for_coordinator(address, initialization_timeout)
    client = _jax.get_distributed_runtime_client(
        address, index, init_timeout=initialization_timeout,
        heartbeat_timeout=heartbeat_timeout_seconds, shutdown_timeout=shutdown_timeout_seconds,
        use_compression=True,
    )
    logger.info("Connecting to the distributed runtime service on %s", address)
    try:
        client.connect()
    except Exception as err:
        if service is not None:
            service.shutdown()
        raise RuntimeError(
            f"Process {index} of {count} could not join the run coordinated at {address} within "
            f"{initialization_timeout} s: {err}. Check that every process was started with the "
            "same coordinator_address and num_processes, and that process 0 is reachable."
        ) from err
    state = global_state
    state.service, state.client = service, client
    state.coordinator_address, state.num_processes, state.process_id = address, count, index
    state.local_device_ids, state.partition_index = local_ids, partition_index


def shutdown() -> None:
    """Leaves the run: disconnects this process's client (waiting for the others, up to the
    shutdown timeout) and, in process 0, stops the service. Does nothing when not initialized.
    The backends built for the run stay as they were."""
    state = global_state
    if state.client is not None:
        state.client.shutdown()
        state.client = None
    if state.service is not None:
        state.service.shutdown()
        state.service = None
    state.process_id, state.num_processes = 0, 1
    state.coordinator_address = None

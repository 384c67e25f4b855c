"""Where a multi-process run's coordinator, process count and process id come from when
`distributed.initialize` is not told: laminax's / JAX's environment variables, then the
variables SLURM and Open MPI set for each task (the same variables JAX 0.10.2 reads)."""

from __future__ import annotations

import os
import re
from typing import NamedTuple

__all__ = ["ClusterParams", "detect", "DETECTION_METHODS"]


class ClusterParams(NamedTuple):
    coordinator_address: str | None
    num_processes: int | None
    process_id: int | None
    local_device_ids: list[int] | None


def _env(name: str) -> str | None:
    """`LAMINAX_<name>`, else `JAX_<name>` (laminax's spelling wins when both are set)."""
    for prefix in ("LAMINAX_", "JAX_"):
        value = os.environ.get(prefix + name)
        if value:
            return value
    return None


def _int_env(name: str) -> int | None:
    value = _env(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(
            f"The environment variable LAMINAX_{name} / JAX_{name} must be an integer, got "
            f"{value!r}."
        ) from None


def _from_laminax_env() -> ClusterParams | None:
    address, count, index = _env("COORDINATOR_ADDRESS"), _int_env("NUM_PROCESSES"), _int_env("PROCESS_ID")
    if address is None and count is None and index is None:
        return None
    return ClusterParams(address, count, index, None)


def _port_from_job_id(job_id: int) -> str:
    # A port every task of one job computes alike, in the range 61440..65535 (JAX's choice).
    return str(job_id % 2**12 + (65535 - 2**12 + 1))


def _slurm_first_host(node_list: str) -> str:
    """The first host of a SLURM node list: 'node001', 'node001,host2', 'node[001-015],h2'."""
    cut = next((i for i, ch in enumerate(node_list) if ch in ",["), len(node_list))
    if cut == len(node_list) or node_list[cut] == ",":
        return node_list[:cut]
    prefix, rest = node_list[:cut], node_list[cut + 1:]
    end = next((i for i, ch in enumerate(rest) if ch in ",-]"), len(rest))
    return prefix + rest[:end]


_SLURM_VARS = ("SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID")


def _from_slurm(port: str | None) -> ClusterParams | None:
    if not all(v in os.environ for v in _SLURM_VARS):
        return None
    env = os.environ
    port = port or _port_from_job_id(int(env["SLURM_JOB_ID"]))
    host = _slurm_first_host(env["SLURM_STEP_NODELIST"])
    # one device per process by default, as JAX does under a cluster manager (the task's
    # local rank); it restricts accelerator plugins only
    return ClusterParams(f"{host}:{port}", int(env["SLURM_NTASKS"]), int(env["SLURM_PROCID"]),
                         [int(env["SLURM_LOCALID"])])


def _from_open_mpi(port: str | None) -> ClusterParams | None:
    env = os.environ
    uri = env.get("OMPI_MCA_orte_hnp_uri")
    if uri is None:
        return None
    if port is None:
        port = _port_from_job_id(int(uri.split(".", 1)[0]) // 2**12)
    match = re.search(r"tcp://(.+?)[,:]|tcp6://\[(.+?)[,\]]", uri)
    if match is None:
        raise RuntimeError(
            f"Could not read the launcher's IP address from OMPI_MCA_orte_hnp_uri={uri!r}; pass "
            "coordinator_address to distributed.initialize."
        )
    host = next(g for g in match.groups() if g is not None)
    local = env.get("OMPI_COMM_WORLD_LOCAL_RANK")
    return ClusterParams(
        f"{host}:{port}", int(env["OMPI_COMM_WORLD_SIZE"]), int(env["OMPI_COMM_WORLD_RANK"]),
        None if local is None else [int(local)],
    )


DETECTION_METHODS = {"env": _from_laminax_env, "slurm": _from_slurm, "ompi": _from_open_mpi}


def detect(given: ClusterParams, method: str | None) -> ClusterParams:
    """Fills the parameters `given` leaves None, from each environment that describes a run in
    turn (laminax's / JAX's variables, SLURM, Open MPI), or only from `method`'s ('env',
    'slurm', 'ompi'); explicit values always win."""
    if method is not None and method not in DETECTION_METHODS:
        raise ValueError(
            f"cluster_detection_method must be one of {sorted(DETECTION_METHODS)}, 'deactivate' "
            f"or None, got {method!r}."
        )
    port = _env("COORDINATOR_PORT")
    params = given
    for name in [method] if method else list(DETECTION_METHODS):
        if None not in params[:3]:
            break
        finder = DETECTION_METHODS[name]
        found = finder() if name == "env" else finder(port)
        if found is not None:
            params = ClusterParams(*(g if g is not None else f for g, f in zip(params, found)))
    return params

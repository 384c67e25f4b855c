"""Cluster auto-detection against real JAX 0.10.2: the same SLURM and Open MPI environments
give the same coordinator address, process count, process id and local device ids as
`jax._src.clusters.ClusterEnv.auto_detect_unset_distributed_params`."""

from __future__ import annotations

import os

import pytest
from jaxref import requires_jax, run_jax
from laminax_pjit import _clusters

_SLURM = [
    {"SLURM_JOB_ID": "123456", "SLURM_STEP_NODELIST": nodes, "SLURM_NTASKS": "8",
     "SLURM_PROCID": "5", "SLURM_LOCALID": "1"}
    # not "gpu[3]": JAX 0.10.2 reads its first host as "gpu3]" (it stops only at ',' or
    # '-'); laminax reads "gpu3" (packages/pjit/tests/test_distributed.py)
    for nodes in ("node001", "node001,host2", "node[001-015],host2", "node[007,009-015]",
                  "a-b[10-12]")
]
_OMPI = [
    {"OMPI_MCA_orte_hnp_uri": uri, "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "2",
     "OMPI_COMM_WORLD_LOCAL_RANK": "0"}
    for uri in ("1531576320.0;tcp://10.1.2.3,172.17.0.1:52181",
                "4096.0;tcp://192.168.0.7:1000", "99999.1;tcp6://[fe80::1]:4000")
]
CASES = _SLURM + _OMPI + [dict(_SLURM[2], JAX_COORDINATOR_PORT="4321")]

_SNIPPET = """
import os
from jax._src import clusters
result = []
for case in cases:
    saved = dict(os.environ)
    try:
        os.environ.update(case)
        found = clusters.ClusterEnv.auto_detect_unset_distributed_params(
            None, None, None, None, None, None)
        result.append([found[0], found[1], found[2], None if found[3] is None else list(found[3])])
    finally:
        os.environ.clear()
        os.environ.update(saved)
"""


@pytest.fixture(scope="module")
def jax_answers():
    return run_jax(_SNIPPET, cases=CASES, fresh=True)


@requires_jax
@pytest.mark.parametrize("index", range(len(CASES)))
def test_detection_matches_jax(monkeypatch, jax_answers, index):
    for name in list(os.environ):
        if name.startswith(("SLURM_", "OMPI_", "JAX_", "LAMINAX_COORDINATOR", "LAMINAX_NUM_PROC",
                            "LAMINAX_PROCESS_ID")):
            if name not in ("JAX_NUM_CPU_DEVICES", "JAX_PLATFORMS"):
                monkeypatch.delenv(name)
    for name, value in CASES[index].items():
        monkeypatch.setenv(name, value)
    found = _clusters.detect(_clusters.ClusterParams(None, None, None, None), None)
    assert list(found) == jax_answers[index]


_LOCAL_IDS = """
import socket
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
jax.distributed.initialize(f"127.0.0.1:{port}", 1, 0, local_device_ids=ids,
                           initialization_timeout=30)
from jax._src import xla_bridge
result = [xla_bridge.CUDA_VISIBLE_DEVICES.value, xla_bridge._ROCM_VISIBLE_DEVICES.value,
          len(jax.local_devices())]
jax.distributed.shutdown()
"""


@requires_jax
def test_local_device_ids_set_what_jax_sets():
    """`local_device_ids` sets the GPU plugins' visible devices and leaves CPU devices alone,
    in JAX and in laminax (each in a fresh interpreter: initialize changes global state)."""
    import subprocess
    import sys
    import textwrap

    expected = run_jax(_LOCAL_IDS, ids=[2, 0], devices=2, fresh=True)
    code = textwrap.dedent("""
        import os, socket, sys
        from laminax_core.config import config
        import laminax_dispatch as ld
        from laminax_pjit import distributed
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        distributed.initialize(f"127.0.0.1:{port}", 1, 0, local_device_ids=[2, 0],
                               initialization_timeout=30)
        print([config.jax_cuda_visible_devices, config.jax_rocm_visible_devices,
               len(ld.local_devices())])
        distributed.shutdown()
    """)
    env = dict(os.environ, LAMINAX_NUM_CPU_DEVICES="2", PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(expected)

"""`distributed.initialize` / `shutdown` in one process: argument checks, the errors JAX gives
(second call, call after the backends started, client before initialize), cluster detection
from the environment, and a one-process run in a fresh interpreter (the CPU backend built
with the distributed client and gloo collectives)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st
from laminax_pjit import _clusters, distributed
from laminax_pjit.launch import free_port

_CLUSTER_VARS = [
    "LAMINAX_COORDINATOR_ADDRESS", "JAX_COORDINATOR_ADDRESS", "LAMINAX_NUM_PROCESSES",
    "JAX_NUM_PROCESSES", "LAMINAX_PROCESS_ID", "JAX_PROCESS_ID", "LAMINAX_COORDINATOR_PORT",
    "JAX_COORDINATOR_PORT", "SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_NTASKS",
    "SLURM_PROCID", "SLURM_LOCALID", "OMPI_MCA_orte_hnp_uri", "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "LAMINAX_LOCAL_DEVICE_IDS",
    "JAX_LOCAL_DEVICE_IDS",
]


@pytest.fixture
def clean_env(monkeypatch):
    for name in _CLUSTER_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_client_before_initialize_says_what_to_call():
    assert not distributed.is_initialized()
    with pytest.raises(RuntimeError, match=r"distributed\.initialize\("):
        distributed.distributed_client()


def test_initialize_after_the_backends_started_raises(clean_env):
    import laminax_dispatch as ld

    ld.devices()  # the backends are running in this test process
    with pytest.raises(RuntimeError, match="must be called before"):
        distributed.initialize("127.0.0.1:1234", 2, 0)
    assert not distributed.is_initialized()


def test_shutdown_without_initialize_does_nothing():
    distributed.shutdown()
    assert not distributed.is_initialized()


@given(st.one_of(st.text(max_size=3), st.floats(allow_nan=False), st.just(True), st.none().map(lambda _: [1])))
def test_non_int_process_id_is_a_type_error(value):
    with pytest.raises(TypeError, match="process_id must be an int"):
        distributed._resolve("127.0.0.1:1", 2, value, None, "deactivate")


@given(st.integers(-50, 50), st.integers(-5, 20))
def test_process_id_outside_the_range_is_a_value_error(process_id, count):
    if count >= 1 and 0 <= process_id < count:
        assert distributed._resolve("h:1", count, process_id, None, "deactivate")[2] == process_id
        return
    with pytest.raises(ValueError):
        distributed._resolve("h:1", count, process_id, None, "deactivate")


@pytest.mark.parametrize("missing, word", [(0, "coordinator_address"), (1, "num_processes"),
                                           (2, "process_id")])
def test_missing_parameters_name_what_to_set(clean_env, missing, word):
    args = ["127.0.0.1:1", 2, 0]
    args[missing] = None
    with pytest.raises(ValueError, match=word):
        distributed._resolve(*args, None, None)


@pytest.mark.parametrize("address", ["127.0.0.1", "", 1234, "host-only"])
def test_malformed_coordinator_address(address):
    with pytest.raises(ValueError, match="host:port"):
        distributed._resolve(address, 2, 0, None, "deactivate")


def test_environment_fills_unset_parameters(clean_env):
    clean_env.setenv("JAX_COORDINATOR_ADDRESS", "10.0.0.1:99")
    clean_env.setenv("LAMINAX_COORDINATOR_ADDRESS", "10.0.0.2:77")
    clean_env.setenv("JAX_NUM_PROCESSES", "4")
    clean_env.setenv("LAMINAX_PROCESS_ID", "3")
    clean_env.setenv("JAX_LOCAL_DEVICE_IDS", "0,2")
    assert distributed._resolve(None, None, None, None, None) == ("10.0.0.2:77", 4, 3, [0, 2])
    # explicit arguments win over the environment
    assert distributed._resolve("h:1", 2, 1, 5, None) == ("h:1", 2, 1, [5])
    # 'deactivate' reads no cluster environment
    with pytest.raises(ValueError, match="num_processes"):
        distributed._resolve("h:1", None, 0, None, "deactivate")


def test_bad_environment_integer(clean_env):
    clean_env.setenv("LAMINAX_NUM_PROCESSES", "two")
    with pytest.raises(ValueError, match="LAMINAX_NUM_PROCESSES"):
        distributed._resolve(None, None, None, None, None)


def test_unknown_detection_method(clean_env):
    with pytest.raises(ValueError, match="cluster_detection_method"):
        distributed._resolve(None, None, None, None, "kubernetes-please")


@pytest.mark.parametrize("node_list, host", [
    ("node001", "node001"), ("node001,host2", "node001"), ("node[001-015],host2", "node001"),
    ("node[007,009-015]", "node007"), ("gpu[3]", "gpu3"),
])
def test_slurm_detection(clean_env, node_list, host):
    for name, value in [("SLURM_JOB_ID", "123456"), ("SLURM_STEP_NODELIST", node_list),
                        ("SLURM_NTASKS", "8"), ("SLURM_PROCID", "5"), ("SLURM_LOCALID", "1")]:
        clean_env.setenv(name, value)
    port = 123456 % 2**12 + 65535 - 2**12 + 1
    assert distributed._resolve(None, None, None, None, None) == (f"{host}:{port}", 8, 5, [1])
    clean_env.setenv("JAX_COORDINATOR_PORT", "4000")
    assert distributed._resolve(None, None, None, None, "slurm")[0] == f"{host}:4000"
    # the explicit spelling of one variable still wins
    clean_env.setenv("LAMINAX_PROCESS_ID", "2")
    assert distributed._resolve(None, None, None, None, None)[2] == 2


def test_open_mpi_detection(clean_env):
    clean_env.setenv("OMPI_MCA_orte_hnp_uri", "1531576320.0;tcp://10.1.2.3,172.17.0.1:52181")
    clean_env.setenv("OMPI_COMM_WORLD_SIZE", "4")
    clean_env.setenv("OMPI_COMM_WORLD_RANK", "2")
    clean_env.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0")
    port = (1531576320 // 2**12) % 2**12 + 65535 - 2**12 + 1
    assert _clusters.detect(_clusters.ClusterParams(None, None, None, None), None) == (
        f"10.1.2.3:{port}", 4, 2, [0])
    clean_env.setenv("OMPI_MCA_orte_hnp_uri", "1.0;udp://nowhere")
    with pytest.raises(RuntimeError, match="coordinator_address"):
        _clusters.detect(_clusters.ClusterParams(None, None, None, None), "ompi")


_ONE_PROCESS = textwrap.dedent("""
    import sys
    from laminax_pjit import distributed
    import laminax_dispatch as ld
    from laminax_dispatch.internal import backends_are_initialized
    from laminax_core.config import config
    distributed.initialize(sys.argv[1], 1, 0, local_device_ids=[1], initialization_timeout=30)
    assert not backends_are_initialized()
    # JAX's effect of local_device_ids: GPU plugins' visible devices; CPU ones stay all there
    assert config.jax_cuda_visible_devices == config.jax_rocm_visible_devices == "1"
    assert distributed.is_initialized()
    assert distributed.distributed_client() is distributed.global_state.client
    try:
        distributed.initialize(sys.argv[1], 1, 0)
    except RuntimeError as err:
        assert "only be called once" in str(err), err
    else:
        raise AssertionError("a second initialize must raise")
    devices = ld.devices()
    assert ld.process_count() == 1 and ld.process_index() == 0
    assert ld.local_devices() == devices and len(devices) == 2, devices
    x = ld.jit(lambda a: a * 2)(ld.device_put(3.0))
    assert float(x) == 6.0
    distributed.shutdown()
    assert not distributed.is_initialized()
    print("ok")
""")


def test_one_process_run_in_a_fresh_interpreter():
    env = dict(os.environ, LAMINAX_NUM_CPU_DEVICES="2", PYTHONPATH=os.pathsep.join(sys.path))
    address = f"127.0.0.1:{free_port()}"
    done = subprocess.run([sys.executable, "-c", _ONE_PROCESS, address], env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("ok")


def test_nobody_at_the_coordinator_fails_within_the_initialization_timeout():
    """Process 1 of 2 with no process 0 anywhere: a clear error once the timeout passes."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    code = textwrap.dedent("""
        import sys
        from laminax_pjit import distributed
        try:
            distributed.initialize(sys.argv[1], 2, 1, initialization_timeout=3)
        except RuntimeError as err:
            print("error:", err)
    """)
    done = subprocess.run([sys.executable, "-c", code, f"127.0.0.1:{free_port()}"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert "error: Nothing answered at the coordinator address" in done.stdout, done.stdout + done.stderr

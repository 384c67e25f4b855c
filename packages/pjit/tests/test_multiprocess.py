"""Multi-process runs on 127.0.0.1 under the distributed runtime, started by the launcher:
2 and 4 processes run the same programs (`multiprocess_programs.py`) as this process does
with 8 devices, which is the oracle. Every run has a free port, a bounded timeout, and every
process is reaped (the launcher kills and waits for them all)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import laminax_dispatch as ld
import numpy as np
import pytest
from laminax_pjit.launch import launch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # the programs module sits beside this file (not a package)
import multiprocess_programs  # noqa: E402
WORKER = str(HERE / "multiprocess_worker.py")
RUN_TIMEOUT = 420  # seconds for a whole run: generous (a loaded 2-core machine), but bounded

pytestmark = pytest.mark.skipif(len(ld.devices()) != 8, reason="needs the 8-device oracle")


def _run(tmp_path, num_processes, names, timeout=RUN_TIMEOUT, grace=60, **extra_env):
    out = io.StringIO()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), **extra_env)
    code = launch([WORKER, str(tmp_path), *names], num_processes, 8 // num_processes,
                  timeout=timeout, grace=grace, out=out, env=env)
    return code, out.getvalue()


def _load(tmp_path, name, process):
    with np.load(tmp_path / f"{name}_{process}.npz") as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="module")
def oracle():
    return {name: multiprocess_programs.PROGRAMS[name]()
            for name in ("collectives", "training", "local_data", "pmap")}


@pytest.mark.parametrize("num_processes", [2, 4])
def test_programs_match_one_process(tmp_path, oracle, num_processes):
    names = ["collectives", "training", "local_data", "pmap", "multihost", "non_addressable",
             "layout"]
    code, output = _run(tmp_path, num_processes, names)
    assert code == 0, output
    for line in output.splitlines():
        assert line.startswith(tuple(f"[{i}] " for i in range(num_processes))), line
    for process in range(num_processes):
        for name, expected in oracle.items():
            got = _load(tmp_path, name, process)
            assert sorted(got) == sorted(expected), name
            for key, value in expected.items():
                if (name, key) == ("pmap", "local_shape"):  # each process maps its own devices
                    assert tuple(got[key]) == (8 // num_processes, 3)
                    continue
                np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-6,
                                           err_msg=f"{name}/{key} in process {process}")
        multihost = _load(tmp_path, "multihost", process)
        np.testing.assert_array_equal(multihost["broadcast"], np.ones(3, np.float32))
        rows = np.array([[p, 10 * p] for p in range(num_processes)], np.int32)
        np.testing.assert_array_equal(multihost["allgather"], rows)
        np.testing.assert_array_equal(multihost["allgather_tiled"], rows.reshape(-1))
        assert int(multihost["count"]) == num_processes
        per = 8 // num_processes
        assert tuple(multihost["global_shape"]) == (8, 2)
        expected_global = np.concatenate([
            np.arange(per * 2, dtype=np.float32).reshape(per, 2) + 100 * p
            for p in range(num_processes)])
        np.testing.assert_array_equal(multihost["global_value"], expected_global)
        assert bool(multihost["round_trip_equal"])
        seen = _load(tmp_path, "layout", process)
        per = 8 // num_processes
        assert not seen["fully_addressable"] and seen["addressable_devices_are_local"]
        assert int(seen["addressable_count"]) == per and int(seen["global_count"]) == 8
        # a shard on another process's device has no data here
        assert seen["global_shard_has_data"].tolist() == [
            i // per == process for i in range(8)]
        assert seen["device_processes"].tolist() == [i // per for i in range(8)]
        assert seen["local_devices_match"] and seen["mesh_multi_process"]
        # the local mesh: this process's block of the (2, 4) mesh
        assert seen["local_mesh_shape"].tolist() == ([1, 4] if num_processes == 2 else [1, 2])
        message = str(_load(tmp_path, "non_addressable", process)["message"])
        assert "non-addressable" in message and "process_allgather" in message
        closure = str(_load(tmp_path, "non_addressable", process)["closure_message"])
        assert closure.startswith("Closing over jax.Array that spans non-addressable"), closure
        assert "pass such arrays as arguments" in closure and "f32[8]" in closure


def test_dead_process_fails_the_others_within_the_timeout(tmp_path):
    start = time.monotonic()
    code, output = _run(tmp_path, 2, ["--die-after-start"], timeout=RUN_TIMEOUT)
    elapsed = time.monotonic() - start
    assert "first step done" in output
    assert "unexpectedly finished" not in output
    assert code != 0
    assert "process 1 failed (exit status 17)" in output
    # process 0 fails by itself (the runtime reports the dead peer once its heartbeats stop),
    # well before the launcher's deadline and without being killed after the grace period
    assert "process 0 also failed" in output, output
    assert "still running" not in output
    assert "unhealthy" in output or "another task died" in output
    assert elapsed < RUN_TIMEOUT - 5, output


def test_a_process_that_never_arrives_fails_the_others_within_the_timeout(tmp_path):
    start = time.monotonic()
    code, output = _run(tmp_path, 2, ["--never-arrives"], timeout=RUN_TIMEOUT, grace=5,
                        WORKER_INIT_TIMEOUT="5")
    elapsed = time.monotonic() - start
    # process 0 gives up by itself once the initialization timeout passes (jaxlib ends it)
    assert code != 0
    assert "process 0 failed" in output, output
    assert "DEADLINE_EXCEEDED" in output or "Deadline Exceeded" in output, output
    assert elapsed < RUN_TIMEOUT - 5, output

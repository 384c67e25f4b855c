"""Backends: device counts from options, environment and XLA flags; lazy, thread-safe start."""

import os
import subprocess
import sys
import threading

import laminax_dispatch as ld
import pytest
from laminax_core.config import config
from laminax_dispatch import _backends


def _run(code: str, **env: str) -> str:
    """Runs `code` in a fresh interpreter (device counts are process-global) and returns stdout."""
    full_env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LAMINAX_NUM_CPU_DEVICES", "JAX_NUM_CPU_DEVICES", "XLA_FLAGS")
    }
    full_env.update(env)
    done = subprocess.run(
        [sys.executable, "-c", code], env=full_env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


COUNT = "import laminax_dispatch as ld; print(ld.device_count(), ld.local_device_count())"


def test_default_is_one_cpu_device():
    assert _run(COUNT) == "1 1"


def test_laminax_num_cpu_devices_env_sets_the_count():
    assert _run(COUNT, LAMINAX_NUM_CPU_DEVICES="4") == "4 4"


def test_jax_num_cpu_devices_env_sets_the_count():
    assert _run(COUNT, JAX_NUM_CPU_DEVICES="3") == "3 3"


def test_xla_force_host_platform_device_count_flag_is_honoured():
    assert _run(COUNT, XLA_FLAGS="--xla_force_host_platform_device_count=5") == "5 5"


def test_config_update_before_first_use_sets_the_count():
    code = (
        "import laminax_dispatch; from laminax_core.config import config; "
        "config.update('jax_num_cpu_devices', 6); " + COUNT
    )
    assert _run(code) == "6 6"


def test_devices_are_cpu_devices_with_ids_in_order():
    code = "import laminax_dispatch as ld; print([(d.id, d.platform) for d in ld.devices()])"
    assert _run(code, LAMINAX_NUM_CPU_DEVICES="2") == "[(0, 'cpu'), (1, 'cpu')]"


def test_jax_platforms_with_unavailable_platform_raises():
    code = (
        "import laminax_dispatch as ld\ntry:\n  ld.devices()\nexcept RuntimeError as e:\n"
        "  print('RuntimeError', 'could not be initialized' in str(e))"
    )
    assert _run(code, LAMINAX_PLATFORMS="cuda") == "RuntimeError True"


def test_unknown_platform_in_jax_platforms_raises():
    code = (
        "import laminax_dispatch as ld\ntry:\n  ld.devices()\nexcept RuntimeError as e:\n"
        "  print('unknown platform' in str(e))"
    )
    assert _run(code, LAMINAX_PLATFORMS="tpux") == "True"


def test_broken_plugin_path_warns_and_falls_back_to_cpu():
    code = "import laminax_dispatch as ld; print(ld.default_backend(), len(ld.backends()))"
    out = _run(code, PJRT_NAMES_AND_LIBRARY_PATHS="cuda:/nonexistent/plugin.so")
    assert out == "cpu 1"


def test_backends_are_lazy_until_first_use():
    code = (
        "import laminax_dispatch as ld; from laminax_dispatch import _backends as b; "
        "print(b.backends_are_initialized()); ld.devices(); print(b.backends_are_initialized())"
    )
    assert _run(code) == "False\nTrue"


def test_concurrent_first_use_creates_one_client():
    code = (
        "import threading; from laminax_dispatch import _backends as b\n"
        "seen = []\n"
        "ts = [threading.Thread(target=lambda: seen.append(id(b.get_backend('cpu')))) "
        "for _ in range(8)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]; print(len(set(seen)), len(seen))"
    )
    assert _run(code) == "1 8"


def test_changing_device_count_after_start_raises_and_keeps_old_value():
    ld.devices()
    before = config.jax_num_cpu_devices
    with pytest.raises(RuntimeError, match="must be set before laminax's backends"):
        config.update("jax_num_cpu_devices", before + 7)
    assert config.jax_num_cpu_devices == before


def test_setting_the_same_device_count_after_start_is_allowed():
    ld.devices()
    config.update("jax_num_cpu_devices", config.jax_num_cpu_devices)


def test_default_backend_and_process_queries():
    assert ld.default_backend() == "cpu"
    assert ld.process_index() == 0
    assert ld.process_count() == 1
    assert ld.local_devices() == ld.devices()
    assert "cpu" in ld.backends()
    assert ld.get_backend("cpu") is ld.get_backend()


def test_unknown_backend_name_raises_runtime_error():
    with pytest.raises(RuntimeError, match="Unknown backend 'foo'"):
        ld.devices("foo")


def test_gpu_request_without_plugin_names_present_platforms():
    if any(p in ld.backends() for p in ("cuda", "rocm")):
        pytest.skip("a GPU backend is present")
    with pytest.raises(RuntimeError, match="no platforms that are instances of gpu"):
        ld.devices("gpu")


def test_get_backend_accepts_a_client():
    client = ld.get_backend()
    assert _backends.get_backend(client) is client


def test_first_use_from_many_threads_is_safe_in_process():
    results = []
    threads = [threading.Thread(target=lambda: results.append(ld.device_count())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1


def test_runtime_reads_cores_x64_state_before_the_first_array():
    # jaxlib raises "enable_x64_state is not set" unless core wired its config into C++ first.
    code = (
        "import numpy as np, laminax_dispatch as ld; "
        "print(ld.device_put(np.float64(1)).dtype, ld.device_put(1.0).dtype)"
    )
    assert _run(code) == "float32 float32"
    assert _run(code, LAMINAX_ENABLE_X64="1") == "float64 float64"

"""The runtime starts quietly (JAX prints nothing either); TF_CPP_MIN_LOG_LEVEL=0 brings XLA's
INFO lines back. Each case is a fresh interpreter that loads jaxlib before laminax."""

import os
import subprocess
import sys

import pytest

PROGRAM = (
    "import jaxlib._jax\n"  # jaxlib first: its import-time level read cannot help then
    "from laminax_dispatch import device_put\n"
    "print(device_put(1.0))\n"
)


@pytest.mark.parametrize("level, expect_info", [(None, False), ("1", False), ("0", True)])
def test_backend_start_prints_xla_info_lines_only_when_asked(level, expect_info):
    env = dict(os.environ)
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    if level is not None:
        env["TF_CPP_MIN_LOG_LEVEL"] = level
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout.strip() == "1.0"
    assert ("pjrt_client.cc" in done.stderr) == expect_info, done.stderr

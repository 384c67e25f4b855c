"""The README's main job trains to its promised accuracy and writes its plot."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).parent.parent / "examples" / "mlp_digits.py"


def test_mlp_digits_reaches_95_percent_and_saves_the_loss_curve(tmp_path):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    final = [line for line in result.stdout.splitlines() if line.startswith("test accuracy")]
    assert final, result.stdout[-2000:]
    assert float(final[-1].split()[2]) >= 0.95
    assert "epoch  40  loss" in result.stdout
    # the bar is advanced from inside the compiled epochs (id_tap): 40 epochs x 21 batches
    assert "840/840 [" in result.stdout
    assert (tmp_path / "loss_curve.png").stat().st_size > 1000


def _epoch_losses(*flags: str, tmp_path) -> list[float]:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")
    env.pop("LAMINAX_NUM_CPU_DEVICES", None)  # the example sets the device count itself
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--epochs", "3", "--out", str(tmp_path), *flags],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    losses = [float(line.split()[3]) for line in result.stdout.splitlines() if line.startswith("epoch")]
    assert len(losses) == 3, result.stdout[-2000:] + result.stderr[-2000:]
    if flags:
        assert "devices: 8" in result.stdout, result.stdout[-2000:]
    return losses


def test_sharded_modes_train_to_the_one_device_losses(tmp_path):
    one = _epoch_losses(tmp_path=tmp_path)
    data_parallel = _epoch_losses("--devices", "8", tmp_path=tmp_path)
    model_parallel = _epoch_losses("--devices", "8", "--model-parallel", tmp_path=tmp_path)
    np.testing.assert_allclose(data_parallel, one, atol=2e-4)
    np.testing.assert_allclose(model_parallel, one, atol=2e-4)


def test_two_processes_of_four_devices_train_to_the_one_process_losses(tmp_path):
    """The example under the launcher: 2 processes x 4 devices, one mesh over all 8 (gloo
    collectives between the processes), against the same run in one process."""
    import re

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")
    env.pop("LAMINAX_NUM_CPU_DEVICES", None)
    result = subprocess.run(
        [sys.executable, "-m", "laminax_pjit.launch", "-n", "2", "--devices-per-process", "4",
         "--timeout", "540", str(EXAMPLE), "--epochs", "3", "--out", str(tmp_path)],
        capture_output=True, env=env, timeout=600,
    )
    # bytes, not text=True: universal newlines would split the bar's carriage returns off
    # the process prefix
    stdout = result.stdout.decode(errors="replace")
    assert result.returncode == 0, stdout[-3000:] + result.stderr.decode(errors="replace")[-2000:]
    assert "[0] devices: 8 (data-parallel, mesh {'batch': 8}, 2 processes)" in stdout
    by_process: dict[int, dict[int, float]] = {0: {}, 1: {}}
    for line in stdout.split("\n"):  # the bar's carriage returns stay inside a line
        if line.startswith(("[0] ", "[1] ")):
            for match in re.finditer(r"epoch\s+(\d+)\s+loss\s+([0-9.]+)", line):
                by_process[int(line[1])][int(match.group(1))] = float(match.group(2))
    one = _epoch_losses(tmp_path=tmp_path)
    for process in (0, 1):
        losses = [by_process[process].get(epoch) for epoch in (1, 2, 3)]
        assert None not in losses, (process, stdout[-3000:])
        np.testing.assert_allclose(losses, one, atol=2e-4)

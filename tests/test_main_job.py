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

"""The README's main job trains to its promised accuracy and writes its plot."""

import os
import subprocess
import sys
from pathlib import Path

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

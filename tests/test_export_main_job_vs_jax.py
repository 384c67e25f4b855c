"""The main job's `--export`: the trained classifier, saved as a serialized artifact, loads and
runs in real JAX 0.10.2 (and in laminax) with the predictions laminax made."""

import os
import subprocess
import sys
from pathlib import Path

import laminax_export as le
import numpy as np
from jaxref import requires_jax, run_jax

EXAMPLE = Path(__file__).parent.parent / "examples" / "mlp_digits.py"


@requires_jax
def test_exported_classifier_predicts_the_same_in_jax(tmp_path):
    artifact = tmp_path / "classifier.bin"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--epochs", "3", "--out", str(tmp_path),
         "--export", str(artifact)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert "classifier exported to" in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]
    saved = np.load(artifact.with_suffix(".npz"))
    x, logits = saved["x"], saved["logits"]
    got = run_jax("""
exp = jax.export.deserialize(bytearray(blob))
result = dict(logits=np.asarray(exp.call(x)), fun_name=exp.fun_name,
              in_avals=[repr(a) for a in exp.in_avals])
""", blob=artifact.read_bytes(), x=x)
    assert got["in_avals"] == [f"ShapedArray(float32[{x.shape[0]},64])"]
    np.testing.assert_allclose(got["logits"], logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got["logits"].argmax(-1), logits.argmax(-1))
    mine = le.deserialize(artifact.read_bytes()).call(x)
    np.testing.assert_allclose(np.asarray(mine), logits, rtol=1e-6, atol=1e-6)

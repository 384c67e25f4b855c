"""The inspector: `python -m laminax_export show|call`."""

import laminax_core as lc
import laminax_export as le
import numpy as np
import pytest
from laminax_core import numpy as lnp
from laminax_dispatch import jit
from laminax_export.__main__ import main

X = np.array([0.5, -1.0, 2.0], np.float32)
M = np.arange(6, dtype=np.float32).reshape(2, 3)


def g(x, unused, *, m):
    return {"y": m @ lnp.tanh(x), "n": x.sum()}


@pytest.fixture
def artifact(tmp_path):
    spec = lambda a: lc.ShapeDtypeStruct(a.shape, a.dtype)  # noqa: E731
    exp = le.export(jit(g))(spec(X), spec(np.int32(0)), m=spec(M))
    path = tmp_path / "g.bin"
    path.write_bytes(exp.serialize(vjp_order=1))
    return path


def test_show(artifact, capsys):
    assert main(["show", str(artifact)]) == 0
    out = capsys.readouterr().out
    assert "function:            g" in out
    assert "PyTreeDef(((*, *), {'m': *}))" in out
    assert "[1] i32[]  sharding=None  (unused: not passed to the module)" in out
    assert "[0] f32[3]" in out and "[2] f32[2,3]" in out
    assert "kept inputs:         [0, 2]" in out
    assert "vjp orders stored:   1" in out
    assert "calling convention:  10" in out
    assert "func.func" not in out
    assert main(["show", str(artifact), "--mlir"]) == 0
    assert "func.func public @main" in capsys.readouterr().out


def test_call(artifact, tmp_path, capsys):
    inputs = tmp_path / "in.npz"
    np.savez(inputs, X, np.int32(7), M)
    out_path = tmp_path / "out.npz"
    assert main(["call", str(artifact), str(inputs), "--out", str(out_path)]) == 0
    with np.load(out_path) as outs:
        np.testing.assert_allclose(outs["arr_0"], X.sum(), rtol=1e-6)  # leaves: 'n', 'y'
        np.testing.assert_allclose(outs["arr_1"], M @ np.tanh(X), rtol=1e-6)
    assert "[1] float32[2]" in capsys.readouterr().out


def test_errors_exit_2_with_a_message(artifact, tmp_path, capsys):
    inputs = tmp_path / "few.npz"
    np.savez(inputs, X)
    assert main(["call", str(artifact), str(inputs)]) == 2
    assert "no array for input leaf 1" in capsys.readouterr().err
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x01\x02\x03\x04not an artifact at all")
    assert main(["show", str(garbage)]) == 2
    assert "malformed serialized Exported" in capsys.readouterr().err
    assert main(["show", str(tmp_path / "missing.bin")]) == 2

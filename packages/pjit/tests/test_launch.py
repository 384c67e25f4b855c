"""The launcher as a user runs it (`python -m laminax_pjit.launch`), on small scripts that need
no devices: the environment each process gets, prefixed output, the failing process named in a
non-zero exit, the run's time limit, and every process reaped."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest


def _launch(tmp_path, script: str, *options: str, timeout: float = 120):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "laminax_pjit.launch", *options, str(path),
                           "first arg", "--flag"],
                          env=env, capture_output=True, text=True, timeout=timeout)


def test_each_process_gets_its_place_and_prefixed_output(tmp_path):
    done = _launch(tmp_path, """
        import os, sys
        e = os.environ
        print(e["LAMINAX_PROCESS_ID"], e["LAMINAX_NUM_PROCESSES"], e["LAMINAX_NUM_CPU_DEVICES"],
              e["LAMINAX_COORDINATOR_ADDRESS"], sys.argv[1:])
        print("second line")
    """, "-n", "3", "--devices-per-process", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 6
    addresses = set()
    for i in range(3):
        mine = [line for line in lines if line.startswith(f"[{i}] ")]
        assert len(mine) == 2, lines
        index, count, devices, address, args = mine[0][4:].split(" ", 4)
        assert (index, count, devices) == (str(i), "3", "2")
        assert args == "['first arg', '--flag']"
        assert mine[1] == f"[{i}] second line"
        addresses.add(address)
    (address,) = addresses
    host, port = address.rsplit(":", 1)
    assert host == "127.0.0.1" and 1024 <= int(port) < 65536


def test_a_failing_process_fails_the_run_and_is_named(tmp_path):
    done = _launch(tmp_path, """
        import os, sys, time
        if os.environ["LAMINAX_PROCESS_ID"] == "1":
            sys.exit(3)
        time.sleep(300)  # the others would run on: the launcher must stop them
    """, "-n", "3", "--grace", "2")
    assert done.returncode == 3
    assert "process 1 failed (exit status 3)" in done.stdout
    assert "process 0 still running" in done.stdout and "process 2 still running" in done.stdout


def test_the_run_is_bounded_and_every_process_reaped(tmp_path):
    pid_file = tmp_path / "pids"
    start = time.monotonic()
    done = _launch(tmp_path, f"""
        import os, time
        with open({str(pid_file)!r}, "a") as f:
            f.write(f"{{os.getpid()}}\\n")
        time.sleep(300)
    """, "-n", "2", "--timeout", "4")
    assert done.returncode == 124
    assert "timed out after 4 s" in done.stdout
    assert time.monotonic() - start < 60
    pids = [int(p) for p in pid_file.read_text().split()]
    assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.parametrize("options, message", [
    (["-n", "0"], "-n must be at least 1"),
    (["-n", "2", "--devices-per-process", "0"], "--devices-per-process must be at least 1"),
])
def test_bad_options(tmp_path, options, message):
    done = _launch(tmp_path, "print('never')", *options)
    assert done.returncode == 2
    assert message in done.stderr


def test_missing_script(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-m", "laminax_pjit.launch", "-n", "2",
                           str(tmp_path / "nope.py")], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "no such script" in done.stderr


def test_another_interpreter(tmp_path):
    done = _launch(tmp_path, "import sys; print(sys.executable)", "-n", "2", "--python",
                   sys.executable)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(done.stdout.splitlines()) == [f"[0] {sys.executable}", f"[1] {sys.executable}"]
    done = _launch(tmp_path, "print('never')", "-n", "2", "--python", str(tmp_path / "nopython"))
    assert done.returncode == 2 and "no such interpreter" in done.stderr

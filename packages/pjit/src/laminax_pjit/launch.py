"""Runs a script as N processes of one multi-process run on this machine.

    python -m laminax_pjit.launch -n 4 [--devices-per-process 2] [--timeout 600]
                                  [--grace 30] [--python PATH] script.py args...

Each process gets ``LAMINAX_COORDINATOR_ADDRESS`` (127.0.0.1 and a free port),
``LAMINAX_NUM_PROCESSES``, ``LAMINAX_PROCESS_ID`` and, with ``--devices-per-process``,
``LAMINAX_NUM_CPU_DEVICES``, so the script's ``distributed.initialize()`` needs no arguments.
Every line a process prints is echoed prefixed with ``[i]``. When a process fails, the others
get ``--grace`` seconds to fail or finish (the runtime makes them fail when a peer dies) and are
then killed; the launcher exits non-zero naming the first process that failed. ``--timeout``
bounds the whole run: past it every process is killed and the exit status is 124.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = ["free_port", "launch", "main"]

TIMEOUT_EXIT = 124


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _echo(stream, prefix: str, out, lock: threading.Lock) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip("\n")
        with lock:
            out.write(f"{prefix}{line}\n")
            out.flush()
    stream.close()


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def launch(
    command: list[str],
    num_processes: int,
    devices_per_process: int | None = None,
    timeout: float | None = 600.0,
    grace: float = 30.0,
    out=None,
    env: dict[str, str] | None = None,
    python: str | None = None,
) -> int:
    """Starts `command` (argv, without the interpreter) `num_processes` times with the
    coordinator wired, echoes their output prefixed, and returns the run's exit status (0 when
    every process succeeds). Every process is reaped before it returns. `python`: the
    interpreter to run (default: this one)."""
    if num_processes < 1:
        raise ValueError(f"num_processes must be >= 1, got {num_processes}.")
    out = out or sys.stdout
    port = free_port()
    base = dict(os.environ if env is None else env)
    base.update(
        LAMINAX_COORDINATOR_ADDRESS=f"127.0.0.1:{port}",
        LAMINAX_NUM_PROCESSES=str(num_processes),
        PYTHONUNBUFFERED="1",
    )
    if devices_per_process is not None:
        base["LAMINAX_NUM_CPU_DEVICES"] = str(devices_per_process)
    lock = threading.Lock()
    procs: list[subprocess.Popen] = []
    echoes: list[threading.Thread] = []
    try:
        for index in range(num_processes):
            proc_env = dict(base, LAMINAX_PROCESS_ID=str(index))
            proc = subprocess.Popen(
                [python or sys.executable, *command], env=proc_env, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, start_new_session=True,
            )
            procs.append(proc)
            echo = threading.Thread(target=_echo, args=(proc.stdout, f"[{index}] ", out, lock),
                                    daemon=True)
            echo.start()
            echoes.append(echo)
        return _supervise(procs, timeout, grace, out, lock)
    finally:
        for proc in procs:
            _kill(proc)
            proc.wait()
        for echo in echoes:
            echo.join(timeout=5)


def _supervise(procs, timeout, grace, out, lock) -> int:
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    first_failure: tuple[int, int] | None = None
    failure_deadline = None
    while True:
        codes = [p.poll() for p in procs]
        if first_failure is None:
            for index, code in enumerate(codes):
                if code not in (None, 0):
                    first_failure = (index, code)
                    failure_deadline = time.monotonic() + grace
                    break
        if all(c is not None for c in codes):
            break
        now = time.monotonic()
        if deadline is not None and now > deadline:
            running = [i for i, c in enumerate(codes) if c is None]
            with lock:
                out.write(f"laminax_pjit.launch: timed out after {timeout:g} s; killing processes "
                          f"{running}\n")
            return TIMEOUT_EXIT
        if failure_deadline is not None and now > failure_deadline:
            break
        time.sleep(0.05)
    if first_failure is None:
        return 0
    index, code = first_failure
    with lock:
        for other, status in enumerate(p.poll() for p in procs):
            if other == index:
                continue
            if status is None:
                out.write(f"laminax_pjit.launch: process {other} still running {grace:g} s after "
                          "the failure; killed\n")
            elif status != 0:
                out.write(f"laminax_pjit.launch: process {other} also failed ({_status(status)})\n")
        out.write(f"laminax_pjit.launch: process {index} failed ({_status(code)}); the run "
                  "failed\n")
    return code if code > 0 else 1


def _status(code: int) -> str:
    return f"signal {-code}" if code < 0 else f"exit status {code}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m laminax_pjit.launch",
        description="Run a script as N processes of one laminax multi-process run on 127.0.0.1.",
    )
    parser.add_argument("-n", "--num-processes", type=int, required=True)
    parser.add_argument("--devices-per-process", type=int, default=None,
                        help="CPU devices in each process (LAMINAX_NUM_CPU_DEVICES)")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds the whole run may take (default 600; 0: no limit)")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds the others get to exit after a process fails")
    parser.add_argument("--python", default=None,
                        help="interpreter the processes run (default: this one)")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    if ns.num_processes < 1:
        parser.error("-n must be at least 1")
    if ns.devices_per_process is not None and ns.devices_per_process < 1:
        parser.error("--devices-per-process must be at least 1")
    if not os.path.exists(ns.script):
        parser.error(f"no such script: {ns.script}")
    if ns.python is not None and shutil.which(ns.python) is None:
        parser.error(f"--python {ns.python}: no such interpreter")
    return launch([ns.script, *ns.args], ns.num_processes, ns.devices_per_process,
                  timeout=ns.timeout or None, grace=ns.grace, python=ns.python)


if __name__ == "__main__":
    sys.exit(main())

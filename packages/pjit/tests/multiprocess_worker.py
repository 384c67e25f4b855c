"""One process of a multi-process test run (started by `laminax_pjit.launch`): joins the run
from the launcher's environment, runs the named programs and saves each one's results as
``<out>/<program>_<process>.npz``.

    multiprocess_worker.py OUT_DIR PROGRAM [PROGRAM...]
    multiprocess_worker.py OUT_DIR --die-after-start   (process 1 dies mid-run)
    multiprocess_worker.py OUT_DIR --never-arrives     (process 1 never joins)
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from laminax_pjit import distributed  # noqa: E402

if sys.argv[2:] == ["--never-arrives"] and os.environ["LAMINAX_PROCESS_ID"] == "1":
    time.sleep(300)  # never joins: the others must give up after the initialization timeout
    sys.exit(0)

distributed.initialize(initialization_timeout=int(os.environ.get("WORKER_INIT_TIMEOUT", "60")),
                       heartbeat_timeout_seconds=10,
                       shutdown_timeout_seconds=30)

import laminax_dispatch as ld  # noqa: E402
import multiprocess_programs  # noqa: E402

out_dir, names = sys.argv[1], sys.argv[2:]
me = ld.process_index()

if names == ["--die-after-start"]:
    multiprocess_programs.collectives()  # everyone computes together once
    print("first step done", flush=True)
    if me == 1:
        os._exit(17)  # dies without saying goodbye
    time.sleep(1.0)
    for _ in range(1000):
        multiprocess_programs.collectives()  # needs process 1: must fail, not hang
    print("unexpectedly finished", flush=True)
    sys.exit(0)

for name in names:
    results = multiprocess_programs.PROGRAMS[name]()
    np.savez(os.path.join(out_dir, f"{name}_{me}.npz"), **results)
    print(f"{name} done", flush=True)
distributed.shutdown()

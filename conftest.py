"""The whole test run sees 8 virtual CPU devices, as JAX's own test suite does.

Set before any test module starts laminax's backends (the CPU client reads the count once);
single-device code keeps running on `devices()[0]`, the default device. An explicit
``LAMINAX_NUM_CPU_DEVICES`` / ``JAX_NUM_CPU_DEVICES`` in the environment wins.
"""

import os

if not any(v in os.environ for v in ("LAMINAX_NUM_CPU_DEVICES", "JAX_NUM_CPU_DEVICES")):
    os.environ["LAMINAX_NUM_CPU_DEVICES"] = "8"

"""Runs of this package's tests alone see 8 virtual CPU devices too (as the root conftest
sets for the whole suite), before any test starts laminax's backends."""

import os

if not any(v in os.environ for v in ("LAMINAX_NUM_CPU_DEVICES", "JAX_NUM_CPU_DEVICES")):
    os.environ["LAMINAX_NUM_CPU_DEVICES"] = "8"

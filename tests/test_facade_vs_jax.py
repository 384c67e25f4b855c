"""The facade's recorded list of JAX 0.10.2's public names is the live one."""

import json
from pathlib import Path

from jaxref import requires_jax, run_jax

RECORDED = Path(__file__).parent.parent / "packages" / "laminax" / "tests" / "jax_0_10_2_names.json"


@requires_jax
def test_recorded_jax_names_match_live_jax():
    recorded = json.loads(RECORDED.read_text())
    live = run_jax(
        "import importlib\n"
        "result = {m: sorted(n for n in dir(importlib.import_module(m)) if not n.startswith('_'))"
        " for m in modules}",
        modules=sorted(recorded),
        fresh=True,  # other snippets' imports (jax.lax.linalg ...) add names to a shared worker
    )
    assert live == recorded

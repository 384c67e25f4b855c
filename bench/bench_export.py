"""Export: lowering into an artifact, reading one back, and calling it.

- `export_serialize/transformer_grad`: `jax.export.export(jit(step))(*specs).serialize()` of
  the transformer block's gradient step (`_programs.py`), a fresh function each time (issue
  14's target: at most 1.0x JAX).
- `deserialize_first_call/transformer_grad`: `deserialize(blob).call(*args)` of that artifact,
  blocked on: reading, compiling and running it once (target: at most 1.0x).
- `call_in_jit/add_f32[8]` and `jit_original/add_f32[8]`: a jitted function whose body calls a
  deserialized artifact of `x + 1`, and the jitted original, called back to back on a
  float32[8] (target: the first at most 1.1x the second, within each library).

    python bench/run.py bench_export
"""

from __future__ import annotations

import _harness
import _programs
import numpy as np


def _specs(jax, tree):
    return jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), tree)


def slow_cases(jax) -> dict:
    program = _programs.transformer(jax)
    specs = _specs(jax, program.args)
    blob = bytes(jax.export.export(jax.jit(program.make_step()))(*specs).serialize())

    def export_serialize():
        return jax.export.export(jax.jit(program.make_step()))(*specs).serialize()

    def deserialize_first_call():
        out = jax.export.deserialize(bytearray(blob)).call(*program.args)
        jax.block_until_ready(out)

    return {
        f"export_serialize/{program.name}": export_serialize,
        f"deserialize_first_call/{program.name}": deserialize_first_call,
    }


def fast_cases(jax) -> dict:
    x = jax.device_put(np.arange(8, dtype=np.float32))
    original = jax.jit(lambda v: v + 1.0)
    exported = jax.export.export(original)(jax.ShapeDtypeStruct((8,), np.float32))
    imported = jax.export.deserialize(bytearray(exported.serialize()))
    via_artifact = jax.jit(imported.call)
    return {
        "call_in_jit/add_f32[8]": lambda: via_artifact(x),
        "jit_original/add_f32[8]": lambda: original(x),
    }


def main() -> None:
    args = _harness.parse_args(__doc__)
    jax = _harness.import_jax(args.impl)
    _harness.run_all(fast_cases(jax), args)
    _harness.run_each(slow_cases(jax), args, repeat=5)


if __name__ == "__main__":
    main()

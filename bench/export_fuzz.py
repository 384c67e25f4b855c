"""Fuzzing `deserialize` beyond the test suite: mutates real artifacts (laminax's and, when
given, JAX's) N times and checks that each either deserializes or raises ValueError, never
anything else, and that nothing hangs (each deserialize is timed).

    python bench/export_fuzz.py [--mutations 100000] [--seed 0] [--artifact FILE ...]
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time

import numpy as np


def _laminax_artifacts():
    import laminax as jax
    import laminax.numpy as jnp

    def f(x, y):
        return jnp.sin(x) * y + 1.0, {"a": x.sum(), "b": [y, None]}

    spec = jax.ShapeDtypeStruct((3,), np.float32)
    exp = jax.export.export(jax.jit(f))(spec, spec)
    return [bytes(exp.serialize(vjp_order=2))]


def mutate(rng: random.Random, blob: bytes) -> bytes:
    data = bytearray(blob)
    for _ in range(rng.choice([1, 1, 2, 4, 16, 64])):
        pos = rng.randrange(len(data))
        op = rng.random()
        if op < 0.5:
            data[pos] = rng.randrange(256)
        elif op < 0.7:
            data[pos:pos + 4] = rng.choice(
                [b"\xff\xff\xff\xff", b"\0\0\0\0", b"\xff\xff\xff\x7f", b"\x04\0\0\0"])
        elif op < 0.85:
            del data[pos:pos + rng.randrange(1, 9)]
        else:
            data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
    return bytes(data)


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutations", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--artifact", action="append", default=[])
    args = parser.parse_args(argv)
    from laminax.export import deserialize

    blobs = _laminax_artifacts() + [open(p, "rb").read() for p in args.artifact]
    rng = random.Random(args.seed)
    outcomes = collections.Counter()
    slowest = 0.0
    for i in range(args.mutations):
        data = mutate(rng, blobs[i % len(blobs)])
        start = time.perf_counter()
        try:
            deserialize(data)
            outcomes["deserialized"] += 1
        except ValueError:
            outcomes["ValueError"] += 1
        except Exception as e:  # a bug: report the input that caused it
            print(f"mutation {i}: {type(e).__name__}: {e}\n{data.hex()}", file=sys.stderr)
            return 1
        slowest = max(slowest, time.perf_counter() - start)
    print(f"{args.mutations} mutations: {dict(outcomes)}; slowest deserialize {slowest:.4f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

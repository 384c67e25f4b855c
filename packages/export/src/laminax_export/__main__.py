"""The artifact inspector: `python -m laminax_export show artifact.bin [--mlir]` prints what a
serialized `Exported` (laminax's or JAX's) holds; `python -m laminax_export call artifact.bin
inputs.npz [--out outputs.npz]` runs it on the arrays of an `.npz` file (the input leaves in
flattened order, as `np.savez` names them: `arr_0`, `arr_1` ...)."""

from __future__ import annotations

import argparse
import sys

import numpy as np

__all__ = ["main"]


def _load(path: str):
    from laminax_export import deserialize

    with open(path, "rb") as f:
        return deserialize(f.read())


def describe(exp, *, mlir: bool = False) -> str:
    """The text `show` prints for `exp`."""
    lines = [
        f"function:            {exp.fun_name}",
        f"platforms:           {', '.join(exp.platforms)}",
        f"calling convention:  {exp.calling_convention_version}",
        f"devices:             {exp.nr_devices}",
        f"inputs:              {exp.in_tree}",
    ]
    kept = set(exp.module_kept_var_idx)
    for i, (aval, sharding) in enumerate(zip(exp.in_avals, exp.in_shardings_hlo, strict=True)):
        note = "" if i in kept else "  (unused: not passed to the module)"
        lines.append(f"  [{i}] {aval.str_short()}  sharding={sharding}{note}")
    lines.append(f"outputs:             {exp.out_tree}")
    for i, (aval, sharding) in enumerate(zip(exp.out_avals, exp.out_shardings_hlo, strict=True)):
        lines.append(f"  [{i}] {aval.str_short()}  sharding={sharding}")
    lines += [
        f"kept inputs:         {list(exp.module_kept_var_idx)}",
        f"ordered effects:     {list(map(str, exp.ordered_effects)) or 'none'}",
        f"unordered effects:   {list(map(str, exp.unordered_effects)) or 'none'}",
        f"disabled checks:     {list(map(str, exp.disabled_safety_checks)) or 'none'}",
        f"vjp orders stored:   {_vjp_orders(exp)}",
        f"module size:         {len(exp.mlir_module_serialized)} bytes (StableHLO portable artifact)",
    ]
    if mlir:
        lines += ["", exp.mlir_module()]
    return "\n".join(lines)


def _vjp_orders(exp) -> int:
    n = 0
    while exp.has_vjp():
        exp = exp.vjp()
        n += 1
    return n


def run(exp, inputs: dict):
    """Calls `exp` on the flat input leaves in `inputs` (`arr_<i>` or `<i>` keys)."""
    from laminax_pytree import tree_flatten, tree_unflatten

    n = len(exp.in_avals)
    leaves = []
    for i in range(n):
        for key in (f"arr_{i}", str(i)):
            if key in inputs:
                leaves.append(np.asarray(inputs[key]))
                break
        else:
            raise ValueError(
                f"the inputs file has no array for input leaf {i} (named arr_{i} or {i}); "
                f"{exp.fun_name} takes {n}: "
                + ", ".join(a.str_short() for a in exp.in_avals))
    extra = set(inputs) - {f"arr_{i}" for i in range(n)} - {str(i) for i in range(n)}
    if extra:
        raise ValueError(f"the inputs file has arrays the function does not take: {sorted(extra)}")
    args, kwargs = tree_unflatten(exp.in_tree, leaves)
    out = exp.call(*args, **kwargs)
    return [np.asarray(x) for x in tree_flatten(out)[0]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m laminax_export",
                                     description="Inspect and run serialized Exported artifacts.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the artifact's signature and metadata")
    show.add_argument("artifact")
    show.add_argument("--mlir", action="store_true", help="also print the StableHLO module")
    call = sub.add_parser("call", help="run the artifact on the arrays of an .npz file")
    call.add_argument("artifact")
    call.add_argument("inputs", help=".npz with the input leaves (arr_0, arr_1 ...)")
    call.add_argument("--out", help="write the output leaves to this .npz")
    args = parser.parse_args(argv)
    try:
        exp = _load(args.artifact)
        if args.command == "show":
            print(describe(exp, mlir=args.mlir))
            return 0
        with np.load(args.inputs) as data:
            outs = run(exp, dict(data))
        for i, x in enumerate(outs):
            print(f"[{i}] {x.dtype.name}{list(x.shape)}\n{x}")
        if args.out:
            np.savez(args.out, *outs)
        return 0
    except (OSError, ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

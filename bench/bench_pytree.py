"""Pytree benchmark: flatten, unflatten, map and flatten_with_path on 10, 1k and 100k leaves.

Written against JAX's API (`jax.tree_util`); `--impl laminax` runs it on laminax. Run both and
compare with `python bench/run.py bench_pytree`.
"""

from __future__ import annotations

import _harness

SIZES = {"10": 10, "1k": 1_000, "100k": 100_000}


def make_tree(num_leaves: int) -> dict:
    """A params-like tree: layers of {"w": leaf, "b": (leaf, leaf), "extra": [leaf, leaf]}.

    Five leaves per layer, in a dict of lists so dicts, tuples and lists all appear.
    """
    layers = [
        {"w": 1.0 * i, "b": (2.0, 3.0), "extra": [4.0, None, 5.0]} for i in range(num_leaves // 5)
    ]
    return {"layers": layers, "step": 0}


def benchmarks(jax) -> dict:
    tree_util = jax.tree_util
    cases = {}
    for label, size in SIZES.items():
        tree = make_tree(size)
        leaves, treedef = tree_util.tree_flatten(tree)

        def identity(x):
            return x

        cases[f"flatten/{label}"] = lambda tree=tree: tree_util.tree_flatten(tree)
        cases[f"unflatten/{label}"] = lambda td=treedef, lv=leaves: tree_util.tree_unflatten(td, lv)
        cases[f"map/{label}"] = lambda tree=tree: tree_util.tree_map(identity, tree)
        cases[f"map2/{label}"] = lambda tree=tree: tree_util.tree_map(lambda x, y: x, tree, tree)
        cases[f"flatten_with_path/{label}"] = lambda tree=tree: tree_util.tree_flatten_with_path(
            tree
        )
    return cases


def main() -> None:
    args = _harness.parse_args(__doc__)
    jax = _harness.import_jax(args.impl)
    _harness.run_all(benchmarks(jax), args)


if __name__ == "__main__":
    main()

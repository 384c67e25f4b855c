"""A tour of laminax's pytrees: the same code you would write with `import jax`.

Run with `.venv/bin/python examples/tree_tour.py` (or `python3 tools/dev.py example`). It builds
a small network's parameters as a pytree, inspects them by key path, takes an SGD step with
`tree.map`, registers a dataclass, and shows the error a structure mismatch gives.
"""

from __future__ import annotations

import dataclasses

import laminax as jax
import numpy as np


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Dense:
    """One layer: its arrays are leaves, its activation name is static structure."""

    w: np.ndarray
    b: np.ndarray
    activation: str = jax.tree.static(default="relu")


def init_mlp(sizes: list[int], seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    layers = [
        Dense(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n), "relu")
        for m, n in zip(sizes[:-1], sizes[1:], strict=True)
    ]
    layers[-1].activation = "identity"
    return {"layers": layers, "step": np.array(0)}


def forward(params: dict, x: np.ndarray) -> np.ndarray:
    for layer in params["layers"]:
        x = x @ layer.w + layer.b
        if layer.activation == "relu":
            x = np.maximum(x, 0.0)
    return x


def main() -> None:
    params = init_mlp([4, 8, 8, 2])
    leaves, treedef = jax.tree.flatten(params)
    print(f"{len(leaves)} arrays, {sum(leaf.size for leaf in leaves)} numbers")
    print("structure:", treedef)

    print("\nleaves by key path:")
    for path, leaf in jax.tree_util.tree_leaves_with_path(params):
        print(f"  {jax.tree_util.keystr(path):<20} {leaf.dtype}{list(leaf.shape)}")

    # A fake gradient with the same structure, then one SGD step on every array at once.
    grads = jax.tree.map(np.ones_like, params)
    updated = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    change = jax.tree.map(lambda new, old: f"{np.abs(new - old).max():.3g}", updated, params)
    print("\nlargest change per array after one step:", jax.tree.leaves(change))

    x = np.ones((3, 4))
    print("network output before and after the step:")
    print(" ", forward(params, x)[0], "->", forward(updated, x)[0])

    # Per-example records transposed into one record of lists (a common batching move).
    records = [{"loss": 0.5, "acc": 0.8}, {"loss": 0.25, "acc": 0.9}]
    outer, inner = jax.tree.structure([0, 0]), jax.tree.structure({"loss": 0, "acc": 0})
    print("\ntransposed metrics:", jax.tree.transpose(outer, inner, records))

    # Trees must match: the error says where and how they differ.
    bad_grads = {"layers": grads["layers"][:2], "step": grads["step"]}
    try:
        jax.tree.map(lambda p, g: p - g, params, bad_grads)
    except ValueError as err:
        print("\nmismatched trees ->", err)


if __name__ == "__main__":
    main()

"""Short trainings with the JAX ecosystem, unmodified, under laminax's `import jax` mode and under
real JAX 0.10.2: an optax optimizer chain and an equinox model trained with `filter_jit` and
`filter_value_and_grad`. The losses must agree.

The libraries are the ones installed in the development environment (`tools/dev.py` installs
them without their `jax` dependency); the real-JAX side imports the very same files, through a
directory of links put first on its `sys.path`.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from aliasrun import run_as_jax
from jaxref import requires_jax, run_jax

pytestmark = requires_jax


def _installed_at(name: str) -> Path | None:
    """The package directory (or single-file module) `name` is imported from, if installed."""
    spec = importlib.util.find_spec(name)
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin)


def _linked(tmp_path, packages) -> str:
    """A directory with a link to each installed package, for the real-JAX process."""
    for name in packages:
        where = _installed_at(name)
        if where is None:
            pytest.fail(f"{name} is not installed in this environment: run `tools/dev.py setup`.")
        (tmp_path / where.name).symlink_to(where)
        # and its metadata: libraries read their own version (importlib.metadata) at import
        for info in where.parent.glob(f"{name.replace('-', '_')}-*.dist-info"):
            (tmp_path / info.name).symlink_to(info)
    return str(tmp_path)


def _losses_both(source: str, tmp_path, packages) -> tuple[list, list]:
    prelude = f"import sys\nsys.path.insert(0, {_linked(tmp_path, packages)!r})\n"
    expected = run_jax(prelude + source, fresh=True)
    got = run_as_jax(source)
    return got, expected


OPTAX_TRAINING = """
import jax, jax.numpy as jnp, numpy as np, optax

rng = np.random.default_rng(0)
x = rng.normal(size=(64, 5)).astype(np.float32)
y = (x @ rng.normal(size=(5, 1)) + 0.1).astype(np.float32)
params = {"w": jnp.zeros((5, 1)), "b": jnp.zeros((1,))}
schedule = optax.warmup_cosine_decay_schedule(0.0, 0.05, warmup_steps=3, decay_steps=30)
optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-3))
state = optimizer.init(params)

def loss_fn(p):
    return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)

@jax.jit
def step(params, state):
    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss

losses = []
for _ in range(30):
    params, state, loss = step(params, state)
    losses.append(float(loss))
result = losses
"""

EQUINOX_TRAINING = """
import jax, jax.numpy as jnp, numpy as np, equinox as eqx

rng = np.random.default_rng(1)
x = rng.normal(size=(32, 3)).astype(np.float32)
y = np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)
model = eqx.nn.MLP(3, 1, 16, 2, activation=jax.nn.tanh, key=jax.random.PRNGKey(0))

@eqx.filter_jit
def step(model, x, y):
    def loss_fn(m):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)
    loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
    updates = jax.tree.map(lambda g: -0.05 * g, grads)
    return eqx.apply_updates(model, updates), loss

losses = []
for _ in range(20):
    model, loss = step(model, x, y)
    losses.append(float(loss))
result = losses
"""


def test_optax_training_losses_equal_jax(tmp_path):
    got, expected = _losses_both(OPTAX_TRAINING, tmp_path, ["optax", "absl"])
    assert len(got) == 30 and got[-1] < got[0] / 2, got
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)


def test_equinox_filter_jit_training_losses_equal_jax(tmp_path):
    packages = ["equinox", "jaxtyping", "wadler_lindig", "typing_extensions"]
    got, expected = _losses_both(EQUINOX_TRAINING, tmp_path, packages)
    assert len(got) == 20 and got[-1] < got[0], got
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)

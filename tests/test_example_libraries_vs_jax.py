"""`jax.example_libraries.stax` and `.optimizers` against real JAX 0.10.2: the same program
(a small convolutional network with every layer kind, trained a few steps by each optimizer)
gives the same initial parameters, outputs and trained parameters in both libraries."""

from __future__ import annotations

import numpy as np
import pytest
from jaxref import requires_jax, run_jax

import laminax
import laminax.example_libraries.optimizers
import laminax.example_libraries.stax
import laminax.numpy as lnp

SNIPPET = """
stax, optimizers = jax.example_libraries.stax, jax.example_libraries.optimizers
leaves = lambda tree: [np.asarray(v) for v in jax.tree_util.tree_leaves(tree)]

net_init, net_apply = stax.serial(
    stax.Conv(4, (3, 3), padding="SAME"), stax.BatchNorm(), stax.Relu,
    stax.MaxPool((2, 2), strides=(2, 2)),
    stax.FanOut(2),
    stax.parallel(stax.serial(stax.Conv(3, (1, 1)), stax.Tanh), stax.AvgPool((2, 2), padding="SAME")),
    stax.FanInConcat(),
    stax.SumPool((2, 2)), stax.Flatten, stax.Dense(8), stax.Gelu, stax.Dropout(0.9),
    stax.FanOut(2), stax.parallel(stax.Dense(5), stax.serial(stax.Dense(5), stax.Elu)),
    stax.FanInSum, stax.LeakyRelu, stax.Selu, stax.Softplus, stax.Sigmoid, stax.Identity,
    stax.Exp, stax.Softmax, stax.LogSoftmax,
)
ct_init, ct_apply = stax.serial(stax.ConvTranspose(2, (3, 3), strides=(2, 2)),
                                stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 2)))
c1_init, c1_apply = stax.Conv1DTranspose(2, (3,), padding="SAME")
rng = jax.random.PRNGKey(0)
x = jnp.asarray(np.sin(np.arange(2 * 8 * 8 * 3, dtype=np.float32)).reshape(2, 8, 8, 3))
labels = jax.nn.one_hot(jnp.array([1, 3]), 5)
out_shape, params = net_init(rng, x.shape)
result = {"shape": out_shape, "init": leaves(params),
          "out": np.asarray(jax.jit(net_apply)(params, x, rng=jax.random.PRNGKey(1))),
          "ct": (ct_init(rng, (1, 4, 4, 3))[0], np.asarray(ct_apply(ct_init(rng, (1, 4, 4, 3))[1], x[:1, :4, :4]))),
          "c1": (c1_init(rng, (1, 5, 3))[0], np.asarray(c1_apply(c1_init(rng, (1, 5, 3))[1], x[:1, :5, 0]))) }

# training a small dense network (in the convolutional one, the batch-normalized bias has a
# gradient of rounding noise, which the adaptive optimizers scale up to a unit step)
mlp_init, mlp_apply = stax.serial(stax.Flatten, stax.Dense(8), stax.Tanh, stax.Dense(5),
                                  stax.LogSoftmax)
_, params = mlp_init(rng, x.shape)

def loss(p, key):
    return -jnp.mean(jnp.sum(mlp_apply(p, x, rng=key) * labels, -1))

makers = {
    "sgd": lambda: optimizers.sgd(0.1),
    "momentum": lambda: optimizers.momentum(optimizers.exponential_decay(0.1, 2, 0.5), 0.9),
    "nesterov": lambda: optimizers.nesterov(optimizers.inverse_time_decay(0.1, 2, 0.5, True), 0.8),
    "adagrad": lambda: optimizers.adagrad(optimizers.polynomial_decay(0.1, 3, 0.01, 2.0)),
    "rmsprop": lambda: optimizers.rmsprop(optimizers.piecewise_constant([1, 2], [0.1, 0.05, 0.01])),
    "rmsprop_momentum": lambda: optimizers.rmsprop_momentum(0.01),
    "adam": lambda: optimizers.adam(0.01),
    "adamax": lambda: optimizers.adamax(0.01),
    "sm3": lambda: optimizers.sm3(0.1),
}
for name, make in makers.items():
    opt_init, opt_update, get_params = make()
    state = opt_init(params)

    def step(i, state):
        g = jax.grad(loss)(get_params(state), jax.random.PRNGKey(i))
        return opt_update(i, optimizers.clip_grads(g, 1.0), state)

    # sm3's state holds the parameter's shape as ints, which jit would trace (in JAX too)
    step = step if name == "sm3" else jax.jit(step)

    for i in range(3):
        state = step(i, state)
    packed = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(state))
    result[name] = (leaves(get_params(state)), leaves(get_params(packed)),
                    float(optimizers.l2_norm(get_params(state))))
"""


def _laminax_result():
    scope = {"jax": laminax, "jnp": lnp, "np": np}
    exec(compile(SNIPPET, "<snippet>", "exec"), scope)  # noqa: S102 (our own test program)
    return scope["result"]


@pytest.fixture(scope="module")
def results():
    return _laminax_result(), run_jax(
        "import jax.example_libraries.stax, jax.example_libraries.optimizers\n" + SNIPPET)


def _close(a, b, key):
    assert len(a) == len(b), key
    for u, v in zip(a, b, strict=True):
        np.testing.assert_allclose(u, v, rtol=2e-4, atol=2e-5, err_msg=key)


@requires_jax
def test_stax_network_initializes_and_applies_as_jax(results):
    ours, theirs = results
    assert ours["shape"] == theirs["shape"]
    _close(ours["init"], theirs["init"], "init")
    _close([ours["out"]], [theirs["out"]], "out")
    for key in ("ct", "c1"):
        assert tuple(ours[key][0]) == tuple(theirs[key][0]), key
        _close([ours[key][1]], [theirs[key][1]], key)


@requires_jax
@pytest.mark.parametrize("name", ["sgd", "momentum", "nesterov", "adagrad", "rmsprop",
                                  "rmsprop_momentum", "adam", "adamax", "sm3"])
def test_optimizer_steps_match_jax(results, name):
    ours, theirs = results
    _close(ours[name][0], theirs[name][0], name)
    _close(ours[name][1], ours[name][0], name + " packed")
    np.testing.assert_allclose(ours[name][2], theirs[name][2], rtol=2e-4)


def test_errors():
    stax, optimizers = laminax.example_libraries.stax, laminax.example_libraries.optimizers
    init, apply = stax.Dropout(0.5)
    with pytest.raises(ValueError, match="PRNG key"):
        apply((), lnp.ones(3))
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [0.1])
    opt_init, opt_update, _ = optimizers.sgd(0.1)
    with pytest.raises(TypeError, match="did not match"):
        opt_update(0, [lnp.ones(2)], opt_init((lnp.ones(2), lnp.ones(2))))

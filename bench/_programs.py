"""The three training programs that `bench_trace_lower` and `bench_compile_step` measure.

Each is written once against JAX's public API (`jax` is laminax or real JAX, passed in) and
comes as a `Program`: a factory that builds a FRESH step function on every call (a new function
object with a new name, so neither library's per-function caches, nor laminax's in-memory
executable cache keyed on the module text, can serve a repetition from an earlier one), and the
example arguments to trace it with.

- `mlp`: the gradient of a mean-squared-error loss through an 8-layer MLP (width 128, tanh).
- `transformer`: the gradient of a loss through one pre-norm transformer block: layernorm,
  4-head self-attention with a causal mask and softmax, layernorm, a GELU MLP.
- `rnn`: the gradient of a loss through a 100-step tanh RNN written with `lax.scan`.

This module imports neither library itself.
"""

from __future__ import annotations

import itertools
import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

_fresh_ids = itertools.count()


@dataclass(frozen=True)
class Program:
    """A step function factory and its arguments.

    Attributes:
      name: the benchmark label.
      make_step: returns a new, not yet jitted `step(params, batch)` -> (loss, grads).
      args: the arguments (pytrees of device arrays) to call it with.
    """

    name: str
    make_step: Callable[[], Callable]
    args: tuple


def fresh(fun: Callable) -> Callable:
    """A copy of `fun` as a new function object with a new name (same code and closure)."""
    number = next(_fresh_ids)
    copy = types.FunctionType(
        fun.__code__,
        fun.__globals__,
        f"{fun.__name__}_{number}",
        fun.__defaults__,
        fun.__closure__,
    )
    copy.__qualname__ = copy.__name__
    return copy


def _dense_params(jax, rng, sizes):
    return [
        {
            "w": jax.device_put(rng.normal(0, 1 / np.sqrt(n), (n, m)).astype(np.float32)),
            "b": jax.device_put(np.zeros((m,), np.float32)),
        }
        for n, m in zip(sizes[:-1], sizes[1:], strict=True)
    ]


def mlp(jax) -> Program:
    """grad of an 8-layer MLP's squared error, batch 32, width 128."""
    jnp = jax.numpy
    rng = np.random.default_rng(0)
    params = _dense_params(jax, rng, [64] + [128] * 7 + [10])
    x = jax.device_put(rng.normal(size=(32, 64)).astype(np.float32))
    y = jax.device_put(rng.normal(size=(32, 10)).astype(np.float32))

    def loss(params, batch):
        h, target = batch
        for layer in params[:-1]:
            h = jnp.tanh(h @ layer["w"] + layer["b"])
        out = h @ params[-1]["w"] + params[-1]["b"]
        return jnp.mean((out - target) ** 2)

    def make_step():
        return jax.value_and_grad(fresh(loss))

    return Program(LABELS[mlp], make_step, (params, (x, y)))


def _layernorm(jnp, x, scale, bias):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * scale + bias


def transformer(jax) -> Program:
    """grad through one transformer block: sequence 64, model width 128, 4 heads, MLP 512."""
    jnp, nn = jax.numpy, jax.nn
    rng = np.random.default_rng(1)
    seq, width, heads, hidden = 64, 128, 4, 512

    def weight(*shape):
        return jax.device_put(rng.normal(0, 0.02, shape).astype(np.float32))

    params = {
        "ln1": (jnp.ones((width,)), jnp.zeros((width,))),
        "ln2": (jnp.ones((width,)), jnp.zeros((width,))),
        "qkv": weight(width, 3 * width),
        "out": weight(width, width),
        "up": (weight(width, hidden), jnp.zeros((hidden,))),
        "down": (weight(hidden, width), jnp.zeros((width,))),
    }
    x = weight(8, seq, width)

    def block(p, x):
        h = _layernorm(jnp, x, *p["ln1"])
        q, k, v = jnp.split(h @ p["qkv"], 3, axis=-1)
        split = lambda t: t.reshape(t.shape[0], seq, heads, width // heads)  # noqa: E731
        q, k, v = split(q), split(k), split(v)
        logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(width // heads)
        mask = jnp.tril(jnp.ones((seq, seq), dtype=bool))
        attn = nn.softmax(jnp.where(mask, logits, -1e9), axis=-1)
        mixed = jnp.einsum("bhqk,bkhd->bqhd", attn, v).reshape(x.shape)
        x = x + mixed @ p["out"]
        h = _layernorm(jnp, x, *p["ln2"])
        return x + nn.gelu(h @ p["up"][0] + p["up"][1]) @ p["down"][0] + p["down"][1]

    def loss(p, batch):
        return jnp.mean(block(p, batch) ** 2)

    def make_step():
        return jax.value_and_grad(fresh(loss))

    return Program(LABELS[transformer], make_step, (params, x))


def rnn(jax) -> Program:
    """grad through a 100-step tanh RNN (`lax.scan`), batch 16, hidden 128."""
    jnp, lax = jax.numpy, jax.lax
    rng = np.random.default_rng(2)
    steps, batch, width = 100, 16, 128
    params = {
        "wh": jax.device_put(rng.normal(0, 1 / np.sqrt(width), (width, width)).astype(np.float32)),
        "wx": jax.device_put(rng.normal(0, 1 / np.sqrt(32), (32, width)).astype(np.float32)),
        "b": jnp.zeros((width,)),
    }
    xs = jax.device_put(rng.normal(size=(steps, batch, 32)).astype(np.float32))

    def loss(p, xs):
        def cell(h, x):
            h = jnp.tanh(h @ p["wh"] + x @ p["wx"] + p["b"])
            return h, jnp.sum(h)

        h, outs = lax.scan(cell, jnp.zeros((batch, width)), xs)
        return jnp.mean(h**2) + jnp.mean(outs)

    def make_step():
        return jax.value_and_grad(fresh(loss))

    return Program(LABELS[rnn], make_step, (params, xs))


PROGRAMS = (mlp, transformer, rnn)
# Each program's `Program.name`, known without building it.
LABELS = {mlp: "mlp8_grad", transformer: "transformer_grad", rnn: "rnn100_scan_grad"}

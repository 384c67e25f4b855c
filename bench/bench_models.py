"""Training steps a user would choose a library by: a small GPT-style language model and a
small convolutional network, each one jitted step (compile time, then step time), and the
process's peak resident memory after both.

- `gpt4_adamw`: token embedding + learned positions, 4 pre-norm attention blocks (4 heads,
  causal mask, GELU MLP), tied output projection, cross-entropy; AdamW with weight decay,
  written by hand with `tree_map` (vocabulary 256, sequence 64, batch 8, width 128).
- `convnet_sgd`: two 3x3 convolutions (16 and 32 channels, NHWC), each followed by batch
  norm over the batch (scale and bias learned) and ReLU, a 2x2 max pool after the first and a
  global average pool after the second, a dense layer to 10 classes, softmax cross-entropy;
  plain SGD (batch 32 of 32x32x3 images).

Rows: `compile/<model>` (best of 3 compilations of a freshly traced step), `step/<model>`
(one call of the compiled step, blocking on the new parameters), `peak_rss` (bytes, the
process's maximum resident set size at the end: `resource.getrusage`).

    python bench/run.py bench_models
"""

from __future__ import annotations

import resource
import sys

import _harness
import _programs
import numpy as np

REPEAT = 3


def _gpt(jax):
    jnp, nn, lax = jax.numpy, jax.nn, jax.lax
    rng = np.random.default_rng(3)
    vocab, seq, batch, width, heads, hidden, depth = 256, 64, 8, 128, 4, 512, 4

    def weight(*shape, scale=0.02):
        return jax.device_put(rng.normal(0, scale, shape).astype(np.float32))

    def block_params():
        return {
            "ln1": (jnp.ones((width,)), jnp.zeros((width,))),
            "ln2": (jnp.ones((width,)), jnp.zeros((width,))),
            "qkv": weight(width, 3 * width),
            "out": weight(width, width),
            "up": (weight(width, hidden), jnp.zeros((hidden,))),
            "down": (weight(hidden, width), jnp.zeros((width,))),
        }

    params = {
        "embed": weight(vocab, width),
        "pos": weight(seq, width),
        "blocks": [block_params() for _ in range(depth)],
        "ln_f": (jnp.ones((width,)), jnp.zeros((width,))),
    }
    tokens = jax.device_put(rng.integers(0, vocab, (batch, seq + 1)).astype(np.int32))

    def layernorm(x, scale, bias):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return (x - mean) * lax.rsqrt(var + 1e-5) * scale + bias

    def attention(p, x):
        b = x.shape[0]
        q, k, v = jnp.split(x @ p["qkv"], 3, axis=-1)
        q, k, v = (t.reshape(b, seq, heads, width // heads) for t in (q, k, v))
        logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(width // heads)
        mask = jnp.tril(jnp.ones((seq, seq), dtype=bool))
        weights = nn.softmax(jnp.where(mask, logits, -1e9), axis=-1)
        return jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, seq, width) @ p["out"]

    def loss(params, tokens):
        inputs, targets = tokens[:, :-1], tokens[:, 1:]
        x = params["embed"][inputs] + params["pos"]
        for p in params["blocks"]:
            x = x + attention(p, layernorm(x, *p["ln1"]))
            h = layernorm(x, *p["ln2"])
            x = x + nn.gelu(h @ p["up"][0] + p["up"][1]) @ p["down"][0] + p["down"][1]
        logits = layernorm(x, *params["ln_f"]) @ params["embed"].T
        logp = nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    def adamw(params, grads, state, lr=3e-4, b1=0.9, b2=0.999, eps=1e-8, decay=0.01):
        count, mu, nu = state
        count = count + 1
        mu = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, mu, grads)
        nu = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, nu, grads)
        fix1, fix2 = 1 - b1**count, 1 - b2**count

        def update(p, m, v):
            return p - lr * ((m / fix1) / (jnp.sqrt(v / fix2) + eps) + decay * p)

        return jax.tree_util.tree_map(update, params, mu, nu), (count, mu, nu)

    def step(params, state, tokens):
        value, grads = jax.value_and_grad(_programs.fresh(loss))(params, tokens)
        params, state = adamw(params, grads, state)
        return params, state, value

    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = (jnp.zeros((), jnp.float32), zeros, zeros)
    return step, (params, state, tokens)


def _convnet(jax):
    jnp, lax = jax.numpy, jax.lax
    rng = np.random.default_rng(4)
    batch = 32

    def weight(*shape):
        fan_in = int(np.prod(shape[:-1]))
        return jax.device_put(rng.normal(0, 1 / np.sqrt(fan_in), shape).astype(np.float32))

    params = {
        "conv1": weight(3, 3, 3, 16),
        "bn1": (jnp.ones((16,)), jnp.zeros((16,))),
        "conv2": weight(3, 3, 16, 32),
        "bn2": (jnp.ones((32,)), jnp.zeros((32,))),
        "dense": (weight(32, 10), jnp.zeros((10,))),
    }
    images = jax.device_put(rng.normal(size=(batch, 32, 32, 3)).astype(np.float32))
    labels = jax.device_put(rng.integers(0, 10, (batch,)).astype(np.int32))

    def conv(x, w):
        return lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )

    def batchnorm(x, scale, bias):
        mean = jnp.mean(x, axis=(0, 1, 2))
        var = jnp.var(x, axis=(0, 1, 2))
        return (x - mean) / jnp.sqrt(var + 1e-5) * scale + bias

    def loss(params, images, labels):
        x = jax.nn.relu(batchnorm(conv(images, params["conv1"]), *params["bn1"]))
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        x = jax.nn.relu(batchnorm(conv(x, params["conv2"]), *params["bn2"]))
        x = jnp.mean(x, axis=(1, 2))
        logits = x @ params["dense"][0] + params["dense"][1]
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    def step(params, images, labels):
        value, grads = jax.value_and_grad(_programs.fresh(loss))(params, images, labels)
        params = jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads)
        return params, value

    return step, (params, images, labels)


MODELS = {"gpt4_adamw": _gpt, "convnet_sgd": _convnet}


def benchmarks(jax, only: str = "") -> tuple[dict, dict]:
    """The compile cases (timed one at a time) and the step cases, per model."""
    compile_cases, step_cases = {}, {}
    for name, make in MODELS.items():
        if only and only not in f"compile/{name}" and only not in f"step/{name}":
            continue
        try:
            step, args = make(jax)
            compiled = jax.jit(step).lower(*args).compile()
        except Exception as error:  # noqa: BLE001 - reported as this case's result
            compile_cases[f"compile/{name}"] = _raiser(error)
            continue

        def lower_fresh(make=make):
            # a new function name, so the module differs and no executable cache can answer
            fresh_step, fresh_args = make(jax)
            return jax.jit(_programs.fresh(fresh_step)).lower(*fresh_args)

        def run(compiled=compiled, args=args):
            jax.block_until_ready(compiled(*args))

        compile_cases[f"compile/{name}"] = (lower_fresh, lambda lowered: lowered.compile())
        step_cases[f"step/{name}"] = run
    return compile_cases, step_cases


def _raiser(error):
    def case():
        raise error

    return case


def peak_rss_bytes() -> int:
    """This process's peak resident set size (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def main() -> None:
    args = _harness.parse_args(__doc__)
    jax = _harness.import_jax(args.impl)
    compile_cases, step_cases = benchmarks(jax, args.only)
    _harness.run_each(compile_cases, args, REPEAT, warmup=False)
    _harness.run_all(step_cases, args)
    _harness.report("peak_rss", peak_rss_bytes(), "B")


if __name__ == "__main__":
    main()

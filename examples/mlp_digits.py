"""The main job: a multilayer perceptron classifying handwritten digits, trained with jit and grad.

The data is scikit-learn's bundled 8x8 digits (1,797 images; no download). The program is written
against JAX's API, `import jax`, and trains with optax (gradient clipping, then AdamW on a
warmup-cosine schedule); `laminax.install_as_jax()` at start-up makes `jax`, and optax's own
`import jax`, resolve to laminax:

    python examples/mlp_digits.py [--epochs 40] [--out examples/out]
    python examples/mlp_digits.py --devices 8                    # data-parallel on 8 devices
    python examples/mlp_digits.py --devices 8 --model-parallel   # hidden layers split over 8
    python -m laminax_pjit.launch -n 2 --devices-per-process 4 examples/mlp_digits.py
                                     # 2 processes x 4 devices, data-parallel over all 8
    python examples/mlp_digits.py --export out/classifier.bin    # save the trained classifier

With ``--export PATH`` the trained classifier (test images -> logits, the parameters inside) is
saved as a serialized `jax.export` artifact in JAX's format, which real JAX can load and run,
with the test images and laminax's logits next to it (``PATH`` with suffix ``.npz``).

With ``--devices N`` (N > 1) the program runs on a mesh of N devices (N virtual CPU devices when
the backend is the CPU): data-parallel by default (each batch split over the mesh, parameters
replicated), or with ``--model-parallel`` the hidden layers' units split over the mesh (batches
replicated). XLA partitions the same jitted epoch either way, so the losses match the one-device
run to float rounding. Started by the launcher (``LAMINAX_NUM_PROCESSES`` set), every process
calls `jax.distributed.initialize()` and the mesh spans every process's devices: each process
holds the same data and initial parameters (same seed) and passes them as global Arrays
(`jax.make_array_from_process_local_data`).

Each epoch is one compiled program: a `lax.scan` over the epoch's batches. The progress bar
advances from inside it: every step taps its loss to the host with `host_callback.id_tap`,
whose tap function moves the bar on (asynchronously, so the device never waits for the
terminal). It prints the loss and accuracy of every epoch, the final test accuracy, and
saves the loss curve to `<out>/loss_curve.png`. It exits with status 1 if the test accuracy is
below 95%, so a run that trains badly cannot pass for a good one.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import laminax

laminax.install_as_jax()  # before anything imports jax: optax below runs on laminax too

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from jax.experimental import host_callback as hcb  # noqa: E402

LAYER_SIZES = (64, 128, 128, 10)
TARGET_ACCURACY = 0.95


def load_data(seed: int):
    digits = load_digits()
    images = digits.data.astype(np.float32) / 16.0  # pixel intensities are 0..16
    x_train, x_test, y_train, y_test = train_test_split(
        images, digits.target.astype(np.int32), test_size=0.25, random_state=seed
    )
    mean, std = x_train.mean(axis=0), x_train.std(axis=0) + 1e-6
    return (x_train - mean) / std, y_train, (x_test - mean) / std, y_test


def init_params(key, sizes=LAYER_SIZES):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        key, w_key = jax.random.split(key)
        weights = jax.nn.initializers.he_normal()(w_key, (fan_in, fan_out), jnp.float32)
        params.append({"w": weights, "b": jnp.zeros((fan_out,), jnp.float32)})
    return params


def predict(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    logits = predict(params, x)
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.sum(jax.nn.one_hot(y, 10) * log_probs, axis=-1))


def make_optimizer(total_steps: int, peak_learning_rate: float = 3e-3):
    """Clips the gradients' global norm, then AdamW with a warmup-cosine learning rate."""
    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=peak_learning_rate,
        warmup_steps=max(total_steps // 20, 1),
        decay_steps=total_steps,
        end_value=peak_learning_rate / 100,
    )
    return optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-4))


def train_step(optimizer, params, opt_state, x, y):
    """One optimizer step; returns the new parameters, optimizer state and the batch loss."""
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


# How each step's batch is laid out (`--devices`: split over the mesh), set before the first
# epoch is traced; None on one device. Sharded epochs tap the bar too: the tap runs once, on
# the first device of the mesh, with the whole (replicated) loss.
_batch_sharding = None

# The bar that compiled epochs advance. The tap function is one module-level function, so that
# `train_epoch` is traced and compiled once, not once per bar.
_progress_bar = None


def advance_progress_bar(loss, transforms):
    """Tap function: runs on the host after each training step of the compiled epoch."""
    if _progress_bar is not None:
        _progress_bar.update(1)
        _progress_bar.set_postfix(loss=f"{float(loss):.4f}", refresh=False)


@functools.partial(jax.jit, static_argnums=0)
def train_epoch(optimizer, params, opt_state, x, y, batch_indices):
    """All of an epoch's steps in one program: a scan over the rows of `batch_indices`."""

    def step(carry, idx):
        params, opt_state = carry
        batch = (x[idx], y[idx])
        if _batch_sharding is not None:
            batch = jax.lax.with_sharding_constraint(batch, _batch_sharding)
        params, opt_state, loss = train_step(optimizer, params, opt_state, *batch)
        loss = hcb.id_tap(advance_progress_bar, loss)
        return (params, opt_state), loss

    (params, opt_state), losses = jax.lax.scan(step, (params, opt_state), batch_indices)
    return params, opt_state, losses


@jax.jit
def accuracy(params, x, y):
    return jnp.mean(jnp.argmax(predict(params, x), axis=-1) == y)


def sharding_setup(devices: int, model_parallel: bool):
    """Lays the program out on a mesh of `devices` devices: sets how batches are split and
    returns the function that places parameters (and optimizer state) on the mesh."""
    global _batch_sharding
    if devices <= 1 and not model_parallel:
        return (lambda tree: tree), (lambda host: host)
    from laminax.sharding import Mesh, NamedSharding, PartitionSpec as P

    if len(jax.devices()) < devices:
        raise SystemExit(f"--devices {devices}: only {len(jax.devices())} devices are available")
    axis = "model" if model_parallel else "batch"
    mesh = Mesh(np.array(jax.devices()[:devices]), (axis,))
    replicated = NamedSharding(mesh, P())
    if model_parallel:
        # a hidden layer's units (the columns of w going in, the rows of w going out) are split
        layers = [
            {"w": NamedSharding(mesh, P(None, "model")), "b": NamedSharding(mesh, P("model"))},
            {"w": NamedSharding(mesh, P("model", None)), "b": replicated},
            {"w": replicated, "b": replicated},
        ]
        _batch_sharding = replicated
    else:
        layers = [{"w": replicated, "b": replicated}] * (len(LAYER_SIZES) - 1)
        _batch_sharding = NamedSharding(mesh, P("batch"))

    params_structure = jax.tree.structure([{"w": 0, "b": 0}] * (len(LAYER_SIZES) - 1))

    def like_params(tree) -> bool:
        return jax.tree.structure(tree) == params_structure

    def put(tree, shardings):
        if jax.process_count() == 1:
            return jax.device_put(tree, shardings)
        # several processes: each holds the whole value and passes it as its part
        return jax.tree.map(
            lambda t, s: jax.make_array_from_process_local_data(s, np.asarray(t)), tree,
            shardings if isinstance(shardings, list) else jax.tree.map(lambda _: shardings, tree),
        )

    def place(tree):
        # the parameters, and the parameter-shaped parts of the optimizer state (Adam's moments)
        # as the parameters; the rest of the state (step counts) replicated
        return jax.tree.map(
            lambda t: put(t, layers if like_params(t) else replicated),
            tree,
            is_leaf=like_params,
        )

    kind = "model" if model_parallel else "data"
    where = f", {jax.process_count()} processes" if jax.process_count() > 1 else ""
    print(f"devices: {devices} ({kind}-parallel, mesh {dict(mesh.shape)}{where})")
    return place, (lambda host: put(host, replicated))


def export_classifier(params, x, path: Path) -> None:
    """Saves `x -> logits` (the trained parameters inside) as a serialized `jax.export`
    artifact, and the images and logits it answers for them as `<path>.npz`."""
    params = jax.tree.map(np.asarray, params)  # gathered: constants of a one-device module
    classify = jax.jit(functools.partial(predict, params))
    exported = jax.export.export(classify)(jax.ShapeDtypeStruct(x.shape, x.dtype))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(exported.serialize())
    np.savez(path.with_suffix(".npz"), x=x, logits=np.asarray(classify(x)))
    print(f"classifier exported to {path}")


def save_loss_curve(losses: list[float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # no display on servers and CI
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    axes.plot(np.arange(1, len(losses) + 1), losses, marker="o")
    axes.set(xlabel="epoch", ylabel="mean training loss", title="MLP on digits (laminax)")
    axes.grid(True, alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(figure)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    parser.add_argument("--devices", type=int, default=None, help="run on a mesh of N devices")
    parser.add_argument(
        "--model-parallel", action="store_true", help="split the hidden layers (default N: 8)"
    )
    parser.add_argument("--export", type=Path, default=None,
                        help="save the trained classifier as a jax.export artifact")
    args = parser.parse_args(argv)
    if os.environ.get("LAMINAX_NUM_PROCESSES"):  # started by laminax_pjit.launch
        jax.distributed.initialize()
        devices = args.devices or jax.device_count()
    else:
        devices = args.devices or (8 if args.model_parallel else 1)
        if devices > 1:  # virtual CPU devices, if the backend is the CPU (before it starts)
            jax.config.update("jax_num_cpu_devices", devices)

    x_train, y_train, x_test, y_test = load_data(args.seed)
    key = jax.random.PRNGKey(args.seed)
    place, on_mesh = sharding_setup(devices, args.model_parallel)
    x_train, y_train, x_test, y_test = (on_mesh(a) for a in (x_train, y_train, x_test, y_test))
    params = place(init_params(key))
    shuffle = np.random.default_rng(args.seed)
    batches = len(x_train) // args.batch_size
    optimizer = make_optimizer(args.epochs * batches)
    opt_state = place(optimizer.init(params))
    epoch_losses = []

    global _progress_bar
    start = time.perf_counter()
    progress = tqdm(total=args.epochs * batches, desc="training", unit="step", file=sys.stdout)
    _progress_bar = progress
    for epoch in range(1, args.epochs + 1):
        order = shuffle.permutation(len(x_train))[: batches * args.batch_size]
        batch_indices = on_mesh(order.reshape(batches, args.batch_size).astype(np.int32))
        params, opt_state, losses = train_epoch(
            optimizer, params, opt_state, x_train, y_train, batch_indices
        )
        epoch_losses.append(float(np.sum(np.asarray(losses, np.float64))) / batches)
        hcb.barrier_wait()  # every step's tap has moved the bar before the epoch's line
        train_acc = float(accuracy(params, x_train, y_train))
        test_acc = float(accuracy(params, x_test, y_test))
        progress.write(
            f"epoch {epoch:3d}  loss {epoch_losses[-1]:.4f}  "
            f"train acc {train_acc:.3f}  test acc {test_acc:.3f}"
        )
    progress.close()
    _progress_bar = None
    elapsed = time.perf_counter() - start

    plot_path = args.out / "loss_curve.png"
    if jax.process_index() == 0:  # one picture per run, not one per process
        save_loss_curve(epoch_losses, plot_path)
    final = float(accuracy(params, x_test, y_test))
    print(f"test accuracy {final:.4f} after {args.epochs} epochs in {elapsed:.1f} s")
    print(f"loss curve saved to {plot_path}")
    if args.export:
        export_classifier(params, np.asarray(x_test, np.float32), args.export)
    if final < TARGET_ACCURACY:
        print(f"FAILED: test accuracy {final:.4f} is below {TARGET_ACCURACY}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

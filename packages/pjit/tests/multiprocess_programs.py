"""Programs over a mesh of every device, written once and run two ways: in N processes under
the distributed runtime (`multiprocess_worker.py`), and in one process with the same number
of devices (the oracle). Each returns a dict of NumPy results every process can read."""

from __future__ import annotations

import warnings

import laminax_core as lc
import laminax_dispatch as ld
import numpy as np
from laminax_core import lax
from laminax_pjit import (
    Mesh,
    NamedSharding,
    P,
    make_array_from_callback,
    make_array_from_process_local_data,
    multihost_utils,
    pjit,
    shard_map,
)


def _mesh(shape=None, names=("x",)) -> Mesh:
    grid = np.array(ld.devices())
    return Mesh(grid if shape is None else grid.reshape(shape), names)


def _global(data: np.ndarray, sharding) -> object:
    return make_array_from_callback(data.shape, sharding, lambda index: data[index])


def _host(x) -> np.ndarray:
    """The whole value of a global Array, in every process."""
    return multihost_utils.process_allgather(x, tiled=True)


def collectives() -> dict:
    mesh = _mesh()
    n = mesh.size
    data = np.arange(n * 4 * n, dtype=np.float32).reshape(n * 4, n) / 7.0
    x = _global(data, NamedSharding(mesh, P("x")))
    bodies = {
        "psum": (lambda b: lax.psum(b, "x"), P()),
        "pmax": (lambda b: lax.pmax(b, "x"), P()),
        "all_gather": (lambda b: lax.all_gather(b, "x", tiled=True), P()),
        "ppermute": (lambda b: lax.ppermute(b, "x", [(j, (j + 1) % n) for j in range(n)]), P("x")),
        "all_to_all": (lambda b: lax.all_to_all(b, "x", 1, 1, tiled=True), P("x")),
        "axis_index": (lambda b: b + lax.axis_index("x").astype(b.dtype), P("x")),
    }
    out = {}
    for name, (body, out_spec) in bodies.items():
        f = ld.jit(shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=out_spec, check_vma=False))
        out[name] = _host(f(x))
    mesh2 = _mesh((2, n // 2), ("a", "b"))
    y = _global(data, NamedSharding(mesh2, P("a", "b")))
    g = ld.jit(shard_map(lambda b: lax.psum(b, "a") * 2 + lax.psum(b, "b"), mesh=mesh2,
                         in_specs=P("a", "b"), out_specs=P("a", "b"), check_vma=False))
    out["psum_2d"] = _host(g(y))
    # pjit under `with mesh:`: the reduction over the split axis crosses processes
    h = pjit(lambda a: (a * 2).sum(axis=0), in_shardings=P("x"), out_shardings=P())
    with warnings.catch_warnings():  # JAX deprecates `with mesh:`; pjit's seed API uses it
        warnings.simplefilter("ignore", DeprecationWarning)
        with mesh:
            out["pjit_sum"] = np.asarray(h(x))  # replicated: every process holds it
    return out


def _loss(params, batch):
    w1, b1, w2 = params
    inputs, labels = batch
    hidden = lc.numpy.tanh(inputs @ w1 + b1)
    return ((hidden @ w2 - labels) ** 2).mean()


def data_parallel_training() -> dict:
    """Three SGD steps of a small MLP: parameters replicated, the batch split over every
    device (so the gradient's mean crosses processes)."""
    mesh = _mesh()
    rng = np.random.default_rng(0)
    params = [rng.normal(size=(6, 16)).astype(np.float32) * 0.5,
              np.zeros(16, np.float32), rng.normal(size=(16, 1)).astype(np.float32) * 0.5]
    inputs = rng.normal(size=(mesh.size * 4, 6)).astype(np.float32)
    labels = np.sin(inputs.sum(axis=1, keepdims=True)).astype(np.float32)
    replicated = NamedSharding(mesh, P())
    batch_sharding = NamedSharding(mesh, P("x"))
    params = [_global(p, replicated) for p in params]
    batch = (_global(inputs, batch_sharding), _global(labels, batch_sharding))

    @ld.jit
    def step(params, batch):
        loss, grads = lc.value_and_grad(_loss)(params, batch)
        return [p - 0.1 * g for p, g in zip(params, grads)], loss

    losses = []
    for _ in range(3):
        params, loss = step(params, batch)
        losses.append(np.asarray(loss))  # replicated: every process holds it
    return {"losses": np.stack(losses), **{f"param{i}": np.asarray(p) for i, p in enumerate(params)}}


def arrays_from_local_data() -> dict:
    """`make_array_from_process_local_data`: each process passes only the rows its devices
    hold; the global Array must equal the whole data."""
    mesh = _mesh()
    sharding = NamedSharding(mesh, P("x"))
    data = np.arange(mesh.size * 2 * 3, dtype=np.int32).reshape(mesh.size * 2, 3)
    rows = sorted({sharding.devices_indices_map(data.shape)[d][0].start
                   for d in sharding.addressable_devices})
    mine = np.concatenate([data[r:r + 2] for r in rows])
    inferred = make_array_from_process_local_data(sharding, mine)
    explicit = make_array_from_process_local_data(sharding, mine, data.shape)
    whole_columns = make_array_from_process_local_data(NamedSharding(mesh, P(None, None)), data)
    return {"inferred": _host(inferred), "explicit": _host(explicit),
            "inferred_shape": np.array(inferred.shape),
            "replicated": np.asarray(whole_columns)}


def multihost() -> dict:
    me, count = ld.process_index(), ld.process_count()
    multihost_utils.sync_global_devices("multihost test")
    source = multihost_utils.broadcast_one_to_all({"v": np.full(3, me + 1.0, np.float32)})
    gathered = multihost_utils.process_allgather(np.array([me, 10 * me], np.int32))
    tiled = multihost_utils.process_allgather(np.array([me, 10 * me], np.int32), tiled=True)
    mesh = _mesh()
    local = np.arange(len(ld.local_devices()) * 2, dtype=np.float32).reshape(-1, 2) + 100 * me
    global_arr = multihost_utils.host_local_array_to_global_array(local, mesh, P("x"))
    back = multihost_utils.global_array_to_host_local_array(global_arr, mesh, P("x"))
    return {
        "broadcast": source["v"], "allgather": gathered, "allgather_tiled": tiled,
        "count": np.array(count), "global_shape": np.array(global_arr.shape),
        "global_value": _host(global_arr), "round_trip_equal": np.array(np.array_equal(np.asarray(back), local)),
    }


def non_addressable_error() -> dict:
    """Reading a global Array this process holds only part of raises JAX's error."""
    mesh = _mesh()
    x = _global(np.arange(mesh.size, dtype=np.float32), NamedSharding(mesh, P("x")))
    messages = {"message": np.array(""), "closure_message": np.array("")}
    try:
        np.asarray(x)
    except RuntimeError as err:
        messages["message"] = np.array(str(err))
    try:
        ld.jit(lambda a: a + x)(x)  # x captured as a constant, not passed
    except RuntimeError as err:
        messages["closure_message"] = np.array(str(err))
    return messages


def pmap_over_local_devices() -> dict:
    """pmap with each process mapping over its local devices; psum and axis_index span every
    process's devices (one process: all 8)."""
    from laminax_pjit import pmap

    local = ld.local_device_count()
    first = ld.process_index() * local
    data = np.arange(ld.device_count() * 3, dtype=np.float32).reshape(-1, 3)
    mine = data[first:first + local]
    f = pmap(lambda v, w: (lax.psum(v, "i") * w + lax.axis_index("i"), v.sum()), "i",
             in_axes=(0, None))
    out, sums = f(mine, np.float32(2.0))
    return {"psum": _host(np.asarray(out)), "sums": _host(np.asarray(sums)),
            "local_shape": np.array(out.shape)}


def layout() -> dict:
    """What a process sees of a global Array: its own shards addressable, every shard in
    global_shards, devices' process indices, a Mesh spanning processes."""
    mesh = _mesh((2, ld.device_count() // 2), ("a", "b"))
    x = _global(np.arange(32.0, dtype=np.float32).reshape(8, 4), NamedSharding(mesh, P("a", "b")))
    me = ld.process_index()
    return {
        "fully_addressable": np.array(x.is_fully_addressable),
        "addressable_devices_are_local": np.array(
            all(s.device.process_index == me for s in x.addressable_shards)),
        "addressable_count": np.array(len(x.addressable_shards)),
        "global_count": np.array(len(x.global_shards)),
        "global_shard_has_data": np.array([s.data is not None for s in x.global_shards]),
        "device_processes": np.array([d.process_index for d in ld.devices()]),
        "local_devices_match": np.array(ld.local_devices() == [
            d for d in ld.devices() if d.process_index == me]),
        "mesh_multi_process": np.array(mesh.is_multi_process),
        "local_mesh_shape": np.array(list(mesh.local_mesh.shape.values())),
    }


PROGRAMS = {
    "layout": layout,
    "pmap": pmap_over_local_devices,
    "collectives": collectives,
    "training": data_parallel_training,
    "local_data": arrays_from_local_data,
    "multihost": multihost,
    "non_addressable": non_addressable_error,
}

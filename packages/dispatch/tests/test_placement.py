"""Placement on 8 CPU devices: jit's in/out shardings, committed arguments, the lowered module's
sharding attributes, compile options, read-back output shardings, the fast path.

Shardings are dispatch's `GSPMDSharding` (devices + XLA HloSharding), so that multi-device
placement is tested here without laminax_pjit; values are checked against NumPy.
"""

import numpy as np
import pytest
from jaxlib import xla_client as xc
from laminax_core.config import config
from laminax_dispatch import GSPMDSharding, SingleDeviceSharding, device_put, devices, jit
from laminax_dispatch.internal import IndivisibleError, Placement, compile_options, place_inputs


@pytest.fixture(scope="module")
def devs():
    ds = devices()
    assert len(ds) == 8, "the test run should have 8 CPU devices (conftest.py)"
    return ds


def tiled(devs, *dims):
    return GSPMDSharding(tuple(devs), xc.HloSharding.iota_tile(list(dims)))


def replicated(devs):
    return GSPMDSharding.get_replicated(devs)


X = np.arange(32, dtype=np.float32).reshape(8, 4)


def test_default_device_is_the_first(devs):
    y = jit(lambda a: a + 1)(X)
    assert y.sharding == SingleDeviceSharding(devs[0])
    assert not y.committed


def test_in_and_out_shardings_place_and_compute(devs):
    s, r = tiled(devs, 4, 2), replicated(devs)
    f = jit(lambda a, b: (a * 2, a + b), in_shardings=(s, r), out_shardings=(r, s))
    y, z = f(X, X)
    np.testing.assert_array_equal(np.asarray(y), X * 2)
    np.testing.assert_array_equal(np.asarray(z), X + X)
    assert y.sharding == r and z.sharding == s
    assert y.committed and z.committed
    # the second call goes through jaxlib's C++ fast path with per-argument shardings
    y2, z2 = f(X, X)
    np.testing.assert_array_equal(np.asarray(z2), X + X)
    assert f._cache_misses == 1


def test_sharded_call_stays_on_fast_path(devs):
    s = tiled(devs, 8, 1)
    x = device_put(X, s)
    f = jit(lambda a: a * 3)
    for _ in range(3):
        y = f(x)
    assert f._cache_misses == 1
    assert y.sharding.is_equivalent_to(s, 2)
    np.testing.assert_array_equal(np.asarray(y), X * 3)


def test_lowered_module_carries_shardy_attributes(devs):
    s = tiled(devs, 4, 2)
    text = jit(lambda a: a * 2, in_shardings=s, out_shardings=s).lower(X).as_text()
    assert "mhlo.num_partitions = 8" in text and "mhlo.num_replicas = 1" in text
    assert 'sdy.mesh @mesh = <["_a0"=4, "_a1"=2]>' in text
    assert text.count('#sdy.sharding<@mesh, [{"_a0"}, {"_a1"}]>') == 2


def test_gspmd_mode_writes_mhlo_sharding(devs):
    s = tiled(devs, 8, 1)
    with _option("jax_use_shardy_partitioner", False):
        f = jit(lambda a: a + 1, in_shardings=s, out_shardings=s)
        text = f.lower(X).as_text()
        y = f(X)
    assert 'mhlo.sharding = "{devices=[8,1]<=[8]}"' in text and "sdy" not in text
    np.testing.assert_array_equal(np.asarray(y), X + 1)
    assert y.sharding == s


class _option:
    def __init__(self, name, value):
        self.name, self.value = name, value

    def __enter__(self):
        self.old = getattr(config, self.name)
        config.update(self.name, self.value)

    def __exit__(self, *exc):
        config.update(self.name, self.old)


def test_single_device_module_has_no_sharding_attributes():
    text = jit(lambda a: a * 2).lower(X).as_text()
    assert "sdy" not in text and "mhlo.sharding" not in text
    assert "mhlo.num_partitions = 1" in text


def test_compile_options_are_spmd(devs):
    options = compile_options(devs)
    assert options.num_partitions == 8 and options.num_replicas == 1
    build = options.executable_build_options
    assert build.use_spmd_partitioning and build.use_shardy_partitioner
    assignment = options.device_assignment
    assert assignment.replica_count() == 1 and assignment.computation_count() == 8


def test_unspecified_outputs_read_back_from_executable(devs):
    s = tiled(devs, 8, 1)
    x = device_put(X, s)
    compiled = jit(lambda a: (a * 2, a.sum())).lower(x).compile()
    (ins,), kwargs = compiled.input_shardings
    assert ins == s and kwargs == {}
    same, total = compiled.output_shardings
    assert same.is_equivalent_to(s, 2)
    assert total.is_fully_replicated


def test_committed_arguments_on_different_devices_raise(devs):
    a = device_put(X, devs[0])
    b = device_put(X, devs[1])
    with pytest.raises(ValueError, match="incompatible devices"):
        jit(lambda x, y: x + y)(a, b)
    with pytest.raises(ValueError, match="incompatible devices"):
        jit(lambda x: x, out_shardings=tiled(devs, 8, 1))(a)


def test_committed_argument_with_other_sharding_than_in_shardings_raises(devs):
    x = device_put(X, replicated(devs))
    with pytest.raises(ValueError, match="does not match the sharding on the respective arg"):
        jit(lambda a: a * 2, in_shardings=tiled(devs, 8, 1))(x)


def test_uncommitted_argument_is_moved_to_in_sharding(devs):
    s = tiled(devs, 2, 4)
    x = device_put(X)  # uncommitted, device 0
    y = jit(lambda a: a - 1, in_shardings=s)(x)
    np.testing.assert_array_equal(np.asarray(y), X - 1)


def test_place_inputs_is_one_decision(devs):
    s = tiled(devs, 8, 1)
    placement = place_inputs([device_put(X, s), 1.0])
    assert isinstance(placement, Placement)
    assert placement.devices == tuple(devs) and placement.num_partitions == 8
    assert placement.in_shardings == (s, None) and placement.committed
    single = place_inputs([X])
    assert single.devices == (devs[0],) and not single.committed
    assert single.in_shardings == (SingleDeviceSharding(devs[0]),)


def test_device_option_and_single_device_out_sharding(devs):
    y = jit(lambda a: a * 2, device=devs[3])(X)
    assert y.sharding == SingleDeviceSharding(devs[3]) and y.committed
    outs = jit(lambda a: (a, a * 2), out_shardings=SingleDeviceSharding(devs[5]))(X)
    assert [o.sharding for o in outs] == [SingleDeviceSharding(devs[5])] * 2


def test_in_shardings_prefix_errors(devs):
    s = tiled(devs, 8, 1)
    with pytest.raises(ValueError, match="one entry per"):
        jit(lambda a, b: a + b, in_shardings=(s, s, s))(X, X)
    with pytest.raises(ValueError, match="keyword arguments"):
        jit(lambda a, b: a + b, in_shardings=s)(X, b=X)
    for bad in ("x", 3, object()):
        with pytest.raises(TypeError, match="Sharding or None"):
            jit(lambda a: a, in_shardings=bad)(X)


def test_static_args_are_not_in_in_shardings(devs):
    s, r = tiled(devs, 8, 1), replicated(devs)
    f = jit(lambda a, n, b: a * n + b, static_argnums=1, in_shardings=(s, r))
    y = f(X, 3, X)
    np.testing.assert_array_equal(np.asarray(y), X * 3 + X)


def test_eager_op_on_sharded_arrays_runs_spmd(devs):
    s = tiled(devs, 4, 2)
    x = device_put(X, s)
    y = x * 2 + 1
    assert y.sharding.is_equivalent_to(s, 2) and y.committed
    np.testing.assert_array_equal(np.asarray(y), X * 2 + 1)
    total = x.sum()
    assert float(total) == X.sum()


def test_nested_jit_with_shardings_under_outer_jit(devs):
    s = tiled(devs, 8, 1)
    inner = jit(lambda a: a * 2, in_shardings=s, out_shardings=s)
    outer = jit(lambda a: inner(a) + 1)
    text = outer.lower(device_put(X, s)).as_text()
    assert "sdy.sharding_constraint" in text
    np.testing.assert_array_equal(np.asarray(outer(device_put(X, s))), X * 2 + 1)


# ----- host callbacks and ordered effects in SPMD programs ----------------------------------

from laminax_core.internal import Effect, Primitive, lowerable_effects, ordered_effects  # noqa: E402
from laminax_dispatch import effects_barrier, register_lowering  # noqa: E402
from laminax_dispatch.internal import emit_python_callback  # noqa: E402

_SEEN: list = []
_seen_p = Primitive("seen_on_host")
_seen_p.def_abstract_eval(lambda x: x)


def _record(value):
    _SEEN.append(np.array(value))
    return (value,)


register_lowering(
    _seen_p, lambda ctx, x: emit_python_callback(ctx, _record, [x], ctx.avals_in)[0][0]
)


class _OrderedSeen(Effect):
    pass


ordered_effects.add_type(_OrderedSeen)
lowerable_effects.add_type(_OrderedSeen)
_ordered_p = Primitive("ordered_seen")
_ordered_p.def_effectful_abstract_eval(lambda x: (x, {_OrderedSeen()}))


def test_host_callback_in_sharded_program_runs_once_on_whole_value(devs):
    _SEEN.clear()
    s = tiled(devs, 8, 1)
    f = jit(lambda a: _seen_p.bind(a) * 2.0)
    text = f.lower(device_put(X, s)).as_text()
    assert "sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>" in text
    y = f(device_put(X, s))
    effects_barrier()
    np.testing.assert_array_equal(np.asarray(y), X * 2)
    assert len(_SEEN) == 1
    np.testing.assert_array_equal(_SEEN[0], X)


def test_ordered_effects_on_several_devices_raise(devs):
    s = tiled(devs, 8, 1)
    with pytest.raises(ValueError, match="ordered effects are not supported for more than 1"):
        jit(lambda a: _ordered_p.bind(a)).lower(device_put(X, s))


def test_spmd_axis_context_groups_devices_along_named_axes(devs):
    from laminax_dispatch.internal import SPMDAxisContext

    context = SPMDAxisContext(tuple(devs), ("x", "y"), (4, 2), tuple(range(8)), frozenset("xy"))
    grid = np.arange(8).reshape(4, 2)
    assert context.axis_groups(["x"]) == grid.T.tolist()
    assert context.axis_groups(["y"]) == grid.tolist()
    assert context.axis_groups(["x", "y"]) == [list(range(8))]
    assert context.axis_groups(["y", "x"]) == [grid.T.reshape(-1).tolist()]
    assert context.axis_size("x") == 4
    with pytest.raises(NameError, match="unbound axis name: z"):
        context.axis_size("z")


def test_rules_see_the_axis_context_they_are_lowered_under(devs):
    from laminax_dispatch.internal import SPMDAxisContext, ShardingContext

    seen = []
    probe_p = Primitive("axis_context_probe")
    probe_p.def_abstract_eval(lambda x: x)

    def rule(ctx, x):
        seen.append(ctx.axis_context)
        inner = SPMDAxisContext(tuple(devs), ("x",), (8,), tuple(range(8)), frozenset("x"))
        with ctx.module_context.using_axis_context(inner):
            seen.append(ctx.axis_context)
        seen.append(ctx.axis_context)
        return x

    register_lowering(probe_p, rule)
    jit(lambda a: probe_p.bind(a)).lower(device_put(X, tiled(devs, 8, 1)))
    assert isinstance(seen[0], ShardingContext) and seen[0].devices == tuple(devs)
    assert isinstance(seen[1], SPMDAxisContext) and seen[2] is seen[0]


def test_vmap_keeps_shardings_with_an_unsplit_batch_dimension(devs):
    from laminax_core import vmap

    s = tiled(devs, 8, 1)
    f = jit(lambda a: a * 2, in_shardings=s, out_shardings=s)
    batched = vmap(f, in_axes=1)
    xs = np.arange(8 * 3 * 4, dtype=np.float32).reshape(8, 3, 4)
    text = jit(batched).lower(xs).as_text()
    # the batch dimension (axis 1 of the input, 0 of the output) is not split
    assert '[{"_a0"}, {}, {}]' in text and '[{}, {"_a1"}, {}]' in text
    np.testing.assert_array_equal(np.asarray(batched(xs)), np.moveaxis(xs, 1, 0) * 2)
    put = vmap(lambda a: device_put(a, s), in_axes=1)
    y = jit(put)(xs)
    np.testing.assert_array_equal(np.asarray(y), np.moveaxis(xs, 1, 0))


def test_gspmd_with_new_dim_indices(devs):
    s = tiled(devs, 4, 2)._with_new_dim(1, 2)
    shape = (8, 3, 4)
    for d, index in s.devices_indices_map(shape).items():
        assert index[1] == slice(None)
    assert s.shard_shape(shape) == (2, 3, 2)


def test_compiled_refuses_committed_arguments_laid_out_otherwise(devs):
    s = tiled(devs, 8, 1)
    compiled = jit(lambda a: a * 2).lower(device_put(X, s)).compile()
    np.testing.assert_array_equal(np.asarray(compiled(device_put(X, s))), X * 2)
    y = compiled(X)  # uncommitted: moved onto the compiled sharding
    assert y.sharding.is_equivalent_to(s, 2)
    for other in [replicated(devs), devs[0]]:
        with pytest.raises(ValueError, match="compiled for input shardings that disagree"):
            compiled(device_put(X, other))


def test_lower_with_sharded_shape_dtype_structs(devs):
    from laminax_core import ShapeDtypeStruct

    s = tiled(devs, 4, 2)
    spec = ShapeDtypeStruct(X.shape, X.dtype, sharding=s)
    assert "sharding=GSPMDSharding" in repr(spec)
    lowered = jit(lambda a: a * 2).lower(spec)
    assert '#sdy.sharding<@mesh, [{"_a0"}, {"_a1"}]>' in lowered.as_text()
    compiled = lowered.compile()
    (ins,), _ = compiled.input_shardings
    assert ins == s
    np.testing.assert_array_equal(np.asarray(compiled(device_put(X, s))), X * 2)


def test_uncommitted_arguments_beside_sharded_ones_take_the_compilers_layout(devs):
    s = tiled(devs, 8, 1)
    f = jit(lambda a, b, c: a + b * c)
    for _ in range(3):  # the later calls are the fast path's, which places b and c itself
        y = f(device_put(X, s), X, 2.0)
        np.testing.assert_array_equal(np.asarray(y), X + X * 2.0)
    assert f._cache_misses == 1
    (_, b, c), _ = f.lower(device_put(X, s), X, 2.0).compile().input_shardings
    assert b.device_set == set(devs) and c.device_set == set(devs)


def test_jit_device_option_survives_grad(devs):
    from laminax_core import grad

    f = jit(lambda a: (a * a).sum(), device=devs[2])
    g = grad(f)(X)
    np.testing.assert_array_equal(np.asarray(g), 2 * X)
    assert g.sharding == SingleDeviceSharding(devs[2])


def test_host_callback_sharding_picks_its_device(devs):
    on_third = Primitive("seen_on_third")
    on_third.def_abstract_eval(lambda x: x)
    register_lowering(
        on_third,
        lambda ctx, x: emit_python_callback(
            ctx, _record, [x], ctx.avals_in, sharding=SingleDeviceSharding(devs[3])
        )[0][0],
    )
    text = jit(lambda a: on_third.bind(a)).lower(device_put(X, tiled(devs, 8, 1))).as_text()
    assert "sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>" in text
    _SEEN.clear()
    jit(lambda a: on_third.bind(a) + 1)(device_put(X, tiled(devs, 8, 1)))
    effects_barrier()
    np.testing.assert_array_equal(_SEEN[0], X)


@pytest.mark.parametrize("shape", [(7, 2), (9, 4), (1, 8), (12, 3)])
def test_uneven_in_and_out_shardings_raise(devs, shape):
    s = tiled(devs, 8, 1)
    value = np.ones(shape, np.float32)
    with pytest.raises(ValueError, match="axis 0 is partitioned 8 times"):
        jit(lambda a: a, in_shardings=s)(value)
    with pytest.raises(IndivisibleError, match="axis 0 is partitioned 8 times"):
        jit(lambda a: a * 2, out_shardings=s)(value)


@pytest.mark.parametrize("shape", [(), (8,), (8, 2, 2)])
def test_sharding_of_another_rank_raises(devs, shape):
    s = tiled(devs, 8, 1)
    value = np.ones(shape, np.float32)
    with pytest.raises(ValueError, match="is incompatible with its sharding annotation"):
        jit(lambda a: a, in_shardings=s)(value)
    with pytest.raises(ValueError, match=r"key path result\[1\] is incompatible"):
        jit(lambda a: (X, a), out_shardings=s)(value)


def test_replicated_values_share_the_modules_mesh(devs):
    s, r = tiled(devs, 4, 2), replicated(devs)
    text = jit(lambda a, b: (a, b), in_shardings=(r, s), out_shardings=(r, s)).lower(X, X).as_text()
    assert text.count("sdy.mesh @") == 1
    assert text.count('#sdy.sharding<@mesh, [{}, {}]>') == 2


class _Rows:
    """A sharding-like value jit resolves through a registered resolver, when compiling."""


def test_sharding_resolvers_run_when_a_signature_compiles(devs):
    from laminax_dispatch.internal import register_sharding_resolver

    calls = []

    def resolve(value):
        calls.append(value)
        return tiled(devs, 8, 1)

    register_sharding_resolver(_Rows, resolve)
    rows = _Rows()
    f = jit(lambda a: a + 1, in_shardings=rows, out_shardings=rows)
    y = f(X)
    assert y.sharding == tiled(devs, 8, 1) and calls
    n = len(calls)
    f(X)  # the fast path: nothing resolved again
    assert len(calls) == n
    np.testing.assert_array_equal(np.asarray(y), X + 1)

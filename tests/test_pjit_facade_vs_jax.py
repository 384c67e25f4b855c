"""The seed's pjit program, written with seed-era imports against the laminax facade, gives
what today's JAX gives for the same program in today's spelling."""

import warnings

import numpy as np
from jaxref import requires_jax, run_jax


@requires_jax
def test_seed_docstring_program_matches_jax():
    import laminax as jax
    import laminax.numpy as jnp
    from laminax.experimental.maps import mesh
    from laminax.experimental.pjit import PartitionSpec, pjit

    x = jnp.arange(8, dtype=jnp.float32)
    f = pjit(
        lambda x: jax.numpy.convolve(x, jnp.asarray([0.5, 1.0, 0.5]), "same"),
        in_axis_resources=None,
        out_axis_resources=PartitionSpec("devices"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with mesh(jax.devices(), ("devices",)):
            y = f(x)
    expected = run_jax(
        "from jax.sharding import Mesh, PartitionSpec\n"
        "import warnings; warnings.simplefilter('ignore')\n"
        "x = jnp.arange(8, dtype=jnp.float32)\n"
        "f = jax.jit(lambda x: jnp.convolve(x, jnp.asarray([0.5, 1.0, 0.5]), 'same'),"
        " out_shardings=jax.sharding.NamedSharding(m := Mesh(np.array(jax.devices()), ('devices',)), PartitionSpec('devices')))\n"
        "y = f(x)\n"
        "result = (np.asarray(y), repr(y.sharding.spec), sorted((s.device.id, str(s.index)) for s in y.addressable_shards))",
        devices=8,
    )
    np.testing.assert_allclose(np.asarray(y), expected[0])
    assert repr(y.sharding.spec) == expected[1]
    assert sorted((s.device.id, str(s.index)) for s in y.addressable_shards) == expected[2]


def test_facade_names_are_the_layer_objects():
    import laminax
    import laminax.experimental.maps as maps
    import laminax.experimental.mesh_utils as mesh_utils
    import laminax.experimental.pjit as pjit_module
    import laminax.sharding as sharding
    import laminax_pjit

    assert sharding.NamedSharding is laminax.NamedSharding is laminax_pjit.NamedSharding
    assert sharding.PartitionSpec is laminax.P is pjit_module.PartitionSpec
    assert maps.Mesh is sharding.Mesh and pjit_module.pjit is laminax_pjit.pjit
    assert laminax.lax.with_sharding_constraint is laminax_pjit.with_sharding_constraint
    assert mesh_utils.create_device_mesh((8,)).shape == (8,)
    assert laminax.debug.visualize_array_sharding is laminax_pjit.visualize_array_sharding


def test_seed_maps_mesh_is_the_resource_environment():
    import laminax
    from laminax.experimental import maps

    assert maps.thread_resources.env.physical_mesh.empty
    with maps.mesh(laminax.devices(), ("d",)) as physical:
        assert maps.thread_resources.env.physical_mesh is physical
    assert maps.thread_resources.env.physical_mesh.empty

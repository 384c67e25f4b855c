"""Meshes, abstract meshes, the mesh contexts and mesh_utils."""

import warnings

import numpy as np
import pytest
from laminax_dispatch import devices, jit
from laminax_pjit import (
    AbstractMesh,
    AxisType,
    Mesh,
    get_abstract_mesh,
    get_mesh,
    make_mesh,
    mesh_utils,
    set_mesh,
    use_abstract_mesh,
    use_mesh,
)
from laminax_pjit._mesh import mesh_context_manager, resource_mesh


def grid(*shape):
    return np.array(devices()[: int(np.prod(shape))]).reshape(shape)


def test_mesh_holds_devices_by_name_and_is_interned():
    mesh = Mesh(grid(4, 2), ("x", "y"))
    assert mesh is Mesh(grid(4, 2), ["x", "y"])
    assert dict(mesh.shape) == {"x": 4, "y": 2} and mesh.size == 8
    assert mesh.device_ids.tolist() == [[d.id for d in row] for row in grid(4, 2)]
    assert not mesh.devices.flags.writeable
    assert mesh.abstract_mesh is AbstractMesh((4, 2), ("x", "y"), abstract_device=mesh.abstract_mesh.abstract_device)


def test_axis_type_queries():
    mesh = Mesh(grid(2, 2, 2), ("a", "b", "c"), (AxisType.Explicit, AxisType.Auto, AxisType.Manual))
    assert mesh.explicit_axes == ("a",) and mesh.auto_axes == ("b",) and mesh.manual_axes == ("c",)
    assert mesh._any_axis_manual and not mesh.are_all_axes_auto


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: Mesh(grid(4, 2), ("x",)), ValueError),
        (lambda: Mesh(grid(8), (None,)), ValueError),
        (lambda: Mesh(grid(8), ("x",), ("Auto",)), TypeError),
        (lambda: Mesh(grid(8), ("x",), (AxisType.Auto,) * 2), ValueError),
        (lambda: AbstractMesh((2, 2), ("x",)), ValueError),
        (lambda: AbstractMesh((2,), ("x",)).devices, ValueError),
        (lambda: make_mesh((len(devices()) + 1,), ("x",)), ValueError),
        (lambda: make_mesh(("a",), ("x",)), ValueError),
        (lambda: mesh_utils.create_device_mesh((3, 5)), ValueError),
        (lambda: set_mesh("mesh"), ValueError),
        (lambda: use_abstract_mesh(Mesh(grid(2), ("x",))), ValueError),
    ],
)
def test_bad_meshes_raise(make, error):
    with pytest.raises(error):
        make()


def test_with_mesh_is_the_resource_environment_and_warns():
    mesh = Mesh(grid(8), ("x",))
    assert resource_mesh().empty
    with pytest.warns(DeprecationWarning, match="set_mesh"):
        with mesh:
            assert resource_mesh() is mesh
            assert mesh_context_manager.value == (mesh,)
            inner = Mesh(grid(2, 4), ("a", "b"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                with inner:
                    assert resource_mesh() is inner
            assert resource_mesh() is mesh
    assert resource_mesh().empty and mesh_context_manager.value == ()


def test_set_mesh_sets_concrete_and_abstract_mesh():
    mesh = make_mesh((2, 4), ("a", "b"))
    assert get_abstract_mesh().empty and get_mesh().empty
    with set_mesh(mesh):
        assert get_mesh() is mesh and get_abstract_mesh() is mesh.abstract_mesh
        with use_abstract_mesh(AbstractMesh((8,), ("z",))):
            assert get_abstract_mesh().axis_names == ("z",)
    with use_mesh(mesh):
        assert get_mesh() is mesh
    assert get_mesh().empty


def test_set_mesh_refuses_manual_axes_and_tracing():
    with pytest.raises(ValueError, match="manual"):
        set_mesh(Mesh(grid(8), ("x",), (AxisType.Manual,)))
    with pytest.raises(ValueError, match="outside of `jax.jit`"):
        jit(lambda x: set_mesh(None) or x)(1.0)


def test_use_abstract_mesh_cannot_change_the_size():
    with use_abstract_mesh(AbstractMesh((8,), ("x",))):
        with pytest.raises(ValueError, match="size"):
            with use_abstract_mesh(AbstractMesh((4,), ("x",))):
                pass


def test_make_mesh_defaults_to_explicit_axes_over_the_first_devices():
    mesh = make_mesh((3,), ("a",))
    assert mesh.axis_types == (AxisType.Explicit,)
    assert list(mesh.devices) == devices()[:3]


def test_hybrid_mesh_stacks_granules():
    ids = mesh_utils.create_hybrid_device_mesh((2, 4), (1, 1), process_is_granule=True)
    assert ids.shape == (2, 4)
    with pytest.raises(ValueError, match="slice_index"):
        mesh_utils.create_hybrid_device_mesh((2, 4), (1, 1))

"""Registering node types: classes, keys, dataclasses, static types, built-in containers."""

import collections
import dataclasses
import pickle

import laminax_pytree as tu
import pytest
from laminax_pytree.internal import none_leaf_registry, registry


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is Pair and (self.a, self.b) == (other.a, other.b)


tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), "pair"), lambda aux, ab: Pair(*ab))


def test_registered_class_flattens_into_children_with_aux_data():
    leaves, treedef = tu.tree_flatten([Pair(1, (2, 3))])
    assert leaves == [1, 2, 3]
    assert str(treedef) == "PyTreeDef([CustomNode(Pair[pair], [*, (*, *)])])"
    assert tu.tree_unflatten(treedef, [4, 5, 6]) == [Pair(4, (5, 6))]


def test_registered_class_without_keys_gets_flattened_index_keys():
    paths = [path for path, _ in tu.tree_leaves_with_path(Pair(1, 2))]
    assert paths == [(tu.FlattenedIndexKey(0),), (tu.FlattenedIndexKey(1),)]


def test_registering_a_type_twice_is_a_value_error_naming_it():
    with pytest.raises(
        ValueError,
        match=r"register_pytree_node: <class '.*Pair'> is already "
        r"registered as a pytree node",
    ):
        tu.register_pytree_node(Pair, lambda p: ((), None), lambda aux, c: Pair(0, 0))


def test_registration_reaches_both_registries():
    assert registry.is_node(Pair) and none_leaf_registry.is_node(Pair)
    leaves, _ = none_leaf_registry.flatten(Pair(None, 1))
    assert leaves == [None, 1]


def test_register_pytree_node_class_uses_methods_and_returns_the_class():
    @tu.register_pytree_node_class
    class Box:
        def __init__(self, x, tag):
            self.x, self.tag = x, tag

        def tree_flatten(self):
            return (self.x,), self.tag

        @classmethod
        def tree_unflatten(cls, aux_data, children):
            return cls(children[0], aux_data)

    assert isinstance(Box, type)
    out = tu.tree_map(lambda v: v + 1, Box(1, "t"))
    assert (out.x, out.tag) == (2, "t")
    with pytest.raises(ValueError, match="already registered"):
        tu.register_pytree_node_class(Box)


def test_register_pytree_with_keys_gives_key_paths_and_derives_flatten():
    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

    tu.register_pytree_with_keys(
        Point,
        lambda p: (((tu.GetAttrKey("x"), p.x), (tu.GetAttrKey("y"), p.y)), None),
        lambda _, xy: Point(*xy),
    )
    pairs = tu.tree_leaves_with_path({"p": Point(1, 2)})
    assert [(tu.keystr(k), v) for k, v in pairs] == [("['p'].x", 1), ("['p'].y", 2)]
    assert tu.tree_leaves(Point(3, 4)) == [3, 4]


def test_register_pytree_with_keys_class_prefers_tree_flatten_when_present():
    calls = []

    @tu.register_pytree_with_keys_class
    class Thing:
        def __init__(self, v):
            self.v = v

        def tree_flatten_with_keys(self):
            calls.append("keys")
            return ((tu.GetAttrKey("v"), self.v),), None

        def tree_flatten(self):
            calls.append("plain")
            return (self.v,), None

        @classmethod
        def tree_unflatten(cls, aux_data, children):
            return cls(*children)

    assert tu.tree_leaves(Thing(1)) == [1]
    assert calls == ["plain"]
    assert tu.keystr(tu.tree_leaves_with_path(Thing(1))[0][0]) == ".v"
    assert calls == ["plain", "keys"]


def test_register_dataclass_with_explicit_fields():
    @dataclasses.dataclass
    class Layer:
        w: float
        b: float
        act: str

    tu.register_dataclass(Layer, data_fields=["w", "b"], meta_fields=["act"])
    leaves, treedef = tu.tree_flatten(Layer(1.0, 2.0, "relu"))
    assert leaves == [1.0, 2.0]
    assert str(treedef) == "PyTreeDef(CustomNode(Layer[('relu',)], [*, *]))"
    assert tu.tree_unflatten(treedef, [3.0, 4.0]) == Layer(3.0, 4.0, "relu")
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Layer(1.0, 2.0, "relu"))]
    assert paths == [".w", ".b"]


def test_register_dataclass_infers_fields_from_static_metadata():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Opt:
        lr: float
        name: str = dataclasses.field(default="sgd", metadata={"static": True})
        momentum: float = 0.9

    leaves, treedef = tu.tree_flatten(Opt(0.1))
    assert leaves == [0.1, 0.9]
    assert str(treedef) == "PyTreeDef(CustomNode(Opt[('sgd',)], [*, *]))"
    assert tu.tree_structure(Opt(0.1, "adam")) != treedef


def test_register_dataclass_drop_fields_leaves_fields_out():
    @dataclasses.dataclass
    class WithCache:
        x: float
        cache: object = None

    tu.register_dataclass(WithCache, ["x"], [], drop_fields=["cache"])
    assert tu.tree_leaves(WithCache(1.0, cache="big")) == [1.0]


def test_register_dataclass_argument_errors():
    @dataclasses.dataclass
    class D:
        a: int
        b: int

    with pytest.raises(TypeError, match="pass both data_fields and meta_fields, or neither"):
        tu.register_dataclass(D, data_fields=["a", "b"])
    with pytest.raises(ValueError, match=r"Missing fields: \['b'\]"):
        tu.register_dataclass(D, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match=r"Unexpected fields: \['c'\]"):
        tu.register_dataclass(D, data_fields=["a", "b", "c"], meta_fields=[])
    with pytest.raises(ValueError, match=r"fields \['a'\] are listed both"):
        tu.register_dataclass(D, data_fields=["a", "b"], meta_fields=["a"])

    class NotADataclass:
        pass

    with pytest.raises(TypeError, match="is not a dataclass, so data_fields and meta_fields"):
        tu.register_dataclass(NotADataclass)


def test_register_dataclass_twice_is_a_value_error():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Once:
        x: int

    with pytest.raises(ValueError, match=r"register_dataclass: .*Once'> is already registered"):
        tu.register_dataclass(Once)


def test_register_static_makes_instances_part_of_the_structure():
    @tu.register_static
    class Mode(str):
        pass

    leaves, treedef = tu.tree_flatten({"x": 1, "mode": Mode("train")})
    assert leaves == [1]
    assert tu.tree_unflatten(treedef, [2]) == {"x": 2, "mode": "train"}
    assert tu.tree_structure({"x": 1, "mode": Mode("eval")}) != treedef


def test_namedtuple_is_a_node_with_attribute_keys():
    Point = collections.namedtuple("Point", "x y")
    leaves, treedef = tu.tree_flatten(Point(1, (2, 3)))
    assert leaves == [1, 2, 3]
    assert tu.tree_unflatten(treedef, "abc") == Point("a", ("b", "c"))
    keys = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Point(1, 2))]
    assert keys == [".x", ".y"]


def test_ordered_dict_keeps_insertion_order():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, treedef = tu.tree_flatten(od)
    assert leaves == [1, 2]
    assert str(treedef) == "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"
    out = tu.tree_unflatten(treedef, [3, 4])
    assert type(out) is collections.OrderedDict and list(out.items()) == [("b", 3), ("a", 4)]
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(od)] == ["['b']", "['a']"]


def test_defaultdict_sorts_keys_and_keeps_default_factory():
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, treedef = tu.tree_flatten(dd)
    assert leaves == [2, 1]
    out = tu.tree_unflatten(treedef, [5, 6])
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert dict(out) == {"a": 5, "b": 6}
    assert str(treedef) == (
        "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))"
    )


def test_treedef_with_custom_nodes_pickles():
    treedef = tu.tree_structure([Pair(1, 2), collections.defaultdict(int, a=1)])
    assert pickle.loads(pickle.dumps(treedef)) == treedef

"""laminax's pytrees against real JAX 0.10.2: the same snippet runs under both.

Each snippet is written against JAX's API and assigns plain data to `result`; it runs once in
the real-JAX environment (`run_jax`) and once here with `jax` bound to `laminax`.
"""

import laminax
import numpy as np
import pytest
from jaxref import JaxReferenceError, requires_jax, run_jax

pytestmark = [requires_jax, pytest.mark.jax]

# Builds a few kinds of nodes; run first in every snippet that needs them.
PRELUDE = """
import collections, dataclasses, functools, operator
Point = collections.namedtuple("Point", "x y")

class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b
jax.tree_util.register_pytree_node(Pair, lambda p: ((p.a, p.b), "meta"), lambda m, c: Pair(*c))

class Keyed:
    def __init__(self, u, v):
        self.u, self.v = u, v
jax.tree_util.register_pytree_with_keys(
    Keyed,
    lambda k: (((jax.tree_util.GetAttrKey("u"), k.u), (jax.tree_util.DictKey("v"), k.v)), None),
    lambda _, c: Keyed(*c))

@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Layer:
    w: object
    b: object
    act: str = dataclasses.field(default="relu", metadata={"static": True})

@jax.tree_util.register_static
class Tag(str):
    pass
"""

TREES = {
    "nested builtins": "{'b': [1, (2, None)], 'a': 3, 'c': {}}",
    "none and empties": "[None, (), [], {}, (None,)]",
    "leaf": "7",
    "namedtuple": "[Point(1, (2, 3)), Point(x=4, y=None)]",
    "ordered dict": "collections.OrderedDict([('z', 1), ('a', [2, 3])])",
    "defaultdict": "collections.defaultdict(list, {'q': 1, 'b': (2,)})",
    "custom node": "{'p': Pair(1, [2, 3])}",
    "keyed node": "[Keyed(1, {'k': 2})]",
    "dataclass": "(Layer(w=1.0, b=[2.0]), Layer(w=3.0, b=None, act='tanh'))",
    "static": "[1, Tag('train'), {'t': Tag('x')}]",
    "partial": "jax.tree_util.Partial(operator.add, 1, k=2)",
    "mixed": "{'layers': [Layer(1, 2), Pair(Point(3, 4), None)],"
    " 'od': collections.OrderedDict(b=5)}",
}


def run_both(source, **inputs):
    """(laminax's result, JAX's result) for `source`; errors become ('raised', type name)."""
    source = PRELUDE + source
    scope = {"jax": laminax, "np": np, **inputs}
    try:
        exec(compile(source, "<laminax snippet>", "exec"), scope)
        ours = scope.get("result")
    except Exception as err:  # the error's type is what gets compared
        ours = ("raised", type(err).__name__)
    try:
        theirs = run_jax(source, **inputs)
    except JaxReferenceError as err:
        theirs = ("raised", err.type_name)
    return ours, theirs


@pytest.mark.parametrize("tree", TREES.values(), ids=TREES.keys())
def test_flatten_leaves_treedef_and_counts_match(tree):
    ours, theirs = run_both(f"""
tree = {tree}
leaves, treedef = jax.tree_util.tree_flatten(tree)
result = (repr(leaves), str(treedef), treedef.num_leaves, treedef.num_nodes,
          [str(c) for c in treedef.children()], jax.tree_util.treedef_is_leaf(treedef))
""")
    assert ours == theirs


@pytest.mark.parametrize("tree", TREES.values(), ids=TREES.keys())
def test_key_paths_match(tree):
    ours, theirs = run_both(f"""
tree = {tree}
pairs = jax.tree_util.tree_leaves_with_path(tree)
result = [(jax.tree_util.keystr(p), jax.tree_util.keystr(p, simple=True, separator='/'),
           repr(p), repr(x)) for p, x in pairs]
""")
    assert ours == theirs


@pytest.mark.parametrize("tree", TREES.values(), ids=TREES.keys())
def test_map_round_trip_and_pickle_match(tree):
    ours, theirs = run_both(f"""
import pickle
tree = {tree}
treedef = jax.tree.structure(tree)
mapped = jax.tree.map(lambda x: ('leaf', x), tree)
with_path = jax.tree.map_with_path(lambda p, x: len(p), tree)
restored = pickle.loads(pickle.dumps(treedef))
result = (repr(jax.tree.leaves(mapped)), repr(jax.tree.leaves(with_path)),
          str(jax.tree.structure(mapped)) == str(treedef), restored == treedef,
          jax.tree.unflatten(treedef, jax.tree.leaves(tree)) == tree
          if not isinstance(tree, (Pair, Keyed)) else None)
""")
    assert ours == theirs


def test_map_over_several_trees_with_is_leaf_matches():
    ours, theirs = run_both("""
a = {'x': (1, 2), 'y': [3]}
b = {'x': ([10], 20), 'y': [{'deep': 30}]}
result = (jax.tree_util.tree_map(lambda p, q: repr((p, q)), a, b),
          jax.tree_util.tree_map(lambda t, q: repr((t, q)), a, b,
                                 is_leaf=lambda n: isinstance(n, tuple)))
""")
    assert ours == theirs


def test_transpose_reduce_broadcast_match():
    ours, theirs = run_both("""
outer = jax.tree.structure([0, {'k': 0}])
inner = jax.tree.structure((0, 0))
t = [(1, 2), {'k': (3, 4)}]
cat = lambda x, y: f'({x}{y})'
result = (jax.tree.transpose(outer, inner, t), jax.tree.transpose(outer, None, t),
          jax.tree.reduce(cat, ['a', ('b', 'c')]), jax.tree.reduce(cat, ['a', 'b'], 'z'),
          jax.tree.reduce_associative(cat, list('abcdefg')),
          jax.tree.broadcast([1, {'a': 2}], [[0, 0], {'a': (0, None, 0)}]),
          jax.tree.all([1, (True,)]), jax.tree.all([1, (0,)]),
          jax.tree_util.all_leaves([1, 'a']), jax.tree_util.all_leaves([1, (2,)]),
          jax.tree_util.all_leaves([(1,)], is_leaf=lambda x: isinstance(x, tuple)),
          [jax.tree_util.is_tree_node(t) for t in (list, dict, type(None), int, Point, Pair)])
""")
    assert ours == theirs


def test_flatten_one_level_and_treedef_tuple_match():
    ours, theirs = run_both("""
tu = jax.tree_util
c, m = tu.flatten_one_level({'b': [1], 'a': 2})
kc, km = tu.flatten_one_level_with_keys(Keyed(1, 2))
both = tu.treedef_tuple([jax.tree.structure([1]), jax.tree.structure({'a': 1})])
result = (repr(tuple(c)), repr(m), repr(tuple(kc)), repr(km), str(both),
          [str(x) for x in tu.treedef_children(both)],
          str(jax.tree.structure([0, 0]).compose(jax.tree.structure((0, None)))),
          jax.tree.structure([1, 2]).flatten_up_to([(3,), {'a': 4}]))
""")
    assert ours == theirs


ERROR_CASES = {
    "map different types": "jax.tree.map(lambda x, y: x, [1, 2], (1, 2))",
    "map different lengths": "jax.tree.map(lambda x, y: x, [1, (2, 3)], [1, (2, 3, 4)])",
    "map different keys": "jax.tree.map(lambda x, y: x, {'a': 1}, {'b': 1})",
    "map none vs leaf": "jax.tree.map(lambda x, y: x, [None], [1])",
    "map custom metadata": "jax.tree.map(lambda x, y: x, Layer(1, 2), Layer(1, 2, 'tanh'))",
    "map with path": "jax.tree.map_with_path(lambda p, x, y: x, [1], [1, 2])",
    "unflatten too few": "jax.tree.unflatten(jax.tree.structure([1, 2]), [1])",
    "unflatten too many": "jax.tree.unflatten(jax.tree.structure([1, 2]), [1, 2, 3])",
    "register twice": "jax.tree_util.register_pytree_node(Pair, lambda p: ((), None), None)",
    "register dataclass twice": "jax.tree_util.register_dataclass(Layer)",
    "transpose mismatch": "jax.tree.transpose(jax.tree.structure([0, 0]),"
    " jax.tree.structure((0, 0)), [(1, 2), (3,)])",
    "reduce empty": "jax.tree.reduce(operator.add, [])",
    "reduce associative empty": "jax.tree.reduce_associative(operator.add, [])",
    "flatten one level leaf": "jax.tree_util.flatten_one_level(1)",
    "broadcast not prefix": "jax.tree.broadcast([1, 2, 3], [[0], {'a': 0}])",
    "dataclass half fields": "jax.tree_util.register_dataclass(Point, data_fields=['x'])",
    "dataclass not dataclass": "jax.tree_util.register_dataclass(Pair)",
    "dataclass missing field": """
@dataclasses.dataclass
class D:
    a: int
    b: int
jax.tree_util.register_dataclass(D, data_fields=['a'], meta_fields=[])""",
}


@pytest.mark.parametrize("call", ERROR_CASES.values(), ids=ERROR_CASES.keys())
def test_error_types_match(call):
    ours, theirs = run_both(call)
    assert ours[0] == "raised", f"laminax did not raise; JAX: {theirs}"
    assert ours == theirs


def test_partial_behaviour_matches():
    ours, theirs = run_both("""
P = jax.tree_util.Partial
p = P(functools.partial(operator.add, 1), 2)
q = jax.tree.map(lambda x: x * 10, P(operator.sub, 5, 1))
result = (p(), jax.tree.leaves(p), q(), jax.tree.leaves(q), str(jax.tree.structure(P(print))),
          jax.tree.structure(P(operator.add, 1)) == jax.tree.structure(P(operator.add, 9)))
""")
    assert ours == theirs


def test_register_dataclass_inferred_fields_match():
    ours, theirs = run_both("""
@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Opt:
    lr: float
    name: str = jax.tree.static(default='sgd')
    mom: float = 0.9
leaves, treedef = jax.tree.flatten(Opt(0.1))
paths = [jax.tree_util.keystr(p) for p, _ in jax.tree.leaves_with_path(Opt(0.1))]
result = (leaves, str(treedef), paths, jax.tree.unflatten(treedef, [1, 2]) == Opt(1, 'sgd', 2))
""")
    assert ours == theirs


def test_facade_has_exactly_jax_public_tree_names():
    theirs = run_jax("""
result = (sorted(n for n in dir(jax.tree_util) if not n.startswith('_')),
          sorted(n for n in dir(jax.tree) if not n.startswith('_')))
""")
    tree_util_names, tree_names = theirs
    assert sorted(laminax.tree_util.__all__) == tree_util_names
    assert sorted(laminax.tree.__all__) == tree_names
    for name in tree_util_names:
        assert hasattr(laminax.tree_util, name)

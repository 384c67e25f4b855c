"""Partial: a functools.partial whose bound arguments are pytree leaves."""

import functools
import operator
import pickle

import laminax_pytree as tu


def scale(x, factor=1):
    return x * factor


def test_partial_calls_like_functools_partial():
    p = tu.Partial(scale, 3, factor=2)
    assert p() == 6
    assert isinstance(p, functools.partial)


def test_partial_args_and_keywords_are_children_and_func_is_static():
    p = tu.Partial(scale, 3, factor=2)
    leaves, treedef = tu.tree_flatten(p)
    assert leaves == [3, 2]
    assert str(treedef).startswith("PyTreeDef(CustomNode(Partial[<function scale")
    assert str(treedef).endswith("[(*,), {'factor': *}]))")
    doubled = tu.tree_map(lambda v: v * 10, p)
    assert isinstance(doubled, tu.Partial) and doubled() == 600


def test_partial_of_different_functions_has_different_structure():
    assert tu.tree_structure(tu.Partial(operator.add, 1)) != tu.tree_structure(
        tu.Partial(operator.mul, 1)
    )
    assert tu.tree_structure(tu.Partial(operator.add, 1)) == tu.tree_structure(
        tu.Partial(operator.add, 2)
    )


def test_partial_keeps_an_inner_functools_partial_whole():
    inner = functools.partial(scale, factor=5)
    p = tu.Partial(inner, 2)
    assert p() == 10
    assert tu.tree_leaves(p) == [2]
    assert p.func.func is scale and p.func.keywords == {"factor": 5}
    rebuilt = tu.tree_unflatten(tu.tree_structure(p), [4])
    assert rebuilt() == 20
    assert tu.tree_structure(rebuilt) == tu.tree_structure(p)


def test_partial_with_no_arguments_has_no_leaves():
    p = tu.Partial(operator.neg)
    assert tu.tree_leaves(p) == [] and p(3) == -3


def test_partial_treedef_pickles():
    treedef = tu.tree_structure(tu.Partial(scale, 1))
    assert pickle.loads(pickle.dumps(treedef)) == treedef

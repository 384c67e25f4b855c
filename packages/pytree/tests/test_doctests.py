"""Every docstring example in laminax-pytree runs and prints what it shows."""

import doctest
import importlib

import pytest

MODULES = [
    "laminax_pytree._keys",
    "laminax_pytree._partial",
    "laminax_pytree._prefix",
    "laminax_pytree._registry",
    "laminax_pytree._tree_util",
    "laminax_pytree.internal",
    "laminax_pytree.tree",
]


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_run(module_name):
    module = importlib.import_module(module_name)
    # Examples register classes; each module's examples run once per process.
    results = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=True)
    assert results.attempted > 0, f"{module_name} has no docstring examples"
    assert results.failed == 0, f"{results.failed} docstring examples failed in {module_name}"

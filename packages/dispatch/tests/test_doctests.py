"""The docstring examples of dispatch's jit, stages, lowering and eager modules run as tests."""

import doctest
import importlib

import pytest

MODULES = [
    "laminax_dispatch._jit",
    "laminax_dispatch._stages",
    "laminax_dispatch._eager",
    "laminax_dispatch._array_methods",
    "laminax_dispatch._lowering._core",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0

"""Every public name is documented, and the docstring examples of core's kernel modules run."""

import doctest
import importlib

import laminax_core
import numpy as np
import pytest
from laminax_core import internal, lax

KERNEL_MODULES = [
    "laminax_core._api",
    "laminax_core._avals",
    "laminax_core._checkpoint",
    "laminax_core._checkpoint_policies",
    "laminax_core._custom_derivatives",
    "laminax_core._effects",
    "laminax_core._interpreters.eval",
    "laminax_core._jacobians",
    "laminax_core._jaxpr",
    "laminax_core._primitive",
    "laminax_core.internal",
    "laminax_core.lax._collectives",
    "laminax_core.lax._control_flow.cond",
    "laminax_core.lax._control_flow.scan",
    "laminax_core.lax._control_flow.while_loop",
    "laminax_core.lax._dot",
    "laminax_core.lax._elementwise",
    "laminax_core.lax._joining",
    "laminax_core.lax._platform",
    "laminax_core.lax._slicing",
    "laminax_core.lax._structural",
    "laminax_core.ode",
    "laminax_core.testing",
]


def _globals():
    names = {name: getattr(laminax_core, name) for name in laminax_core.__all__}
    return {**names, "np": np, "lax": lax}


@pytest.mark.parametrize("module_name", KERNEL_MODULES)
def test_docstring_examples_run(module_name):
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, module_name, globs={**vars(module), **_globals()}):
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} failing examples in {module_name}"


@pytest.mark.parametrize("namespace", [laminax_core, internal])
def test_every_public_name_is_documented(namespace):
    # constants that are None (lax's ANY, batching's not_mapped) are documented where defined
    undocumented = [
        n
        for n in namespace.__all__
        if getattr(namespace, n) is not None and not getattr(namespace, n).__doc__
    ]
    assert not undocumented

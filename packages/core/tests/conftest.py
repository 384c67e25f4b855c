"""Core's tests check core on its NumPy reference interpreter.

When the whole repository's suite runs in one process, dispatch may already have plugged its XLA
executor into core's eager hook; each core test unplugs it and restores it afterwards, so these
tests see the same eager values (NumPy arrays) as with only core installed.
"""

import pytest
from laminax_core.internal import set_eager_impl


@pytest.fixture(autouse=True)
def _reference_interpreter():
    previous = set_eager_impl(None)
    yield
    set_eager_impl(previous)

"""A pytest plugin that runs a test suite written for JAX on laminax: `pytest -p
laminax.pytest_plugin`. Loading it makes `import jax` give laminax (`install_as_jax`) before any
conftest or test module is imported; pytest-xdist workers load it too, as they get the same `-p`
options.
"""

import laminax
from laminax import install_as_jax
from laminax._jax_alias import JAX_API_VERSION

__all__ = ["pytest_report_header"]

install_as_jax()


def pytest_report_header(config):
    return f"jax: laminax {laminax.__version__} (JAX API {JAX_API_VERSION}), laminax.install_as_jax"

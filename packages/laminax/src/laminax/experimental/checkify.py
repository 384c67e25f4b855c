"""laminax.experimental.checkify: JAX's functionalized runtime checks (from laminax-core)."""

from laminax_core.checkify import Error as Error
from laminax_core.checkify import ErrorCategory as ErrorCategory
from laminax_core.checkify import JaxRuntimeError as JaxRuntimeError
from laminax_core.checkify import all_checks as all_checks
from laminax_core.checkify import automatic_checks as automatic_checks
from laminax_core.checkify import check as check
from laminax_core.checkify import check_error as check_error
from laminax_core.checkify import checkify as checkify
from laminax_core.checkify import debug_check as debug_check
from laminax_core.checkify import div_checks as div_checks
from laminax_core.checkify import float_checks as float_checks
from laminax_core.checkify import index_checks as index_checks
from laminax_core.checkify import init_error as init_error
from laminax_core.checkify import nan_checks as nan_checks
from laminax_core.checkify import user_checks as user_checks

__all__ = [
    "Error", "ErrorCategory", "JaxRuntimeError", "all_checks", "automatic_checks", "check",
    "check_error", "checkify", "debug_check", "div_checks", "float_checks", "index_checks",
    "init_error", "nan_checks", "user_checks",
]

"""`checkify`: functionalized runtime checks (JAX's `jax.experimental.checkify`).

`check(pred, msg, *fmt_args)` binds the effectful `check` primitive (`_checkify_check`).
`checkify(f, errors=...)` stages `f` and re-evaluates it with an interpreter that threads an
error state through the equations (`_checkify_interpreter`); the result is an `Error`
(`_checkify_errors`) next to `f`'s output. The layers above register their higher-order
primitives' rules in `checkify_rules` (with `CheckifyState` and `evaluate`).
"""

from laminax_core._checkify_check import UNFUNCTIONALIZED as UNFUNCTIONALIZED
from laminax_core._checkify_check import check as check
from laminax_core._checkify_check import check_p as check_p
from laminax_core._checkify_check import debug_check as debug_check
from laminax_core._checkify_errors import BatchedError as BatchedError
from laminax_core._checkify_errors import DivisionByZeroError as DivisionByZeroError
from laminax_core._checkify_errors import Error as Error
from laminax_core._checkify_errors import ErrorCategory as ErrorCategory
from laminax_core._checkify_errors import FailedCheckError as FailedCheckError
from laminax_core._checkify_errors import JaxException as JaxException
from laminax_core._checkify_errors import JaxRuntimeError as JaxRuntimeError
from laminax_core._checkify_errors import NaNError as NaNError
from laminax_core._checkify_errors import OOBError as OOBError
from laminax_core._checkify_errors import all_checks as all_checks
from laminax_core._checkify_errors import automatic_checks as automatic_checks
from laminax_core._checkify_errors import div_checks as div_checks
from laminax_core._checkify_errors import float_checks as float_checks
from laminax_core._checkify_errors import index_checks as index_checks
from laminax_core._checkify_errors import nan_checks as nan_checks
from laminax_core._checkify_errors import user_checks as user_checks
from laminax_core._checkify_interpreter import CheckifyState as CheckifyState
from laminax_core._checkify_interpreter import check_error as check_error
from laminax_core._checkify_interpreter import checkify_rules as checkify_rules
from laminax_core._checkify_interpreter import evaluate as evaluate
from laminax_core._checkify_interpreter import checkify as checkify
from laminax_core._checkify_interpreter import init_error as init_error

__all__ = [
    "BatchedError", "CheckifyState", "DivisionByZeroError", "Error", "ErrorCategory", "FailedCheckError",
    "JaxException", "JaxRuntimeError", "NaNError", "OOBError", "UNFUNCTIONALIZED",
    "all_checks", "automatic_checks", "check", "check_error", "check_p", "checkify", "checkify_rules", "evaluate",
    "debug_check", "div_checks", "float_checks", "index_checks", "init_error", "nan_checks",
    "user_checks",
]

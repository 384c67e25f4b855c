"""The error values of `checkify`: the error categories (`JaxException` subclasses), the error
sets users pass as `errors=`, and `Error`, the pytree a checkified function returns.

An `Error` holds three kinds of leaves: `failed` (did any check fail), `code` (which check site
failed first) and, per site, the values its message is formatted with. The sites themselves
(their category, message and payload structure) are static: they are the pytree's aux data.
Under `vmap` the leaves gain the mapped axes and the error reports each failing index.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from laminax_pytree import register_pytree_node, tree_unflatten

__all__ = [
    "BatchedError",
    "DivisionByZeroError",
    "Error",
    "ErrorCategory",
    "FailedCheckError",
    "JaxException",
    "JaxRuntimeError",
    "NaNError",
    "OOBError",
    "Site",
    "all_checks",
    "automatic_checks",
    "div_checks",
    "float_checks",
    "index_checks",
    "nan_checks",
    "set_throw",
    "user_checks",
    "format_user_message",
]


class JaxRuntimeError(ValueError):
    """Raised when a functionalized check failed (`Error.throw`, an eager `check`)."""


class JaxException(Exception):
    """Base of the error categories a check site belongs to."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class FailedCheckError(JaxException):
    """A user `check` whose predicate was false."""


class NaNError(JaxException):
    """A primitive produced a NaN."""


class DivisionByZeroError(JaxException):
    """An integer division or remainder by zero."""


class OOBError(JaxException):
    """An out-of-bounds index."""


class BatchedError(JaxException):
    """The failures of a vmapped checkified function, one per failing mapped index."""

    def __init__(self, error_mapping: dict[tuple[int, ...], JaxException]):
        self.error_mapping = error_mapping
        super().__init__(
            "\n".join(
                f"at mapped index {', '.join(map(str, idx))}: {e}" for idx, e in error_mapping.items()
            )
        )


ErrorCategory = type[JaxException]

user_checks: frozenset = frozenset({FailedCheckError})
nan_checks: frozenset = frozenset({NaNError})
div_checks: frozenset = frozenset({DivisionByZeroError})
index_checks: frozenset = frozenset({OOBError})
float_checks: frozenset = nan_checks | div_checks
automatic_checks: frozenset = float_checks | index_checks
all_checks: frozenset = automatic_checks | user_checks


@dataclass(frozen=True, eq=False)
class Site:
    """One place that can fail: its category, the avals of its payload (the values its message
    is built from) and how the message is built from them."""

    category: ErrorCategory
    payload_avals: tuple
    describe: Callable[[list], str]
    payload_tree: object = None  # a treedef of the payload, for user checks' format arguments

    def exception(self, payload: list) -> JaxException:
        return self.category(self.describe(payload))


_throw: list = [None]  # `check`'s binding of an error, installed by `_checkify_check`


def set_throw(fn) -> None:
    _throw[0] = fn


class Error:
    """The outcome of a checkified function: `get()`, `get_exception()` and `throw()`."""

    __slots__ = ("_code", "_failed", "_payloads", "_sites")

    def __init__(self, failed, code, payloads: tuple, sites: tuple[Site, ...]):
        self._failed = failed
        self._code = code
        self._payloads = payloads
        self._sites = sites

    def _concrete(self):
        try:
            return (
                np.asarray(self._failed),
                np.asarray(self._code),
                # the payloads stay arrays of their kind: messages print them as JAX does
                [list(p) for p in self._payloads],
            )
        except Exception as e:  # a tracer: its values are not known yet
            raise ValueError(
                "checkify: the error's values are not known inside a traced function; return "
                "the Error from the transformed function (or use checkify.check_error) and read "
                "it outside."
            ) from e

    def get_exception(self) -> JaxException | None:
        """The exception of the first failed check, or None when every check passed."""
        failed, code, payloads = self._concrete()
        if failed.ndim == 0:
            if not failed:
                return None
            return self._exception_at(code, payloads, ())
        mapping = {}
        for idx in itertools.product(*map(range, failed.shape)):
            if failed[idx]:
                mapping[idx] = self._exception_at(code[idx], payloads, idx)
        return BatchedError(mapping) if mapping else None

    def _exception_at(self, code, payloads, idx) -> JaxException:
        site = self._sites[int(code)]
        payload = [v[idx] for v in payloads[int(code)]]
        return site.exception(payload)

    def get(self) -> str | None:
        """The failed check's message, or None when every check passed."""
        exception = self.get_exception()
        return None if exception is None else str(exception)

    def throw(self) -> None:
        """Raises `JaxRuntimeError` with the failed check's message when one failed (for a
        mapped error, one failing index's); inside `checkify` the failure is re-recorded."""
        _throw[0](self)

    def __repr__(self) -> str:
        try:
            return f"Error({self.get()!r})"
        except ValueError:
            return "Error(<traced>)"

    __str__ = __repr__


register_pytree_node(
    Error,
    lambda e: ((e._failed, e._code, e._payloads), e._sites),
    lambda sites, leaves: Error(leaves[0], leaves[1], tuple(map(tuple, leaves[2])), sites),
)


def format_user_message(fmt: str, tree, payload: list) -> str:
    args, kwargs = tree_unflatten(tree, payload)
    return fmt.format(*args, **kwargs) + " (`check` failed)"

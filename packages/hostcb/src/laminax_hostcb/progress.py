"""Progress reports from inside compiled loops: `fori_loop` and `scan` that call `report(done)` on
the host every `every` steps, through `host_callback.id_tap` (asynchronous: the loop does not
wait for the report).

Per step the loop pays one integer remainder, one comparison and one `cond` (a few nanoseconds
on CPU); every `every`-th step, and after the last one, it also pays one tap: a copy of one
int32 into the tap queue (microseconds), after which the report runs on the tap thread. So
``every=100`` is essentially free, while ``every=1`` in a loop of tiny steps is dominated by
the taps. Call `host_callback.barrier_wait()` to be sure every report has run.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from laminax_core import lax

from laminax_hostcb.host_callback import id_tap

__all__ = ["fori_loop", "scan"]


class _Reporter:
    """The tap function: calls `report(done)`; equal for equal reports (one compilation)."""

    def __init__(self, report: Callable[[int], None]):
        self.report = report
        self.__name__ = getattr(report, "__name__", "report")

    def __call__(self, done, transforms):
        self.report(int(done))

    def __eq__(self, other):
        return isinstance(other, _Reporter) and self.report == other.report

    def __hash__(self):
        return hash(self.report)


def _check(every, report) -> None:
    if not callable(report):
        raise TypeError(f"report must be callable as report(steps_done); got {report!r}.")
    if not isinstance(every, int | np.integer) or every < 1:
        raise ValueError(
            f"every must be a positive integer (report every that many steps); got {every!r}."
        )


def _maybe_report(done, total, every: int, reporter: _Reporter) -> None:
    def tap(d):
        id_tap(reporter, d)

    due = (lax.rem(done, np.int32(every)) == 0) | (done == total)
    lax.cond(due, tap, lambda d: None, done)


def fori_loop(lower, upper, body_fun, init_val, *, report, every: int = 1):
    """`lax.fori_loop` that calls ``report(steps_done)`` on the host every `every` steps.

    Args:
      lower, upper, body_fun, init_val: as for `lax.fori_loop`.
      report: a host function called with the number of steps done so far (an int).
      every: report after every `every`-th step, and after the last one.

    Returns:
      What `lax.fori_loop` returns.

    Example:
      >>> from laminax_hostcb.host_callback import barrier_wait
      >>> seen = []
      >>> out = fori_loop(0, 10, lambda i, c: c + i, 0, report=seen.append, every=4)
      >>> barrier_wait()
      >>> int(out), seen
      (45, [4, 8, 10])
    """
    _check(every, report)
    reporter = _Reporter(report)
    lower_i = lax.convert_element_type(lower, np.int32)
    total = lax.convert_element_type(upper, np.int32) - lower_i

    def body(i, carry):
        carry = body_fun(i, carry)
        _maybe_report(lax.convert_element_type(i, np.int32) - lower_i + 1, total, every, reporter)
        return carry

    return lax.fori_loop(lower, upper, body, init_val)


def scan(f, init, xs=None, length=None, *, report, every: int = 1, **scan_kwargs):
    """`lax.scan` that calls ``report(steps_done)`` on the host every `every` steps.

    Args:
      f, init, xs, length: as for `lax.scan` (other keywords, such as `reverse` and `unroll`,
        are passed on).
      report: a host function called with the number of steps done so far (an int).
      every: report after every `every`-th step, and after the last one.

    Returns:
      What `lax.scan` returns: ``(final carry, stacked outputs)``.

    Example:
      >>> import numpy as np
      >>> from laminax_hostcb.host_callback import barrier_wait
      >>> seen = []
      >>> carry, ys = scan(lambda c, x: (c + x, 2 * x), 0.0, np.arange(5.0), report=seen.append,
      ...                  every=2)
      >>> barrier_wait()
      >>> float(carry), seen
      (10.0, [2, 4, 5])
    """
    _check(every, report)
    reporter = _Reporter(report)
    if length is None:
        from laminax_pytree import tree_leaves

        length = int(np.shape(tree_leaves(xs)[0])[0])
    total = np.int32(length)

    def body(carry, x):
        step, inner = carry
        inner, y = f(inner, x)
        done = step + 1
        _maybe_report(done, total, every, reporter)
        return (done, inner), y

    (_, carry), ys = lax.scan(body, (np.int32(0), init), xs, length=length, **scan_kwargs)
    return carry, ys

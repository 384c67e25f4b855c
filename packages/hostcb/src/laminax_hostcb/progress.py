"""Progress reports from inside compiled loops: `fori_loop` and `scan` that call `report(done)` on
the host every `every` steps, through `host_callback.id_tap` (asynchronous: the loop does not
wait for the report).

Cost: nothing per step. The loop is run as an outer loop over chunks of `every` steps (and a
shorter last chunk), each chunk an inner loop of the user's body followed by one tap: XLA's
call into Python and one int32 put in the tap queue, about 10 µs of the loop's time, after
which `report` runs on the tap thread. So ``every=100`` adds about 10 µs per hundred steps
(measured: +3% on a scan of 4 µs steps, `bench/RESULTS.md`), and ``every=1`` that per step.
Call `host_callback.barrier_wait()` to be sure every report has run.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from laminax_core import lax
from laminax_pytree import tree_leaves, tree_map

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
    if isinstance(every, bool) or not isinstance(every, int | np.integer) or every < 1:
        raise ValueError(
            f"every must be a positive integer (report every that many steps); got {every!r}."
        )


def _chunks(total: int, every: int) -> tuple[int, int]:
    """(number of whole chunks, length of the last, partial chunk)."""
    return total // every, total % every


def fori_loop(lower: int, upper: int, body_fun, init_val, *, report, every: int = 1):
    """`lax.fori_loop` that calls ``report(steps_done)`` on the host every `every` steps.

    Args:
      lower, upper: the loop bounds (Python integers: the chunking is decided when tracing).
      body_fun, init_val: as for `lax.fori_loop`.
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
    lower, upper = int(lower), int(upper)
    reporter = _Reporter(report)
    whole, rest = _chunks(max(upper - lower, 0), every)

    def chunk(start, size, carry):
        carry = lax.fori_loop(start, start + size, body_fun, carry)
        id_tap(reporter, start + size - np.int32(lower))
        return carry

    carry = init_val
    if whole:
        carry = lax.fori_loop(
            0, whole, lambda c, carry: chunk(lower + c * np.int32(every), every, carry), carry
        )
    if rest:
        carry = chunk(np.int32(lower + whole * every), rest, carry)
    return carry


def scan(f, init, xs=None, length=None, *, report, every: int = 1, reverse=False, unroll=1):
    """`lax.scan` that calls ``report(steps_done)`` on the host every `every` steps.

    Args:
      f, init, xs, length, reverse, unroll: as for `lax.scan`.
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
    leaves = tree_leaves(xs)
    total = int(length if length is not None else np.shape(leaves[0])[0])
    if total == 0:
        return lax.scan(f, init, xs, length=0, reverse=reverse, unroll=unroll)
    whole, rest = _chunks(total, every)
    # steps in the order they run: reversed xs are consumed from the end
    if reverse:
        xs = tree_map(lambda x: lax.rev(x, (0,)), xs)

    def inner(carry, chunk_xs, size, done_after):
        carry, ys = lax.scan(f, carry, chunk_xs, length=size, unroll=unroll)
        id_tap(reporter, done_after)
        return carry, ys

    def split(part, size):
        return tree_map(lambda x: x.reshape((part, size, *x.shape[1:])), xs_part(0, part * size))

    def xs_part(start, stop):
        return tree_map(lambda x: x[start:stop], xs) if xs is not None else None

    carry, pieces = init, []
    if whole:
        chunked = split(whole, every) if xs is not None else None

        def outer(state, chunk_xs):
            c, carry = state
            carry, ys = inner(carry, chunk_xs, every, (c + 1) * np.int32(every))
            return (c + 1, carry), ys

        (_, carry), ys = lax.scan(outer, (np.int32(0), carry), chunked, length=whole)
        pieces.append(tree_map(lambda y: y.reshape((whole * every, *y.shape[2:])), ys))
    if rest:
        carry, ys = inner(carry, xs_part(whole * every, total), rest, np.int32(total))
        pieces.append(ys)
    ys = pieces[0] if len(pieces) == 1 else tree_map(
        lambda *p: lax.concatenate(p, 0), *pieces
    )
    if reverse:
        ys = tree_map(lambda y: lax.rev(y, (0,)), ys)
    return carry, ys

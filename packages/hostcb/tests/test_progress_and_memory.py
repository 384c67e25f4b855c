"""The progress helpers (report every k steps from inside compiled loops) and the memory of many
taps: reports against a Python loop's counts; 100,000 taps leave no growing state behind."""

import numpy as np
import pytest
from laminax_core import lax
from laminax_dispatch import jit
from laminax_hostcb import progress
from laminax_hostcb._tap_queue import TAPS
from laminax_hostcb.host_callback import barrier_wait, id_tap


def expected_reports(total, every):
    return [d for d in range(1, total + 1) if d % every == 0 or d == total]


@pytest.mark.parametrize("total, every", [(10, 1), (10, 3), (7, 7), (5, 100), (1, 2)])
def test_fori_loop_reports_every_k_steps_and_the_last(total, every):
    seen = []
    out = jit(lambda x: progress.fori_loop(2, 2 + total, lambda i, c: c + i, x,
                                            report=seen.append, every=every))(np.int32(0))
    barrier_wait()
    assert seen == expected_reports(total, every)
    assert int(out) == sum(range(2, 2 + total))


@pytest.mark.parametrize("total, every", [(12, 5), (4, 1), (3, 10)])
def test_scan_reports_and_returns_what_lax_scan_returns(total, every):
    seen = []
    xs = np.arange(total, dtype=np.float32)
    step = lambda c, x: (c + x, c * x)  # noqa: E731
    carry, ys = jit(lambda xs: progress.scan(step, np.float32(1), xs, report=seen.append,
                                             every=every))(xs)
    ref_carry, ref_ys = lax.scan(step, np.float32(1), xs)
    barrier_wait()
    assert seen == expected_reports(total, every)
    np.testing.assert_allclose(carry, ref_carry)
    np.testing.assert_allclose(ys, ref_ys)


def test_scan_with_pytree_xs_reverse_and_no_xs():
    seen = []
    xs = {"a": np.arange(7, dtype=np.float32), "b": np.ones((7, 2), np.float32)}
    step = lambda c, x: (c * 0.5 + x["a"], (x["b"] * c, c))  # noqa: E731
    for reverse in (False, True):
        seen.clear()
        ours = progress.scan(step, np.float32(0), xs, report=seen.append, every=3, reverse=reverse)
        ref = lax.scan(step, np.float32(0), xs, reverse=reverse)
        barrier_wait()
        assert seen == [3, 6, 7]
        for a, b in zip(_leaves(ours), _leaves(ref), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    carry, ys = progress.scan(lambda c, _: (c + 1, None), 0, None, length=5, report=seen.append,
                              every=2)
    assert int(carry) == 5 and ys is None


def _leaves(tree):
    from laminax_pytree import tree_leaves

    return tree_leaves(tree)


@pytest.mark.parametrize("every", [0, -1, 1.5, "2", True])
def test_bad_every_is_a_value_error(every):
    with pytest.raises(ValueError, match="every must be a positive integer"):
        progress.fori_loop(0, 3, lambda i, c: c, 0, report=print, every=every)


def test_report_must_be_callable():
    with pytest.raises(TypeError, match="report must be callable"):
        progress.scan(lambda c, x: (c, x), 0, np.arange(3), report=3)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_100000_taps_leave_no_growing_state():
    count = [0]

    def tap(x, transforms):
        count[0] += 1

    run = jit(lambda xs: lax.scan(lambda c, x: (id_tap(tap, c + x), None), np.int32(0), xs))
    xs = np.ones(100_000, np.int32)
    run(xs)  # warm up: compile, start the tap thread, fill allocator pools
    barrier_wait()
    before = _rss_bytes()
    carry, _ = run(xs)
    barrier_wait()
    growth = _rss_bytes() - before
    assert count[0] == 200_000 and int(carry) == 100_000
    assert TAPS.pending() == (0, 0)
    assert growth < 16 * 2**20, f"resident memory grew by {growth / 2**20:.1f} MiB"

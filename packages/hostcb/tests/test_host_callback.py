"""The seed's host_callback API, from its documented examples: id_tap/id_print/call under jit,
transformations and control flow, barrier_wait, exceptions and the print format. The oracle is
the seed's documentation and NumPy (JAX 0.10.2 no longer has this module)."""

import functools
import io
import threading

import numpy as np
import pytest
from laminax_core.config import config
from laminax_core import (
    ShapeDtypeStruct,
    checkpoint,
    custom_jvp,
    custom_vjp,
    grad,
    jvp,
    lax,
    linearize,
    make_jaxpr,
    vmap,
)
from laminax_dispatch import devices, jit
from laminax_hostcb import _config
from laminax_hostcb import host_callback as hcb

F32 = np.float32


@pytest.fixture(autouse=True)
def _quiet_barrier():
    hcb.barrier_wait()
    yield
    try:
        hcb.barrier_wait()
    except hcb.CallbackException:
        pass


class Stream:
    """The seed tests' `testing_stream`: collects what id_print writes."""

    def __init__(self):
        self.buffer = io.StringIO()

    def write(self, s):
        self.buffer.write(s)

    @property
    def output(self):
        hcb.barrier_wait()
        return self.buffer.getvalue()


def power3(x, stream):
    y = x * x
    hcb.id_print((x, y), what="x,x^2", output_stream=stream)
    return y * x


def test_id_tap_calls_with_numpy_values_and_empty_transforms():
    seen = []
    out = jit(lambda x: hcb.id_tap(lambda a, tr: seen.append((a, tr)), (2 * x, 3 * x)))(F32(1))
    hcb.barrier_wait()
    (arg, transforms), = seen
    assert transforms == ()
    assert isinstance(arg, tuple) and all(isinstance(a, np.ndarray) for a in arg)
    assert [float(a) for a in arg] == [2.0, 3.0]
    assert [float(o) for o in out] == [2.0, 3.0]


def test_id_tap_returns_result_and_passes_device():
    seen = []
    tap = lambda a, tr, *, device: seen.append((float(a), device))  # noqa: E731
    out = jit(lambda x: hcb.id_tap(tap, x, result=x * 5, tap_with_device=True))(F32(2))
    hcb.barrier_wait()
    assert float(out) == 10.0
    assert seen == [(2.0, devices()[0])]


def test_id_tap_with_keyword_arguments_raises_the_seed_type_error():
    with pytest.raises(TypeError, match=r"Support for \*\*kwargs in ``id_tap`` has been removed"):
        hcb.id_tap(lambda a, tr: None, F32(1), what="x")


@pytest.mark.parametrize("bad", ["a string", object(), [1, "x"]])
def test_non_array_arguments_are_type_errors(bad):
    with pytest.raises(TypeError, match="pytree of arrays"):
        hcb.id_tap(lambda a, tr: None, bad)


def test_id_print_format_of_the_seed_examples():
    stream = Stream()
    power3(F32(3), stream)
    assert stream.output == "what: x,x^2\n( 3. 9. )\n"


def test_id_print_containers_sorted_keys_device_and_threshold():
    stream = Stream()
    arg = {"b": [np.arange(3), F32(1)], "a": (np.int32(2),)}
    jit(lambda t: hcb.id_print(t, zz=1, aa="s", output_stream=stream, tap_with_device=True))(arg)
    assert stream.output == (
        f"aa: s device: {devices()[0]} zz: 1\n{{ a=( 2 ) b=[ [0 1 2] 1. ] }}\n"
    )
    stream = Stream()
    hcb.id_print(np.arange(20), output_stream=stream, threshold=5)
    assert stream.output == np.array2string(np.arange(20), threshold=5) + "\n"


def test_id_print_breaks_long_containers_one_element_per_line():
    stream = Stream()
    hcb.id_print((np.arange(12.0), np.arange(12.0) * 2), output_stream=stream)
    first, second = np.array2string(np.arange(12.0)), np.array2string(np.arange(12.0) * 2)
    assert stream.output == f"( {first}\n  {second} )\n"


def test_jvp_taps_primal_values_once():
    stream = Stream()
    out, tangent = jvp(lambda x: power3(x, stream), (F32(3),), (F32(0.1),))
    assert stream.output == "what: x,x^2\n( 3. 9. )\n"
    np.testing.assert_allclose([out, tangent], [27.0, 2.7], rtol=1e-6)


@pytest.mark.parametrize("wrap", [lambda f: f, jit])
def test_grad_taps_the_forward_computation_only(wrap):
    stream = Stream()
    assert float(wrap(grad(lambda x: power3(x, stream)))(F32(3))) == 27.0
    assert stream.output == "what: x,x^2\n( 3. 9. )\n"


def test_linearize_taps_once():
    stream = Stream()
    _, f_lin = linearize(lambda x: power3(x, stream), F32(3))
    np.testing.assert_allclose(f_lin(F32(1)), 27.0)
    np.testing.assert_allclose(f_lin(F32(2)), 54.0)
    assert stream.output == "what: x,x^2\n( 3. 9. )\n"


def test_checkpoint_reruns_taps_when_rematerializing():
    stream = Stream()
    p3 = functools.partial(power3, stream=stream)
    grad(lambda x: p3(checkpoint(p3)(x)))(F32(3))
    assert stream.output == (
        "what: x,x^2\n( 3. 9. )\nwhat: x,x^2\n( 27. 729. )\nwhat: x,x^2\n( 3. 9. )\n"
    )


def test_vmap_passes_the_whole_batch_and_its_batch_dims():
    stream = Stream()
    out = vmap(lambda x: power3(x, stream))(np.array([2.0, 3.0], F32))
    np.testing.assert_allclose(out, [8.0, 27.0])
    assert stream.output == (
        "transforms: [('batch', {'batch_dims': (0, 0)})] what: x,x^2\n( [2. 3.] [4. 9.] )\n"
    )


def test_vmap_marks_broadcast_arguments_none_and_nests():
    seen = []
    f = lambda x, y: hcb.id_tap(lambda a, tr: seen.append((a, tr)), (x, y))  # noqa: E731
    vmap(vmap(f, in_axes=(0, None)), in_axes=(None, 0))(np.ones(2, F32), np.arange(3, dtype=F32))
    hcb.barrier_wait()
    (arg, transforms), = seen
    assert transforms == (("batch", {"batch_dims": (0, None)}), ("batch", {"batch_dims": (None, 0)}))
    assert arg[0].shape == (2,) and arg[1].shape == (3,)


def test_custom_jvp_rule_taps_tangents():
    stream = Stream()

    @custom_jvp
    def print_tangents(arg):
        return arg

    @print_tangents.defjvp
    def _(primals, tangents):
        hcb.id_print(tangents[0], what="tangents", output_stream=stream)
        return primals[0], tangents[0]

    def f(x):
        y = x * x
        hcb.id_print((x, y), what="x,x^2", output_stream=stream)
        x1, y1 = print_tangents((x, y))
        return y1 * x1

    jvp(f, (F32(3),), (F32(0.1),))
    assert stream.output == "what: x,x^2\n( 3. 9. )\nwhat: tangents\n( 0.1 0.6 )\n"


def test_custom_vjp_rule_taps_cotangents():
    stream = Stream()

    @custom_vjp
    def print_cotangents(arg):
        return arg

    def bwd(_, ct):
        hcb.id_print(ct, what="cotangents", output_stream=stream)
        return (ct,)

    print_cotangents.defvjp(lambda arg: (print_cotangents(arg), None), bwd)

    def f(x):
        y = x * x
        hcb.id_print((x, y), what="x,x^2", output_stream=stream)
        x1, y1 = print_cotangents((x, y))
        return y1 * x1

    assert float(grad(f)(F32(3))) == 27.0
    assert stream.output == "what: x,x^2\n( 3. 9. )\nwhat: cotangents\n( 9. 3. )\n"


def test_taps_inside_every_control_flow_construct_in_order():
    log = []
    tap = lambda tag: (lambda a, tr: log.append((tag, int(a))))  # noqa: E731

    def f(n):
        def w_cond(i):
            return hcb.id_tap(tap("cond"), i) < 2

        def w_body(i):
            return hcb.id_tap(tap("body"), i) + 1

        i = lax.while_loop(w_cond, w_body, n)
        i = lax.fori_loop(0, 2, lambda k, c: hcb.id_tap(tap("fori"), c + k), i)
        i, _ = lax.scan(lambda c, x: (hcb.id_tap(tap("scan"), c + x), None), i, np.arange(2, dtype=np.int32))
        i = lax.cond(i > 0, lambda v: hcb.id_tap(tap("true"), v), lambda v: v, i)
        i = lax.switch(1, [lambda v: v, lambda v: hcb.id_tap(tap("switch"), v * 2)], i)
        return jit(lambda v: hcb.id_tap(tap("nested"), v + 1))(i)

    out = jit(f)(np.int32(0))
    hcb.barrier_wait()
    assert log == [
        ("cond", 0), ("body", 0), ("cond", 1), ("body", 1), ("cond", 2),
        ("fori", 2), ("fori", 3), ("scan", 3), ("scan", 4),
        ("true", 4), ("switch", 8), ("nested", 9),
    ]  # fmt: skip
    assert int(out) == 9


def test_taps_are_ordered_across_computations_and_eager_calls():
    log = []
    f = jit(lambda x: hcb.id_tap(lambda a, tr: log.append(int(a)), x * 10))
    for i in range(20):
        f(np.int32(i))
        hcb.id_tap(lambda a, tr: log.append(int(a)), np.int32(-i))
    hcb.barrier_wait()
    assert log == [v for i in range(20) for v in (10 * i, -i)]


def test_call_returns_host_results_of_every_result_shape_form():
    x = np.arange(3, dtype=F32)
    assert np.allclose(jit(lambda v: hcb.call(np.sin, v, result_shape=v))(x), np.sin(x))
    spec = ShapeDtypeStruct((3,), np.float32)
    tree = jit(lambda v: hcb.call(lambda a: {"s": np.sum(a), "c": (np.cos(a),)}, v,
                                  result_shape={"s": 1.0, "c": (spec,)}))(x)
    np.testing.assert_allclose(tree["s"], np.sum(x))
    np.testing.assert_allclose(tree["c"][0], np.cos(x), rtol=1e-6)
    assert jit(lambda v: hcb.call(lambda a: None, v, result_shape=None))(x) is None
    assert jit(lambda v: hcb.call(lambda a: (), v, result_shape=()))(x) == ()
    assert int(hcb.call(lambda a: np.int32(7), x, result_shape=3)) == 7


@pytest.mark.parametrize("bad", [object(), "f32", [ShapeDtypeStruct((2,), np.float32), "x"]])
def test_call_rejects_result_shapes_without_shape_and_dtype(bad):
    with pytest.raises(ValueError, match="result_shape should be a pytree of values"):
        hcb.call(lambda a: a, F32(1), result_shape=bad)


@pytest.mark.parametrize(
    "returned, match",
    [
        (lambda a: np.zeros(2, F32), r"abstract values f32\[3\] but returned f32\[2\]"),
        (lambda a: np.zeros(3, np.int32), r"abstract values f32\[3\] but returned i32\[3\]"),
        (lambda a: (a, a), "with pytree PyTreeDef"),
    ],
)
def test_call_result_mismatch_reaches_the_caller_naming_the_callback(returned, match):
    def host_fun(a):
        return returned(a)

    with pytest.raises(Exception, match=match) as err:
        np.asarray(jit(lambda v: hcb.call(host_fun, v, result_shape=v))(np.ones(3, F32)))
    assert "host_fun" in str(err.value)


def test_exception_in_call_reaches_the_caller():
    def failing_host_fun(a):
        raise ValueError("bad input on the host")

    with pytest.raises(Exception, match="failing_host_fun raised ValueError: bad input on the host"):
        np.asarray(jit(lambda v: hcb.call(failing_host_fun, v, result_shape=v))(F32(1)))


def test_call_with_device_and_call_after_taps():
    log = []

    def host(a, *, device):
        log.append(("call", device))
        return a

    def f(x):
        x = hcb.id_tap(lambda a, tr: log.append("tap"), x)
        return hcb.call(host, x, result_shape=x, call_with_device=True)

    jit(f)(F32(1))
    assert log == ["tap", ("call", devices()[0])]


@pytest.mark.parametrize(
    "transform",
    [
        lambda f: grad(f),
        lambda f: lambda x: jvp(f, (x,), (x,)),
        lambda f: vmap(f),
    ],
)
def test_call_under_an_unsupported_transformation_says_so(transform):
    f = lambda x: hcb.call(np.sin, x, result_shape=x).sum()  # noqa: E731
    with pytest.raises(NotImplementedError, match=r"host_callback.call\(sin, ...\) does not support"):
        transform(f)(np.ones(2, F32))


def test_barrier_wait_raises_the_last_tap_exception_and_clears_it():
    def bad_tap(a, tr):
        raise ValueError(f"tap failed on {int(a)}")

    f = jit(lambda x: hcb.id_tap(bad_tap, x))
    f(np.int32(1))
    f(np.int32(2))
    with pytest.raises(hcb.CallbackException, match="tap failed on 2") as err:
        hcb.barrier_wait()
    assert isinstance(err.value.__cause__, ValueError)
    assert hcb.TapFunctionException is hcb.CallbackException
    hcb.barrier_wait()  # cleared


def test_barrier_wait_sees_computations_of_every_thread():
    count = []
    lock = threading.Lock()

    def tap(a, tr):
        with lock:
            count.append(int(a))

    f = jit(lambda x: hcb.id_tap(tap, lax.fori_loop(0, 200, lambda i, c: c + 1, x)))

    def worker(k):
        for i in range(25):
            f(np.int32(k * 1000 + i))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    hcb.barrier_wait()
    assert sorted(count) == sorted(k * 1000 + i + 200 for k in range(4) for i in range(25))


def test_taps_are_asynchronous_and_barrier_waits_for_slow_taps():
    release = threading.Event()
    done = []

    def slow(a, tr):
        release.wait(10)
        done.append(int(a))

    out = jit(lambda x: hcb.id_tap(slow, x) + 1)(np.int32(4))
    assert int(out) == 5 and done == []  # the computation finished before the tap ran
    release.set()
    hcb.barrier_wait()
    assert done == [4]


def test_full_queue_blocks_the_producer_and_drops_nothing():
    release = threading.Event()
    seen = []

    def slow(a, tr):
        release.wait(10)
        seen.append(int(a[0]))

    saved = _config.max_queue_byte_size.value
    config.update("jax_host_callback_max_queue_byte_size", 4000)  # ~3 taps of 1 KiB
    try:
        f = jit(lambda x: hcb.id_tap(slow, x))
        runner = threading.Thread(target=lambda: [f(np.full(256, i, np.int32)) for i in range(8)])
        runner.start()
        runner.join(0.5)
        waiting, nbytes = hcb_queue_state()
        assert runner.is_alive() and nbytes <= 4000  # the producer waits for room
        release.set()
        runner.join(10)
        hcb.barrier_wait()
    finally:
        config.update("jax_host_callback_max_queue_byte_size", saved)
    assert seen == list(range(8))


@pytest.mark.parametrize("asleep", [False, True])
def test_taps_run_without_barrier_wait_whether_the_worker_polls_or_sleeps(monkeypatch, asleep):
    # while taps keep coming the worker polls instead of being woken by each one; after a
    # quiet spell it sleeps and the next tap must wake it: either way the tap runs by itself
    from laminax_hostcb import _tap_queue

    if asleep:
        monkeypatch.setattr(_tap_queue, "ACTIVE_SECONDS", 0.0)
    hcb.barrier_wait()
    ran = threading.Event()
    jit(lambda x: hcb.id_tap(lambda a, tr: ran.set(), x))(F32(1)).block_until_ready()
    assert ran.wait(10), "the tap never ran without a barrier_wait"


def test_barrier_wait_from_several_threads_while_taps_stream():
    # many producers and barrier waiters at once: every waiter returns once what it waits
    # for has run, nothing is lost, and the waiters do not wake each other in a loop
    seen = []
    f = jit(lambda x: hcb.id_tap(lambda a, tr: seen.append(int(a)), x))
    errors = []

    def producer(base):
        try:
            for i in range(50):
                f(np.int32(base + i))
                if i % 10 == 0:
                    hcb.barrier_wait()
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    threads = [threading.Thread(target=producer, args=(k * 1000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads) and not errors
    hcb.barrier_wait()
    assert sorted(seen) == sorted(k * 1000 + i for k in range(4) for i in range(50))


def hcb_queue_state():
    from laminax_hostcb._tap_queue import TAPS

    return TAPS.pending()


def test_inline_mode_runs_eager_taps_on_the_calling_thread():
    threads = []
    with _config.inline(True):
        hcb.id_tap(lambda a, tr: threads.append(threading.current_thread()), F32(1))
    assert threads == [threading.current_thread()]


def test_outfeed_flag_is_accepted_and_changes_nothing():
    stream = Stream()
    with _config.outfeed(True):
        jit(lambda x: power3(x, stream))(F32(2))
    assert stream.output == "what: x,x^2\n( 2. 4. )\n"


def test_ad_transforms_flag_warns_as_the_seed_did():
    with _config.ad_transforms(True):
        with pytest.warns(FutureWarning, match="jax_host_callback_ad_transforms"):
            hcb.id_tap(lambda a, tr: None, F32(1))


def power3_used(x, stream):
    y = x * x
    x, y = hcb.id_print((x, y), what="x,x^2", output_stream=stream)
    return y * x


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_ad_transforms_mode_taps_tangents_under_jvp():
    stream = Stream()
    with _config.ad_transforms(True):
        out = jvp(lambda x: power3_used(x, stream), (F32(3),), (F32(0.1),))
    np.testing.assert_allclose(out, (27.0, 2.7), rtol=1e-6)
    assert stream.output == "transforms: ['jvp'] what: x,x^2\n( ( 3. 9. ) ( 0.1 0.6 ) )\n"


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("wrap", [lambda f: f, jit])
def test_ad_transforms_mode_taps_primals_then_cotangents_under_grad(wrap):
    stream = Stream()
    with _config.ad_transforms(True):
        g = wrap(grad(lambda x: power3_used(x, stream)))(F32(3))
    assert float(g) == 27.0
    assert stream.output == (
        "what: x,x^2\n( 3. 9. )\n"
        "transforms: ['jvp', 'transpose'] what: x,x^2\n( 9. 3. )\n"
    )


def test_a_tap_function_may_call_jit_and_tap_again():
    log = []
    inner = jit(lambda v: hcb.id_tap(lambda a, tr: log.append(("inner", int(a))), v * 2))

    def outer(a, tr):
        log.append(("outer", int(a)))
        inner(a)

    jit(lambda x: hcb.id_tap(outer, x))(np.int32(3))
    hcb.barrier_wait()
    assert log == [("outer", 3), ("inner", 6)]


def test_the_jaxpr_keeps_taps_whose_results_are_unused():
    def f(x):
        hcb.id_tap(lambda a, tr: None, x)
        return x + 1

    assert "outside_call" in str(make_jaxpr(f)(F32(1)))


def test_callbacks_may_run_jitted_code_with_their_own_ordered_effects():
    log = []
    inner = jit(lambda v: hcb.id_tap(lambda a, tr: log.append(("inner tap", float(a))), v * 2))

    def host(a):
        log.append(("call", float(a)))
        return np.asarray(inner(a)) + 1

    f = jit(lambda x: hcb.call(host, x, result_shape=x))
    assert float(f(F32(5))) == 11.0
    assert float(f(F32(6))) == 13.0
    hcb.barrier_wait()
    assert log == [("call", 5.0), ("inner tap", 10.0), ("call", 6.0), ("inner tap", 12.0)]


def test_stop_outfeed_receiver_waits_and_taps_keep_working():
    seen = []
    f = jit(lambda x: hcb.id_tap(lambda a, tr: seen.append(int(a)), x))
    f(np.int32(1))
    hcb.stop_outfeed_receiver()
    assert seen == [1]
    f(np.int32(2))
    hcb.barrier_wait()
    assert seen == [1, 2]


def test_taps_still_pending_at_exit_run_before_the_interpreter_ends(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "tap_at_exit.py"
    script.write_text(
        "import time\n"
        "import numpy as np\n"
        "from laminax_dispatch import jit\n"
        "from laminax_hostcb import host_callback as hcb\n"
        "def slow(a, tr):\n"
        "    time.sleep(0.05)\n"
        "    print('tapped', int(a), flush=True)\n"
        "f = jit(lambda x: hcb.id_tap(slow, x))\n"
        "for i in range(5):\n"
        "    f(np.int32(i))\n"
        "print('main done', flush=True)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if line]
    assert lines[0] == "main done" or "main done" in lines
    assert [line for line in lines if line.startswith("tapped")] == [
        f"tapped {i}" for i in range(5)
    ]


def test_flags_come_from_the_environment_under_jax_and_laminax_names():
    import os
    import subprocess
    import sys

    code = (
        "from laminax_core.config import config\n"
        "import laminax_hostcb\n"
        "print(config.jax_host_callback_inline, config.jax_host_callback_max_queue_byte_size,"
        " config.jax_host_callback_outfeed, config.jax_host_callback_ad_transforms)\n"
    )
    env = dict(os.environ, JAX_HOST_CALLBACK_INLINE="1",
               LAMINAX_HOST_CALLBACK_MAX_QUEUE_BYTE_SIZE="1234",
               JAX_HOST_CALLBACK_OUTFEED="true", JAX_HOST_CALLBACK_AD_TRANSFORMS="0")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "1234", "True", "False"]


def test_barrier_wait_inside_a_call_is_refused_instead_of_deadlocking():
    def host(a):
        hcb.barrier_wait()
        return a

    with pytest.raises(Exception, match="barrier_wait\\(\\) was called from a host callback"):
        np.asarray(jit(lambda x: hcb.call(host, x, result_shape=x))(F32(1)))


def test_barrier_wait_inside_a_tap_function_returns():
    seen = []

    def tap(a, tr):
        hcb.barrier_wait()
        seen.append(int(a))

    jit(lambda x: hcb.id_tap(tap, x))(np.int32(3))
    hcb.barrier_wait()
    assert seen == [3]


def test_inline_mode_runs_eager_calls_on_the_calling_thread():
    threads = []

    def host(a):
        threads.append(threading.current_thread())
        return np.asarray(a) * 2

    with _config.inline(True):
        out = hcb.call(host, F32(4), result_shape=F32(0))
    assert float(out) == 8.0 and threads == [threading.current_thread()]


def test_id_print_without_a_stream_prints_to_stdout(capsys):
    jit(lambda x: hcb.id_print(x, what="stdout"))(np.arange(3))
    hcb.barrier_wait()
    assert capsys.readouterr().out == "what: stdout\n[0 1 2]\n"

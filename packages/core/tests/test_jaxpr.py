import numpy as np
import pytest
from laminax_core import ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr, lax, make_jaxpr
from laminax_core.errors import JaxprTypeError
from laminax_core.internal import DropVar, check_jaxpr, dce_closed_jaxpr, dce_jaxpr

X3 = np.ones(3, np.float32)


def test_single_equation_prints_on_one_line():
    assert str(make_jaxpr(lax.sin)(X3)) == "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"


def test_literals_print_with_their_type():
    text = str(make_jaxpr(lambda x: x * 2)(X3))
    assert text == "{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }"
    text = str(make_jaxpr(lambda x: x + 1)(np.ones(3, np.int32)))
    assert "add a 1:i32[]" in text


def test_long_jaxprs_break_lines_and_params():
    text = str(
        make_jaxpr(lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))))(
            np.ones((3, 4), np.float32), np.ones((4, 5), np.float32)
        )
    )
    assert text == (
        "{ lambda ; a:f32[3,4] b:f32[4,5]. let\n"
        "    c:f32[3,5] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
        "  in (c,) }"
    )


def test_variable_names_continue_past_z():
    text = str(make_jaxpr(lambda *xs: sum(xs[1:], xs[0]))(*[np.float32(1)] * 30))
    assert " ba:f32[]" in text and "cg:f32[] = add cf bd" in text


def test_closed_over_arrays_become_constvars():
    c = np.arange(3, dtype=np.float32)
    closed = make_jaxpr(lambda x: x + c)(X3)
    assert str(closed) == "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }"
    np.testing.assert_array_equal(closed.consts[0], c)


def test_outputs_may_be_inputs_or_literals():
    assert str(make_jaxpr(lambda x: (x, 3.0))(X3)) == (
        "{ lambda ; a:f32[3]. let  in (a, 3.0:f32[]) }"
    )


def test_unused_outputs_print_as_underscore():
    closed = make_jaxpr(lambda x: (lax.sin(x), x)[1])(X3)
    assert "_:f32[3] = sin a" in str(closed)
    assert isinstance(closed.eqns[0].outvars[0], DropVar)


def test_static_argnums_and_return_shape():
    closed, shape = make_jaxpr(lambda x, n: x * n, static_argnums=1, return_shape=True)(X3, 3)
    assert str(closed) == "{ lambda ; a:f32[3]. let b:f32[3] = mul a 3.0:f32[] in (b,) }"
    assert shape.shape == (3,) and shape.dtype == np.float32


def test_keyword_arguments_are_traced():
    closed = make_jaxpr(lambda x, y: x * y)(np.float32(2), y=np.float32(3))
    assert str(closed) == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b in (c,) }"


def test_equations_record_source_info():
    closed = make_jaxpr(lambda x: lax.sin(x))(X3)
    assert closed.eqns[0].source_info.startswith(__file__)


def test_eval_jaxpr_evaluates_closed_jaxpr():
    c = np.arange(3, dtype=np.float32)
    closed = make_jaxpr(lambda x: lax.sin(x) + c)(X3)
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, X3)
    np.testing.assert_allclose(out, np.sin(X3) + c, rtol=1e-6)


def test_eval_jaxpr_checks_argument_count():
    closed = make_jaxpr(lax.sin)(X3)
    with pytest.raises(TypeError, match="takes 1 arguments, got 2"):
        eval_jaxpr(closed.jaxpr, closed.consts, X3, X3)


def test_check_jaxpr_accepts_traced_jaxprs():
    check_jaxpr(make_jaxpr(lambda x: (lax.sin(x) * 2.0).sum())(X3).jaxpr)


def test_check_jaxpr_names_the_bad_equation():
    a = Var(lax.sin_p.abstract_eval(*[make_jaxpr(lax.sin)(X3).in_avals[0]], accuracy=None)[0])
    b = Var(a.aval.update(shape=(4,)))
    eqn = JaxprEqn([a], [b], lax.sin_p, {"accuracy": None}, source_info="here.py:7")
    with pytest.raises(
        TypeError,
        match=r"equation 0 `b:f32\[4\] = sin a` \(from here.py:7\)"
        r".*declared f32\[4\] but the primitive produces f32\[3\]",
    ):
        check_jaxpr(Jaxpr([], [a], [b], [eqn]))


def test_check_jaxpr_finds_unbound_and_rebound_variables():
    a, b = Var(make_jaxpr(lax.sin)(X3).in_avals[0]), Var(make_jaxpr(lax.sin)(X3).in_avals[0])
    eqn = JaxprEqn([b], [a], lax.neg_p, {})
    with pytest.raises(JaxprTypeError, match="used before it is bound"):
        check_jaxpr(Jaxpr([], [a], [a], [eqn]))
    eqn = JaxprEqn([a], [a], lax.neg_p, {})
    with pytest.raises(TypeError, match="bound twice"):
        check_jaxpr(Jaxpr([], [a], [a], [eqn]))


def test_dce_removes_unused_equations_and_inputs():
    jaxpr = make_jaxpr(lambda x, y: (lax.sin(x), lax.cos(y)))(X3, X3).jaxpr
    pruned, used = dce_jaxpr(jaxpr, [True, False])
    assert [e.primitive.name for e in pruned.eqns] == ["sin"]
    assert used == [True, False]
    assert len(pruned.invars) == 1 and len(pruned.outvars) == 1


def test_dce_closed_jaxpr_drops_unused_constants():
    c = np.arange(3, dtype=np.float32)
    closed = make_jaxpr(lambda x: (x + c, lax.sin(x)))(X3)
    pruned = dce_closed_jaxpr(closed, [False, True])
    assert pruned.consts == [] and [e.primitive.name for e in pruned.eqns] == ["sin"]
    assert isinstance(pruned, ClosedJaxpr)


def test_closed_jaxpr_properties():
    closed = make_jaxpr(lambda x: x.sum())(X3)
    assert [a.str_short() for a in closed.in_avals] == ["f32[3]"]
    assert [a.str_short() for a in closed.out_avals] == ["f32[]"]
    assert closed.effects == frozenset()
    assert len(closed.eqns) == 1


def test_enable_checks_type_checks_every_traced_jaxpr():
    from laminax_core import Primitive, config

    calls = []
    flaky_p = Primitive("flaky")

    @flaky_p.def_abstract_eval
    def _flaky_abstract_eval(aval):  # a buggy rule: its answer changes on the second call
        calls.append(aval)
        return aval if len(calls) % 2 else aval.update(shape=(4,))

    make_jaxpr(lambda x: flaky_p.bind(x))(X3)  # unchecked: traced once, no error
    with config.enable_checks(True):
        with pytest.raises(JaxprTypeError, match="is declared f32.* but the primitive produces"):
            make_jaxpr(lambda x: flaky_p.bind(x))(X3)

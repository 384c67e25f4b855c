"""Ordered effects under jit: runtime tokens are threaded through main, nested jit calls and
control flow, and chained across calls in dispatch order; effects_barrier waits for them."""

import numpy as np
import pytest
from laminax_core import lax, make_jaxpr
from laminax_core.internal import Effect, Primitive, lowerable_effects, ordered_effects
from laminax_dispatch import effects_barrier, jit, register_lowering
from laminax_dispatch.internal import runtime_tokens

F32 = np.float32


class OrderedTestEffect(Effect):
    """An ordered effect whose lowering only passes its token along."""


ordered_effects.add_type(OrderedTestEffect)
lowerable_effects.add_type(OrderedTestEffect)
EFFECT = OrderedTestEffect()

effect_p = Primitive("ordered_test_effect")
effect_p.def_effectful_abstract_eval(lambda x: (x, {EFFECT}))


def _effect_lower(ctx, x):
    # a real effect would consume the token and produce a new one (e.g. a host callback)
    ctx.tokens_out = dict(ctx.tokens_in)
    return x


register_lowering(effect_p, _effect_lower)


@pytest.fixture(autouse=True)
def _fresh_tokens():
    effects_barrier()
    yield
    effects_barrier()


def test_main_threads_a_token_for_the_ordered_effect():
    text = jit(lambda x: effect_p.bind(x) + 1.0).lower(F32(1)).as_text()
    assert "func.func public @main(%arg0: !stablehlo.token, %arg1: tensor<f32>)" in text
    assert "-> (!stablehlo.token, tensor<f32>" in text


def test_effectful_equation_survives_when_its_result_is_unused():
    def f(x):
        effect_p.bind(x)
        return x * 2.0

    assert "ordered_test_effect" in str(make_jaxpr(f)(F32(1)))
    assert "!stablehlo.token" in jit(f).lower(F32(1)).as_text()


def test_each_call_takes_the_token_the_previous_call_returned(monkeypatch):
    f = jit(lambda x: effect_p.bind(x) * 2.0)
    np.testing.assert_array_equal(f(np.ones(2, F32)), [2, 2])
    first = runtime_tokens.current_tokens[EFFECT]
    passed = []
    original = runtime_tokens.get_token_input

    def spy(effect, device):
        token = original(effect, device)
        passed.append(token)
        return token

    monkeypatch.setattr(runtime_tokens, "get_token_input", spy)
    g = jit(lambda x: effect_p.bind(x) - 1.0)  # another function, same effect: same chain
    g(np.ones(2, F32))
    assert passed == [first]
    assert runtime_tokens.current_tokens[EFFECT] is not first


def test_effects_barrier_waits_and_clears_tokens():
    jit(lambda x: effect_p.bind(x))(F32(1))
    assert EFFECT in runtime_tokens.current_tokens
    effects_barrier()
    assert runtime_tokens.current_tokens == {}


def test_token_threads_through_nested_jit_and_cond():
    inner = jit(lambda x: effect_p.bind(x) * 3.0)

    def f(x):
        y = inner(x)
        return lax.cond(y.sum() > 0, lambda: effect_p.bind(y), lambda: y)

    text = jit(f).lower(np.ones(2, F32)).as_text()
    assert 'call @"<lambda>"(%arg0, %arg1)' in text  # the token goes into the call
    assert "stablehlo.case" in text and "!stablehlo.token" in text.split("stablehlo.case")[1]
    np.testing.assert_array_equal(jit(f)(np.ones(2, F32)), [3, 3])


def test_pure_functions_take_no_tokens():
    jit(lambda x: x + 1.0)(F32(1))
    assert runtime_tokens.current_tokens == {}

"""Tests for laminax_core.errors: JAX's hierarchy and messages built from tracers."""

import doctest

import jaxlib._jax
import numpy as np
import pytest

from laminax_core import errors
from laminax_core.errors import (
    ConcretizationTypeError,
    JAXIndexError,
    JAXTypeError,
    JaxprTypeError,
    JaxRuntimeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)


class Aval:
    def __init__(self, shape, dtype):
        self.shape, self.dtype, self.weak_type = shape, np.dtype(dtype), False


class Tracer:
    """A stand-in with what the errors read: `aval` and optionally `_debug_info`."""

    def __init__(self, shape=(3,), dtype="float32", debug_info=None):
        self.aval = Aval(shape, dtype)
        if debug_info is not None:
            self._debug_info = debug_info


class TracerWithHooks:
    """A tracer that describes itself, as core's tracers may."""

    def _error_repr(self):
        return "traced array with shape int32[2,2]"

    def _origin_msg(self):
        return "It came from the argument n of g."


# JAX 0.10.2's hierarchy, checked class by class against jax.errors' MROs.
HIERARCHY = {
    JAXTypeError: (TypeError,),
    JAXIndexError: (IndexError,),
    ConcretizationTypeError: (JAXTypeError, TypeError),
    TracerBoolConversionError: (ConcretizationTypeError, JAXTypeError, TypeError),
    TracerArrayConversionError: (JAXTypeError, TypeError),
    TracerIntegerConversionError: (JAXTypeError, TypeError),
    UnexpectedTracerError: (JAXTypeError, TypeError),
    KeyReuseError: (JAXTypeError, TypeError),
    NonConcreteBooleanIndexError: (JAXIndexError, IndexError),
    JaxprTypeError: (TypeError,),
    JaxRuntimeError: (RuntimeError,),
}


@pytest.mark.parametrize("cls,bases", HIERARCHY.items(), ids=lambda x: getattr(x, "__name__", ""))
def test_hierarchy_matches_jax(cls, bases):
    for base in bases:
        assert issubclass(cls, base)


def test_jax_runtime_error_is_jaxlibs():
    assert JaxRuntimeError is jaxlib._jax.JaxRuntimeError


def test_every_public_class_is_documented():
    for name in errors.__all__:
        assert len(getattr(errors, name).__doc__ or "") > 40, name


def test_docstring_examples_run():
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(errors):
        runner.run(test)
    assert runner.failures == 0 and runner.tries >= 2


def test_concretization_error_names_tracer_context_origin_and_fix():
    tracer = Tracer((3,), "float32", debug_info="It came from the argument x of f.")
    err = ConcretizationTypeError(tracer, "The problem arose with the `bool` function.")
    message = str(err)
    assert message.startswith(
        "Abstract tracer value encountered where a concrete value is expected: "
        "traced array with shape float32[3]\nThe problem arose with the `bool` function.\n"
        "It came from the argument x of f."
    )
    assert "static_argnums" in message
    assert message.rstrip().endswith("help(laminax.errors.ConcretizationTypeError).")
    with pytest.raises(TypeError, match=r"float32\[3\]"):
        raise err


def test_concretization_error_without_context_or_origin():
    message = str(ConcretizationTypeError(Tracer((), "int32")))
    assert "traced array with shape int32[]\nIf this value" in message


def test_tracer_hooks_are_preferred():
    message = str(TracerIntegerConversionError(TracerWithHooks()))
    assert message.startswith(
        "The __index__() method was called on traced array with shape int32[2,2]\n"
        "It came from the argument n of g."
    )
    assert "static_argnums" in message


def test_aval_str_short_is_used_when_present():
    class ShortAval(Aval):
        def str_short(self):
            return "bf16[4]"

    tracer = Tracer()
    tracer.aval = ShortAval((4,), "float32")
    assert "traced array with shape bf16[4]" in str(TracerArrayConversionError(tracer))


@pytest.mark.parametrize(
    "cls,pattern",
    [
        (TracerBoolConversionError, r"Attempted boolean conversion of traced array .*int8\[5\]"),
        (TracerArrayConversionError, r"(?s)__array__\(\) was called on .*int8\[5\].*laminax.numpy"),
        (TracerIntegerConversionError, r"__index__\(\) method was called on .*int8\[5\]"),
        (NonConcreteBooleanIndexError, r"(?s)indices must be concrete.*int8\[5\].*jnp.where"),
    ],
)
def test_tracer_errors_messages(cls, pattern):
    err = cls(Tracer((5,), "int8"))
    with pytest.raises(cls, match=pattern) as info:
        raise err
    assert str(info.value).rstrip().endswith(f"help(laminax.errors.{cls.__name__}).")


def test_bool_conversion_error_is_catchable_as_concretization_error():
    with pytest.raises(ConcretizationTypeError, match="boolean conversion"):
        raise TracerBoolConversionError(Tracer())


def test_message_only_errors():
    with pytest.raises(UnexpectedTracerError, match=r"(?s)leaked from f.*help\(laminax.errors.UnexpectedTracerError\)"):
        raise UnexpectedTracerError("A tracer leaked from f.")
    with pytest.raises(KeyReuseError, match="key passed at index 0"):
        raise KeyReuseError("Previously used key passed at index 0")
    assert str(JaxprTypeError("bad eqn")) == "bad eqn"


def test_origin_fragment_becomes_a_sentence():
    tracer = Tracer(debug_info="created by jit at f.py:3")
    message = str(TracerBoolConversionError(tracer))
    assert "\nThis tracer was created by jit at f.py:3.\n" in message


def test_tracer_without_aval_is_still_described():
    class Opaque:
        def __repr__(self):
            return "Opaque()"

    assert "traced value Opaque()" in str(TracerArrayConversionError(Opaque()))

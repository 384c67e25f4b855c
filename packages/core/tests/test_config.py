"""Tests for laminax_core.config: options, sources and their precedence, thread-locality."""

import itertools
import subprocess
import sys
import threading

import pytest
from jaxlib._jax import config as config_ext

from laminax_core import config as config_module
from laminax_core.config import (
    check_tracer_leaks,
    config,
    debug_infs,
    debug_nans,
    default_matmul_precision,
    default_prng_impl,
    disable_jit,
    enable_checks,
    enable_x64,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    softmax_custom_jvp,
    threefry_partitionable,
)

_counter = itertools.count()


def fresh_name(prefix="laminax_test_option"):
    """A new option name per call: options can be defined only once per process."""
    return f"{prefix}_{next(_counter)}"


# -- the options core defines ---------------------------------------------------------------------

JAX_DEFAULTS = {
    "jax_enable_x64": False,
    "jax_disable_jit": False,
    "jax_debug_nans": False,
    "jax_debug_infs": False,
    "jax_numpy_dtype_promotion": "standard",
    "jax_numpy_rank_promotion": "allow",
    "jax_default_matmul_precision": None,
    "jax_default_prng_impl": "threefry2x32",
    "jax_enable_checks": False,
    "jax_traceback_filtering": "auto",
    "jax_check_tracer_leaks": False,
    "jax_softmax_custom_jvp": False,
    "jax_threefry_partitionable": True,
    "jax_explicit_x64_dtypes": "warn",
    "jax_debug_key_reuse": False,
}


@pytest.mark.parametrize("name,default", sorted(JAX_DEFAULTS.items()))
def test_core_options_have_jax_defaults(name, default):
    assert config.read(name) == default
    assert getattr(config, name) == default
    assert config.values[name] == default


def test_module_level_holders_are_the_registered_options():
    holders = {
        "jax_enable_x64": enable_x64,
        "jax_disable_jit": disable_jit,
        "jax_debug_nans": debug_nans,
        "jax_debug_infs": debug_infs,
        "jax_numpy_dtype_promotion": numpy_dtype_promotion,
        "jax_numpy_rank_promotion": numpy_rank_promotion,
        "jax_default_matmul_precision": default_matmul_precision,
        "jax_default_prng_impl": default_prng_impl,
        "jax_enable_checks": enable_checks,
        "jax_check_tracer_leaks": check_tracer_leaks,
        "jax_softmax_custom_jvp": softmax_custom_jvp,
        "jax_threefry_partitionable": threefry_partitionable,
    }
    for name, holder in holders.items():
        assert holder.name == name
        assert isinstance(holder, config_ext.Config)
        with holder(holder.parse(holder.value)):
            assert config.read(name) == holder.value


def test_docstring_examples_run():
    # In a fresh process: the examples define options, which can happen once per process.
    code = (
        "import doctest, laminax_core.config as m\n"
        "r = doctest.testmod(m)\n"
        "print(r.failed, r.attempted)"
    )
    failed, attempted = map(int, _run_fresh(code).split())
    assert failed == 0 and attempted >= 8


def test_all_names_exist_and_are_documented():
    for name in config_module.__all__:
        obj = getattr(config_module, name)
        assert obj.__doc__, name


# -- update, read and errors ----------------------------------------------------------------------


def test_update_changes_global_value_and_back():
    config.update("jax_debug_nans", True)
    try:
        assert debug_nans.value is True
        assert config.jax_debug_nans is True
    finally:
        config.update("jax_debug_nans", False)
    assert debug_nans.value is False


def test_update_unknown_option_lists_close_matches():
    with pytest.raises(AttributeError, match="Unrecognized config option: 'jax_enable_x46'.*"
                       "Did you mean 'jax_enable_x64'"):
        config.update("jax_enable_x46", True)


def test_read_and_attribute_of_unknown_option_raise_attribute_error():
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        config.read("jax_no_such_option")
    with pytest.raises(AttributeError, match="jax_debug_nan"):
        config.jax_debug_nan  # noqa: B018


@pytest.mark.parametrize(
    "name,value,error,pattern",
    [
        ("jax_enable_x64", "yes", TypeError, "takes a bool"),
        ("jax_enable_x64", 2, TypeError, "takes a bool"),
        ("jax_numpy_rank_promotion", 3, TypeError, "takes a string"),
        ("jax_numpy_rank_promotion", "loud", ValueError, r"must be one of \['allow'"),
        ("jax_numpy_dtype_promotion", "lenient", ValueError, "must be one of"),
        ("jax_default_matmul_precision", 1.0, TypeError, "a string or None"),
    ],
)
def test_update_rejects_bad_values(name, value, error, pattern):
    before = config.read(name)
    with pytest.raises(error, match=pattern):
        config.update(name, value)
    assert config.read(name) == before


def test_bool_option_accepts_zero_and_one():
    config.update("jax_enable_checks", 1)
    try:
        assert enable_checks.value is True
    finally:
        config.update("jax_enable_checks", 0)
    assert enable_checks.value is False


def test_optional_enum_accepts_none():
    with default_matmul_precision("highest"):
        assert config.jax_default_matmul_precision == "highest"
        with default_matmul_precision(None):
            assert default_matmul_precision.value is None


def test_holder_refuses_bool():
    with pytest.raises(TypeError, match=r"enable_x64\.value"):
        bool(enable_x64)


def test_values_is_a_live_read_only_mapping():
    values = config.values
    assert "jax_enable_x64" in values
    with enable_x64(True):
        assert values["jax_enable_x64"] is True
    assert values["jax_enable_x64"] is False
    with pytest.raises(TypeError):
        values["jax_enable_x64"] = True
    assert len(values) == len(list(values))


# -- context managers and thread-locality ---------------------------------------------------------


def test_context_manager_overrides_update_and_restores():
    config.update("jax_debug_infs", True)
    try:
        with debug_infs(False):
            assert debug_infs.value is False
            config.update("jax_debug_infs", True)  # the thread-local override still wins
            assert debug_infs.value is False
        assert debug_infs.value is True
    finally:
        config.update("jax_debug_infs", False)


def test_context_managers_nest():
    with numpy_rank_promotion("warn"):
        with numpy_rank_promotion("raise"):
            assert numpy_rank_promotion.value == "raise"
        assert numpy_rank_promotion.value == "warn"
    assert numpy_rank_promotion.value == "allow"


def test_context_manager_restores_after_exception():
    with pytest.raises(RuntimeError):
        with enable_x64(True):
            raise RuntimeError("boom")
    assert enable_x64.value is False


def test_context_manager_works_as_decorator():
    @enable_x64(True)
    def read():
        return enable_x64.value

    assert read() is True
    assert enable_x64.value is False


def test_bool_holder_called_without_argument_sets_true():
    with check_tracer_leaks():
        assert check_tracer_leaks.value is True


def test_enum_holder_needs_a_value():
    with pytest.raises(TypeError, match="needs the value"):
        numpy_rank_promotion()


def test_context_manager_value_is_checked_early():
    with pytest.raises(ValueError, match="must be one of"):
        numpy_dtype_promotion("lenient")


def test_thread_local_override_is_invisible_to_other_threads():
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def other_thread():
        inside.wait()
        seen["other"] = enable_x64.value
        with enable_x64(True):
            seen["other_inner"] = enable_x64.value
        release.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with enable_x64(True):
        seen["main"] = enable_x64.value
        inside.set()
        release.wait()
        seen["main_after"] = enable_x64.value
    thread.join()
    assert seen == {"main": True, "other": False, "other_inner": True, "main_after": True}


def test_global_update_is_visible_to_other_threads():
    seen = []
    config.update("jax_enable_checks", True)
    try:
        thread = threading.Thread(target=lambda: seen.append(enable_checks.value))
        thread.start()
        thread.join()
    finally:
        config.update("jax_enable_checks", False)
    assert seen == [True]


def test_disable_jit_is_jax_public_context_manager():
    with disable_jit():
        assert config.jax_disable_jit is True
        with disable_jit(disable=False):
            assert disable_jit.value is False
    assert disable_jit.value is False


# -- trace context --------------------------------------------------------------------------------


def test_trace_context_tracks_options_that_matter():
    names = config_module.trace_context_names()
    assert "jax_enable_x64" in names
    assert "jax_debug_nans" not in names
    index = names.index("jax_enable_x64")
    before = config.trace_context()
    hash(before)
    assert before[index] is False
    with enable_x64(True):
        inside = config_module.trace_context()
        assert inside[index] is True
        assert inside != before
    assert config.trace_context() == before


def test_include_in_trace_context_adds_user_options():
    holder = config.define_int_state(
        fresh_name(), 3, "A test option.", include_in_trace_context=True
    )
    names = config_module.trace_context_names()
    position = names.index(holder.name)
    with holder(7):
        assert config.trace_context()[position] == 7


# -- defining options -----------------------------------------------------------------------------


def test_define_each_kind_of_state():
    b = config.define_bool_state(fresh_name(), False, "bool")
    e = config.define_enum_state(fresh_name(), ["a", "b"], "a", "enum")
    oe = config.define_optional_enum_state(fresh_name(), ["a", "b"], None, "optional enum")
    i = config.define_int_state(fresh_name(), 4, "int")
    f = config.define_float_state(fresh_name(), 0.5, "float")
    s = config.define_string_state(fresh_name(), "x", "string")
    os_ = config.define_optional_string_state(fresh_name(), None, "optional string")
    for holder, new in [(b, True), (e, "b"), (oe, "a"), (i, 9), (f, 2.5), (s, "y"), (os_, "/t")]:
        config.update(holder.name, new)
        assert config.read(holder.name) == new
    with pytest.raises(TypeError, match="takes an int"):
        config.update(i.name, 1.5)
    with pytest.raises(TypeError, match="takes a float"):
        config.update(f.name, "1.5")
    with pytest.raises(TypeError, match="takes a string"):
        config.update(s.name, None)
    config.update(f.name, 3)
    assert f.value == 3.0 and isinstance(f.value, float)


def test_defining_twice_is_an_error():
    name = fresh_name()
    config.define_bool_state(name, False, "once")
    with pytest.raises(ValueError, match="already defined"):
        config.define_bool_state(name, False, "twice")


def test_define_rejects_bad_names_and_defaults():
    with pytest.raises(ValueError, match="lower-case"):
        config.define_bool_state("Laminax_Upper", False, "x")
    with pytest.raises(TypeError, match="must be a bool"):
        config.define_bool_state(fresh_name(), "no", "x")
    with pytest.raises(ValueError, match="must be one of"):
        config.define_enum_state(fresh_name(), ["a"], "b", "x")


def test_hooks_are_called_on_global_and_local_changes():
    calls = []
    holder = config.define_bool_state(
        fresh_name(),
        False,
        "hooked",
        update_global_hook=lambda v: calls.append(("global", v)),
        update_thread_local_hook=lambda v: calls.append(("local", v)),
    )
    config.update(holder.name, True)
    with holder(False):
        pass
    assert calls == [("global", False), ("global", True), ("local", False), ("local", None)]


def test_help_becomes_docstring():
    holder = config.define_bool_state(fresh_name(), False, "Turns the frobnicator on.")
    assert "Turns the frobnicator on." in holder.__doc__
    assert holder.name in holder.__doc__


# -- environment variables ------------------------------------------------------------------------


def test_jax_environment_variable_sets_default(monkeypatch):
    name = fresh_name()
    monkeypatch.setenv(name.upper(), "true")
    assert config.define_bool_state(name, False, "x").value is True


def test_laminax_environment_variable_wins_over_jax_one(monkeypatch):
    name = fresh_name("jax_laminax_env")
    monkeypatch.setenv(name.upper(), "0")
    monkeypatch.setenv("LAMINAX_" + name[4:].upper(), "1")
    assert config.define_bool_state(name, False, "x").value is True


def test_laminax_prefixed_option_reads_laminax_variable(monkeypatch):
    name = fresh_name("laminax_env_prefixed")
    monkeypatch.setenv(name.upper(), "yes")
    assert config.define_bool_state(name, False, "x").value is True


def test_bad_environment_value_names_both_variables(monkeypatch):
    name = fresh_name("jax_env_names")
    monkeypatch.setenv(name.upper(), "perhaps")
    short = "LAMINAX_" + name[4:].upper()
    with pytest.raises(ValueError, match=f"{short} or {name.upper()}"):
        config.define_bool_state(name, False, "x")


@pytest.mark.parametrize(
    "kind,raw,expected",
    [("int", "12", 12), ("float", "0.25", 0.25), ("string", "abc", "abc"), ("enum", "b", "b")],
)
def test_environment_variable_for_other_kinds(monkeypatch, kind, raw, expected):
    name = fresh_name()
    monkeypatch.setenv(name.upper(), raw)
    define = {
        "int": lambda: config.define_int_state(name, 0, "x"),
        "float": lambda: config.define_float_state(name, 0.0, "x"),
        "string": lambda: config.define_string_state(name, "", "x"),
        "enum": lambda: config.define_enum_state(name, ["a", "b"], "a", "x"),
    }[kind]
    assert define().value == expected


def test_bad_environment_values_raise(monkeypatch):
    name = fresh_name()
    monkeypatch.setenv(name.upper(), "maybe")
    with pytest.raises(ValueError, match="has value 'maybe'"):
        config.define_bool_state(name, False, "x")
    name = fresh_name()
    monkeypatch.setenv(name.upper(), "ten")
    with pytest.raises(ValueError, match="not a valid int"):
        config.define_int_state(name, 0, "x")


def _run_fresh(code, **env):
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", **env},
        check=True,
    )
    return result.stdout.strip()


@pytest.mark.parametrize(
    "env,expected",
    [
        ({}, "False"),
        ({"JAX_ENABLE_X64": "1"}, "True"),
        ({"LAMINAX_ENABLE_X64": "true"}, "True"),
        ({"JAX_ENABLE_X64": "1", "LAMINAX_ENABLE_X64": "0"}, "False"),
    ],
)
def test_enable_x64_from_environment_in_a_fresh_process(env, expected):
    code = "from laminax_core.config import config; print(config.jax_enable_x64)"
    assert _run_fresh(code, **env) == expected


def test_update_beats_environment_in_a_fresh_process():
    code = (
        "from laminax_core.config import config, enable_x64\n"
        "config.update('jax_enable_x64', False)\n"
        "with enable_x64(True): inner = enable_x64.value\n"
        "print(config.jax_enable_x64, inner)"
    )
    assert _run_fresh(code, JAX_ENABLE_X64="1") == "False True"


# -- absl -----------------------------------------------------------------------------------------


def test_parse_flags_with_absl_sets_options_from_argv():
    code = (
        "import sys\n"
        "from laminax_core.config import config\n"
        "config.parse_flags_with_absl(['prog', '--jax_enable_x64', "
        "'--jax_numpy_rank_promotion=raise', '--other=1', '--', '--jax_debug_nans'])\n"
        "print(config.jax_enable_x64, config.jax_numpy_rank_promotion, config.jax_debug_nans)"
    )
    assert _run_fresh(code) == "True raise False"


def test_config_with_absl_applies_flags_after_app_init():
    code = (
        "import sys\n"
        "from absl import app\n"
        "from laminax_core.config import config\n"
        "config.config_with_absl()\n"
        "later = config.define_int_state('laminax_later_option', 1, 'defined after absl')\n"
        "def main(argv):\n"
        "    print(config.jax_debug_infs, config.jax_enable_x64, later.value)\n"
        "sys.argv = ['prog', '--jax_debug_infs', '--laminax_later_option=5']\n"
        "app.run(main)"
    )
    assert _run_fresh(code) == "True False 5"


def test_absl_flags_are_defined_with_option_types():
    code = (
        "from absl import flags\n"
        "from laminax_core.config import config\n"
        "config.parse_flags_with_absl(['prog'])\n"
        "f = flags.FLAGS\n"
        "print(type(f['jax_enable_x64']).__name__,\n"
        "      f['jax_numpy_rank_promotion'].parser.enum_values)"
    )
    out = _run_fresh(code)
    assert out.startswith("BooleanFlag") and "'raise'" in out


def test_string_or_object_state_takes_objects_and_validates():
    def validate(value):
        if isinstance(value, int):
            raise ValueError("no ints")

    holder = config.define_string_or_object_state(fresh_name(), None, "x", validator=validate)
    marker = object()
    config.update(holder.name, marker)
    assert holder.value is marker
    with pytest.raises(ValueError, match="no ints"):
        config.update(holder.name, 3)
    config.update(holder.name, "cpu")
    assert config.read(holder.name) == "cpu"


def test_checking_leaks_turns_on_leak_checks():
    with config_module.checking_leaks():
        assert config.jax_check_tracer_leaks is True
    assert config.jax_check_tracer_leaks is False


def test_jaxlib_cpp_jit_reads_laminax_disable_jit():
    # jaxlib's C++ PjitFunction calls the Python function directly when the holder registered
    # with set_disable_jit_state is True, and its cache-miss handler otherwise.
    from jaxlib import _jax

    calls = []

    def fun(x):
        calls.append(("fun", x))
        return x

    def cache_miss(*args, **kwargs):
        calls.append(("cache_miss", args[0]))
        return args[0], None, False

    registry = _jax.pytree.PyTreeRegistry(
        enable_none=True, enable_tuple=True, enable_namedtuple=True, enable_list=True,
        enable_dict=True,
    )  # fmt: skip
    jitted = _jax.pjit(
        "f", fun, cache_miss, [], [], "laminax-test", registry, lambda *a: None,
        _jax.PjitFunctionCache(),
    )  # fmt: skip
    with disable_jit():
        assert jitted(3) == 3
    assert jitted(4) == 4
    config.update("jax_disable_jit", True)
    try:
        assert jitted(5) == 5
    finally:
        config.update("jax_disable_jit", False)
    assert calls == [("fun", 3), ("cache_miss", 4), ("fun", 5)]

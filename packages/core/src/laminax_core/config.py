"""laminax's configuration: one `config` object for the whole stack, with JAX's option names.

Every option lives in a `State` holder built on jaxlib's C++ `Config` class, so the C++ runtime
(jit cache keys, `jaxlib._jax.config.trace_context()`) reads the same values Python does. A value
comes from, in increasing priority:

1. the default given when the option is defined;
2. the environment: JAX's variable (`JAX_ENABLE_X64`, the option name upper-cased) or laminax's
   (`LAMINAX_ENABLE_X64`, the name without `jax_`, upper-cased, prefixed `LAMINAX_`); laminax's wins
   when both are set;
3. absl command-line flags (`--jax_enable_x64`), after `config.config_with_absl()` or
   `config.parse_flags_with_absl()`;
4. `config.update("jax_enable_x64", True)`;
5. a context manager, which overrides the value in the current thread only:
   `with enable_x64(True): ...`.

Upper layers define their own options on the same object (`config.define_bool_state(...)`), so
`laminax.config.update` reaches every option of the stack.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from absl import app, flags
from jaxlib._jax import config as _config_ext
from jaxlib._jax import jax_jit as _jax_jit

__all__ = [
    "Config",
    "allow_f16_reductions",
    "auto_pcast",
    "enable_custom_prng",
    "jax2tf_associative_scan_reductions",
    "legacy_prng_key",
    "remove_size_one_mesh_axis_from_type",
    "State",
    "bool_state",
    "check_tracer_leaks",
    "checking_leaks",
    "config",
    "debug_key_reuse",
    "debug_infs",
    "debug_nans",
    "default_matmul_precision",
    "default_prng_impl",
    "disable_jit",
    "enable_checks",
    "enable_x64",
    "enum_state",
    "explicit_x64_dtypes",
    "float_state",
    "int_state",
    "make_user_context",
    "no_tracing",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "optional_enum_state",
    "optional_string_state",
    "softmax_custom_jvp",
    "string_or_object_state",
    "string_state",
    "threefry_partitionable",
    "trace_context",
    "trace_context_names",
    "traceback_filtering",
    "update",
]

_TRUE_STRINGS = frozenset({"1", "y", "yes", "t", "true", "on"})
_FALSE_STRINGS = frozenset({"0", "n", "no", "f", "false", "off"})


class _NoDefault:
    def __repr__(self) -> str:
        return "<no default>"


_NO_DEFAULT = _NoDefault()


def _env_names(name: str) -> tuple[str, ...]:
    """The environment variables for option `name`, highest priority first.

    `jax_enable_x64` -> (LAMINAX_ENABLE_X64, JAX_ENABLE_X64); `laminax_foo` -> (LAMINAX_FOO,).
    """
    for prefix in ("jax_", "laminax_"):
        if name.startswith(prefix):
            short = "LAMINAX_" + name[len(prefix) :].upper()
            return (short,) if short == name.upper() else (short, name.upper())
    return ("LAMINAX_" + name.upper(), name.upper())


def _env_value(name: str) -> str | None:
    """The environment's value for option `name`; LAMINAX_* beats JAX_* when both are set."""
    for variable in _env_names(name):
        value = os.environ.get(variable)
        if value is not None:
            return value
    return None


def _env_variables(name: str) -> str:
    return " or ".join(_env_names(name))


class State(_config_ext.Config):
    """The holder of one configuration option; calling it gives a thread-local context manager.

    `State.value` reads the current thread's override if one is active, else the global value.
    The global value changes through `config.update(name, value)`; `with state(value): ...` changes
    it for the current thread until the block ends.

    Args:
      name: the option's name, such as ``"jax_enable_x64"``.
      default: the value before anything overrides it (the environment is read by the
        ``define_*`` helpers, not here).
      help: one paragraph for users; it becomes the holder's docstring and the absl flag help.
      parser: checks and normalises every new value; raises TypeError/ValueError on a bad one.
      update_global_hook: called with the new global value each time it changes.
      update_thread_local_hook: called with the new thread-local value (None when the override
        ends) each time a context manager enters or exits.
      default_context_manager_value: the value ``state()`` (called with no argument) sets.
      include_in_jit_key: jaxlib's jit includes the value in its cache key.
      include_in_trace_context: `trace_context()` includes the value.

    Example:
      >>> from laminax_core.config import enable_x64
      >>> with enable_x64(True):
      ...     enable_x64.value
      True
    """

    # No __slots__: each holder carries its own __doc__ (the option's help) in its __dict__.

    def __init__(
        self,
        name: str,
        default: Any,
        help: str,
        *,
        parser: Callable[[Any], Any] | None = None,
        update_global_hook: Callable[[Any], None] | None = None,
        update_thread_local_hook: Callable[[Any], None] | None = None,
        default_context_manager_value: Any = _NO_DEFAULT,
        include_in_jit_key: bool = False,
        include_in_trace_context: bool = False,
    ):
        if parser is not None:
            default = parser(default)
        super().__init__(
            name,
            default,
            include_in_jit_key=include_in_jit_key,
            include_in_trace_context=include_in_trace_context,
        )
        self._name = name
        self._parser = parser
        self._update_global_hook = update_global_hook
        self._update_thread_local_hook = update_thread_local_hook
        self._default_context_manager_value = default_context_manager_value
        self.__name__ = name[4:] if name.startswith("jax_") else name
        self.__doc__ = f"Context manager for the `{name}` option.\n\n{help}"
        if update_global_hook is not None:
            update_global_hook(default)

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"State({self._name!r}, value={self.value!r})"

    def __bool__(self):
        raise TypeError(
            f"bool() of the config holder for {self._name!r} is ambiguous; "
            f"read its value with `{self.__name__}.value`."
        )

    def parse(self, value: Any) -> Any:
        """Checks `value` for this option and returns it normalised (raises on a bad value)."""
        return value if self._parser is None else self._parser(value)

    def _set(self, value: Any) -> None:
        value = self.parse(value)
        self.set_global(value)
        if self._update_global_hook is not None:
            self._update_global_hook(value)

    def __call__(self, new_val: Any = _NO_DEFAULT) -> _StateContextManager:
        if new_val is _NO_DEFAULT:
            new_val = self._default_context_manager_value
            if new_val is _NO_DEFAULT:
                raise TypeError(
                    f"The context manager for {self._name!r} needs the value to set, "
                    f"for example `with {self.__name__}(value): ...`."
                )
        return _StateContextManager(self, self.parse(new_val))


class _StateContextManager:
    """Sets a thread-local value of a `State` for a `with` block; also usable as a decorator."""

    __slots__ = ("state", "new_val", "prev")

    def __init__(self, state: State, new_val: Any):
        self.state = state
        self.new_val = new_val

    def __enter__(self) -> None:
        self.prev = self.state.swap_local(self.new_val)
        hook = self.state._update_thread_local_hook
        if hook is not None:
            hook(self.new_val)

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self.state.set_local(self.prev)
        hook = self.state._update_thread_local_hook
        if hook is not None:
            hook(None if self.prev is _config_ext.unset else self.prev)

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _StateContextManager(self.state, self.new_val):
                return func(*args, **kwargs)

        return wrapper


class _DisableJitState(State):
    """`disable_jit`'s holder: `disable_jit(disable=True)` is also JAX's public context manager."""

    def __call__(self, disable: bool = True) -> _StateContextManager:
        """Runs jitted functions as plain Python (op by op) inside the block.

        Args:
          disable: True to run without compiling, False to force jit back on in the block.

        Returns:
          A context manager (also usable as a decorator).

        Example:
          >>> from laminax_core.config import disable_jit
          >>> with disable_jit():
          ...     disable_jit.value
          True
        """
        return super().__call__(disable)


class _ValuesView(Mapping):
    """A live, read-only mapping from option name to current value."""

    def __init__(self, holders: dict[str, State]):
        self._holders = holders

    def __getitem__(self, name: str) -> Any:
        return self._holders[name].value

    def __iter__(self) -> Iterator[str]:
        return iter(self._holders)

    def __len__(self) -> int:
        return len(self._holders)

    def __repr__(self) -> str:
        return repr(dict(self))


def _bool_parser(name: str) -> Callable[[Any], bool]:
    def parse(value: Any) -> bool:
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            return bool(value)
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise TypeError(f"{name} takes a bool, got {value!r} of type {type(value).__name__}.")

    return parse


def _enum_parser(name: str, values: Sequence[str], optional: bool) -> Callable[[Any], Any]:
    def parse(value: Any) -> Any:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            allowed = "a string or None" if optional else "a string"
            raise TypeError(
                f"{name} takes {allowed} (one of {list(values)}), got {value!r} "
                f"of type {type(value).__name__}."
            )
        if value not in values:
            raise ValueError(f"{name} must be one of {list(values)}, got {value!r}.")
        return str(value)

    return parse


def _int_parser(name: str) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise TypeError(f"{name} takes an int, got {value!r} of type {type(value).__name__}.")
        return int(value)

    return parse


def _float_parser(name: str) -> Callable[[Any], float]:
    def parse(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} takes a float, got {value!r} of type {type(value).__name__}.")
        return float(value)

    return parse


def _string_parser(name: str, optional: bool) -> Callable[[Any], Any]:
    def parse(value: Any) -> Any:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            allowed = "a string or None" if optional else "a string"
            kind = type(value).__name__
            raise TypeError(f"{name} takes {allowed}, got {value!r} of type {kind}.")
        return value

    return parse


def _env_bool(name: str, raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in _TRUE_STRINGS:
        return True
    if lowered in _FALSE_STRINGS:
        return False
    raise ValueError(
        f"Environment variable {_env_variables(name)} for {name} has value {raw!r}; "
        "use one of 1/0, true/false, yes/no, on/off."
    )


def _env_number(name: str, raw: str, kind: type) -> Any:
    try:
        return kind(raw)
    except ValueError as err:
        raise ValueError(
            f"Environment variable {_env_variables(name)} for {name} has value {raw!r}, "
            f"which is not a valid {kind.__name__}."
        ) from err


class Config:
    """The registry of every laminax option (one instance: `config`).

    Read an option with `config.jax_enable_x64` or `config.read("jax_enable_x64")`, change its
    global value with `config.update("jax_enable_x64", True)`, and define new options with the
    ``define_*_state`` methods (upper layers add their own this way).

    Example:
      >>> from laminax_core.config import config
      >>> config.read("jax_numpy_rank_promotion")
      'allow'
    """

    def __init__(self):
        self._holders: dict[str, State] = {}
        self._meta: dict[str, tuple[str, dict[str, Any]]] = {}
        self.use_absl = False
        self._absl_flags = None

    # -- reading and writing -------------------------------------------------------------------

    def _holder(self, name: str) -> State:
        try:
            return self._holders[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(self._holders), n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise AttributeError(
                f"Unrecognized config option: {name!r}.{hint} "
                "`config.values` lists every defined option."
            ) from None

    def update(self, name: str, val: Any) -> None:
        """Sets the global value of option `name` (thread-local overrides still win).

        Args:
          name: the option, such as ``"jax_enable_x64"``.
          val: its new value; checked against the option's type.

        Raises:
          AttributeError: no option has this name (the message lists close matches).
          TypeError: `val` has the wrong type for the option.
          ValueError: `val` is not one of an enum option's values.

        Example:
          >>> from laminax_core.config import config
          >>> config.update("jax_debug_nans", True)
          >>> config.jax_debug_nans
          True
          >>> config.update("jax_debug_nans", False)
        """
        self._holder(name)._set(val)

    def read(self, name: str) -> Any:
        """The current value of option `name` (the thread's override, else the global value)."""
        return self._holder(name).value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._holder(name).value

    @property
    def values(self) -> Mapping[str, Any]:
        """A live read-only mapping from every option's name to its current value."""
        return _ValuesView(self._holders)

    @property
    def x64_enabled(self) -> bool:
        """Whether 64-bit dtypes are enabled in the current thread (`jax_enable_x64`)."""
        return enable_x64.value

    def trace_context(self) -> tuple:
        """The values of every option that tracing and jit caches depend on, as a hashable tuple.

        This is jaxlib's own `trace_context()`: it holds, in definition order, the current value of
        every option defined with ``include_in_trace_context=True`` anywhere in the process.
        """
        return _config_ext.trace_context()

    # -- defining options ----------------------------------------------------------------------

    def _register(self, holder: State, flag_type: str, flag_kwargs: dict[str, Any]) -> State:
        self._holders[holder.name] = holder
        self._meta[holder.name] = (flag_type, flag_kwargs)
        if self.use_absl:
            self._define_absl_flag(holder.name)
        return holder

    def _check_new_name(self, name: str) -> str:
        if not isinstance(name, str) or not name or name != name.lower():
            raise ValueError(f"Config option names are non-empty lower-case strings, got {name!r}.")
        if name in self._holders:
            raise ValueError(f"Config option {name!r} is already defined; define it once.")
        return name

    def define_bool_state(
        self,
        name: str,
        default: bool,
        help: str,
        *,
        upgrade: bool = False,
        update_global_hook: Callable[[bool], None] | None = None,
        update_thread_local_hook: Callable[[bool | None], None] | None = None,
        include_in_jit_key: bool = False,
        include_in_trace_context: bool = False,
        state_class: type[State] = State,
    ) -> State:
        """Defines a boolean option and returns its holder; `holder()` sets it to True in a block.

        Args:
          name: the option's name (lower case, JAX's `jax_` prefix where JAX has the option).
          default: its value unless the environment, absl flags or `update` say otherwise.
          help: one paragraph for users.
          upgrade: marks an option that switches on new behaviour that will become the default.
          update_global_hook: called with each new global value.
          update_thread_local_hook: called with each new thread-local value (None on exit).
          include_in_jit_key: jaxlib's jit cache key includes the value.
          include_in_trace_context: `trace_context()` includes the value.
          state_class: the holder class (a `State` subclass).

        Returns:
          The `State` holder.

        Example:
          >>> from laminax_core.config import config
          >>> flag = config.define_bool_state("laminax_doc_example", False, "An example.")
          >>> with flag():
          ...     flag.value
          True
        """
        name = self._check_new_name(name)
        if not isinstance(default, bool):
            raise TypeError(f"The default of {name} must be a bool, got {default!r}.")
        raw = _env_value(name)
        if raw is not None:
            default = _env_bool(name, raw)
        if upgrade:
            help += " This new behaviour is planned to become the default."
        holder = state_class(
            name,
            default,
            help,
            parser=_bool_parser(name),
            update_global_hook=update_global_hook,
            update_thread_local_hook=update_thread_local_hook,
            default_context_manager_value=True,
            include_in_jit_key=include_in_jit_key,
            include_in_trace_context=include_in_trace_context,
        )
        return self._register(holder, "bool", {"help": help})

    def define_enum_state(
        self,
        name: str,
        enum_values: Sequence[str],
        default: str | None,
        help: str,
        *,
        update_global_hook: Callable[[Any], None] | None = None,
        update_thread_local_hook: Callable[[Any], None] | None = None,
        include_in_jit_key: bool = False,
        include_in_trace_context: bool = False,
        optional: bool = False,
    ) -> State:
        """Defines an option whose value is one of `enum_values` (or None when `optional`).

        Args:
          name: the option's name.
          enum_values: the allowed strings.
          default: the default (None only with `optional=True`).
          help: one paragraph for users.
          update_global_hook, update_thread_local_hook, include_in_jit_key,
          include_in_trace_context: as for `define_bool_state`.
          optional: None is allowed too.

        Returns:
          The `State` holder; `holder("value")` sets it in a block.

        Example:
          >>> from laminax_core.config import numpy_rank_promotion
          >>> with numpy_rank_promotion("raise"):
          ...     numpy_rank_promotion.value
          'raise'
        """
        name = self._check_new_name(name)
        enum_values = tuple(enum_values)
        raw = _env_value(name)
        if raw is not None:
            default = raw
        parser = _enum_parser(name, enum_values, optional)
        holder = State(
            name,
            parser(default),
            help,
            parser=parser,
            update_global_hook=update_global_hook,
            update_thread_local_hook=update_thread_local_hook,
            include_in_jit_key=include_in_jit_key,
            include_in_trace_context=include_in_trace_context,
        )
        return self._register(holder, "enum", {"enum_values": list(enum_values), "help": help})

    def define_optional_enum_state(
        self, name: str, enum_values: Sequence[str], default: str | None, help: str, **kwargs: Any
    ) -> State:
        """`define_enum_state` with None allowed (None usually means "let the backend choose")."""
        return self.define_enum_state(name, enum_values, default, help, optional=True, **kwargs)

    def _define_scalar_state(
        self, name: str, default: Any, help: str, kind: type, flag_type: str, **kwargs: Any
    ) -> State:
        name = self._check_new_name(name)
        raw = _env_value(name)
        if raw is not None:
            default = _env_number(name, raw, kind) if kind is not str else raw
        parsers = {int: _int_parser, float: _float_parser}
        parser = parsers[kind](name) if kind in parsers else _string_parser(name, False)
        holder = State(name, parser(default), help, parser=parser, **kwargs)
        return self._register(holder, flag_type, {"help": help})

    def define_int_state(self, name: str, default: int, help: str, **kwargs: Any) -> State:
        """Defines an integer option (keywords as for `define_bool_state`); returns its holder."""
        return self._define_scalar_state(name, default, help, int, "integer", **kwargs)

    def define_float_state(self, name: str, default: float, help: str, **kwargs: Any) -> State:
        """Defines a float option (keywords as for `define_bool_state`); returns its holder."""
        return self._define_scalar_state(name, default, help, float, "float", **kwargs)

    def define_string_state(self, name: str, default: str, help: str, **kwargs: Any) -> State:
        """Defines a string option (keywords as for `define_bool_state`); returns its holder."""
        return self._define_scalar_state(name, default, help, str, "string", **kwargs)

    def define_optional_string_state(
        self, name: str, default: str | None, help: str, **kwargs: Any
    ) -> State:
        """Defines an option holding a string or None; returns its holder.

        Example:
          >>> from laminax_core.config import config
          >>> opt = config.define_optional_string_state("laminax_doc_path", None, "A path.")
          >>> opt.value is None
          True
        """
        name = self._check_new_name(name)
        raw = _env_value(name)
        if raw is not None:
            default = raw
        parser = _string_parser(name, True)
        holder = State(name, parser(default), help, parser=parser, **kwargs)
        return self._register(holder, "string", {"help": help})

    def define_string_or_object_state(
        self,
        name: str,
        default: Any,
        help: str,
        *,
        validator: Callable[[Any], None] | None = None,
        **kwargs: Any,
    ) -> State:
        """Defines an option holding a string or any object (e.g. a `Device`); returns its holder.

        The environment can only give a string. `validator` is called on every new value and
        should raise TypeError/ValueError for a bad one. There is no absl flag for such options.

        Example:
          >>> from laminax_core.config import config
          >>> opt = config.define_string_or_object_state("laminax_doc_device", None, "A device.")
          >>> with opt(object()):
          ...     opt.value is not None
          True
        """
        name = self._check_new_name(name)
        raw = _env_value(name)
        if raw is not None:
            default = raw

        def parse(value: Any) -> Any:
            if validator is not None:
                validator(value)
            return value

        holder = State(name, parse(default), help, parser=parse, **kwargs)
        self._holders[name] = holder
        return holder

    # -- absl ----------------------------------------------------------------------------------

    def _define_absl_flag(self, name: str) -> None:
        flags = self._absl_flags
        if name in flags.FLAGS:
            return
        flag_type, kwargs = self._meta[name]
        define = getattr(flags, f"DEFINE_{flag_type}")
        default = self._holders[name].get_global()
        define(name, default, **kwargs)

    def config_with_absl(self) -> None:
        """Defines an absl flag for every option (and every later one); `app.run` applies them.

        Call it before `absl.app.run(main)`: flags given on the command line (`--jax_enable_x64`)
        then set the options' global values once absl has parsed them.
        """
        self.use_absl = True
        self._absl_flags = flags
        for name in self._meta:
            self._define_absl_flag(name)
        app.call_after_init(lambda: self.complete_absl_config(flags))

    def complete_absl_config(self, absl_flags: Any) -> None:
        """Copies every absl flag given on the command line into its option's global value."""
        for name, holder in self._holders.items():
            try:
                flag = absl_flags.FLAGS[name]
            except KeyError:
                continue
            if flag.present:
                holder._set(flag.value)

    def parse_flags_with_absl(self, argv: Sequence[str] | None = None) -> None:
        """Parses the `--jax*` flags of `argv` (default `sys.argv`) without running absl's app.

        Only arguments before a bare `--` are read; other arguments are ignored, so this works in
        notebooks and under other argument parsers.
        """
        argv = sys.argv if argv is None else argv
        before_separator = itertools.takewhile(lambda a: a != "--", argv[1:])
        ours = [a for a in before_separator if a.startswith("--jax")]
        if not self.use_absl:
            self.use_absl = True
            self._absl_flags = flags
            for name in self._meta:
                self._define_absl_flag(name)
        flags.FLAGS([argv[0] if argv else "", *ours], known_only=True)
        self.complete_absl_config(flags)


config = Config()
"""The configuration of the whole laminax stack (JAX: `jax.config`)."""

update = config.update


# JAX's module-level spellings of the define_* methods.


def bool_state(name: str, default: bool, help: str, **kwargs: Any) -> State:
    """`config.define_bool_state` under JAX's module-level name."""
    return config.define_bool_state(name, default, help, **kwargs)


def enum_state(
    name: str, enum_values: Sequence[str], default: str | None, help: str, **kwargs: Any
) -> State:
    """`config.define_enum_state` under JAX's module-level name."""
    return config.define_enum_state(name, enum_values, default, help, **kwargs)


def optional_enum_state(
    name: str, enum_values: Sequence[str], default: str | None, help: str, **kwargs: Any
) -> State:
    """`config.define_optional_enum_state` under JAX's module-level name."""
    return config.define_optional_enum_state(name, enum_values, default, help, **kwargs)


def int_state(name: str, default: int, help: str, **kwargs: Any) -> State:
    """`config.define_int_state` under JAX's module-level name."""
    return config.define_int_state(name, default, help, **kwargs)


def float_state(name: str, default: float, help: str, **kwargs: Any) -> State:
    """`config.define_float_state` under JAX's module-level name."""
    return config.define_float_state(name, default, help, **kwargs)


def string_state(name: str, default: str, help: str, **kwargs: Any) -> State:
    """`config.define_string_state` under JAX's module-level name."""
    return config.define_string_state(name, default, help, **kwargs)


def optional_string_state(name: str, default: str | None, help: str, **kwargs: Any) -> State:
    """`config.define_optional_string_state` under JAX's module-level name."""
    return config.define_optional_string_state(name, default, help, **kwargs)


def string_or_object_state(name: str, default: Any, help: str, **kwargs: Any) -> State:
    """`config.define_string_or_object_state` under JAX's module-level name."""
    return config.define_string_or_object_state(name, default, help, **kwargs)



def trace_context() -> tuple:
    """The current values of every option tracing caches depend on (see `Config.trace_context`)."""
    return _config_ext.trace_context()


def trace_context_names() -> tuple[str, ...]:
    """The option names matching `trace_context()`'s entries, in the same order."""
    return _config_ext.trace_context_names()


# -- the options core defines (JAX's names and defaults) ------------------------------------------

enable_x64 = bool_state(
    "jax_enable_x64",
    False,
    "Enables 64-bit dtypes. When off, 64-bit requests are canonicalized to 32-bit dtypes.",
    include_in_jit_key=True,
    include_in_trace_context=True,
)
# jaxlib's C++ jit reads x64 mode from this holder when it computes argument signatures.
_jax_jit.set_enable_x64_state(enable_x64)

disable_jit = bool_state(
    "jax_disable_jit",
    False,
    "Runs jitted functions as plain Python, op by op, without compiling them.",
    include_in_trace_context=True,
    state_class=_DisableJitState,
)
_jax_jit.set_disable_jit_state(disable_jit)

explicit_x64_dtypes = enum_state(
    "jax_explicit_x64_dtypes",
    ["allow", "warn", "error"],
    "warn",
    "What to do when a 64-bit dtype is requested while jax_enable_x64 is off: 'warn' and "
    "truncate to 32 bits, 'error', or 'allow' (keep the 64-bit dtype).",
    include_in_jit_key=True,
    include_in_trace_context=True,
)

numpy_dtype_promotion = enum_state(
    "jax_numpy_dtype_promotion",
    ["standard", "strict"],
    "standard",
    "Implicit dtype promotion between arrays: 'standard' follows the promotion lattice; "
    "'strict' refuses to mix different strongly-typed dtypes.",
    include_in_jit_key=True,
    include_in_trace_context=True,
)

numpy_rank_promotion = enum_state(
    "jax_numpy_rank_promotion",
    ["allow", "warn", "raise"],
    "allow",
    "NumPy-style broadcasting of arrays of different ranks: 'allow', 'warn' or 'raise'.",
    include_in_jit_key=True,
    include_in_trace_context=True,
)

default_matmul_precision = optional_enum_state(
    "jax_default_matmul_precision",
    [
        "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
        "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
        "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
        "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
        "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64",
    ],  # fmt: skip
    None,
    "Default precision (or dot algorithm preset) of matmuls and convolutions on 32-bit inputs; "
    "None lets the backend choose.",
    include_in_jit_key=True,
    include_in_trace_context=True,
)

default_prng_impl = enum_state(
    "jax_default_prng_impl",
    ["threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32"],
    "threefry2x32",
    "The PRNG implementation used when a key is created without naming one.",
)

threefry_partitionable = bool_state(
    "jax_threefry_partitionable",
    True,
    "Generates threefry random bits in a way XLA can partition across devices.",
    upgrade=True,
    include_in_jit_key=True,
    include_in_trace_context=True,
)

softmax_custom_jvp = bool_state(
    "jax_softmax_custom_jvp",
    False,
    "Uses a custom_jvp rule for nn.softmax that saves memory and is more stable.",
    upgrade=True,
    include_in_jit_key=True,
    include_in_trace_context=True,
)

debug_nans = bool_state(
    "jax_debug_nans",
    False,
    "Checks every operation's output for NaNs and raises FloatingPointError naming the "
    "operation that produced one.",
    # in jaxlib's jit key: a call with the checks on misses the C++ cache and is checked in
    # Python
    include_in_jit_key=True,
)

debug_infs = bool_state(
    "jax_debug_infs",
    False,
    "Checks every operation's output for infinities and raises FloatingPointError naming the "
    "operation that produced one.",
    # in jaxlib's jit key: a call with the checks on misses the C++ cache and is checked in
    # Python
    include_in_jit_key=True,
)

enable_checks = bool_state(
    "jax_enable_checks",
    False,
    "Checks laminax's internal invariants (jaxpr types, tracer levels). Slower.",
)

check_tracer_leaks = bool_state(
    "jax_check_tracer_leaks",
    False,
    "Raises as soon as a trace ends if one of its tracers is still referenced from outside.",
)


def checking_leaks() -> _StateContextManager:
    """Checks for leaked tracers inside the block (`check_tracer_leaks(True)`; JAX's name).

    Example:
      >>> from laminax_core.config import check_tracer_leaks, checking_leaks
      >>> with checking_leaks():
      ...     check_tracer_leaks.value
      True
    """
    return check_tracer_leaks(True)


debug_key_reuse = bool_state(
    "jax_debug_key_reuse",
    False,
    "Tracks the use of typed PRNG keys and raises KeyReuseError when one is used twice.",
    include_in_jit_key=True,
    include_in_trace_context=True,
)

traceback_filtering = enum_state(
    "jax_traceback_filtering",
    ["off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto"],
    "auto",
    "How laminax's internal frames are hidden from tracebacks.",
)

no_tracing = bool_state(
    "jax_no_tracing",
    False,
    "Refuses to trace a function into a jaxpr (jit, make_jaxpr, control flow outside jit): a "
    "guard that a hot loop only hits compiled caches.",
)


def make_user_context(default_value: Any = None) -> State:
    """A new option of the user's own that jit's caches key on, like `enable_x64` does.

    Calls under `with ctx(value): ...` with a value not seen before retrace and recompile;
    `ctx.value` reads the current one.

    Example:
      >>> ctx = make_user_context(0)
      >>> with ctx(1):
      ...     ctx.value
      1
    """
    return State("user_context", default_value, "A user-defined context that jit keys on.",
                 include_in_jit_key=True, include_in_trace_context=True)


allow_f16_reductions = bool_state(
    "jax_allow_f16_reductions",
    True,
    "If False, lax.reduce_sum over a non-trivial axis of a float16 or bfloat16 operand raises "
    "(jnp.sum is unaffected: it accumulates such inputs in float32).",
    include_in_jit_key=True,
    include_in_trace_context=True,
)

legacy_prng_key = enum_state(
    "jax_legacy_prng_key",
    ["allow", "warn", "error"],
    "allow",
    "What random's functions do when given a raw uint32 key instead of a typed one: 'allow' it, "
    "'warn', or 'error'.",
)

enable_custom_prng = bool_state(
    "jax_enable_custom_prng",
    False,
    "JAX's upgrade towards typed keys everywhere: PRNGKey returns typed keys, random functions "
    "given raw keys return typed keys and warn (FutureWarning).",
    upgrade=True,
)

jax2tf_associative_scan_reductions = bool_state(
    "jax2tf_associative_scan_reductions",
    False,
    "Read by JAX's jax2tf converter only (which laminax does not have): cumulative reductions "
    "converted through associative scans instead of reduce_window.",
)

remove_size_one_mesh_axis_from_type = bool_state(
    "jax_remove_size_one_mesh_axis_from_type",
    False,
    "JAX: drops mesh axes of size 1 from the sharding and varying axes an array's type records. "
    "Recorded for programs that set it; laminax's types keep such axes either way.",
    include_in_jit_key=True,
    include_in_trace_context=True,
)

auto_pcast = bool_state(
    "jax_auto_pcast",
    True,
    "Inside shard_map with varying-manual-axes checking, inserts the pvary casts that make "
    "operands agree on the axes they vary over; when off, a mismatch is an error.",
    include_in_jit_key=True,
    include_in_trace_context=True,
)

"""`jax.extend.linear_util`: functions wrapped with a stack of transformations, as libraries that
write their own interpreters (and JAX-era code) build them.

A `WrappedFun` is the user's function plus the transformations applied to it, each recorded as
`(transformation, static args)` so that two wraps of the same function by the same
transformations compare equal: that is what `cache` keys on. A transformation with auxiliary
output writes it into a `Store` while the function runs; `cache` replays the stores on a hit, so
a cached call still answers its aux getters.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["Callable", "Store", "StoreException", "WrappedFun", "cache", "merge_linear_aux",
           "transformation", "transformation2", "transformation_with_aux",
           "transformation_with_aux2", "wrap_init"]


class StoreException(Exception):
    """A store read before the function wrote it, or written twice."""


class Store:
    """One value written by a transformation while its function runs."""

    __slots__ = ("_val",)
    _EMPTY = object()

    def __init__(self):
        self._val = Store._EMPTY

    def store(self, val) -> None:
        if self._val is not Store._EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self) -> None:
        self._val = Store._EMPTY

    @property
    def val(self):
        if self._val is Store._EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __nonzero__(self):
        return self._val is not Store._EMPTY

    __bool__ = __nonzero__


class WrappedFun:
    """`f` with transformations applied; `call_wrapped` runs the whole stack."""

    __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "in_type", "debug_info",
                 "__weakref__")

    def __init__(self, f, f_transformed, transforms, stores, params, in_type, debug_info):
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self):
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    def wrap(self, gen, gen_static_args, out_store, *, runner=None) -> WrappedFun:
        """Add `gen` (called as `gen(inner, *gen_static_args, *args)`, or through `runner`,
        which takes `gen` first) on top of the stack; the record names `gen` itself, so equal
        wraps compare equal."""
        call = gen if runner is None else functools.partial(runner, gen)
        inner = self.f_transformed
        if out_store is None:
            outer = functools.partial(call, inner, *gen_static_args)
        else:
            outer = functools.partial(call, inner, out_store, *gen_static_args)
        return WrappedFun(self.f, outer, ((gen, gen_static_args),) + self.transforms,
                          (out_store,) + self.stores, self.params, self.in_type, self.debug_info)

    def call_wrapped(self, *args, **kwargs):
        return self.f_transformed(*args, **kwargs)

    def populate_stores(self, stores) -> None:
        """Fill this stack's stores from another run's (a cache hit)."""
        for mine, theirs in zip(self.stores, stores):
            if mine is not None:
                mine.store(theirs.val)

    def replace_debug_info(self, debug_info) -> WrappedFun:
        return WrappedFun(self.f, self.f_transformed, self.transforms, self.stores, self.params,
                          self.in_type, debug_info)

    def with_unknown_names(self) -> WrappedFun:
        return self

    def __repr__(self):
        lines = [f"  {getattr(g, '__name__', g)}   {args}" for g, args in self.transforms]
        return "Wrapped function:\n" + "\n".join(lines) + f"\nCore: {self.__name__}\n"

    def _key(self):
        return (self.f, self.transforms, self.params, self.in_type)

    def __eq__(self, other):
        return isinstance(other, WrappedFun) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


def wrap_init(f: Callable, params=None, *, debug_info=None) -> WrappedFun:
    """Wrap `f` (called with the keyword `params` added) with no transformations yet."""
    params_t = tuple(sorted((params or {}).items()))
    fun = functools.partial(f, **dict(params_t)) if params_t else f
    return WrappedFun(f, fun, (), (), params_t, None, debug_info)


def _curried(impl):
    # `@transformation2` on a generator-function makes it a function of the wrapped function.
    @functools.wraps(impl)
    def entry(gen, *rest, **kwargs):
        if not rest:
            return functools.partial(impl, gen, **kwargs)
        return impl(gen, *rest, **kwargs)
    return entry


@_curried
def transformation2(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """`gen(inner, *static, *args)` becomes a layer over `fun`."""
    return fun.wrap(gen, gen_static_args, None)


@_curried
def transformation_with_aux2(gen, fun: WrappedFun, *gen_static_args, use_eq_store: bool = False,
                             unk_names: bool = False):
    """Like `transformation2`, `gen` also taking a store for its auxiliary output; returns the
    wrapped function and a getter for that output."""
    del use_eq_store, unk_names
    store = Store()
    return fun.wrap(gen, gen_static_args, store), (lambda: store.val)


def _run_generator(gen, inner, *args, **kwargs):
    # The generator protocol of old-style transformations: it yields (args, kwargs) for the
    # inner function, is sent the inner result, and yields its own result.
    g = gen(*args, **kwargs)
    inner_args, inner_kwargs = next(g)
    out = g.send(inner(*inner_args, **inner_kwargs))
    g.close()
    return out


def _run_generator_aux(gen, inner, store, *args, **kwargs):
    out, aux = _run_generator(gen, inner, *args, **kwargs)
    store.store(aux)
    return out


@_curried
def transformation(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """A generator transformation: `gen(*static, *args)` yields the inner call's `(args, kwargs)`,
    receives its result, and yields the outer result."""
    return fun.wrap(gen, gen_static_args, None, runner=_run_generator)


@_curried
def transformation_with_aux(gen, fun: WrappedFun, *gen_static_args):
    """A generator transformation whose final yield is `(result, aux)`."""
    store = Store()
    return fun.wrap(gen, gen_static_args, store, runner=_run_generator_aux), (lambda: store.val)


def cache(call: Callable, *, explain=None):
    """Memoize `call(fun, *args)` on the wrapped function and its transformations; a hit refills
    the stores the first call wrote."""
    del explain
    tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @functools.wraps(call)
    def memoized(fun: WrappedFun, *args):
        try:
            table = tables.setdefault(fun.f, {})
        except TypeError:  # not weakly referable: no caching
            return call(fun, *args)
        key = (fun.transforms, fun.params, fun.in_type, args)
        hit = table.get(key)
        if hit is not None:
            ans, stores = hit
            fun.populate_stores(stores)
            return ans
        ans = call(fun, *args)
        table[key] = (ans, fun.stores)
        return ans

    memoized.cache_clear = lambda: tables.clear()
    return memoized


def merge_linear_aux(aux1, aux2):
    """Of two aux getters exactly one was written: `(True, value)` if the first, else
    `(False, value)`."""
    try:
        first = aux1()
    except StoreException:
        try:
            return False, aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
    try:
        aux2()
    except StoreException:
        return True, first
    raise StoreException("both stores occupied")


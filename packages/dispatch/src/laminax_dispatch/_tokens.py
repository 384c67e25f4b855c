"""Runtime tokens: keeping side effects in program order across dispatched computations.

A computation with ordered effects (printing, io callbacks) takes one ``!stablehlo.token`` per
effect as its first arguments and returns the updated tokens first. At run time laminax passes
a token *buffer* (an empty bool array) in each of those slots: the one the previous
computation with that effect returned. XLA does not start a computation before its inputs are
ready, so each effect's computations run one after another, in dispatch order, even though
dispatch itself is asynchronous. The first computation of an effect gets a fresh buffer.

Every computation that runs with tokens also returns a PJRT *runtime token* per device, which
becomes ready when the computation (and its host callbacks) finished. `effects_barrier()`
waits on all of them, which is how `laminax.effects_barrier()` and interpreter exit guarantee
that every effect has happened. `wait_for_all_threads()` waits on every thread's (host
callbacks' `barrier_wait` must see computations that other threads dispatched).
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc
from laminax_core.internal import EffectTypeSet

from laminax_dispatch import _hooks
from laminax_dispatch._placement import replicated_sharding

__all__ = [
    "RuntimeTokenSet",
    "effects_barrier",
    "runtime_tokens",
    "shardable_ordered_effects",
    "wait_for_all_threads",
]

# Ordered effects a computation over several devices may have (JAX's registry of the same
# name): its token is replicated over the devices, and the effect itself happens on one of
# them (a host callback pinned to the first device).
shardable_ordered_effects = EffectTypeSet("shardable_ordered_effects")

# (thread, that thread's output_runtime_tokens): every thread's latest computations, for
# `wait_for_all_threads`; a dead thread's entry goes once its computations are done.
_threads_lock = threading.Lock()
_thread_tokens: list[tuple[threading.Thread, dict]] = []


class RuntimeTokenSet(threading.local):
    """The current token of each ordered effect and the last runtime token of each device.

    Per thread, as in JAX: effects are ordered within the thread that dispatches them.
    """

    def __init__(self):
        self.current_tokens: dict[Any, _jax.ArrayImpl] = {}
        self.output_runtime_tokens: dict[xc.Device, Any] = {}
        with _threads_lock:
            _thread_tokens.append((threading.current_thread(), self.output_runtime_tokens))

    def get_token_input(self, effect: Any, device) -> _jax.ArrayImpl:
        """The token buffer to pass for `effect` to a computation running on `device` (or on
        a tuple of devices: then the token is replicated over them)."""
        devices = device if isinstance(device, tuple) else (device,)
        token = self.current_tokens.get(effect)
        if token is None or tuple(token.sharding._device_assignment) != devices:
            if len(devices) == 1:
                target = devices[0]
            else:
                target = replicated_sharding(devices)
            if token is not None:
                # a token buffer cannot be copied between devices: keep the order by waiting
                # for the computation that produced it, then start a fresh token
                token.block_until_ready()
            token = _hooks.device_put(np.zeros(0, np.bool_), target)
        self.current_tokens[effect] = token
        return token

    def set_token_result(self, effect: Any, token: _jax.ArrayImpl) -> None:
        """Records the token a computation returned for `effect` (the next one's input)."""
        self.current_tokens[effect] = token

    def set_output_runtime_token(self, device: xc.Device, token: Any) -> None:
        """Records the runtime token of the latest computation on `device`."""
        # Computations on one device run in order, so only the newest token matters.
        self.output_runtime_tokens[device] = token

    def block_until_ready(self) -> None:
        """Waits for every recorded token, then forgets them."""
        for token in self.current_tokens.values():
            token.block_until_ready()
        for token in self.output_runtime_tokens.values():
            token.block_until_ready()
        self.current_tokens.clear()
        self.output_runtime_tokens.clear()


runtime_tokens = RuntimeTokenSet()


def effects_barrier() -> None:
    """Waits until every side effect dispatched so far (in this thread) has happened.

    Example:
      >>> from laminax_dispatch.internal import effects_barrier
      >>> effects_barrier()
    """
    runtime_tokens.block_until_ready()


def wait_for_all_threads() -> None:
    """Waits until every computation with host callbacks or ordered effects that any thread
    dispatched so far has finished (other threads' effect chains are left as they are)."""
    with _threads_lock:
        entries = list(_thread_tokens)
    finished = {id(tokens) for thread, tokens in entries if not thread.is_alive()}
    for _, tokens in entries:
        while True:
            try:
                pending = list(tokens.values())  # its thread may be adding a device right now
                break
            except RuntimeError:
                continue
        for token in pending:
            token.block_until_ready()
    with _threads_lock:
        _thread_tokens[:] = [(t, d) for t, d in _thread_tokens if id(d) not in finished]


@atexit.register
def _wait_for_tokens_at_exit() -> None:
    runtime_tokens.block_until_ready()

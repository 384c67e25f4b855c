"""The persistent (on-disk) compilation cache, on when ``jax_compilation_cache_dir`` is set.

One file per executable, named by a SHA-256 key over everything that decides what XLA
produces: the module's bytecode, the compile options (device assignment included), the jaxlib
version, and the platform, device kind and device count. A file holds a magic line, its own
key, the SHA-256 of the payload and the payload (the serialized executable). The key inside
is checked against the key looked up, so a renamed or swapped file is a miss, never another
program; a truncated or corrupted entry is detected before jaxlib ever sees it. Either way
laminax logs a warning, recompiles, and rewrites the entry. Entries are readable by everyone
who may read the directory (mode 0644, as JAX's), so a cache directory can be shared. Entries are written to a temporary file in the same directory and moved into place
with `os.replace`, which is atomic: two processes writing the same key both succeed and a
reader sees either no file or a whole one.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

import jaxlib
from jaxlib import _jax
from laminax_core.config import config

__all__ = ["cache_key", "get_executable", "is_enabled", "put_executable"]

logger = logging.getLogger("laminax_dispatch.compilation_cache")

_MAGIC = b"laminax-executable-v2\n"
_ENTRY_MODE = 0o644

cache_dir = config.define_optional_string_state(
    "jax_compilation_cache_dir",
    None,
    "Directory of the persistent compilation cache; None turns it off.",
)
min_compile_time = config.define_float_state(
    "jax_persistent_cache_min_compile_time_secs",
    1.0,
    "Only compilations that took at least this many seconds are written to the persistent "
    "cache (0 caches everything).",
)


def is_enabled() -> bool:
    """Whether the persistent cache is on (``jax_compilation_cache_dir`` is set)."""
    return bool(cache_dir.value)


def cache_key(
    module_bytecode: bytes, options: _jax.CompileOptions, devices: list[_jax.Device]
) -> str:
    """The hex SHA-256 naming a compilation's entry.

    Args:
      module_bytecode: the module as MLIR bytecode.
      options: the compile options (serialized into the key).
      devices: the devices the executable is compiled for.
    """
    digest = hashlib.sha256()
    first = devices[0]
    parts = [
        module_bytecode,
        options.SerializeAsString(),
        jaxlib.__version__.encode(),
        first.client.platform.encode(),
        first.client.platform_version.encode(),
        first.device_kind.encode(),
        str(len(devices)).encode(),
    ]
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def _entry_path(key: str) -> Path:
    return Path(cache_dir.value) / f"{key}.lmxexec"


def _header(key: str, payload: bytes) -> bytes:
    return _MAGIC + key.encode() + b"\n" + hashlib.sha256(payload).hexdigest().encode() + b"\n"


def _read_payload(path: Path, key: str) -> bytes | None:
    """The entry's payload, or None after a warning if it is missing, truncated, corrupted,
    or holds another key than `key` (a renamed or swapped file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        logger.warning("Could not read compilation cache entry %s (%s); recompiling.", path, err)
        return None
    key_end = len(_MAGIC) + 65  # magic, then the key: 64 hex digits and a newline
    header_end = key_end + 65  # then the payload's checksum
    stored_key = data[len(_MAGIC) : key_end - 1]
    checksum = data[key_end : header_end - 1]
    payload = data[header_end:]
    if not data.startswith(_MAGIC) or hashlib.sha256(payload).hexdigest().encode() != checksum:
        logger.warning(
            "Compilation cache entry %s is truncated or corrupted (or of an older format); "
            "ignoring it and recompiling.",
            path,
        )
        return None
    if stored_key != key.encode():
        logger.warning(
            "Compilation cache entry %s holds the executable of key %s, not %s (a renamed or "
            "swapped file); ignoring it and recompiling.",
            path, stored_key.decode(errors="replace"), key,
        )
        return None
    return payload


def get_executable(
    key: str,
    client: _jax.Client,
    devices: _jax.DeviceList,
    options: _jax.CompileOptions,
    host_callbacks=(),
) -> _jax.LoadedExecutable | None:
    """The cached executable for `key`, or None (missing or unusable entries are misses)."""
    path = _entry_path(key)
    payload = _read_payload(path, key)
    if payload is None:
        return None
    try:
        return client.deserialize_executable(payload, devices, options, list(host_callbacks))
    except _jax.JaxRuntimeError as err:
        logger.warning("Could not load compilation cache entry %s (%s); recompiling.", path, err)
        return None


def put_executable(
    key: str, client: _jax.Client, executable: _jax.LoadedExecutable, compile_seconds: float
) -> None:
    """Writes `executable` under `key` atomically; failures are logged, never raised."""
    if compile_seconds < min_compile_time.value:
        return
    path = _entry_path(key)
    try:
        payload = client.serialize_executable(executable)
        path.parent.mkdir(parents=True, exist_ok=True)
        header = _header(key, payload)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(header + payload)
            os.chmod(temp, _ENTRY_MODE)  # mkstemp makes it private (0600)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except (OSError, _jax.JaxRuntimeError) as err:
        logger.warning("Could not write compilation cache entry %s: %s", path, err)

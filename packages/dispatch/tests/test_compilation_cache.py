"""The persistent cache: hits across processes, corrupted entries, concurrent writers."""

import hashlib
import logging
import os
import subprocess
import sys
import textwrap

import laminax_dispatch as ld
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core.internal import ShapedArray
from laminax_core.config import config
from laminax_dispatch.internal import build_module, cache_info, clear_caches, compile_module

# A child process: compiles and runs `add` on f32[n] with the cache in argv[1]; prints the result
# and the number of persistent-cache hits.
CHILD = textwrap.dedent("""
    import sys, numpy as np
    import laminax_dispatch as ld
    from jaxlib.mlir.dialects import stablehlo as hlo
    from laminax_core.internal import ShapedArray
    from laminax_core.config import config
    from laminax_dispatch.internal import Executable, build_module, cache_info, compile_module
    config.update("jax_compilation_cache_dir", sys.argv[1])
    config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    n = int(sys.argv[2])
    aval = ShapedArray((n,), np.float32)
    module = build_module("jit_cached_add", [aval, aval], [aval],
                          lambda t, a: (t, [hlo.AddOp(*a).result]))
    run = Executable(compile_module(module, ld.devices()[:1]), "add", [aval, aval], [aval])
    (out,) = run(np.arange(n, dtype=np.float32), np.ones(n, np.float32))
    print(out.tolist(), cache_info()["disk_hits"])
""")


def _child(cache_dir, n=4) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(cache_dir), str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen) -> tuple[str, str]:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return out.strip(), err


EXPECTED = "[1.0, 2.0, 3.0, 4.0]"


def test_second_process_hits_the_disk_cache(tmp_path):
    assert _finish(_child(tmp_path))[0] == f"{EXPECTED} 0"
    entries = list(tmp_path.glob("*.lmxexec"))
    assert len(entries) == 1
    assert _finish(_child(tmp_path))[0] == f"{EXPECTED} 1"


def test_corrupted_entry_warns_recompiles_and_is_rewritten(tmp_path):
    _finish(_child(tmp_path))
    (entry,) = tmp_path.glob("*.lmxexec")
    data = bytearray(entry.read_bytes())
    data[-100] ^= 0xFF  # flip bits inside the executable
    entry.write_bytes(bytes(data))
    out, err = _finish(_child(tmp_path))
    assert out == f"{EXPECTED} 0"
    assert "truncated or corrupted" in err
    assert _finish(_child(tmp_path))[0] == f"{EXPECTED} 1"


def test_truncated_entry_is_a_miss(tmp_path):
    _finish(_child(tmp_path))
    (entry,) = tmp_path.glob("*.lmxexec")
    entry.write_bytes(entry.read_bytes()[:50])
    out, err = _finish(_child(tmp_path))
    assert out == f"{EXPECTED} 0" and "truncated or corrupted" in err


def test_two_processes_writing_at_once_leave_one_whole_entry(tmp_path):
    procs = [_child(tmp_path), _child(tmp_path)]
    assert [_finish(p)[0].split(" ")[0] for p in procs] == ["[1.0,", "[1.0,"]
    assert len(list(tmp_path.glob("*.lmxexec"))) == 1
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary files left behind
    assert _finish(_child(tmp_path))[0] == f"{EXPECTED} 1"


@pytest.fixture
def disk_cache(tmp_path):
    saved = (config.jax_compilation_cache_dir, config.jax_persistent_cache_min_compile_time_secs)
    config.update("jax_compilation_cache_dir", str(tmp_path))
    config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    clear_caches()
    yield tmp_path
    config.update("jax_compilation_cache_dir", saved[0])
    config.update("jax_persistent_cache_min_compile_time_secs", saved[1])


def _module(n):
    aval = ShapedArray((n,), np.float32)
    return build_module(
        "jit_in_process", [aval, aval], [aval], lambda t, a: (t, [hlo.AddOp(*a).result])
    )


def test_in_process_disk_hit_after_clearing_memory(disk_cache):
    compile_module(_module(11), ld.devices()[:1])
    clear_caches()
    compile_module(_module(11), ld.devices()[:1])
    assert cache_info()["disk_hits"] == 1


def test_entry_format_has_its_key_and_a_checksum_of_the_payload(disk_cache):
    compile_module(_module(12), ld.devices()[:1])
    (entry,) = disk_cache.glob("*.lmxexec")
    magic, key, checksum, payload = entry.read_bytes().split(b"\n", 3)
    assert magic == b"laminax-executable-v2"
    assert key.decode() == entry.stem
    assert checksum.decode() == hashlib.sha256(payload).hexdigest()


def test_entries_are_readable_by_the_group_and_others_as_in_jax(disk_cache):
    compile_module(_module(14), ld.devices()[:1])
    (entry,) = disk_cache.glob("*.lmxexec")
    assert entry.stat().st_mode & 0o777 == 0o644


def test_a_renamed_or_swapped_entry_is_a_logged_miss_not_another_program(disk_cache, caplog):
    # two programs computing different things; each entry renamed to the other's key
    compile_module(_module(15), ld.devices()[:1])
    compile_module(_module(16), ld.devices()[:1])
    first, second = sorted(disk_cache.glob("*.lmxexec"), key=lambda p: p.stat().st_mtime)
    data_first, data_second = first.read_bytes(), second.read_bytes()
    first.write_bytes(data_second)
    second.write_bytes(data_first)
    clear_caches()
    with caplog.at_level(logging.WARNING, logger="laminax_dispatch"):
        compile_module(_module(15), ld.devices()[:1])
    assert cache_info()["disk_hits"] == 0
    assert any("renamed or swapped" in r.getMessage() for r in caplog.records)
    # the recompiled entry is rewritten under its own key, and then hits
    clear_caches()
    compile_module(_module(15), ld.devices()[:1])
    assert cache_info()["disk_hits"] == 1


def test_garbage_payload_with_a_valid_checksum_is_a_logged_miss(disk_cache, caplog):
    compile_module(_module(13), ld.devices()[:1])
    (entry,) = disk_cache.glob("*.lmxexec")
    payload = b"not an executable" * 10
    entry.write_bytes(
        b"laminax-executable-v2\n" + entry.stem.encode() + b"\n"
        + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    )
    clear_caches()
    with caplog.at_level(logging.WARNING, logger="laminax_dispatch"):
        compile_module(_module(13), ld.devices()[:1])
    assert cache_info()["disk_hits"] == 0
    assert any("Could not load compilation cache entry" in r.getMessage() for r in caplog.records)


def test_fast_compiles_are_not_written_below_the_threshold(disk_cache):
    config.update("jax_persistent_cache_min_compile_time_secs", 1000.0)
    compile_module(_module(14), ld.devices()[:1])
    assert not list(disk_cache.glob("*.lmxexec"))


def test_unwritable_cache_dir_only_warns(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    saved = (config.jax_compilation_cache_dir, config.jax_persistent_cache_min_compile_time_secs)
    config.update("jax_compilation_cache_dir", str(blocker / "sub"))
    config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    try:
        clear_caches()
        with caplog.at_level(logging.WARNING, logger="laminax_dispatch"):
            compile_module(_module(15), ld.devices()[:1])
    finally:
        config.update("jax_compilation_cache_dir", saved[0])
        config.update("jax_persistent_cache_min_compile_time_secs", saved[1])
    assert any("Could not write compilation cache entry" in r.getMessage() for r in caplog.records)
    assert os.path.isfile(blocker)

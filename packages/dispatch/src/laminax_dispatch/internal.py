"""What the laminax layers above dispatch may use. No stability promise outside laminax.

Module building (`build_module`, `make_ir_context`, `aval_to_ir_type`), compilation and its
caches (`compile_module`, `Executable`), device placement helpers (`devices_for_args`,
`on_cpp_class` for jaxlib's C++ classes) and runtime tokens for ordered effects.
"""

from laminax_dispatch._compilation_cache import cache_key as cache_key
from laminax_dispatch._compile import Executable as Executable
from laminax_dispatch._compile import cache_info as cache_info
from laminax_dispatch._compile import clear_caches as clear_caches
from laminax_dispatch._compile import compile_module as compile_module
from laminax_dispatch._compile import compile_options as compile_options
from laminax_dispatch._device_put import devices_for_args as devices_for_args
from laminax_dispatch._mlir import SourceInfo as SourceInfo
from laminax_dispatch._mlir import aval_to_ir_type as aval_to_ir_type
from laminax_dispatch._mlir import build_module as build_module
from laminax_dispatch._mlir import make_ir_context as make_ir_context
from laminax_dispatch._mlir import module_to_bytecode as module_to_bytecode
from laminax_dispatch._mlir import module_to_string as module_to_string
from laminax_dispatch._mlir import token_type as token_type
from laminax_dispatch._sharding import on_cpp_class as on_cpp_class
from laminax_dispatch._tokens import RuntimeTokenSet as RuntimeTokenSet
from laminax_dispatch._tokens import effects_barrier as effects_barrier
from laminax_dispatch._tokens import runtime_tokens as runtime_tokens

__all__ = [
    "Executable",
    "RuntimeTokenSet",
    "SourceInfo",
    "aval_to_ir_type",
    "build_module",
    "cache_info",
    "cache_key",
    "clear_caches",
    "compile_module",
    "compile_options",
    "devices_for_args",
    "effects_barrier",
    "make_ir_context",
    "module_to_bytecode",
    "module_to_string",
    "on_cpp_class",
    "runtime_tokens",
    "token_type",
]

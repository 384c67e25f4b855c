"""What the laminax layers above dispatch may use. No stability promise outside laminax.

Module building (`build_module`, `make_ir_context`, `aval_to_ir_type`), lowering (the rule
table, `LoweringRuleContext`, `jaxpr_subcomp`, `lower_jaxpr`, `lower_fun`, `ir_constant`,
`emit_python_callback` for host callbacks),
compilation and its caches (`compile_module`, `Executable`), eager dispatch
(`apply_primitive`), the `jit_p` call primitive, placement (`Placement`, `place_inputs`, the one
decision of devices and shardings; `register_sharding_resolver` for sharding-like values jit
accepts, such as pjit's PartitionSpecs), sharding lowering (`emit_sharding_constraint`, the
axis contexts, the Shardy descriptions `SdyMesh`/`SdyDim`/`SdySharding` a sharding returns),
`on_cpp_class` for jaxlib's C++ classes, and runtime tokens for ordered effects.
"""

from laminax_dispatch._backends import backends_are_initialized as backends_are_initialized
from laminax_dispatch._backends import set_cpu_client_options as set_cpu_client_options
from laminax_dispatch._compilation_cache import cache_key as cache_key
from laminax_dispatch._compile import Executable as Executable
from laminax_dispatch._compile import cache_info as cache_info
from laminax_dispatch._compile import clear_caches as clear_caches
from laminax_dispatch._compile import compile_module as compile_module
from laminax_dispatch._compile import compile_options as compile_options
from laminax_dispatch._device_put import devices_for_args as devices_for_args
from laminax_dispatch._device_put_primitive import device_put_p as device_put_p
from laminax_dispatch._eager import apply_primitive as apply_primitive
from laminax_dispatch._compiled_call import CompiledCall as CompiledCall
from laminax_dispatch._jit import JitFunction as JitFunction
from laminax_dispatch._jit import inline_jit_cpp as inline_jit_cpp
from laminax_dispatch._jit_primitive import jit_p as jit_p
from laminax_dispatch._lowering import LoweringResult as LoweringResult
from laminax_dispatch._lowering import LoweringRuleContext as LoweringRuleContext
from laminax_dispatch._lowering import ModuleContext as ModuleContext
from laminax_dispatch._lowering import get_lowering as get_lowering
from laminax_dispatch._lowering import ir_constant as ir_constant
from laminax_dispatch._lowering import jaxpr_subcomp as jaxpr_subcomp
from laminax_dispatch._lowering import lower_jaxpr as lower_jaxpr
from laminax_dispatch._lowering import lowering_for as lowering_for
from laminax_dispatch._lowering import register_lowering as register_lowering
from laminax_dispatch._lowering._core import lower_fun as lower_fun
from laminax_dispatch._lowering._dynamic import ir_ops as dim_ir_ops
from laminax_dispatch._lowering._dynamic import is_static as is_static_shape
from laminax_dispatch._lowering._dynamic import shape_tensor as shape_tensor
from laminax_dispatch._lowering._dynamic import dim_values as dim_values
from laminax_dispatch._lowering._dynamic import using_dim_values as using_dim_values
from laminax_dispatch._lowering._dynamic import lowering_platforms as lowering_platforms
from laminax_dispatch._lowering._dynamic import PLATFORM_INDEX as PLATFORM_INDEX
from laminax_dispatch._lowering._host_callback import emit_python_callback as emit_python_callback
from laminax_dispatch._lowering._shardings import AxisContext as AxisContext
from laminax_dispatch._lowering._shardings import SPMDAxisContext as SPMDAxisContext
from laminax_dispatch._lowering._shardings import ShardingContext as ShardingContext
from laminax_dispatch._lowering._shardings import emit_sharding_constraint as emit_sharding_constraint
from laminax_dispatch._lowering._shardings import use_shardy_partitioner as use_shardy_partitioner
from laminax_dispatch._mlir import SourceInfo as SourceInfo
from laminax_dispatch._placement import Placement as Placement
from laminax_dispatch._placement import place_inputs as place_inputs
from laminax_dispatch._placement import register_context_sharding as register_context_sharding
from laminax_dispatch._placement import register_typed_sharding as register_typed_sharding
from laminax_dispatch._placement import register_sharding_resolver as register_sharding_resolver
from laminax_dispatch._placement import replicated_sharding as replicated_sharding
from laminax_dispatch._mlir import aval_to_ir_type as aval_to_ir_type
from laminax_dispatch._mlir import build_module as build_module
from laminax_dispatch._mlir import make_ir_context as make_ir_context
from laminax_dispatch._mlir import module_to_bytecode as module_to_bytecode
from laminax_dispatch._mlir import module_to_string as module_to_string
from laminax_dispatch._mlir import token_type as token_type
from laminax_dispatch._sharding import IndivisibleError as IndivisibleError
from laminax_dispatch._sharding import SdyDim as SdyDim
from laminax_dispatch._sharding import SdyMesh as SdyMesh
from laminax_dispatch._sharding import SdySharding as SdySharding
from laminax_dispatch._sharding import hlo_sharding_indices as hlo_sharding_indices
from laminax_dispatch._sharding import on_cpp_class as on_cpp_class
from laminax_dispatch._sharding import sharding_from_hlo as sharding_from_hlo
from laminax_dispatch._tokens import RuntimeTokenSet as RuntimeTokenSet
from laminax_dispatch._tokens import effects_barrier as effects_barrier
from laminax_dispatch._tokens import runtime_tokens as runtime_tokens
from laminax_dispatch._tokens import shardable_ordered_effects as shardable_ordered_effects
from laminax_dispatch._tokens import wait_for_all_threads as wait_for_all_threads

__all__ = [
    "dim_ir_ops",
    "dim_values",
    "using_dim_values",
    "lowering_platforms",
    "PLATFORM_INDEX",
    "is_static_shape",
    "shape_tensor",
    "backends_are_initialized",
    "set_cpu_client_options",
    "AxisContext",
    "JitFunction",
    "inline_jit_cpp",
    "Placement",
    "SPMDAxisContext",
    "SdyDim",
    "SdyMesh",
    "SdySharding",
    "ShardingContext",
    "emit_sharding_constraint",
    "hlo_sharding_indices",
    "place_inputs",
    "register_context_sharding",
    "register_typed_sharding",
    "register_sharding_resolver",
    "replicated_sharding",
    "sharding_from_hlo",
    "use_shardy_partitioner",
    "CompiledCall",
    "device_put_p",
    "Executable",
    "LoweringResult",
    "LoweringRuleContext",
    "ModuleContext",
    "apply_primitive",
    "get_lowering",
    "ir_constant",
    "jaxpr_subcomp",
    "jit_p",
    "lower_fun",
    "lower_jaxpr",
    "lowering_for",
    "register_lowering",
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
    "emit_python_callback",
    "make_ir_context",
    "module_to_bytecode",
    "module_to_string",
    "on_cpp_class",
    "runtime_tokens",
    "shardable_ordered_effects",
    "wait_for_all_threads",
    "token_type",
]

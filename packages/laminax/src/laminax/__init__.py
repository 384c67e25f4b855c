"""laminax: JAX's programming model on a stack of small layered packages.

`import laminax as jax`: the names here and the submodules (`laminax.numpy`, `laminax.lax`,
`laminax.random`, `laminax.nn`, `laminax.scipy`, `laminax.tree_util`, `laminax.tree`,
`laminax.dtypes`, `laminax.errors`, `laminax.stages`) are JAX's, implemented by the layers:
transformations and arrays' math in `laminax_core`, execution on XLA in `laminax_dispatch`,
pytrees in `laminax_pytree`. The facade defines nothing of its own.

Differences from JAX: `laminax.config` is laminax's configuration object (same option names);
names of JAX's that no layer implements yet are absent rather than stubbed (see
`packages/laminax/tests/test_facade.py` for the recorded list).

Running unmodified `import jax` programs and libraries: `laminax.install_as_jax()` before
anything imports jax, `python -m laminax run script.py [args]`, or, for a library's test suite,
`pytest -p laminax.pytest_plugin` (see `laminax/_jax_alias.py`).
"""

import types as _types
from importlib import metadata as _metadata

# Importing dispatch plugs XLA execution into core: from here on, eager operations return
# device Arrays instead of running on core's NumPy reference interpreter.
import laminax_dispatch as _dispatch
from laminax_core import checkpoint as checkpoint
from laminax_core import checkpoint_policies as checkpoint_policies
from laminax_core import closure_convert as closure_convert
from laminax_core import custom_gradient as custom_gradient
from laminax_core import custom_jvp as custom_jvp
from laminax_core import custom_vjp as custom_vjp
from laminax_core import ensure_compile_time_eval as ensure_compile_time_eval
from laminax_core import eval_shape as eval_shape
from laminax_core import float0 as float0
from laminax_core import grad as grad
from laminax_core import hessian as hessian
from laminax_core import jacfwd as jacfwd
from laminax_core import jacrev as jacrev
from laminax_core import jvp as jvp
from laminax_core import linear_transpose as linear_transpose
from laminax_core import linearize as linearize
from laminax_core import make_jaxpr as make_jaxpr
from laminax_core import named_call as named_call
from laminax_core import named_scope as named_scope
from laminax_core import remat as remat
from laminax_core import ShapeDtypeStruct as ShapeDtypeStruct
from laminax_core import typeof as typeof
from laminax_core import ds as ds
from laminax_core import MemorySpace as _MemorySpace
from laminax_core import value_and_grad as value_and_grad
from laminax_core import vjp as vjp
from laminax_core import vmap as vmap
from laminax_core.config import check_tracer_leaks as check_tracer_leaks
from laminax_core.config import checking_leaks as checking_leaks
from laminax_core.config import config as config
from laminax_core.config import debug_infs as debug_infs
from laminax_core.config import debug_key_reuse as debug_key_reuse
from laminax_core.config import debug_nans as debug_nans
from laminax_core.config import default_matmul_precision as default_matmul_precision
from laminax_core.config import default_prng_impl as default_prng_impl
from laminax_core.config import disable_jit as disable_jit
from laminax_core.config import enable_checks as enable_checks
from laminax_core.config import enable_x64 as enable_x64
from laminax_core.config import numpy_dtype_promotion as numpy_dtype_promotion
from laminax_core.config import numpy_rank_promotion as numpy_rank_promotion
from laminax_core.config import softmax_custom_jvp as softmax_custom_jvp
from laminax_core.config import threefry_partitionable as threefry_partitionable
from laminax_core.config import allow_f16_reductions as allow_f16_reductions
from laminax_core.config import auto_pcast as auto_pcast
from laminax_core.config import enable_custom_prng as enable_custom_prng
from laminax_core.config import jax2tf_associative_scan_reductions as jax2tf_associative_scan_reductions
from laminax_core.config import legacy_prng_key as legacy_prng_key
from laminax_core.config import remove_size_one_mesh_axis_from_type as remove_size_one_mesh_axis_from_type
from jaxlib.xla_client import Device as Device
from laminax_dispatch import Array as Array
from laminax_dispatch import block_until_ready as block_until_ready
from laminax_dispatch import clear_caches as clear_caches
from laminax_dispatch import default_device as default_device
from laminax_dispatch import log_compiles as log_compiles
from laminax_dispatch import default_backend as default_backend
from laminax_dispatch import device_count as device_count
from laminax_dispatch import device_get as device_get
from laminax_dispatch import device_put as device_put
from laminax_dispatch import devices as devices
from laminax_dispatch import effects_barrier as effects_barrier
from laminax_dispatch import jit as jit
from laminax_dispatch import fwd_and_bwd as fwd_and_bwd
from laminax_dispatch import live_arrays as live_arrays
from laminax_dispatch import local_device_count as local_device_count
from laminax_dispatch import local_devices as local_devices
from laminax_dispatch import process_count as process_count
from laminax_dispatch import process_index as process_index
from laminax_dispatch import Shard as Shard
from laminax_dispatch import copy_to_host_async as copy_to_host_async
from laminax_dispatch import host_count as host_count
from laminax_dispatch import host_id as host_id
from laminax_dispatch import host_ids as host_ids
from laminax_dispatch import print_environment_info as print_environment_info
from laminax_dispatch import process_indices as process_indices
from laminax_dispatch import transfer_guard as transfer_guard
from laminax_dispatch import thread_guard as thread_guard
from laminax_dispatch import array_garbage_collection_guard as array_garbage_collection_guard
from laminax_dispatch import transfer_guard_device_to_device as transfer_guard_device_to_device
from laminax_dispatch import transfer_guard_device_to_host as transfer_guard_device_to_host
from laminax_dispatch import transfer_guard_host_to_device as transfer_guard_host_to_device
from laminax_dispatch import no_execution as no_execution
from laminax_dispatch import explain_cache_misses as explain_cache_misses
from laminax_core.config import no_tracing as no_tracing
from laminax_core.config import make_user_context as make_user_context
from laminax_pjit import NamedSharding as NamedSharding
from laminax_pjit import P as P
from laminax_pjit import make_array_from_callback as make_array_from_callback
from laminax_pjit import make_array_from_process_local_data as make_array_from_process_local_data
from laminax_pjit import make_array_from_single_device_arrays as make_array_from_single_device_arrays
from laminax_pjit import make_mesh as make_mesh
from laminax_pjit import set_mesh as set_mesh
from laminax_pjit import reshard as reshard
from laminax_hostcb import pure_callback as pure_callback
from laminax_pjit import pmap as pmap
from laminax_pjit import shard_map as shard_map
from laminax_pjit import smap as smap

from laminax import api_util as api_util
from laminax import core as core
from laminax import custom_batching as custom_batching
from laminax import custom_derivatives as custom_derivatives
from laminax import debug as debug
from laminax import dlpack as dlpack
from laminax import distributed as distributed
from laminax import dtypes as dtypes
from laminax import errors as errors
from laminax import export as export
from laminax import extend as extend
from laminax import ffi as ffi
from laminax import flatten_util as flatten_util
from laminax import image as image
from laminax import interpreters as interpreters
from laminax import lax as lax
from laminax import lib as lib
from laminax import monitoring as monitoring
from laminax import nn as nn
from laminax import ops as ops
from laminax import profiler as profiler
from laminax import numpy as numpy
from laminax import random as random
from laminax import ref as ref
from laminax_core.ref import Ref as Ref
from laminax_core.ref import empty_ref as empty_ref
from laminax_core.ref import free_ref as free_ref
from laminax_core.ref import freeze as freeze
from laminax_core.ref import new_ref as new_ref
from laminax import scipy as scipy
from laminax import sharding as sharding
from laminax import stages as stages
from laminax import test_util as test_util
from laminax import tree as tree
from laminax import tree_util as tree_util
from laminax import typing as typing
from laminax import version as version
from laminax import experimental as experimental

from laminax._jax_alias import install_as_jax as install_as_jax

__version__ = _metadata.version("laminax")

# JAX's `jax.memory` is a namespace (not a module) holding the memory-space enum.
memory = _types.SimpleNamespace(Space=_MemorySpace)

# JAX's `jacobian` is its reverse-mode Jacobian.
jacobian = jacrev

del _dispatch, _metadata, _types, _MemorySpace

__all__ = [
    "clear_caches",
    "default_device",
    "log_compiles",
    "Array",
    "Device",
    "block_until_ready",
    "check_tracer_leaks",
    "checking_leaks",
    "checkpoint",
    "checkpoint_policies",
    "closure_convert",
    "config",
    "core",
    "custom_derivatives",
    "custom_gradient",
    "custom_jvp",
    "custom_vjp",
    "debug",
    "distributed",
    "debug_infs",
    "export",
    "debug_key_reuse",
    "debug_nans",
    "default_backend",
    "default_matmul_precision",
    "default_prng_impl",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "disable_jit",
    "dtypes",
    "effects_barrier",
    "enable_checks",
    "enable_x64",
    "ensure_compile_time_eval",
    "errors",
    "extend",
    "eval_shape",
    "flatten_util",
    "ref",
    "Ref",
    "empty_ref",
    "free_ref",
    "freeze",
    "new_ref",
    "image",
    "float0",
    "grad",
    "hessian",
    "install_as_jax",
    "interpreters",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jit",
    "jvp",
    "lax",
    "linear_transpose",
    "linearize",
    "live_arrays",
    "local_device_count",
    "local_devices",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "make_jaxpr",
    "make_mesh",
    "pmap",
    "shard_map",
    "smap",
    "named_call",
    "named_scope",
    "nn",
    "numpy",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "process_count",
    "process_index",
    "pure_callback",
    "random",
    "remat",
    "reshard",
    "scipy",
    "ShapeDtypeStruct",
    "Shard",
    "NamedSharding",
    "P",
    "set_mesh",
    "sharding",
    "softmax_custom_jvp",
    "stages",
    "test_util",
    "threefry_partitionable",
    "tree",
    "tree_util",
    "typeof",
    "typing",
    "value_and_grad",
    "vjp",
    "vmap",
    "copy_to_host_async",
    "host_count",
    "host_id",
    "host_ids",
    "print_environment_info",
    "process_indices",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
    "no_execution",
    "explain_cache_misses",
    "no_tracing",
    "make_user_context",
    "custom_batching",
    "dlpack",
    "monitoring",
    "profiler",
    "ffi",
    "array_garbage_collection_guard",
    "thread_guard",
    "fwd_and_bwd",
    "api_util",
    "ds",
    "memory",
    "lib",
    "ops",
    "version",
    "experimental",
    "allow_f16_reductions",
    "auto_pcast",
    "enable_custom_prng",
    "jax2tf_associative_scan_reductions",
    "legacy_prng_key",
    "remove_size_one_mesh_axis_from_type",
]

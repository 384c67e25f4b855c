"""Module building: main's signature, element types, tokens, locations, result checks."""

import ml_dtypes
import numpy as np
import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo
from laminax_core.internal import ShapedArray
from laminax_dispatch.internal import (
    SourceInfo,
    aval_to_ir_type,
    build_module,
    make_ir_context,
    module_to_bytecode,
    module_to_string,
)

F32_3 = ShapedArray((3,), np.float32)


def _add_body(tokens, args):
    return tokens, [hlo.AddOp(*args).result]


@pytest.mark.parametrize(
    "dtype, text",
    [
        (np.float32, "tensor<2x3xf32>"),
        (np.int8, "tensor<2x3xi8>"),
        (np.uint32, "tensor<2x3xui32>"),
        (np.bool_, "tensor<2x3xi1>"),
        (np.complex64, "tensor<2x3xcomplex<f32>>"),
        (ml_dtypes.bfloat16, "tensor<2x3xbf16>"),
        (ml_dtypes.float8_e4m3fn, "tensor<2x3xf8E4M3FN>"),
        (ml_dtypes.float8_e5m2, "tensor<2x3xf8E5M2>"),
    ],
)
def test_aval_to_ir_type(dtype, text):
    with make_ir_context(), ir.Location.unknown():
        assert str(aval_to_ir_type(ShapedArray((2, 3), dtype))) == text


def test_build_module_makes_a_public_main():
    module = build_module("jit_add", [F32_3, F32_3], [F32_3], _add_body)
    text = module_to_string(module, enable_debug_info=False)
    assert "module @jit_add" in text
    assert (
        "func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> tensor<3xf32>"
    ) in text
    assert "stablehlo.add %arg0, %arg1" in text


def test_tokens_come_first_in_arguments_and_results():
    module = build_module("jit_tok", [F32_3, F32_3], [F32_3], _add_body, num_tokens=1)
    text = module_to_string(module, enable_debug_info=False)
    assert (
        "@main(%arg0: !stablehlo.token, %arg1: tensor<3xf32>, %arg2: tensor<3xf32>) -> "
        "(!stablehlo.token, tensor<3xf32>)"
    ) in text


def test_source_locations_are_attached():
    module = build_module(
        "jit_add", [F32_3, F32_3], [F32_3], _add_body, source=SourceInfo("user.py", 12, 4, "add")
    )
    text = module_to_string(module, enable_debug_info=True)
    assert 'loc("user.py":12:4)' in text
    assert 'loc("add"(#loc' in text


def test_unsafe_names_are_sanitized():
    module = build_module("jit(my fun)", [F32_3, F32_3], [F32_3], _add_body)
    assert ir.StringAttr(module.operation.attributes["sym_name"]).value == "jit_my_fun_"


def test_wrong_result_types_raise_type_error():
    with pytest.raises(
        TypeError, match=r"the body returned \['tensor<3xf32>'\], but main declares"
    ):
        build_module("jit_bad", [F32_3, F32_3], [ShapedArray((2,), np.float32)], _add_body)


def test_bytecode_is_deterministic_for_identical_modules():
    one = module_to_bytecode(build_module("jit_add", [F32_3, F32_3], [F32_3], _add_body))
    two = module_to_bytecode(build_module("jit_add", [F32_3, F32_3], [F32_3], _add_body))
    assert one == two


def test_source_info_from_caller_points_at_the_user_line():
    info = SourceInfo.from_caller(name="add")
    assert info.file == __file__
    assert (
        info.line
        == test_source_info_from_caller_points_at_the_user_line.__code__.co_firstlineno + 1
    )
    assert info.name == "add"


def test_build_module_called_from_user_code_can_use_the_callers_line():
    module = build_module(
        "jit_add", [F32_3, F32_3], [F32_3], _add_body, source=SourceInfo.from_caller()
    )
    assert f'loc("{__file__}":' in module_to_string(module)

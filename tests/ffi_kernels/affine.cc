// A small XLA FFI handler for tests/test_ffi_vs_jax.py, compiled there with the system C++ compiler.
#include <cstdint>
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;
// y = factor * x + offset (elementwise), plus the sum of x in a second result
static ffi::Error AffineImpl(float factor, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> offset,
                             ffi::ResultBuffer<ffi::F32> y, ffi::ResultBuffer<ffi::F32> total) {
  auto n = x.element_count();
  if (offset.element_count() != n) return ffi::Error::InvalidArgument("offset size mismatch");
  float acc = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    y->typed_data()[i] = factor * x.typed_data()[i] + offset.typed_data()[i];
    acc += x.typed_data()[i];
  }
  total->typed_data()[0] = acc;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Affine, AffineImpl,
    ffi::Ffi::Bind().Attr<float>("factor").Arg<ffi::Buffer<ffi::F32>>()
        .Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

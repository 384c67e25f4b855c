"""`image`: resizing by separable resampling kernels, one weight matrix per resized axis
contracted into the image (antialiasing widens the kernel when downsampling)."""

from __future__ import annotations

import enum

import numpy as np

from laminax_core import lax
from laminax_core import numpy as jnp
from laminax_core.numpy._operands import promote_dtypes_inexact

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """The resampling kernels `resize` and `scale_and_translate` know."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str):
        """The method a name ('nearest', 'linear'/'bilinear'/'trilinear'/'triangle',
        'lanczos3', 'lanczos5', 'cubic'/'bicubic'/'tricubic', 'cubic-pytorch'/'bicubic-pytorch',
        'area') denotes."""
        names = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR,
                 "bilinear": ResizeMethod.LINEAR, "trilinear": ResizeMethod.LINEAR,
                 "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
                 "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC,
                 "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
                 "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
                 "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "area": ResizeMethod.AREA}
        if s not in names:
            raise ValueError(f"Unknown resize method '{s}'")
        return names[s]


def _triangle(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


def _keys_cubic(x):
    # Keys' cubic convolution kernel with a = -0.5.
    x = jnp.abs(x)
    near = ((1.5 * x - 2.5) * x) * x + 1
    far = ((-0.5 * x + 2.5) * x - 4) * x + 2
    return jnp.where(x >= 2, 0, jnp.where(x >= 1, far, near))


def _opencv_cubic(x):
    # The a = -0.75 cubic of OpenCV, which PyTorch uses without antialiasing.
    a = -0.75
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return jnp.where(x >= 2, 0, jnp.where(x >= 1, far, near))


def _area(inv_scale, translation, in_size, out_size):
    """Each weight is the overlap of an input pixel with the output pixel projected back."""
    left = jnp.arange(out_size, dtype=np.float32) * inv_scale - translation * inv_scale
    pixel = jnp.arange(in_size, dtype=np.float32)
    hi = jnp.minimum((left + inv_scale)[None, :], (pixel + 1)[:, None])
    return jnp.maximum(0, hi - jnp.maximum(left[None, :], pixel[:, None]))


def _lanczos(radius):
    def kernel(x):
        y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        # sinc(x) sinc(x / r) tends to 1 at 0; the quotient is unstable there.
        out = jnp.where(x > 1e-3, y / jnp.where(x > 1e-3, np.pi ** 2 * x * x, 1), 1)
        return jnp.where(x > radius, 0, out)
    return kernel


_KERNELS = {ResizeMethod.LINEAR: _triangle, ResizeMethod.LANCZOS3: _lanczos(3),
            ResizeMethod.LANCZOS5: _lanczos(5), ResizeMethod.CUBIC: _keys_cubic,
            ResizeMethod.CUBIC_PYTORCH: _opencv_cubic, ResizeMethod.AREA: _area}


def _weights(in_size, out_size, scale, translation, kernel, antialias):
    """The (in_size, out_size) matrix taking an axis to its resampled values."""
    inv_scale = 1 / scale
    kernel_scale = jnp.maximum(inv_scale, 1) if antialias else 1
    sample = ((jnp.arange(out_size, dtype=np.float32) + 0.5) * inv_scale
              - translation * inv_scale - 0.5)
    # PyTorch's cubic without antialiasing reads 2 pixels past each edge as the edge pixel.
    pad = 2 if kernel is _opencv_cubic and not antialias else 0
    positions = jnp.arange(-pad, in_size + pad, dtype=np.float32)
    if kernel is _area:
        w = _area(inv_scale, translation, in_size, out_size)
    else:
        w = kernel(jnp.abs(sample[None, :] - positions[:, None]) / kernel_scale)
    if pad:
        rows = np.clip(np.arange(-pad, in_size + pad), 0, in_size - 1)
        w = jnp.zeros((in_size, out_size), w.dtype).at[rows].add(w)
    total = jnp.sum(w, axis=0, keepdims=True)
    eps = float(np.finfo(np.float32).eps)
    w = jnp.where(jnp.abs(total) > 1000 * eps, w / jnp.where(total != 0, total, 1), 0)
    if pad:
        return w
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return jnp.where(inside[None, :], w, 0)


def _method(method):
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def _resample(image, shape, dims, scale, translation, method, antialias, precision):
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    kernel = _KERNELS[method]
    (image,) = promote_dtypes_inexact(jnp.asarray(image))
    if not dims:
        return image
    for d, s, t in zip(dims, scale, translation):
        w = _weights(image.shape[d], shape[d], jnp.asarray(s, np.float32),
                     jnp.asarray(t, np.float32), kernel, antialias).astype(image.dtype)
        # contracted in place, as JAX's einsum does: with the weights first along the leading
        # axis (the result is in order), else the image first and its new last axis moved
        if d == 0:
            image = lax.dot_general(w, image, (((0,), (0,)), ((), ())), precision=precision)
        else:
            moved = lax.dot_general(image, w, (((d,), (0,)), ((), ())), precision=precision)
            image = jnp.moveaxis(moved, -1, d)
    return image


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias: bool = True, precision=lax.Precision.HIGHEST):
    """`image` resampled to `shape` along `spatial_dims`, each scaled by `scale` and shifted
    by `translation` (output pixel centres map back to `(x + 0.5 - t) / s - 0.5`)."""
    shape = tuple(int(s) for s in shape)
    if len(shape) != jnp.ndim(image):
        raise ValueError(f"shape must have length equal to the number of dimensions of x; "
                         f"{shape} vs {jnp.shape(image)}")
    method = _method(method)
    if method not in _KERNELS:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate")
    dims = [int(d) for d in spatial_dims]
    return _resample(image, shape, dims, [scale[i] for i in range(len(dims))],
                     [translation[i] for i in range(len(dims))], method, antialias, precision)


def resize(image, shape, method, antialias: bool = True, precision=lax.Precision.HIGHEST):
    """`image` resampled to `shape` with the kernel `method` (a `ResizeMethod` or its name);
    downsampling with `antialias` low-passes the image first."""
    shape = tuple(int(s) for s in shape)
    image = jnp.asarray(image)
    if len(shape) != image.ndim:
        raise ValueError(f"shape must have length equal to the number of dimensions of x; "
                         f"{shape} vs {image.shape}")
    method = _method(method)
    dims = [d for d in range(image.ndim) if image.shape[d] != shape[d]]
    if method is ResizeMethod.NEAREST:
        for d in dims:
            # computed in the program (XLA folds them), not passed in as constants, as JAX
            offsets = (jnp.arange(shape[d], dtype=np.float32) + 0.5) * image.shape[d] / shape[d]
            # the indices lie in [0, size) by construction: no out-of-bounds fill (as JAX)
            image = jnp.take(image, jnp.floor(offsets).astype(np.int32), axis=d, mode="clip")
        return image
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _resample(image, shape, dims, scale, [0.0] * len(dims), method, antialias,
                     precision)

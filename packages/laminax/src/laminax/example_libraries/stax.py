"""`laminax.example_libraries.stax`: JAX's minimal neural-network layer library.

A layer is a pair `(init_fun, apply_fun)`: `init_fun(rng, input_shape)` returns
`(output_shape, params)` and `apply_fun(params, inputs, **kwargs)` the outputs (`rng=` for the
layers that draw random numbers). Combinators (`serial`, `parallel`, `FanOut` ...) build
networks out of layers; parameters and random keys are split among them as JAX's stax splits
them, so the same seed gives the same network.
"""

from __future__ import annotations

import functools
import math

import laminax.numpy as jnp
from laminax import ShapeDtypeStruct, eval_shape, lax, random
from laminax.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from laminax.nn.initializers import glorot_normal, normal, ones, zeros

logsoftmax = log_softmax
glorot = glorot_normal
randn = normal

__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout",
    "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv",
    "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu",
    "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh", "elementwise", "elu", "functools",
    "gelu", "glorot", "glorot_normal", "jnp", "lax", "leaky_relu", "log_softmax", "logsoftmax",
    "math", "normal", "ones", "parallel", "randn", "random", "relu", "selu", "serial",
    "shape_dependent", "sigmoid", "softmax", "softplus", "standardize", "zeros",
]  # fmt: skip


def _shape_of(fun, *shapes_and_dtypes):
    # the output shape of `fun` on arguments of these shapes (JAX's stax uses lax's shape
    # helpers; tracing the layer's own operation agrees with them by construction)
    structs = [ShapeDtypeStruct(tuple(shape), dtype) for shape, dtype in shapes_and_dtypes]
    return tuple(eval_shape(fun, *structs).shape)


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):  # noqa: N802, B008 (JAX's names)
    """A fully connected layer: `inputs @ W + b`, `W` of shape `(in_dim, out_dim)`."""

    def init_fun(rng, input_shape):
        output_shape = input_shape[:-1] + (out_dim,)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",  # noqa: N802
                W_init=None, b_init=normal(1e-6)):  # noqa: B008
    """A convolution whose layouts `dimension_numbers = (lhs, rhs, out)` are given as strings
    (`('NHWC', 'HWIO', 'NHWC')`), with `out_chan` output channels and a bias per channel."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        sizes = iter(filter_shape)
        kernel_shape = tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                             if c == "I" else next(sizes) for c in rhs_spec)
        output_shape = _shape_of(
            lambda x, w: lax.conv_general_dilated(x, w, strides, padding, one, one,
                                                  dimension_numbers=dimension_numbers),
            (input_shape, jnp.float32), (kernel_shape, jnp.float32))
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers) + b

    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,  # noqa: N802
                         padding="VALID", W_init=None, b_init=normal(1e-6)):  # noqa: B008
    """A transposed convolution (`lax.conv_transpose`) with string layouts, as `GeneralConv`."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        sizes = iter(filter_shape)
        kernel_shape = tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                             if c == "I" else next(sizes) for c in rhs_spec)
        output_shape = _shape_of(
            lambda x, w: lax.conv_transpose(x, w, strides, padding,
                                            dimension_numbers=dimension_numbers),
            (input_shape, jnp.float32), (kernel_shape, jnp.float32))
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers) + b

    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True,  # noqa: N802
              beta_init=zeros, gamma_init=ones):
    """Normalizes over the batch axes `axis`, then scales by `gamma` and shifts by `beta`
    (parameters over the other axes; no running statistics)."""
    axis = (axis,) if jnp.isscalar(axis) else axis

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[expand] * z + beta[expand]
        if center:
            return z + beta[expand]
        if scale:
            return gamma[expand] * z
        return z

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """The parameterless layer applying `fun(inputs, **fun_kwargs)`."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _non_spatial(spec, ndim):
    return (0, ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):  # noqa: N802
        """A pooling layer over `window_shape` windows (batch and channel axes as `spec`
        says, by default first and last)."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        dims, steps = tuple(window_shape), tuple(strides)
        for i in sorted(_non_spatial(spec, len(window_shape) + 2)):
            dims = dims[:i] + (1,) + dims[i:]
            steps = steps[:i] + (1,) + steps[i:]

        def init_fun(rng, input_shape):
            shape = _shape_of(lambda x: lax.reduce_window(x, init_val, reducer, dims, steps,
                                                          padding), (input_shape, jnp.float32))
            return shape, ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, dims, steps, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        kept = _non_spatial(spec, inputs.ndim)
        spatial = tuple(inputs.shape[i] for i in range(inputs.ndim) if i not in kept)
        # each output divided by the number of inputs its (padded) window covers
        sizes = lax.reduce_window(jnp.ones(spatial, inputs.dtype), 0.0, lax.add, dims, strides,
                                  padding)
        for i in sorted(kept):
            sizes = jnp.expand_dims(sizes, i)
        return outputs / sizes

    return rescale


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, _normalize_by_window_size)


def Flatten():  # noqa: N802
    """The layer flattening all but the leading (batch) axis."""
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = Flatten()


def Identity():  # noqa: N802
    """The layer returning its inputs."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs

    return init_fun, apply_fun


Identity = Identity()


def FanOut(num):  # noqa: N802
    """The layer returning `num` copies of its input (for `parallel` branches)."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def FanInSum():  # noqa: N802
    """The layer adding its list of inputs."""
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = FanInSum()


def FanInConcat(axis=-1):  # noqa: N802
    """The layer concatenating its list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return input_shape[0][:ax] + (size,) + input_shape[0][ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate, mode="train"):  # noqa: N802
    """In `mode='train'`, keeps each input with probability `rate` (scaled by `1 / rate`;
    `rate` is the keep rate, as in JAX's stax) using the `rng=` key; otherwise the identity."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout's apply_fun needs a PRNG key: call it as apply_fun(params, inputs, "
                "rng=key), e.g. with key = laminax.random.PRNGKey(0).")
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


def serial(*layers):
    """The layer applying `layers` one after the other."""
    count = len(layers)
    init_funs, apply_funs = zip(*layers, strict=True)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, count) if rng is not None else (None,) * count
        for fun, param, key in zip(apply_funs, params, rngs, strict=True):
            inputs = fun(param, inputs, rng=key, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """The layer applying `layers[i]` to the i-th of a list of inputs (after `FanOut`)."""
    count = len(layers)
    init_funs, apply_funs = zip(*layers, strict=True)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, count)
        return tuple(zip(*[init(key, shape) for init, key, shape
                           in zip(init_funs, rngs, input_shape, strict=True)], strict=True))

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, count) if rng is not None else (None,) * count
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs, strict=True)]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """The layer built by `make_layer(input_shape)` for each input shape it meets."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun

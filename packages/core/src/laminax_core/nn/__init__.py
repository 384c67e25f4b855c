"""laminax's `nn`: activation functions, softmax and friends, and `initializers`.

Everything is a composition of lax operations following JAX 0.10.2's formulas, so values and
derivatives agree with `jax.nn`'s.
"""

from laminax_core.nn import initializers as initializers
from laminax_core.nn._attention import dot_product_attention as dot_product_attention
from laminax_core.nn._scaled import get_scaled_dot_general_config as get_scaled_dot_general_config
from laminax_core.nn._scaled import scaled_dot_general as scaled_dot_general
from laminax_core.nn._scaled import scaled_matmul as scaled_matmul
from laminax_core.nn._functions import celu as celu
from laminax_core.nn._functions import elu as elu
from laminax_core.nn._functions import gelu as gelu
from laminax_core.nn._functions import glu as glu
from laminax_core.nn._functions import hard_sigmoid as hard_sigmoid
from laminax_core.nn._functions import hard_silu as hard_silu
from laminax_core.nn._functions import hard_swish as hard_swish
from laminax_core.nn._functions import hard_tanh as hard_tanh
from laminax_core.nn._functions import identity as identity
from laminax_core.nn._functions import leaky_relu as leaky_relu
from laminax_core.nn._functions import log1mexp as log1mexp
from laminax_core.nn._functions import log_sigmoid as log_sigmoid
from laminax_core.nn._functions import log_softmax as log_softmax
from laminax_core.nn._functions import logmeanexp as logmeanexp
from laminax_core.nn._functions import logsumexp as logsumexp
from laminax_core.nn._functions import mish as mish
from laminax_core.nn._functions import one_hot as one_hot
from laminax_core.nn._functions import relu as relu
from laminax_core.nn._functions import relu6 as relu6
from laminax_core.nn._functions import selu as selu
from laminax_core.nn._functions import sigmoid as sigmoid
from laminax_core.nn._functions import silu as silu
from laminax_core.nn._functions import soft_sign as soft_sign
from laminax_core.nn._functions import softmax as softmax
from laminax_core.nn._functions import softplus as softplus
from laminax_core.nn._functions import sparse_plus as sparse_plus
from laminax_core.nn._functions import sparse_sigmoid as sparse_sigmoid
from laminax_core.nn._functions import squareplus as squareplus
from laminax_core.nn._functions import standardize as standardize
from laminax_core.nn._functions import swish as swish
from laminax_core.nn._functions import tanh as tanh

__all__ = [
    "get_scaled_dot_general_config",
    "scaled_dot_general",
    "scaled_matmul",
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "initializers",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]

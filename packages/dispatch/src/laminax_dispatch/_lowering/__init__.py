"""Lowering to StableHLO: the rule table (`_core.py`) and one rule module per core lax module.

Importing this package registers every rule.
"""

from laminax_dispatch._lowering import approx_top_k as approx_top_k
from laminax_dispatch._lowering import barriers as barriers
from laminax_dispatch._lowering import bitwise as bitwise
from laminax_dispatch._lowering import checkify as checkify
from laminax_dispatch._lowering import checkpoint as checkpoint
from laminax_dispatch._lowering import collectives as collectives
from laminax_dispatch._lowering import control_flow as control_flow
from laminax_dispatch._lowering import convolution as convolution
from laminax_dispatch._lowering import cumulative as cumulative
from laminax_dispatch._lowering import custom_derivatives as custom_derivatives
from laminax_dispatch._lowering import dot as dot
from laminax_dispatch._lowering import elementwise as elementwise
from laminax_dispatch._lowering import fft as fft
from laminax_dispatch._lowering import indexing as indexing
from laminax_dispatch._lowering import linalg as linalg
from laminax_dispatch._lowering import linalg_gpu as linalg_gpu
from laminax_dispatch._lowering import linear_solve as linear_solve
from laminax_dispatch._lowering import math as math
from laminax_dispatch._lowering import random as random
from laminax_dispatch._lowering import reductions as reductions
from laminax_dispatch._lowering import sorting as sorting
from laminax_dispatch._lowering import special as special
from laminax_dispatch._lowering import structural as structural
from laminax_dispatch._lowering import windowed as windowed
from laminax_dispatch._lowering._core import LoweringResult as LoweringResult
from laminax_dispatch._lowering._core import LoweringRuleContext as LoweringRuleContext
from laminax_dispatch._lowering._core import ModuleContext as ModuleContext
from laminax_dispatch._lowering._core import get_lowering as get_lowering
from laminax_dispatch._lowering._core import ir_constant as ir_constant
from laminax_dispatch._lowering._core import jaxpr_subcomp as jaxpr_subcomp
from laminax_dispatch._lowering._core import lower_jaxpr as lower_jaxpr
from laminax_dispatch._lowering._core import lowering_for as lowering_for
from laminax_dispatch._lowering._core import lowerings as lowerings
from laminax_dispatch._lowering._core import register_lowering as register_lowering

__all__ = [
    "LoweringResult", "LoweringRuleContext", "ModuleContext", "approx_top_k", "barriers",
    "bitwise", "checkpoint", "collectives", "control_flow", "convolution", "cumulative",
    "custom_derivatives", "dot", "elementwise", "fft",
    "get_lowering", "indexing", "ir_constant", "jaxpr_subcomp", "linalg", "linear_solve",
    "lower_jaxpr", "lowering_for", "lowerings", "math", "random", "reductions",
    "register_lowering", "sorting", "special", "structural", "windowed",
]  # fmt: skip

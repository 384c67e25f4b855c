"""laminax's `numpy`: NumPy's API with JAX's semantics, written as compositions of lax.

Arrays are immutable (update them with `x.at[idx].set(v)`), Python scalars are weakly typed (they
do not upcast arrays), and every function works alike on NumPy arrays (core's eager values),
tracers, and the device arrays of the layers above. Modules by family: `_creation`, `_ufuncs`,
`_logic`, `_selection`, `_reductions`, `_shape`, `_indexing`, `_linalg_products`, `_einsum`, `_sorting`,
`_dtypes`, and the public `linalg` and `fft`. Importing this package also puts the numpy-backed
array methods (`x.sum()`, `x.at[...]`, advanced indexing ...) on tracers (`_array_methods.py`).
"""

import numpy as _np

from laminax_core import dtypes as _core_dtypes
from laminax_core.numpy import _array_methods
from laminax_core.numpy import fft as fft
from laminax_core.numpy import linalg as linalg
from laminax_core.numpy._bits import packbits as packbits
from laminax_core.numpy._bits import unpackbits as unpackbits
from laminax_core.numpy._concatenators import c_ as c_
from laminax_core.numpy._concatenators import index_exp as index_exp
from laminax_core.numpy._concatenators import r_ as r_
from laminax_core.numpy._concatenators import s_ as s_
from laminax_core.numpy._creation import arange as arange
from laminax_core.numpy._creation import array as array
from laminax_core.numpy._creation import asarray as asarray
from laminax_core.numpy._creation import copy as copy
from laminax_core.numpy._creation import empty as empty
from laminax_core.numpy._creation import empty_like as empty_like
from laminax_core.numpy._creation import eye as eye
from laminax_core.numpy._creation import full as full
from laminax_core.numpy._creation import full_like as full_like
from laminax_core.numpy._creation import geomspace as geomspace
from laminax_core.numpy._creation import identity as identity
from laminax_core.numpy._creation import linspace as linspace
from laminax_core.numpy._creation import logspace as logspace
from laminax_core.numpy._creation import meshgrid as meshgrid
from laminax_core.numpy._creation import ones as ones
from laminax_core.numpy._creation import ones_like as ones_like
from laminax_core.numpy._creation import tri as tri
from laminax_core.numpy._creation import tril as tril
from laminax_core.numpy._creation import triu as triu
from laminax_core.numpy._creation import zeros as zeros
from laminax_core.numpy._creation import zeros_like as zeros_like
from laminax_core.numpy._dtypes import SCALAR_TYPES as _SCALAR_TYPES
from laminax_core.numpy._dtypes import ndarray as ndarray
from laminax_core.numpy._einsum import einsum as einsum
from laminax_core.numpy._einsum import einsum_path as einsum_path
from laminax_core.numpy._histograms import histogram2d as histogram2d
from laminax_core.numpy._histograms import histogramdd as histogramdd
from laminax_core.numpy._index_tricks import choose as choose
from laminax_core.numpy._index_tricks import compress as compress
from laminax_core.numpy._index_tricks import delete as delete
from laminax_core.numpy._index_tricks import diag_indices as diag_indices
from laminax_core.numpy._index_tricks import diag_indices_from as diag_indices_from
from laminax_core.numpy._index_tricks import extract as extract
from laminax_core.numpy._index_tricks import fill_diagonal as fill_diagonal
from laminax_core.numpy._index_tricks import indices as indices
from laminax_core.numpy._index_tricks import insert as insert
from laminax_core.numpy._index_tricks import ix_ as ix_
from laminax_core.numpy._index_tricks import mask_indices as mask_indices
from laminax_core.numpy._index_tricks import mgrid as mgrid
from laminax_core.numpy._index_tricks import ogrid as ogrid
from laminax_core.numpy._index_tricks import piecewise as piecewise
from laminax_core.numpy._index_tricks import place as place
from laminax_core.numpy._index_tricks import put as put
from laminax_core.numpy._index_tricks import put_along_axis as put_along_axis
from laminax_core.numpy._index_tricks import ravel_multi_index as ravel_multi_index
from laminax_core.numpy._index_tricks import select as select
from laminax_core.numpy._index_tricks import tril_indices as tril_indices
from laminax_core.numpy._index_tricks import tril_indices_from as tril_indices_from
from laminax_core.numpy._index_tricks import triu_indices as triu_indices
from laminax_core.numpy._index_tricks import triu_indices_from as triu_indices_from
from laminax_core.numpy._index_tricks import unravel_index as unravel_index
from laminax_core.numpy._indexing import argwhere as argwhere
from laminax_core.numpy._indexing import flatnonzero as flatnonzero
from laminax_core.numpy._indexing import nonzero as nonzero
from laminax_core.numpy._indexing import take as take
from laminax_core.numpy._indexing import take_along_axis as take_along_axis
from laminax_core.numpy._io import ComplexWarning as ComplexWarning
from laminax_core.numpy._io import array_repr as array_repr
from laminax_core.numpy._io import array_str as array_str
from laminax_core.numpy._io import frombuffer as frombuffer
from laminax_core.numpy._io import fromfile as fromfile
from laminax_core.numpy._io import fromiter as fromiter
from laminax_core.numpy._io import fromstring as fromstring
from laminax_core.numpy._io import get_printoptions as get_printoptions
from laminax_core.numpy._io import load as load
from laminax_core.numpy._io import printoptions as printoptions
from laminax_core.numpy._io import save as save
from laminax_core.numpy._io import savez as savez
from laminax_core.numpy._io import set_printoptions as set_printoptions
from laminax_core.numpy._linalg_products import cross as cross
from laminax_core.numpy._linalg_products import diag as diag
from laminax_core.numpy._linalg_products import diagflat as diagflat
from laminax_core.numpy._linalg_products import diagonal as diagonal
from laminax_core.numpy._linalg_products import dot as dot
from laminax_core.numpy._linalg_products import inner as inner
from laminax_core.numpy._linalg_products import kron as kron
from laminax_core.numpy._linalg_products import matmul as matmul
from laminax_core.numpy._linalg_products import matrix_transpose as matrix_transpose
from laminax_core.numpy._linalg_products import matvec as matvec
from laminax_core.numpy._linalg_products import outer as outer
from laminax_core.numpy._linalg_products import tensordot as tensordot
from laminax_core.numpy._linalg_products import trace as trace
from laminax_core.numpy._linalg_products import vdot as vdot
from laminax_core.numpy._linalg_products import vecdot as vecdot
from laminax_core.numpy._linalg_products import vecmat as vecmat
from laminax_core.numpy._selection import allclose as allclose
from laminax_core.numpy._selection import array_equal as array_equal
from laminax_core.numpy._selection import array_equiv as array_equiv
from laminax_core.numpy._logic import bitwise_count as bitwise_count
from laminax_core.numpy._logic import bitwise_invert as bitwise_invert
from laminax_core.numpy._logic import bitwise_left_shift as bitwise_left_shift
from laminax_core.numpy._logic import bitwise_not as bitwise_not
from laminax_core.numpy._logic import bitwise_right_shift as bitwise_right_shift
from laminax_core.numpy._selection import clip as clip
from laminax_core.numpy._logic import equal as equal
from laminax_core.numpy._logic import greater as greater
from laminax_core.numpy._logic import greater_equal as greater_equal
from laminax_core.numpy._logic import invert as invert
from laminax_core.numpy._selection import isclose as isclose
from laminax_core.numpy._selection import iscomplex as iscomplex
from laminax_core.numpy._logic import iscomplexobj as iscomplexobj
from laminax_core.numpy._logic import isfinite as isfinite
from laminax_core.numpy._logic import isinf as isinf
from laminax_core.numpy._logic import isnan as isnan
from laminax_core.numpy._logic import isneginf as isneginf
from laminax_core.numpy._logic import isposinf as isposinf
from laminax_core.numpy._selection import isreal as isreal
from laminax_core.numpy._logic import isrealobj as isrealobj
from laminax_core.numpy._logic import left_shift as left_shift
from laminax_core.numpy._logic import less as less
from laminax_core.numpy._logic import less_equal as less_equal
from laminax_core.numpy._logic import logical_not as logical_not
from laminax_core.numpy._logic import not_equal as not_equal
from laminax_core.numpy._logic import right_shift as right_shift
from laminax_core.numpy._selection import where as where
from laminax_core.numpy._polynomials import polydiv as polydiv
from laminax_core.numpy._polynomials import polyfit as polyfit
from laminax_core.numpy._polynomials import roots as roots
from laminax_core.numpy._reductions import all as all
from laminax_core.numpy._reductions import amax as amax
from laminax_core.numpy._reductions import amin as amin
from laminax_core.numpy._reductions import any as any
from laminax_core.numpy._reductions import argmax as argmax
from laminax_core.numpy._reductions import argmin as argmin
from laminax_core.numpy._reductions import average as average
from laminax_core.numpy._reductions import count_nonzero as count_nonzero
from laminax_core.numpy._reductions import cumprod as cumprod
from laminax_core.numpy._reductions import cumsum as cumsum
from laminax_core.numpy._reductions import cumulative_prod as cumulative_prod
from laminax_core.numpy._reductions import cumulative_sum as cumulative_sum
from laminax_core.numpy._reductions import max as max
from laminax_core.numpy._reductions import mean as mean
from laminax_core.numpy._reductions import min as min
from laminax_core.numpy._reductions import nanargmax as nanargmax
from laminax_core.numpy._reductions import nanargmin as nanargmin
from laminax_core.numpy._reductions import nancumprod as nancumprod
from laminax_core.numpy._reductions import nancumsum as nancumsum
from laminax_core.numpy._reductions import nanmax as nanmax
from laminax_core.numpy._reductions import nanmean as nanmean
from laminax_core.numpy._reductions import nanmin as nanmin
from laminax_core.numpy._reductions import nanprod as nanprod
from laminax_core.numpy._reductions import nanstd as nanstd
from laminax_core.numpy._reductions import nansum as nansum
from laminax_core.numpy._reductions import nanvar as nanvar
from laminax_core.numpy._reductions import prod as prod
from laminax_core.numpy._reductions import ptp as ptp
from laminax_core.numpy._reductions import std as std
from laminax_core.numpy._reductions import sum as sum
from laminax_core.numpy._reductions import var as var
from laminax_core.numpy._shape import append as append
from laminax_core.numpy._shape import array_split as array_split
from laminax_core.numpy._shape import astype as astype
from laminax_core.numpy._shape import atleast_1d as atleast_1d
from laminax_core.numpy._shape import atleast_2d as atleast_2d
from laminax_core.numpy._shape import atleast_3d as atleast_3d
from laminax_core.numpy._shape import block as block
from laminax_core.numpy._shape import broadcast_arrays as broadcast_arrays
from laminax_core.numpy._shape import broadcast_shapes as broadcast_shapes
from laminax_core.numpy._shape import broadcast_to as broadcast_to
from laminax_core.numpy._shape import column_stack as column_stack
from laminax_core.numpy._shape import concat as concat
from laminax_core.numpy._shape import concatenate as concatenate
from laminax_core.numpy._shape import dsplit as dsplit
from laminax_core.numpy._shape import dstack as dstack
from laminax_core.numpy._shape import expand_dims as expand_dims
from laminax_core.numpy._shape import flip as flip
from laminax_core.numpy._shape import fliplr as fliplr
from laminax_core.numpy._shape import flipud as flipud
from laminax_core.numpy._shape import hsplit as hsplit
from laminax_core.numpy._shape import hstack as hstack
from laminax_core.numpy._shape import isscalar as isscalar
from laminax_core.numpy._shape import iterable as iterable
from laminax_core.numpy._shape import moveaxis as moveaxis
from laminax_core.numpy._shape import ndim as ndim
from laminax_core.numpy._shape import pad as pad
from laminax_core.numpy._shape import permute_dims as permute_dims
from laminax_core.numpy._shape import ravel as ravel
from laminax_core.numpy._shape import repeat as repeat
from laminax_core.numpy._shape import reshape as reshape
from laminax_core.numpy._shape import resize as resize
from laminax_core.numpy._shape import roll as roll
from laminax_core.numpy._shape import rollaxis as rollaxis
from laminax_core.numpy._shape import rot90 as rot90
from laminax_core.numpy._shape import shape as shape
from laminax_core.numpy._shape import size as size
from laminax_core.numpy._shape import split as split
from laminax_core.numpy._shape import squeeze as squeeze
from laminax_core.numpy._shape import stack as stack
from laminax_core.numpy._shape import swapaxes as swapaxes
from laminax_core.numpy._shape import tile as tile
from laminax_core.numpy._shape import transpose as transpose
from laminax_core.numpy._shape import trim_zeros as trim_zeros
from laminax_core.numpy._shape import unstack as unstack
from laminax_core.numpy._shape import vsplit as vsplit
from laminax_core.numpy._shape import vstack as vstack
from laminax_core.numpy._signal import bartlett as bartlett
from laminax_core.numpy._signal import blackman as blackman
from laminax_core.numpy._signal import convolve as convolve
from laminax_core.numpy._signal import corrcoef as corrcoef
from laminax_core.numpy._signal import correlate as correlate
from laminax_core.numpy._signal import cov as cov
from laminax_core.numpy._signal import diff as diff
from laminax_core.numpy._signal import digitize as digitize
from laminax_core.numpy._signal import ediff1d as ediff1d
from laminax_core.numpy._signal import gradient as gradient
from laminax_core.numpy._signal import hamming as hamming
from laminax_core.numpy._signal import hanning as hanning
from laminax_core.numpy._signal import interp as interp
from laminax_core.numpy._signal import poly as poly
from laminax_core.numpy._signal import polyadd as polyadd
from laminax_core.numpy._signal import polyder as polyder
from laminax_core.numpy._signal import polyint as polyint
from laminax_core.numpy._signal import polymul as polymul
from laminax_core.numpy._signal import polysub as polysub
from laminax_core.numpy._signal import polyval as polyval
from laminax_core.numpy._signal import trapezoid as trapezoid
from laminax_core.numpy._signal import unwrap as unwrap
from laminax_core.numpy._signal import vander as vander
from laminax_core.numpy._sorting import argpartition as argpartition
from laminax_core.numpy._sorting import argsort as argsort
from laminax_core.numpy._sorting import bincount as bincount
from laminax_core.numpy._sorting import histogram as histogram
from laminax_core.numpy._sorting import histogram_bin_edges as histogram_bin_edges
from laminax_core.numpy._sorting import intersect1d as intersect1d
from laminax_core.numpy._sorting import isin as isin
from laminax_core.numpy._sorting import lexsort as lexsort
from laminax_core.numpy._sorting import median as median
from laminax_core.numpy._sorting import nanmedian as nanmedian
from laminax_core.numpy._sorting import nanpercentile as nanpercentile
from laminax_core.numpy._sorting import nanquantile as nanquantile
from laminax_core.numpy._sorting import partition as partition
from laminax_core.numpy._sorting import percentile as percentile
from laminax_core.numpy._sorting import quantile as quantile
from laminax_core.numpy._sorting import searchsorted as searchsorted
from laminax_core.numpy._sorting import setdiff1d as setdiff1d
from laminax_core.numpy._sorting import setxor1d as setxor1d
from laminax_core.numpy._sorting import sort as sort
from laminax_core.numpy._sorting import sort_complex as sort_complex
from laminax_core.numpy._sorting import union1d as union1d
from laminax_core.numpy._sorting import unique as unique
from laminax_core.numpy._sorting import unique_all as unique_all
from laminax_core.numpy._sorting import unique_counts as unique_counts
from laminax_core.numpy._sorting import unique_inverse as unique_inverse
from laminax_core.numpy._sorting import unique_values as unique_values
from laminax_core.numpy._special_functions import i0 as i0
from laminax_core.numpy._special_functions import kaiser as kaiser
from laminax_core.numpy._special_functions import spacing as spacing
from laminax_core.numpy._ufunc_objects import add as add
from laminax_core.numpy._ufunc_objects import bitwise_and as bitwise_and
from laminax_core.numpy._ufunc_objects import bitwise_or as bitwise_or
from laminax_core.numpy._ufunc_objects import bitwise_xor as bitwise_xor
from laminax_core.numpy._ufunc_objects import frompyfunc as frompyfunc
from laminax_core.numpy._ufunc_objects import logaddexp as logaddexp
from laminax_core.numpy._ufunc_objects import logaddexp2 as logaddexp2
from laminax_core.numpy._ufunc_objects import logical_and as logical_and
from laminax_core.numpy._ufunc_objects import logical_or as logical_or
from laminax_core.numpy._ufunc_objects import logical_xor as logical_xor
from laminax_core.numpy._ufunc_objects import maximum as maximum
from laminax_core.numpy._ufunc_objects import minimum as minimum
from laminax_core.numpy._ufunc_objects import multiply as multiply
from laminax_core.numpy._ufunc_objects import negative as negative
from laminax_core.numpy._ufunc_objects import subtract as subtract
from laminax_core.numpy._ufunc_objects import ufunc as ufunc
from laminax_core.numpy._ufuncs import abs as abs
from laminax_core.numpy._ufuncs import absolute as absolute
from laminax_core.numpy._ufuncs import acos as acos
from laminax_core.numpy._ufuncs import acosh as acosh
from laminax_core.numpy._ufuncs import angle as angle
from laminax_core.numpy._ufuncs import arccos as arccos
from laminax_core.numpy._ufuncs import arccosh as arccosh
from laminax_core.numpy._ufuncs import arcsin as arcsin
from laminax_core.numpy._ufuncs import arcsinh as arcsinh
from laminax_core.numpy._ufuncs import arctan as arctan
from laminax_core.numpy._ufuncs import arctan2 as arctan2
from laminax_core.numpy._ufuncs import arctanh as arctanh
from laminax_core.numpy._ufuncs import around as around
from laminax_core.numpy._ufuncs import asin as asin
from laminax_core.numpy._ufuncs import asinh as asinh
from laminax_core.numpy._ufuncs import atan as atan
from laminax_core.numpy._ufuncs import atan2 as atan2
from laminax_core.numpy._ufuncs import atanh as atanh
from laminax_core.numpy._ufuncs import cbrt as cbrt
from laminax_core.numpy._ufuncs import ceil as ceil
from laminax_core.numpy._ufuncs import conj as conj
from laminax_core.numpy._ufuncs import conjugate as conjugate
from laminax_core.numpy._ufuncs import copysign as copysign
from laminax_core.numpy._ufuncs import cos as cos
from laminax_core.numpy._ufuncs import cosh as cosh
from laminax_core.numpy._ufuncs import deg2rad as deg2rad
from laminax_core.numpy._ufuncs import degrees as degrees
from laminax_core.numpy._ufuncs import divide as divide
from laminax_core.numpy._ufuncs import divmod as divmod
from laminax_core.numpy._ufuncs import exp as exp
from laminax_core.numpy._ufuncs import exp2 as exp2
from laminax_core.numpy._ufuncs import expm1 as expm1
from laminax_core.numpy._ufuncs import fabs as fabs
from laminax_core.numpy._ufuncs import float_power as float_power
from laminax_core.numpy._ufuncs import floor as floor
from laminax_core.numpy._ufuncs import floor_divide as floor_divide
from laminax_core.numpy._ufuncs import fmax as fmax
from laminax_core.numpy._ufuncs import fmin as fmin
from laminax_core.numpy._ufuncs import fmod as fmod
from laminax_core.numpy._ufuncs import frexp as frexp
from laminax_core.numpy._ufuncs import gcd as gcd
from laminax_core.numpy._ufuncs import heaviside as heaviside
from laminax_core.numpy._ufuncs import hypot as hypot
from laminax_core.numpy._ufuncs import imag as imag
from laminax_core.numpy._ufuncs import lcm as lcm
from laminax_core.numpy._ufuncs import ldexp as ldexp
from laminax_core.numpy._ufuncs import log as log
from laminax_core.numpy._ufuncs import log1p as log1p
from laminax_core.numpy._ufuncs import log2 as log2
from laminax_core.numpy._ufuncs import log10 as log10
from laminax_core.numpy._ufuncs import mod as mod
from laminax_core.numpy._ufuncs import modf as modf
from laminax_core.numpy._ufuncs import nan_to_num as nan_to_num
from laminax_core.numpy._ufuncs import nextafter as nextafter
from laminax_core.numpy._ufuncs import positive as positive
from laminax_core.numpy._ufuncs import pow as pow
from laminax_core.numpy._ufuncs import power as power
from laminax_core.numpy._ufuncs import rad2deg as rad2deg
from laminax_core.numpy._ufuncs import radians as radians
from laminax_core.numpy._ufuncs import real as real
from laminax_core.numpy._ufuncs import reciprocal as reciprocal
from laminax_core.numpy._ufuncs import remainder as remainder
from laminax_core.numpy._ufuncs import rint as rint
from laminax_core.numpy._ufuncs import round as round
from laminax_core.numpy._ufuncs import sign as sign
from laminax_core.numpy._ufuncs import signbit as signbit
from laminax_core.numpy._ufuncs import sin as sin
from laminax_core.numpy._ufuncs import sinc as sinc
from laminax_core.numpy._ufuncs import sinh as sinh
from laminax_core.numpy._ufuncs import sqrt as sqrt
from laminax_core.numpy._ufuncs import square as square
from laminax_core.numpy._ufuncs import tan as tan
from laminax_core.numpy._ufuncs import tanh as tanh
from laminax_core.numpy._ufuncs import true_divide as true_divide
from laminax_core.numpy._ufuncs import trunc as trunc
from laminax_core.numpy._vectorize import apply_along_axis as apply_along_axis
from laminax_core.numpy._vectorize import apply_over_axes as apply_over_axes
from laminax_core.numpy._vectorize import fromfunction as fromfunction
from laminax_core.numpy._vectorize import vectorize as vectorize

# dtype objects usable as constructors: jnp.float32(3) is a 0-d float32 array
bool = _SCALAR_TYPES["bool"]
bool_ = _SCALAR_TYPES["bool_"]
int8 = _SCALAR_TYPES["int8"]
int16 = _SCALAR_TYPES["int16"]
int32 = _SCALAR_TYPES["int32"]
int64 = _SCALAR_TYPES["int64"]
uint8 = _SCALAR_TYPES["uint8"]
uint16 = _SCALAR_TYPES["uint16"]
uint32 = _SCALAR_TYPES["uint32"]
uint64 = _SCALAR_TYPES["uint64"]
float16 = _SCALAR_TYPES["float16"]
float32 = _SCALAR_TYPES["float32"]
float64 = _SCALAR_TYPES["float64"]
complex64 = _SCALAR_TYPES["complex64"]
complex128 = _SCALAR_TYPES["complex128"]
bfloat16 = _SCALAR_TYPES["bfloat16"]
int2 = _SCALAR_TYPES["int2"]
int4 = _SCALAR_TYPES["int4"]
uint2 = _SCALAR_TYPES["uint2"]
uint4 = _SCALAR_TYPES["uint4"]
float4_e2m1fn = _SCALAR_TYPES["float4_e2m1fn"]
float8_e3m4 = _SCALAR_TYPES["float8_e3m4"]
float8_e4m3 = _SCALAR_TYPES["float8_e4m3"]
float8_e4m3b11fnuz = _SCALAR_TYPES["float8_e4m3b11fnuz"]
float8_e4m3fn = _SCALAR_TYPES["float8_e4m3fn"]
float8_e4m3fnuz = _SCALAR_TYPES["float8_e4m3fnuz"]
float8_e5m2 = _SCALAR_TYPES["float8_e5m2"]
float8_e5m2fnuz = _SCALAR_TYPES["float8_e5m2fnuz"]
float8_e8m0fnu = _SCALAR_TYPES["float8_e8m0fnu"]
int_ = _SCALAR_TYPES["int_"]
uint = _SCALAR_TYPES["uint"]
float_ = _SCALAR_TYPES["float_"]
complex_ = _SCALAR_TYPES["complex_"]
single = _SCALAR_TYPES["single"]
double = _SCALAR_TYPES["double"]
csingle = _SCALAR_TYPES["csingle"]
cdouble = _SCALAR_TYPES["cdouble"]

# NumPy's abstract scalar classes, for issubdtype
generic = _np.generic
number = _np.number
inexact = _np.inexact
floating = _np.floating
complexfloating = _np.complexfloating
integer = _np.integer
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
character = _np.character
flexible = _np.flexible
dtype = _np.dtype

can_cast = _core_dtypes.can_cast
finfo = _core_dtypes.finfo
iinfo = _core_dtypes.iinfo
isdtype = _core_dtypes.isdtype
issubdtype = _core_dtypes.issubdtype
promote_types = _core_dtypes.promote_types
result_type = _core_dtypes.result_type

e = _np.e
euler_gamma = _np.euler_gamma
inf = _np.inf
nan = _np.nan
newaxis = None
pi = _np.pi

_array_methods.install()

__all__ = [
    "ComplexWarning",
    "abs",
    "absolute",
    "acos",
    "acosh",
    "add",
    "all",
    "allclose",
    "amax",
    "amin",
    "angle",
    "any",
    "append",
    "apply_along_axis",
    "apply_over_axes",
    "arange",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "argmax",
    "argmin",
    "argpartition",
    "argsort",
    "argwhere",
    "around",
    "array",
    "array_equal",
    "array_equiv",
    "array_repr",
    "array_split",
    "array_str",
    "asarray",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "average",
    "bartlett",
    "bfloat16",
    "bincount",
    "bitwise_and",
    "bitwise_count",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "blackman",
    "block",
    "bool",
    "bool_",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "c_",
    "can_cast",
    "cbrt",
    "cdouble",
    "ceil",
    "character",
    "choose",
    "clip",
    "column_stack",
    "complex128",
    "complex64",
    "complex_",
    "complexfloating",
    "compress",
    "concat",
    "concatenate",
    "conj",
    "conjugate",
    "convolve",
    "copy",
    "copysign",
    "corrcoef",
    "correlate",
    "cos",
    "cosh",
    "count_nonzero",
    "cov",
    "cross",
    "csingle",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "deg2rad",
    "degrees",
    "delete",
    "diag",
    "diag_indices",
    "diag_indices_from",
    "diagflat",
    "diagonal",
    "diff",
    "digitize",
    "divide",
    "divmod",
    "dot",
    "double",
    "dsplit",
    "dstack",
    "dtype",
    "e",
    "ediff1d",
    "einsum",
    "einsum_path",
    "empty",
    "empty_like",
    "equal",
    "euler_gamma",
    "exp",
    "exp2",
    "expand_dims",
    "expm1",
    "extract",
    "eye",
    "fabs",
    "fft",
    "fill_diagonal",
    "finfo",
    "flatnonzero",
    "flexible",
    "flip",
    "fliplr",
    "flipud",
    "float16",
    "float32",
    "float4_e2m1fn",
    "float64",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float_",
    "float_power",
    "floating",
    "floor",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "frexp",
    "frombuffer",
    "fromfile",
    "fromfunction",
    "fromiter",
    "frompyfunc",
    "fromstring",
    "full",
    "full_like",
    "gcd",
    "generic",
    "geomspace",
    "get_printoptions",
    "gradient",
    "greater",
    "greater_equal",
    "hamming",
    "hanning",
    "heaviside",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
    "hsplit",
    "hstack",
    "hypot",
    "i0",
    "identity",
    "iinfo",
    "imag",
    "index_exp",
    "indices",
    "inexact",
    "inf",
    "inner",
    "insert",
    "int16",
    "int2",
    "int32",
    "int4",
    "int64",
    "int8",
    "int_",
    "integer",
    "interp",
    "intersect1d",
    "invert",
    "isclose",
    "iscomplex",
    "iscomplexobj",
    "isdtype",
    "isfinite",
    "isin",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "isreal",
    "isrealobj",
    "isscalar",
    "issubdtype",
    "iterable",
    "ix_",
    "kaiser",
    "kron",
    "lcm",
    "ldexp",
    "left_shift",
    "less",
    "less_equal",
    "lexsort",
    "linalg",
    "linspace",
    "load",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "logspace",
    "mask_indices",
    "matmul",
    "matrix_transpose",
    "matvec",
    "max",
    "maximum",
    "mean",
    "median",
    "meshgrid",
    "mgrid",
    "min",
    "minimum",
    "mod",
    "modf",
    "moveaxis",
    "multiply",
    "nan",
    "nan_to_num",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanprod",
    "nanquantile",
    "nanstd",
    "nansum",
    "nanvar",
    "ndarray",
    "ndim",
    "negative",
    "newaxis",
    "nextafter",
    "nonzero",
    "not_equal",
    "number",
    "ogrid",
    "ones",
    "ones_like",
    "outer",
    "packbits",
    "pad",
    "partition",
    "percentile",
    "permute_dims",
    "pi",
    "piecewise",
    "place",
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyfit",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "positive",
    "pow",
    "power",
    "printoptions",
    "prod",
    "promote_types",
    "ptp",
    "put",
    "put_along_axis",
    "quantile",
    "r_",
    "rad2deg",
    "radians",
    "ravel",
    "ravel_multi_index",
    "real",
    "reciprocal",
    "remainder",
    "repeat",
    "reshape",
    "resize",
    "result_type",
    "right_shift",
    "rint",
    "roll",
    "rollaxis",
    "roots",
    "rot90",
    "round",
    "s_",
    "save",
    "savez",
    "searchsorted",
    "select",
    "set_printoptions",
    "setdiff1d",
    "setxor1d",
    "shape",
    "sign",
    "signbit",
    "signedinteger",
    "sin",
    "sinc",
    "single",
    "sinh",
    "size",
    "sort",
    "sort_complex",
    "spacing",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "swapaxes",
    "take",
    "take_along_axis",
    "tan",
    "tanh",
    "tensordot",
    "tile",
    "trace",
    "transpose",
    "trapezoid",
    "tri",
    "tril",
    "tril_indices",
    "tril_indices_from",
    "trim_zeros",
    "triu",
    "triu_indices",
    "triu_indices_from",
    "true_divide",
    "trunc",
    "ufunc",
    "uint",
    "uint16",
    "uint2",
    "uint32",
    "uint4",
    "uint64",
    "uint8",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "unpackbits",
    "unravel_index",
    "unsignedinteger",
    "unstack",
    "unwrap",
    "vander",
    "var",
    "vdot",
    "vecdot",
    "vecmat",
    "vectorize",
    "vsplit",
    "vstack",
    "where",
    "zeros",
    "zeros_like",
]

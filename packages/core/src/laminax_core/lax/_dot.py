"""dot_general: contractions with batch dimensions (matmul, inner and outer products)."""

from __future__ import annotations

import numpy as np

from laminax_core import dtypes
from laminax_core._avals import ShapedArray, get_aval
from laminax_core._sharding_rules import dot_general_sharding, requested_sharding
from laminax_core._interpreters.transpose import is_undefined_primal as undefined
from laminax_core._primitive import NUMERIC, check_dtype, define_primitive, jvp_from
from laminax_core.lax._dot_algorithms import as_algorithm
from laminax_core.lax._elementwise import convert_element_type
from laminax_core.lax._structural import transpose

__all__ = ["dot_general"]
# the primitives, which lax exports beside their functions
__all__ += [
    "dot_general_p",
]  # fmt: skip


def _canonical_dimension_numbers(dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers

    def dims(d):  # a bare int is one dimension, as JAX reads it
        return (int(d),) if np.ndim(d) == 0 else tuple(map(int, d))

    return (dims(lc), dims(rc)), (dims(lb), dims(rb))


def dot_general(
    lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, out_sharding=None
):
    """Contracts `lhs` and `rhs`: `dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch))`. The output dims are batch, then lhs free, then rhs free.

    Example:
      >>> x = np.ones((2, 3), np.float32)
      >>> dot_general(x, x, (((1,), (1,)), ((), ()))).shape
      (2, 2)
    """
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type)
    return dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=_canonical_dimension_numbers(dimension_numbers),
        precision=as_algorithm(precision),
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )


def _free_dims(ndim, *used):
    taken = set().union(*map(set, used))
    return [d for d in range(ndim) if d not in taken]


def _dot_general_abstract_eval(
    lhs, rhs, dimension_numbers, precision, preferred_element_type, out_sharding
):
    (lc, rc), (lb, rb) = dimension_numbers
    check_dtype("dot_general", lhs.dtype, (*NUMERIC, np.bool_))
    if lhs.dtype != rhs.dtype:
        raise TypeError(
            f"dot_general requires operands of the same dtype, got "
            f"{lhs.dtype.name} and {rhs.dtype.name}; convert one first."
        )
    for name, (ld, rd) in (("contracting", (lc, rc)), ("batch", (lb, rb))):
        if len(ld) != len(rd) or any(
            not 0 <= d < a.ndim for a, ds in ((lhs, ld), (rhs, rd)) for d in ds
        ):
            raise TypeError(
                f"dot_general: {name} dimensions {ld} and {rd} must pair up and be "
                f"within ranks {lhs.ndim} and {rhs.ndim}."
            )
        sizes = [(lhs.shape[a], rhs.shape[b]) for a, b in zip(ld, rd, strict=True)]
        if any(a != b for a, b in sizes):
            raise TypeError(
                f"dot_general requires {name} dimensions to have the same shape, "
                f"got {[a for a, _ in sizes]} and {[b for _, b in sizes]} (lhs "
                f"{lhs.shape}, rhs {rhs.shape})."
            )
    for side, contracting, batch in (("lhs", lc, lb), ("rhs", rc, rb)):
        if len(set(contracting) | set(batch)) != len(contracting) + len(batch):
            # XLA would reject the module later with a compiler error
            raise TypeError(
                f"dot_general requires {side} batch dimensions and {side} contracting "
                f"dimensions to be distinct and disjoint, got batch {batch} and contracting "
                f"{contracting}."
            )
    shape = (
        *(lhs.shape[d] for d in lb),
        *(lhs.shape[d] for d in _free_dims(lhs.ndim, lc, lb)),
        *(rhs.shape[d] for d in _free_dims(rhs.ndim, rc, rb)),
    )
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    sharding = requested_sharding(out_sharding, len(shape))
    # a given out_sharding decides, also when it splits nothing (P(): replicated)
    if out_sharding is None and (lhs.sharding is not None or rhs.sharding is not None):
        sharding = dot_general_sharding(lhs, rhs, dimension_numbers, shape, dtype)
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type, sharding)


def _dot_general_reference(
    lhs, rhs, dimension_numbers, precision, preferred_element_type, out_sharding
):
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lhs_sub = [next(letters) for _ in range(lhs.ndim)]
    rhs_sub = [next(letters) for _ in range(rhs.ndim)]
    for a, b in zip((*lc, *lb), (*rc, *rb), strict=True):
        rhs_sub[b] = lhs_sub[a]
    out = (
        [lhs_sub[d] for d in lb]
        + [lhs_sub[d] for d in _free_dims(lhs.ndim, lc, lb)]
        + [rhs_sub[d] for d in _free_dims(rhs.ndim, rc, rb)]
    )
    spec = f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(out)}"
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return np.einsum(spec, lhs.astype(dtype), rhs.astype(dtype)).astype(dtype)


def _ranges_like(*lists):
    start = 0
    for xs in lists:
        yield list(range(start, start + len(xs)))
        start += len(xs)


def _transpose_lhs(ct, x_aval, y, dimension_numbers, swap_ans=False, **params):
    # ct has dims (batch, x free, y free) (or (batch, y free, x free) when swapped); contract
    # it with y over y's free dims and batch dims, then put the result in x's layout.
    (xc, yc), (xb, yb) = dimension_numbers
    y_ndim = get_aval(y).ndim
    x_kept = _free_dims(x_aval.ndim, xc, xb)
    y_kept = _free_dims(y_ndim, yc, yb)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(xb, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(xb, x_kept, y_kept)
    dims = ((tuple(ans_y), tuple(y_kept)), (tuple(ans_batch), tuple(yb)))
    x_contract_sorted_by_y = [xc[i] for i in np.argsort(yc)]
    order = [*xb, *x_kept, *x_contract_sorted_by_y]
    out_axes = np.argsort(order)
    # the cotangent has x's type: the product is laid out as x's dimensions in `order`
    out_sharding = None
    if x_aval.sharding is not None:
        split = x_aval.sharding.aval_partitions
        out_sharding = x_aval.sharding.with_aval_partitions(tuple(split[d] for d in order))
    result = dot_general(ct, y, dims, params["precision"], None, out_sharding=out_sharding)
    result = transpose(result, tuple(int(a) for a in out_axes))
    if get_aval(result).dtype != x_aval.dtype:
        result = convert_element_type(result, x_aval.dtype)
    return result


def _dot_general_transpose(ct, lhs, rhs, dimension_numbers, **params):
    if undefined(lhs) and undefined(rhs):
        raise TypeError(
            "dot_general is transposed with both operands linear: the function is "
            "not linear in its inputs (a bug in a jvp rule)."
        )
    if undefined(lhs):
        return [_transpose_lhs(ct, lhs.aval, rhs, dimension_numbers, **params), None]
    (lc, rc), (lb, rb) = dimension_numbers
    swapped = ((rc, lc), (rb, lb))
    return [None, _transpose_lhs(ct, rhs.aval, lhs, swapped, swap_ans=True, **params)]


def _dot_general_batch(axis_data, args, dims, dimension_numbers, **params):
    # the batch dims stay where they are: a dim of both operands becomes a batch dimension of
    # the contraction, a dim of one operand a free dimension (as JAX's rule does)
    (lhs, rhs), (ld, rd) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers

    def shift(ds, bdim):
        return tuple(d + (bdim is not None and d >= bdim) for d in ds)

    lc_, lb_, rc_, rb_ = shift(lc, ld), shift(lb, ld), shift(rc, rd), shift(rb, rd)
    if ld is not None and rd is not None:
        numbers = ((lc_, rc_), ((ld, *lb_), (rd, *rb_)))
        return dot_general_p.bind(lhs, rhs, dimension_numbers=numbers, **params), 0
    numbers = ((lc_, rc_), (lb_, rb_))
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=numbers, **params)
    if ld is not None:
        lhs_free = _free_dims(get_aval(lhs).ndim, lc_, lb_)
        return out, len(lb) + lhs_free.index(ld)
    rhs_free = _free_dims(get_aval(rhs).ndim, rc_, rb_)
    n_lhs_free = len(_free_dims(get_aval(lhs).ndim, lc, lb))
    return out, len(lb) + n_lhs_free + rhs_free.index(rd)


def _dot_general_print(params):
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    shown = {"dimension_numbers": f"(({list(lc)}, {list(rc)}), ({list(lb)}, {list(rb)}))"}
    # out_sharding is not shown: the result's type says it (as JAX prints it)
    for name in ("precision", "preferred_element_type"):
        if params[name] is not None:
            shown[name] = params[name]
    return shown


dot_general_p = define_primitive(
    "dot_general",
    abstract_eval=_dot_general_abstract_eval,
    reference=_dot_general_reference,
    jvp=jvp_from(
        lambda t, ans, x, y, **p: dot_general_p.bind(t, y, **p),
        lambda t, ans, x, y, **p: dot_general_p.bind(x, t, **p),
    ),
    transpose=_dot_general_transpose,
    batch=_dot_general_batch,
    print_params=_dot_general_print,
)

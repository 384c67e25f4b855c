"""`einsum` and `einsum_path`, with a greedy contraction-order optimiser of our own.

How `einsum` runs: the subscripts are parsed (ellipses become fresh labels), operands are
promoted to a common dtype, repeated labels within one operand become diagonals, and labels
that occur in a single operand and not in the output are summed away. Then, while more than
one operand is left, the optimiser picks the pair whose contraction is cheapest by the greedy
rule (the smallest result; ties broken by the largest reduction in total size, then by
position) and contracts it with one `lax.dot_general` (shared labels still needed later are
batch dimensions, the others are contracted). A final transpose puts the labels in output
order.
"""

from __future__ import annotations

import itertools
import math
import string

import numpy as np

from laminax_core import _shape_poly, lax
from laminax_core._avals import get_aval
from laminax_core._sharding_rules import requested_sharding
from laminax_core.numpy._linalg_products import diagonal
from laminax_core.numpy._operands import (
    as_array,
    broadcast_to_shape,
    check_arraylike,
    promote_dtypes,
)

__all__ = ["einsum", "einsum_path", "greedy_path"]

_LETTERS = string.ascii_letters


def _parse_interleaved(args):
    """`einsum(x, [0, 1], y, [1, 2], [0, 2])` as `("ab,bc->ac", [x, y])`."""
    args = list(args)
    output = args.pop() if len(args) % 2 == 1 else None
    arrays, subscripts = args[0::2], args[1::2]

    def letters(sub):
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sub)

    spec = ",".join(letters(s) for s in subscripts)
    if output is not None:
        spec += "->" + letters(output)
    return spec, arrays


def _split_spec(spec: str, shapes):
    spec = spec.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"jnp.einsum: the subscripts {spec!r} name {len(terms)} operands, but "
                         f"{len(shapes)} were given.")
    used = set(spec) - set(".,->")
    for ch in used:
        if ch not in _LETTERS:
            raise ValueError(f"jnp.einsum: invalid subscript character {ch!r} in {spec!r}; use "
                             "letters.")
    fresh = (c for c in _LETTERS[::-1] if c not in used)
    ellipsis_labels = ""
    expanded = []
    for term, shape in zip(terms, shapes, strict=True):
        if "..." in term:
            n_named = len(term.replace("...", ""))
            n_ellipsis = len(shape) - n_named
            if n_ellipsis < 0:
                raise ValueError(f"jnp.einsum: term {term!r} has more labels than the operand "
                                 f"of shape {shape} has dimensions.")
            while len(ellipsis_labels) < n_ellipsis:
                ellipsis_labels = next(fresh) + ellipsis_labels
            term = term.replace("...", ellipsis_labels[len(ellipsis_labels) - n_ellipsis:])
        if len(term) != len(shape):
            raise ValueError(f"jnp.einsum: term {term!r} has {len(term)} labels for an operand "
                             f"of shape {shape}.")
        within = {}
        for ch, d in zip(term, shape, strict=True):
            # a label repeated in one operand takes its diagonal: the sizes must agree (no
            # broadcasting there, as in JAX and NumPy)
            if within.setdefault(ch, d) != d:
                raise ValueError(f"jnp.einsum: label {ch!r} of term {term!r} has sizes "
                                 f"{within[ch]} and {d} in the operand of shape {shape}; a "
                                 "repeated label needs equal sizes (a diagonal).")
        expanded.append(term)
    if arrow:
        output = output.replace("...", ellipsis_labels)
    else:
        counts = {}
        for term in expanded:
            for ch in term:
                counts[ch] = counts.get(ch, 0) + 1
        named = sorted(ch for ch, n in counts.items() if n == 1 and ch not in ellipsis_labels)
        output = ellipsis_labels + "".join(named)
    for ch in output:
        if not any(ch in term for term in expanded):
            raise ValueError(f"jnp.einsum: output label {ch!r} does not occur in any input.")
    if len(set(output)) != len(output):
        raise ValueError(f"jnp.einsum: output labels {output!r} repeat a label.")
    return expanded, output


def _label_sizes(terms, shapes):
    sizes = {}
    for term, shape in zip(terms, shapes, strict=True):
        for ch, d in zip(term, shape, strict=True):
            if sizes.setdefault(ch, d) != d and 1 not in (d, sizes[ch]):
                raise ValueError(f"jnp.einsum: label {ch!r} has sizes {sizes[ch]} and {d} in "
                                 "different operands.")
            sizes[ch] = _shape_poly.max_dim(sizes[ch], d)
    return sizes


def _size(labels, sizes) -> int:
    # a symbolic dimension counts as 8 when choosing the contraction order (only the order
    # depends on it)
    return math.prod(s if isinstance(s, int) else 8 for s in (sizes[c] for c in labels))


def greedy_path(terms, output, sizes):
    """The greedy contraction order: a list of index pairs into the shrinking operand list.

    Each step contracts the pair with the smallest result (labels kept: those shared with the
    remaining operands or the output); ties go to the larger reduction in total size.
    """
    terms = [set(t) for t in terms]
    path = []
    while len(terms) > 1:
        best = None
        for i, j in itertools.combinations(range(len(terms)), 2):
            others = set(output).union(*(t for k, t in enumerate(terms) if k not in (i, j)))
            result = (terms[i] | terms[j]) & others
            cost = _size(result, sizes)
            removed = _size(terms[i], sizes) + _size(terms[j], sizes) - cost
            key = (cost, -removed, i, j)
            if best is None or key < best[0]:
                best = (key, (i, j), result)
        _, (i, j), result = best
        path.append((i, j))
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [result]
    return path


def _diagonalize(x, term):
    """Repeated labels of one operand replaced by their diagonal."""
    while len(set(term)) != len(term):
        ch = next(c for c in term if term.count(c) > 1)
        first = term.index(ch)
        second = term.index(ch, first + 1)
        x = diagonal(x, 0, first, second)
        term = "".join(c for k, c in enumerate(term) if k not in (first, second)) + ch
    return x, term


def _sum_labels(x, term, keep):
    axes = tuple(k for k, c in enumerate(term) if c not in keep)
    if not axes:
        return x, term
    return lax.reduce_sum(x, axes), "".join(c for c in term if c in keep)


def _contract_pair(x, tx, y, ty, keep, preferred, precision, output=None, out_sharding=None):
    x, tx = _sum_labels(x, tx, set(ty) | keep)
    y, ty = _sum_labels(y, ty, set(tx) | keep)
    batch = [c for c in tx if c in ty and c in keep]
    contract = [c for c in tx if c in ty and c not in keep]
    if output is not None:
        # the last contraction, laid out as JAX's einsum does: batch labels in output order,
        # contracted ones sorted, and `y` first when `x` first would need a transpose after
        batch = [c for c in output if c in batch]
        contract = sorted(contract)
        free_x = [c for c in tx if c not in ty]
        free_y = [c for c in ty if c not in tx]
        if "".join(batch + free_x + free_y) != output:
            x, tx, y, ty = y, ty, x, tx
    dims = (((tuple(tx.index(c) for c in contract), tuple(ty.index(c) for c in contract)),
             (tuple(tx.index(c) for c in batch), tuple(ty.index(c) for c in batch))))
    x_shape, y_shape = get_aval(x).shape, get_aval(y).shape
    for c in batch + contract:
        if x_shape[tx.index(c)] != y_shape[ty.index(c)]:
            x, y = _broadcast_label(x, tx, y, ty, c)
            x_shape, y_shape = get_aval(x).shape, get_aval(y).shape
    free_x = [c for c in tx if c not in ty]
    free_y = [c for c in ty if c not in tx]
    term = "".join(batch + free_x + free_y)
    if out_sharding is not None:  # the result's layout, in the product's label order
        typed = requested_sharding(out_sharding, len(output))
        if typed is not None:
            out_sharding = typed.with_aval_partitions(
                tuple(typed.aval_partitions[output.index(c)] for c in term))
    out = lax.dot_general(x, y, dims, precision=precision, preferred_element_type=preferred,
                          out_sharding=out_sharding)
    return out, term


def _unsplit(x, out_sharding, out_ndim):
    """`x` typed unsplit on the mesh of `out_sharding` (a replicated layout)."""
    aval = get_aval(x)
    if aval.sharding is None:
        return x
    typed = requested_sharding(out_sharding, out_ndim)
    replicated = out_sharding if typed is None else typed.with_aval_partitions((None,) * aval.ndim)
    return lax.reshape(x, aval.shape, out_sharding=replicated)


def _broadcast_label(x, tx, y, ty, c):
    n = max(get_aval(x).shape[tx.index(c)], get_aval(y).shape[ty.index(c)])
    xs = list(get_aval(x).shape)
    ys = list(get_aval(y).shape)
    xs[tx.index(c)] = ys[ty.index(c)] = n
    return broadcast_to_shape(x, xs), broadcast_to_shape(y, ys)


def _prepare(name, subscripts, operands):
    if not isinstance(subscripts, str):
        subscripts, operands = _parse_interleaved((subscripts, *operands))
    check_arraylike(name, *operands)
    arrays = [as_array(o) for o in operands]
    arrays = promote_dtypes(*arrays) if len(arrays) > 1 else arrays
    terms, output = _split_spec(subscripts, [get_aval(a).shape for a in arrays])
    return arrays, terms, output


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None, out_sharding=None):
    """Einstein summation over the operands, as `subscripts` describes.

    Args:
      subscripts: e.g. "ij,jk->ik"; "..." stands for broadcast leading dims; without "->"
        the output holds the labels that occur once, sorted. The interleaved form
        `einsum(x, [0, 1], y, [1, 2], [0, 2])` is accepted too.
      *operands: the arrays.
      out: unsupported; must be None.
      optimize: "auto", "greedy", "optimal", True (all use the greedy order here) or False
        (contract left to right).
      precision: passed to `lax.dot_general`.
      preferred_element_type: the accumulation and result dtype (default: the promoted one).
      out_sharding: the result's layout on a mesh with Explicit axes: the product's when one
        contraction makes the result (as JAX's), else the result's type is cast to it.

    Returns:
      The result.

    Example:
      >>> einsum("ij,jk->ik", np.ones((2, 3)), np.ones((3, 4))).shape
      (2, 4)
    """
    if out is not None:
        raise NotImplementedError("jnp.einsum: the out argument is not supported.")
    arrays, terms, output = _prepare("einsum", subscripts, operands)
    preferred = preferred_element_type or get_aval(arrays[0]).dtype
    arrays = list(arrays)
    for k, (x, t) in enumerate(zip(arrays, terms, strict=True)):
        x, t = _diagonalize(x, t)
        others = set(output).union(*(terms[m] for m in range(len(terms)) if m != k))
        arrays[k], terms[k] = _sum_labels(x, t, others)
    sizes = _label_sizes(terms, [get_aval(a).shape for a in arrays])
    if optimize is False:
        path = [(0, 1)] * (len(arrays) - 1)
    else:
        path = greedy_path(terms, output, sizes)
    # one contraction giving the whole result carries the layout (JAX's einsum too); other
    # einsums compute on unsplit operands (JAX: in auto mode) and lay the result out at the end
    direct = None
    if out_sharding is not None and len(path) == 1:
        tx, ty = terms[path[0][0]], terms[path[0][1]]
        if set(tx) | set(ty) == set(output) | (set(tx) & set(ty)):
            direct = out_sharding
    if out_sharding is not None and direct is None:
        arrays = [_unsplit(a, out_sharding, len(output)) for a in arrays]
    for i, j in path:
        x, tx, y, ty = arrays[i], terms[i], arrays[j], terms[j]
        rest = [k for k in range(len(arrays)) if k not in (i, j)]
        keep = set(output).union(*(terms[k] for k in rest))
        last = output if not rest else None
        z, tz = _contract_pair(x, tx, y, ty, keep, preferred, precision, last, direct)
        arrays = [arrays[k] for k in rest] + [z]
        terms = [terms[k] for k in rest] + [tz]
    (result,), (term,) = arrays, terms
    result, term = _sum_labels(result, term, set(output))
    if term != output:
        result = lax.transpose(result, tuple(term.index(c) for c in output))
    if get_aval(result).dtype != np.dtype(preferred):
        result = lax.convert_element_type(result, preferred)
    if out_sharding is not None and direct is None:
        result = lax.reshape(result, get_aval(result).shape, out_sharding=out_sharding)
    return result


def einsum_path(subscripts, /, *operands, optimize="greedy"):
    """The contraction order `einsum` uses, and a description of it.

    Returns:
      `(path, description)`: `path` is `["einsum_path", (i, j), ...]`, each pair indexing the
      current operand list (contracted operands are removed; the result is appended).

    Example:
      >>> einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)))[0]
      ['einsum_path', (0, 1), (0, 1)]
    """
    arrays, terms, output = _prepare("einsum_path", subscripts, operands)
    sizes = _label_sizes(terms, [get_aval(a).shape for a in arrays])
    path = greedy_path(terms, output, sizes) if optimize is not False else \
        [(0, 1)] * (len(arrays) - 1)
    lines = [f"  Complete contraction:  {','.join(terms)}->{output}",
             f"  Optimizer: greedy, {len(path)} pairwise contraction(s)"]
    return ["einsum_path", *path], "\n".join(lines)

"""Ops on sparse COO tensors: sums, softmax, masks, transposes, and the elementwise add/mul
PyTorch defines between sparse and dense operands (products are in products.py).

Each op computes on the arrays of its operands' indices and values and records one graph node
(`_graph.record`) whose VJP is written in ember ops; the gradient reaching a sparse input is
sparse where PyTorch's is (sparse.mm, to_dense, sum, softmax) and dense where PyTorch's is
(torch.mm, dense + sparse).
"""
import numbers

import numpy as np

from .. import _constants
from .. import _dtype as dt
from .._inplace import bump_version
from .._tensor import Tensor, _wrap
from ..backends import array_module
from ..ops.registry import defop
from ._graph import for_input, record, values_at
from .coo import coalesce, coalesced_arrays, dense_array, linear_index, make_coo
from .pointwise import values_of

__all__ = ["sparse_mask", "transpose", "sum", "softmax", "log_softmax", "add", "mul", "div",
           "neg", "accumulate_grad"]


def _unrecorded(*args, **kwargs):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


def _is_sparse(x):
    return isinstance(x, Tensor) and x.is_sparse


def _coalesced_parts(x):
    """(indices array, values array) of `x` coalesced, without recording anything."""
    if x._coalesced:
        return x._sparse_indices._data, x._sparse_values._data
    return coalesced_arrays(x._sparse_indices._data, x._sparse_values._data,
                            x.shape[:x.sparse_dim()])


def _on_coordinates(x, values):
    """A coalesced sparse tensor with x's coalesced coordinates and `values` (graph-linked)."""
    c = coalesce(x.detach())
    return make_coo(c._sparse_indices, values, x.shape, True, values_grad=True)


# ---------------------------------------------------------------------- sparse_mask
def sparse_mask(input, mask):
    """`input`'s entries at `mask`'s (coalesced) coordinates, as a sparse tensor."""
    if mask.layout is _constants.strided:   # (PyTorch's dispatcher has no kernel for it)
        raise NotImplementedError("Could not run 'aten::sparse_mask' with arguments from the "
                                  "'CPU' backend: the mask must be sparse, not strided "
                                  "(mask.to_sparse() makes one).")
    if not _is_sparse(mask):
        raise RuntimeError(f"sparse_mask expects mask to be sparse COO, got {mask.layout}")
    if tuple(input.shape) != tuple(mask.shape):
        raise RuntimeError("sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(input.shape)} but mask has size {list(mask.shape)}")
    c = coalesce(mask.detach())
    # (indexing the dense input is an ember op: its gradient and double backward come free)
    return make_coo(c._sparse_indices, values_at(input, c._sparse_indices), input.shape,
                    True, values_grad=True)


# ---------------------------------------------------------------------- transpose
@defop("sparse_transpose", node="TransposeBackward0", save=())
def _transpose(x):
    _unrecorded()


@_transpose.defvjp
def _transpose_vjp(ctx, g):
    d0, d1 = ctx.params["dims"]
    return transpose(g, d0, d1) if _is_sparse(g) else g.transpose(d0, d1)


def transpose(x, dim0, dim1):
    n = x.dim()
    dim0, dim1 = dim0 % n if n else 0, dim1 % n if n else 0
    sd = x.sparse_dim()
    if dim0 >= sd or dim1 >= sd:
        raise NotImplementedError("ember does not support transposing the dense dimensions "
                                  "of a hybrid sparse tensor")
    order = list(range(sd))
    order[dim0], order[dim1] = order[dim1], order[dim0]
    shape = list(x.shape)
    shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
    indices = _wrap(x._sparse_indices._data[order], dt.int64, x._device)
    out = make_coo(indices, x._sparse_values.detach(), shape, False)
    return record(_transpose, (x,), out, {"dims": (dim0, dim1)})


# ---------------------------------------------------------------------- sum
def _dims(dim, n):
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    out = sorted({d % n if n else 0 for d in dims})
    return out


@defop("sparse_sum", node="SparseSumBackward0", save=(0,))
def _sparse_sum(x):
    _unrecorded()


@_sparse_sum.defvjp
def _sparse_sum_vjp(ctx, g):
    x = ctx.inputs[0]
    kept_sparse, summed_dense = ctx.params["kept"], ctx.params["summed_dense"]
    c = coalesce(x.detach())
    if _is_sparse(g):
        g = g.to_dense()
    if kept_sparse:
        gv = g[tuple(c._sparse_indices[k] for k in kept_sparse)]
    else:
        gv = g.unsqueeze(0)
    for d in summed_dense:   # (positions within the values' dims, ascending)
        gv = gv.unsqueeze(d)
    return _on_coordinates(x, gv.expand(tuple(c._sparse_values.shape)))


def sum(input, dim=None, dtype=None):
    """torch.sparse.sum: a dense 0-d tensor without dim; else sparse while a sparse dim is
    left, dense once every sparse dim is summed."""
    if dtype is not None:
        input = input.to(dtype)
    elif dim is None and input.dtype.category < dt.FLOATING:
        # NOTE: without dim PyTorch sums the coalesced values (a bool tensor's repeated
        # entries count once), in int64 as a dense sum would; not differentiable.
        values = coalesce(input.detach())._sparse_values
        total = values._data.astype(np.int64).sum(axis=0)
        return _wrap(np.asarray(total), dt.int64, input._device)
    sd = input.sparse_dim()
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = _dims(dim, input.dim())
    kept = [d for d in range(sd) if d not in dims]
    summed_dense = [d - sd + 1 for d in dims if d >= sd]
    vals = input._sparse_values._data
    if summed_dense:   # (integer sums wrap in the input's dtype; bool ones are an "or")
        vals = vals.sum(axis=tuple(summed_dense)).astype(vals.dtype, copy=False)
    params = {"kept": kept, "summed_dense": summed_dense}
    if kept:
        idx = input._sparse_indices._data[kept]
        shape = [input.shape[d] for d in kept]
        new_idx, new_vals = coalesced_arrays(idx, vals, shape)
        dense_shape = [s for d, s in enumerate(input.shape) if d >= sd and d not in dims]
        out = make_coo(_wrap(new_idx, dt.int64, input._device),
                       _wrap(new_vals, input.dtype, input._device), shape + dense_shape, True)
        return record(_sparse_sum, (input,), out, params)
    # (a dense result of integers or bools is int64, as PyTorch's; the raw values summed)
    result_dtype = dt.int64 if input.dtype.category < dt.FLOATING else input.dtype
    out = _wrap(np.asarray(vals.sum(axis=0)).astype(result_dtype.np), result_dtype,
                input._device)
    if dim is None:
        return record(_sparse_sum.renamed("SumBackward0"), (input,), out, params)
    return record(_sparse_sum, (input,), out, params)


# ---------------------------------------------------------------------- softmax
@defop("sparse_softmax", node="SparseSoftmaxBackward0", save=())
def _sparse_softmax(x):
    _unrecorded()


@_sparse_softmax.defvjp
def _sparse_softmax_vjp(ctx, g):
    p = ctx.params
    y, group, out_indices = p["output"], p["group"], p["indices"]
    gv = values_at(g, out_indices)
    zeros = y.new_zeros((p["groups"],) + tuple(y.shape[1:]))
    if p["log"]:
        total = zeros.index_add(0, group, gv)
        dx = gv - y.exp() * total.index_select(0, group)
    else:
        total = zeros.index_add(0, group, gv * y)
        dx = y * (gv - total.index_select(0, group))
    return make_coo(out_indices, dx, ctx.in_meta[0][0], True, values_grad=True)


def _softmax(input, dim, dtype, log):
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{"log_" if log else ""}softmax" not implemented for '
                                  f"'{dt.type_name(input.dtype)}'")
    n = input.dim()
    dim = dim % n if n else 0
    sd = input.sparse_dim()
    if dim >= sd:   # a dense dim: an ordinary softmax of the (coalesced) values
        c = coalesce(input)
        values = values_of(c)   # (differentiable with respect to the sparse input)
        fn = values.log_softmax if log else values.softmax
        return make_coo(c._sparse_indices, fn(dim - sd + 1), input.shape, True,
                        values_grad=True)
    idx, vals = _coalesced_parts(input)
    xp = array_module(idx, vals)
    others = [d for d in range(sd) if d != dim]
    key = linear_index(idx[others], [input.shape[d] for d in others])
    uniq, group = xp.unique(key, return_inverse=True)
    group = group.reshape(-1)
    top = xp.full((uniq.shape[0],) + vals.shape[1:], -np.inf, dtype=vals.dtype)
    xp.maximum.at(top, group, vals)
    shifted = vals - top[group]   # NOTE: max-shifted, so exp cannot overflow
    e = xp.exp(shifted)
    total = xp.zeros_like(top)
    xp.add.at(total, group, e)
    out_vals = shifted - xp.log(total)[group] if log else e / total[group]
    indices = _wrap(idx, dt.int64, input._device)
    values = _wrap(out_vals.astype(vals.dtype, copy=False), input.dtype, input._device)
    out = make_coo(indices, values, input.shape, True)
    op = _sparse_softmax.renamed("SparseLogSoftmaxBackward0") if log else _sparse_softmax
    params = {"output": values, "group": _wrap(group.astype(np.int64), dt.int64,
                                               input._device),
              "groups": int(uniq.shape[0]), "indices": indices, "log": log}
    return record(op, (input,), out, params)


def softmax(input, dim, dtype=None):
    """torch.sparse.softmax: over the specified entries along `dim` (others count as -inf)."""
    return _softmax(input, dim, dtype, False)


def log_softmax(input, dim, dtype=None):
    return _softmax(input, dim, dtype, True)


# ---------------------------------------------------------------------- add, mul, div
@defop("sparse_add", node="AddBackward0", save=())
def _add(a, b):
    _unrecorded()


@_add.defvjp
def _add_vjp(ctx, g):
    alpha = ctx.params["alpha"]
    return g, (g if alpha == 1 else mul(g, alpha))


def _check_same_shape(a, b, what):
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"{what}: expected 'self' and 'other' to have same size, but self "
                           f"has size {list(a.shape)} while other has size {list(b.shape)} "
                           "(FYI: dense-sparse addition does not currently support "
                           "broadcasting)")


def add(input, other, *, alpha=1):
    """sparse + sparse -> sparse (PyTorch's merge of the coordinate lists);
    dense + sparse -> dense; sparse + dense is PyTorch's error."""
    if not isinstance(other, Tensor):
        raise RuntimeError("add(sparse, scalar) is not supported by ember: only sparse "
                           "+ sparse and dense + sparse are defined")
    if _is_sparse(input) and not _is_sparse(other):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")
    result_dtype = dt.result_type(input, other)
    if not _is_sparse(input):
        _check_same_shape(input, other, "add")
        dense = dense_array(other)
        out = input._data.astype(result_dtype.np) + (dense * alpha if alpha != 1 else dense)
        return record(_add, (input, other), _wrap(out.astype(result_dtype.np, copy=False),
                                                  result_dtype, input._device),
                      {"alpha": alpha})
    _check_same_shape(input, other, "add")
    if input.sparse_dim() != other.sparse_dim():
        raise NotImplementedError("ember does not support adding sparse tensors with "
                                  "different sparse_dim")
    idx, vals = _merged_sum(input, other, alpha, result_dtype)
    out = make_coo(_wrap(idx, dt.int64, input._device), _wrap(vals, result_dtype, input._device),
                   input.shape, input._coalesced and other._coalesced)
    return record(_add, (input, other), out, {"alpha": alpha})


def _merged_sum(a, b, alpha, result_dtype):
    """PyTorch's sparse + sparse: one pass of a two-pointer merge over both coordinate lists
    as they are stored, summing a pair whose coordinates meet (so coalesced operands give a
    coalesced sum, and the entry order of uncoalesced ones matches PyTorch's)."""
    shape = a.shape[:a.sparse_dim()]
    ia_, ib_ = a._sparse_indices._data, b._sparse_indices._data
    ka, kb = linear_index(ia_, shape).tolist(), linear_index(ib_, shape).tolist()
    pos_a, pos_b = [], []
    i = j = 0
    while i < len(ka) and j < len(kb):
        if ka[i] < kb[j]:
            pos_a.append(i), pos_b.append(-1)
            i += 1
        elif ka[i] > kb[j]:
            pos_a.append(-1), pos_b.append(j)
            j += 1
        else:
            pos_a.append(i), pos_b.append(j)
            i, j = i + 1, j + 1
    pos_a += list(range(i, len(ka))) + [-1] * (len(kb) - j)
    pos_b += [-1] * (len(ka) - i) + list(range(j, len(kb)))
    pos_a, pos_b = np.asarray(pos_a, np.int64), np.asarray(pos_b, np.int64)
    in_a, in_b = pos_a >= 0, pos_b >= 0
    va = a._sparse_values._data.astype(result_dtype.np, copy=False)
    vb = b._sparse_values._data.astype(result_dtype.np, copy=False)
    vals = np.zeros((len(pos_a),) + va.shape[1:], dtype=result_dtype.np)
    vals[in_a] = va[pos_a[in_a]]
    vals[in_b] += vb[pos_b[in_b]] * alpha if alpha != 1 else vb[pos_b[in_b]]
    idx = np.where(in_a, ia_[:, np.maximum(pos_a, 0)], ib_[:, np.maximum(pos_b, 0)]) \
        if len(pos_a) else np.zeros((ia_.shape[0], 0), np.int64)
    return idx, vals


@defop("sparse_mul", node="MulBackward0", save=())
def _mul(a, b):
    _unrecorded()


@_mul.defvjp
def _mul_vjp(ctx, g):
    p = ctx.params
    e = ctx.edges
    kind = p["kind"]
    if kind == "scalar":
        return mul(g, p["scalar"]), None
    if kind == "dense":   # sparse s * dense d: s's coordinates, values s_v * d[coords]
        s, d = p["sparse"], p["dense"]
        gv = values_at(g, p["indices"])
        gs = None
        if e[p["sparse_pos"]] is not None:
            # NOTE: on s's coalesced coordinates: a repeated coordinate must get the gradient
            # once, or the sparse gradient would stand for a multiple of it.
            c = coalesce(s)._sparse_indices
            gs = _on_coordinates(s, values_at(g, c) * values_at(d, c))
        # (the dense factor's gradient is sparse too in PyTorch, on s's coordinates)
        gd = make_coo(p["indices"], gv * s._sparse_values, s.shape, s._coalesced,
                      values_grad=True) if e[1 - p["sparse_pos"]] is not None else None
        if gd is not None:
            gd = for_input(ctx, 1 - p["sparse_pos"], gd)
        return (gs, gd) if p["sparse_pos"] == 0 else (gd, gs)
    # sparse * sparse: the product lives on the common coordinates
    gv = values_at(g, p["indices"])
    shape = ctx.in_meta[0][0]
    ga = make_coo(p["indices"], gv * p["b_values"], shape, True, values_grad=True)
    gb = make_coo(p["indices"], gv * p["a_values"], shape, True, values_grad=True)
    return ga, gb


def mul(input, other):
    """sparse * scalar, sparse * dense (same shape) and sparse * sparse, all sparse."""
    if not _is_sparse(input):
        input, other = other, input
    if not isinstance(other, Tensor) or (other.dim() == 0 and not other.is_sparse):
        scalar = other.item() if isinstance(other, Tensor) else other
        values = input._sparse_values._data * scalar
        result_dtype = dt.result_type(input, other)
        out = make_coo(input._sparse_indices,
                       _wrap(values.astype(result_dtype.np, copy=False), result_dtype,
                             input._device), input.shape, input._coalesced)
        return record(_mul, (input, other), out, {"kind": "scalar", "scalar": scalar})
    _check_same_shape(input, other, "mul")
    result_dtype = dt.result_type(input, other)
    if not _is_sparse(other):
        indices = input._sparse_indices
        picked = other._data[tuple(indices._data)]
        values = (input._sparse_values._data * picked).astype(result_dtype.np, copy=False)
        out = make_coo(indices, _wrap(values, result_dtype, input._device), input.shape,
                       input._coalesced)
        params = {"kind": "dense", "sparse": input.detach(), "dense": other.detach(),
                  "indices": indices, "sparse_pos": 0}
        return record(_mul, (input, other), out, params)
    ia, va = _coalesced_parts(input)
    ib, vb = _coalesced_parts(other)
    shape = input.shape[:input.sparse_dim()]
    common, pa, pb = np.intersect1d(linear_index(ia, shape), linear_index(ib, shape),
                                    assume_unique=True, return_indices=True)
    del common
    values = (va[pa] * vb[pb]).astype(result_dtype.np, copy=False)
    indices = _wrap(ia[:, pa], dt.int64, input._device)
    out = make_coo(indices, _wrap(values, result_dtype, input._device), input.shape, True)
    params = {"kind": "sparse", "indices": indices,
              "a_values": _wrap(va[pa], input.dtype, input._device),
              "b_values": _wrap(vb[pb], other.dtype, other._device)}
    return record(_mul, (input, other), out, params)


def div(input, other):
    if isinstance(other, Tensor) and (other.is_sparse or other.dim() != 0):
        raise NotImplementedError("ember does not support dividing a sparse tensor by a "
                                  "tensor: only by a scalar")
    scalar = other.item() if isinstance(other, Tensor) else other
    return mul(input, 1.0 / scalar) if input.dtype.category >= dt.FLOATING else \
        mul(input.to(dt.get_default_dtype()), 1.0 / scalar)


def neg(input):
    return mul(input, -1)


# ---------------------------------------------------------------------- gradient accumulation
def accumulate_grad(existing, grad, create_graph):
    """A leaf's .grad after a new gradient arrives, where either one is sparse (PyTorch's
    rules: dense += sparse in place; sparse + sparse concatenates; sparse + dense is dense)."""
    if existing is None:
        return grad
    if existing.layout is _constants.strided:
        if create_graph:
            return existing + grad
        if grad.is_sparse:   # (only the entries: no dense copy of the gradient)
            values = grad._sparse_values._data.astype(existing._data.dtype, copy=False)
            array_module(values).add.at(existing._data, tuple(grad._sparse_indices._data),
                                        values)
        else:
            existing._data += grad.to_dense()._data.astype(existing._data.dtype, copy=False)
        bump_version(existing)
        return existing
    if grad.layout is not _constants.strided:
        return existing + grad
    return grad + existing

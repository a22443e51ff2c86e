"""ember.masked (torch.masked): reductions and normalizations that ignore masked-out elements.

Each function follows torch/masked/_ops.py for strided tensors: masked-out elements are
replaced by the operation's identity (0 for sum, 1 for prod, -inf or the dtype's minimum for
amax and softmax, ...) before the ordinary op runs, so a fully masked-out slice gives the
identity (sum 0, amax -inf) or nan where there is none (mean, var, median); the mask
broadcasts to the input's shape. `mask=None` means every element counts.

MaskedTensor (a prototype in PyTorch) is not here: `is_masked_tensor` is always False.
"""
import builtins

import ember

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "is_masked_tensor",
           "log_softmax", "logaddexp", "logsumexp", "mean", "median", "norm", "normalize",
           "prod", "softmax", "softmin", "std", "sum", "var"]

_WIDENED = ("uint8", "bool", "int8", "int16", "int32")   # sum/prod accumulate these in int64


def is_masked_tensor(obj):
    return False


def _canonical_dim(dim, ndim):
    """`dim` as a sorted tuple of non-negative dims (None and () mean all)."""
    if dim == () or dim is None:
        return tuple(range(ndim))
    ndim = builtins.max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input, mask):
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = ember.broadcast_to(mask.clone(), input.shape)
    return mask.to(dtype=ember.bool)


def _identity(op, input, ord=None):
    d = input.dtype
    if op in ("sum", "cumsum"):
        return ember.tensor(0, dtype=d)
    if op in ("prod", "cumprod"):
        return ember.tensor(1, dtype=d)
    if op in ("amax", "argmax", "logaddexp", "logsumexp"):
        if d.is_floating_point or (op == "logsumexp" and d.is_complex):
            return ember.tensor(-ember.inf, dtype=d)
        if d.is_signed or d is ember.uint8:
            return ember.tensor(ember.iinfo(d).min, dtype=d)
    if op in ("amin", "argmin"):
        if d.is_floating_point:
            return ember.tensor(ember.inf, dtype=d)
        if d.is_signed or d is ember.uint8:
            return ember.tensor(ember.iinfo(d).max, dtype=d)
    if op == "norm":
        return ember.tensor(ember.inf if ord == float("-inf") else 0, dtype=d)
    if op == "median":
        return ember.tensor(ember.nan, dtype=d if d.is_floating_point else ember.float32)
    raise NotImplementedError(f"identity of {op} on {d} input")


def _combine(op, input, mask, ord=None):
    if mask is None:
        return input
    return ember.where(_input_mask(input, mask), input, _identity(op, input, ord))


def _sum_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return ember.int64 if input.dtype.name in _WIDENED else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return ember.sum(_combine("sum", input, mask), dims, builtins.bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    result = _combine("prod", input, mask).to(dtype=dtype)
    for d in reversed(_canonical_dim(dim, input.ndim)):
        result = result.prod(dim=d, keepdim=builtins.bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return ember.cumsum(_combine("sum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return ember.cumprod(_combine("prod", input, mask), d, dtype=dtype).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    masked = _combine("amax", input, mask)
    return ember.amax(masked, _canonical_dim(dim, masked.ndim),
                      builtins.bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    masked = _combine("amin", input, mask)
    return ember.amin(masked, _canonical_dim(dim, masked.ndim),
                      builtins.bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return ember.argmax(_combine("argmax", input, mask), dim,
                        builtins.bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return ember.argmin(_combine("argmin", input, mask), dim,
                        builtins.bool(keepdim)).to(dtype=dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    if mask is None:
        count = sum(ember.ones(input.shape, dtype=ember.int64), dim, keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dim=dim, keepdim=builtins.bool(keepdim))
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=ember.float32)
    output = ember.nanmedian(_combine("median", input, mask), d, keepdim).values
    if is_float:
        return output
    if not ember.isnan(output).any():
        return output.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating "
                     "point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return ember.logsumexp(_combine("logsumexp", input, mask), dims,
                           keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    dtype = input.dtype if dtype is None else dtype
    return ember.logaddexp(_combine("logaddexp", input, input_mask),
                           _combine("logaddexp", other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    masked = _combine("norm", input, mask, ord)
    return ember.linalg.vector_norm(masked, ord, _canonical_dim(dim, input.ndim),
                                    builtins.bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction_opt, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = builtins.float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = ember.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else ember.float32
    if mask is None:
        inmask = None
        count = sum(ember.ones(input.shape, dtype=ember.int64), dim, keepdim=True)
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dim=dim, keepdim=True)
    sample_mean = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask) / count
    x = input - sample_mean
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        count = count.to(compute.to_real())
        count = ember.maximum(count - correction, count.new_zeros([]))
    output = (total / count).to(dtype=dtype)
    return ember.sqrt(output) if take_sqrt else output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return ember.nn.functional.softmax(_combine("amax", input, mask), d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return ember.nn.functional.log_softmax(_combine("amax", input, mask), d, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return ember.nn.functional.softmin(_combine("amin", input, mask), d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    masked = _combine("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return masked / ember.maximum(nrm, nrm.new_full([], eps))

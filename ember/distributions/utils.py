"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits."""
import numbers
from functools import update_wrapper

import ember

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs",
           "lazy_property", "standard_normal", "euler_constant", "vec_to_tril_matrix",
           "tril_matrix_to_vec"]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Tensors of one broadcast shape; Python numbers become tensors of the tensors' dtype
    (the default dtype when all are numbers)."""
    if not all(isinstance(v, (ember.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, ember.Tensor) for v in values):
        ref = next((v for v in values if isinstance(v, ember.Tensor)), None)
        dtype = ref.dtype if ref is not None else ember.get_default_dtype()
        device = ref.device if ref is not None else None
        values = [v if isinstance(v, ember.Tensor)
                  else ember.tensor(v, dtype=dtype, device=device) for v in values]
    return ember.broadcast_tensors(*values)


def probs_or_logits(dist, probs, logits, *others):
    """Store whichever of `probs` and `logits` is given (PyTorch's error unless exactly one
    is), broadcast with `others` (such as total_count), as that attribute of `dist` and as
    `dist._param`. Returns `others` broadcast and cast to the parameter's dtype."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    *others, param = broadcast_all(*others, logits if probs is None else probs)
    setattr(dist, "logits" if probs is None else "probs", param)
    dist._param = param
    return [other.type_as(param) for other in others]


def standard_normal(shape, dtype, device):
    """N(0, 1) draws consumed from the stream as PyTorch's `empty(shape).normal_()`."""
    return ember.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return ember.sigmoid(logits)
    return ember.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Probabilities kept one epsilon away from 0 and 1 (so their logs are finite)."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps = clamp_probs(probs)
    if is_binary:
        return ember.log(ps) - ember.log1p(-ps)
    return ember.log(ps)


class lazy_property:
    """A property computed once per instance and stored (probs from logits and back)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class BinaryProbs:
    """The two-class parameter pair of Bernoulli-like distributions: whichever of `probs` and
    `logits` was not given is computed from the other on first use."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_flat_positions(n, diag, device=None):
    """Row-major positions (i * n + j) of the entries of an n x n matrix with j - i <= diag."""
    rows, cols = ember.tril_indices(n, n, offset=diag, device=device)
    return rows * n + cols


def vec_to_tril_matrix(vec, diag=0):
    """The lower triangle (on and below diagonal `diag`) of square matrices, filled row by row
    from the last dim of `vec`; the rest is zero. Differentiable in `vec`."""
    k = vec.shape[-1]
    b = 1 + 2 * diag
    n = (-b + (b * b + 8 * k + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > ember.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {k} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    # NOTE: a gather from vec padded by one zero, rather than a masked write, keeps the graph
    # to one indexing op (its VJP scatters back)
    source = ember.full((n * n,), k, dtype=ember.long, device=vec.device)
    source[_tril_flat_positions(n, diag, vec.device)] = ember.arange(k, device=vec.device)
    padded = ember.cat([vec, vec.new_zeros(tuple(vec.shape[:-1]) + (1,))], -1)
    return padded[..., source].reshape(tuple(vec.shape[:-1]) + (n, n))


def tril_matrix_to_vec(mat, diag=0):
    """The entries of the lower triangle (j - i <= diag) of square matrices, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * n,))
    return flat[..., _tril_flat_positions(n, diag, mat.device)]

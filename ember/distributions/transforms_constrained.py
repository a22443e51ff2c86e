"""Transforms from unconstrained reals onto constrained sets: the positive half-line
(SoftplusTransform), the simplex (SoftmaxTransform, StickBreakingTransform), lower Cholesky
factors, positive definite matrices and Cholesky factors of correlation matrices."""
import math

import ember

from . import constraints
from .transforms import StatelessTransform
from .utils import tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["SoftplusTransform", "SoftmaxTransform", "StickBreakingTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "CorrCholeskyTransform"]


def _pad_last(x, before, after, value):
    return ember.nn.functional.pad(x, [before, after], value=value)


def _require_dims(shape, n):
    if len(shape) < n:
        raise ValueError("Too few dimensions on input")


class SoftplusTransform(StatelessTransform):
    """y = log(1 + exp(x))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return ember.nn.functional.softplus(x)

    def _inverse(self, y):
        # log(exp(y) - 1) written as y + log(1 - exp(-y)), finite for large y
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -ember.nn.functional.softplus(-x)


class SoftmaxTransform(StatelessTransform):
    """Unconstrained vectors onto the simplex by softmax (not bijective: the inverse is log,
    defined up to an additive constant)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        # NOTE: shift by the max before exp so large logits do not overflow
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _require_dims(shape, 1)
        return shape

    def inverse_shape(self, shape):
        _require_dims(shape, 1)
        return shape


def _clipped_sigmoid(x):
    finfo = ember.finfo(x.dtype)
    return ember.clamp(ember.sigmoid(x), min=finfo.tiny, max=1.0 - finfo.eps)


def _stick_offset(x):
    """log of K, K-1, ..., 1 for the K entries of x's last dim: shifts x so that x = 0 maps
    to the simplex's centre."""
    k = x.shape[-1]
    return (k + 1 - x.new_ones(k).cumsum(-1)).log()


class StickBreakingTransform(StatelessTransform):
    """R^K onto the (K+1)-simplex: each coordinate breaks off a sigmoid share of what is left
    of the stick. Bijective, unlike SoftmaxTransform."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x):
        z = _clipped_sigmoid(x - _stick_offset(x))
        z_cumprod = (1 - z).cumprod(-1)
        return _pad_last(z, 0, 1, 1.0) * _pad_last(z_cumprod, 1, 0, 1.0)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        k = y_crop.shape[-1]
        offset = (y.shape[-1] - y.new_ones(k).cumsum(-1)).log()
        remaining = (1 - y_crop.cumsum(-1)).clamp(min=ember.finfo(y.dtype).tiny)
        return y_crop.log() - remaining.log() + offset

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_offset(x)
        return (-x + ember.nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _require_dims(shape, 1)
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _require_dims(shape, 1)
        return tuple(shape[:-1]) + (shape[-1] - 1,)


def _with_diagonal(m, diagonal):
    """The strictly lower part of m plus `diagonal` on the diagonal."""
    return m.tril(-1) + diagonal.diag_embed()


class LowerCholeskyTransform(StatelessTransform):
    """Square matrices onto lower triangular ones with a positive diagonal (exp of the
    diagonal; the upper triangle is dropped, so not bijective)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return _with_diagonal(x, x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return _with_diagonal(y, y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(StatelessTransform):
    """Square matrices onto positive definite ones: L L^T of their LowerCholeskyTransform."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(ember.linalg.cholesky(y))


class CorrCholeskyTransform(StatelessTransform):
    """Vectors of D(D-1)/2 reals onto Cholesky factors of D x D correlation matrices (lower
    triangular, unit-norm rows, positive diagonal): tanh gives partial correlations in (-1, 1),
    then each row is a stick broken in squared norm."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = ember.finfo(x.dtype).eps
        x = ember.tanh(x).clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        remaining = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + ember.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * _pad_last(remaining[..., :-1], 1, 0, 1.0)

    def _inverse(self, y):
        remaining = 1 - ember.cumsum(y * y, dim=-1)
        remaining_before = _pad_last(remaining[..., :-1], 1, 0, 1.0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(remaining_before,
                                                               diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2      # atanh(t)

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        remaining = 1 - (y * y).cumsum(dim=-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(remaining, diag=-2).log().sum(-1)
        # log(1 - tanh(x)^2) in a form that stays finite for large |x|
        tanh_logdet = -2 * (x + ember.nn.functional.softplus(-2 * x)
                            - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        _require_dims(shape, 1)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        _require_dims(shape, 2)
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)

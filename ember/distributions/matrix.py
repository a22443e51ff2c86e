"""Distributions over matrices: Wishart (positive definite matrices) and LKJCholesky (Cholesky
factors of correlation matrices).

Both draw through PyTorch's gamma sampler (chi-squared for Wishart's Bartlett decomposition,
Beta for LKJ's onion method) and normal_, in PyTorch's order, so seeded samples are PyTorch's
up to the rounding of the matrix products.
"""
import math
import warnings
from numbers import Number

import ember

from .._size import Size as _Size
from . import constraints
from .continuous import Beta, Chi2
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .multivariate_normal import _scale_tril_of
from .utils import broadcast_all, lazy_property, standard_normal, vec_to_tril_matrix

__all__ = ["Wishart", "LKJCholesky"]


def _mvdigamma(x, p):
    """The multivariate digamma: sum over i < p of digamma(x - i/2)."""
    offsets = ember.arange(p, dtype=x.dtype, device=x.device) / 2
    return ember.digamma(x.unsqueeze(-1) - offsets).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=ember.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Distribution of S = sum of df outer products x x^T, x ~ N(0, covariance_matrix), given by
    its covariance, precision or scale_tril (exactly one), with real df > p - 1."""

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [(n, m) for n, m in (("scale_tril", scale_tril),
                                     ("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix)) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        name, param = given[0]
        if param.dim() < 2:
            # NOTE: PyTorch names scale_tril whichever matrix was given
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = _Size(param.shape[:-2])
            self.df = ember.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = _Size(ember.broadcast_shapes(tuple(param.shape[:-2]),
                                                       tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = _Size(param.shape[-2:])
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        # the lower bound on df depends on the matrix size: a per-instance table
        self.arg_constraints = dict(type(self).arg_constraints)
        self.arg_constraints["df"] = constraints.greater_than(p - 1)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._unbroadcasted_scale_tril = _scale_tril_of(scale_tril, covariance_matrix,
                                                        precision_matrix)
        self._dist_chi2 = self._chi2_of_bartlett(self.df)

    def _chi2_of_bartlett(self, df):
        # Bartlett: the i-th diagonal entry of the factor is sqrt(chi2(df - i))
        p = self._event_shape[-1]
        offsets = ember.arange(p, dtype=df.dtype, device=df.device)
        return Chi2(df=df.unsqueeze(-1) - offsets.expand(tuple(self._batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = _Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new.arg_constraints = self.arg_constraints
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2_of_bartlett(new.df)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return ember.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._matrix_shape())

    def _df_matrix(self, df):
        return df.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ember.where(factor <= 0, ember.full_like(factor, math.nan), factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diag_V.unsqueeze(-1)
                                           * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=_Size()):
        p = self._event_shape[-1]
        diagonal = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        below = standard_normal(tuple(diagonal.shape[:-1]) + (p * (p - 1) // 2,),
                                diagonal.dtype, diagonal.device)
        noise = diagonal.diag_embed() + vec_to_tril_matrix(below, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def rsample(self, sample_shape=_Size(), max_try_correction=None):
        """Bartlett decomposition, then PyTorch's correction round: the samples it flags are
        drawn again (`max_try_correction` rounds at most, default 10), with the warning
        "Singular sample detected.".

        NOTE: PyTorch 2.13 flags the samples that pass its positive-definiteness check (its
        first test lacks a negation), so every call warns and redraws once; ember does the
        same, so that seeded draws and the stream after them stay PyTorch's. Every sample
        is still an exact Wishart draw (the redraw is independent of the draw it replaces).
        """
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = _Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        flagged = self._any_in_batch(self.support.check(sample))
        if bool(flagged.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            sample = sample.clone()
            for _ in range(max_try_correction):
                fresh = self._bartlett_sampling(_Size(flagged[flagged].shape))
                sample[flagged] = fresh
                still_singular = self._any_in_batch(~self.support.check(fresh))
                flagged = flagged.clone()
                flagged[flagged.clone()] = still_singular
                if not bool(flagged.any()):
                    break
        return sample

    def _any_in_batch(self, flags):
        """One flag per sample: any matrix of its batch is flagged."""
        if self._batch_shape:
            flags = flags.amax(self._batch_dims)
        return flags

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        log_diag = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = ember.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * (p * math.log(2) / 2 + log_diag) - ember.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * ember.linalg.slogdet(value).logabsdet - trace / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -0.5 * self.precision_matrix, 0.5 * (self.df - p - 1)

    def _log_normalizer(self, x, y):
        """A(eta1, eta2) = -(eta2 + (p+1)/2) log det(-eta1) + log Gamma_p(eta2 + (p+1)/2),
        with eta1 = -precision/2 and eta2 = (df - p - 1)/2."""
        p = self._event_shape[-1]
        half_df = y + 0.5 * (p + 1)
        return -half_df * ember.linalg.slogdet(-x).logabsdet + ember.mvlgamma(half_df, p=p)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        log_diag = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * math.log(2) / 2 + log_diag) + ember.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)


class LKJCholesky(Distribution):
    """Cholesky factors L of correlation matrices with density proportional to
    det(L L^T)^(concentration - 1) (Lewandowski, Kurowicka and Joe, 2009), drawn by the onion
    method: row i is a uniform direction scaled by the square root of a Beta draw."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = _Size((dim, dim))
        self._beta = self._onion_beta(self.concentration)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def _onion_beta(self, concentration):
        marginal_conc = concentration + 0.5 * (self.dim - 2)
        offset = ember.arange(self.dim - 1, dtype=concentration.dtype,
                              device=concentration.device)
        offset = ember.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        return Beta(beta_conc1, beta_conc0)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = _Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=_Size()):
        with ember.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = ember.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                                   device=y.device).tril(-1)
            norm = u_normal.norm(dim=-1, keepdim=True)
            # row 0 is all zeros (0 / 0): its direction is defined as zero
            u_hypersphere = ember.where(norm > 0, u_normal / ember.where(norm > 0, norm,
                                                                         ember.ones_like(norm)),
                                        ember.zeros_like(u_normal))
            w = ember.sqrt(y) * u_hypersphere
            tiny = ember.finfo(w.dtype).tiny
            diag_elems = ember.clamp(1 - ember.sum(w ** 2, dim=-1), min=tiny).sqrt()
            return w + ember.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = ember.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = ember.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = ember.lgamma(alpha) * dm1
        numerator = ember.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)

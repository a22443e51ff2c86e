"""Transforms that arrange other transforms or reshape values: CatTransform and StackTransform
(one transform per slice of a dim), IndependentTransform (more event dims), ReshapeTransform,
and CumulativeDistributionTransform (a distribution's CDF as a map onto [0, 1])."""
import ember

from . import constraints
from .transforms import Transform
from .utils import _sum_rightmost

__all__ = ["CatTransform", "StackTransform", "IndependentTransform", "ReshapeTransform",
           "CumulativeDistributionTransform"]


def _check_transforms(tseq):
    if not all(isinstance(t, Transform) for t in tseq):
        raise AssertionError("All elements of tseq must be Transform instances")


def _check_dim(value, dim):
    if not -value.dim() <= dim < value.dim():
        raise AssertionError(f"dim {dim} out of range for tensor with {value.dim()} "
                             "dimensions")


class CatTransform(Transform):
    """transforms[i] applied to the i-th run of `lengths[i]` entries along `dim`, the results
    concatenated (as torch.cat)."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        _check_transforms(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check_input(self, x, name="x"):
        _check_dim(x, self.dim)
        if x.size(self.dim) != self.length:
            raise AssertionError(f"{name}.size({self.dim}) = {x.size(self.dim)} must equal "
                                 f"length {self.length}")

    def _slices(self, x):
        start = 0
        for length in self.lengths:
            yield x.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        self._check_input(x)
        return ember.cat([t(s) for t, s in zip(self.transforms, self._slices(x))],
                         dim=self.dim)

    def _inverse(self, y):
        self._check_input(y, "y")
        return ember.cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y))],
                         dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check_input(x)
        self._check_input(y, "y")
        terms = []
        for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        # `dim` counted from the right, then without the summed event dims
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:
            return ember.cat(terms, dim=dim)
        return sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """transforms[i] applied to x.select(dim, i), the results stacked along `dim`."""

    def __init__(self, tseq, dim=0, cache_size=0):
        _check_transforms(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _check_input(self, x, name="x"):
        _check_dim(x, self.dim)
        if x.size(self.dim) != len(self.transforms):
            raise AssertionError(f"{name}.size({self.dim}) = {x.size(self.dim)} must equal "
                                 f"len(transforms) {len(self.transforms)}")

    def _call(self, x):
        self._check_input(x)
        return ember.stack([t(s) for s, t in zip(self._slice(x), self.transforms)],
                           dim=self.dim)

    def _inverse(self, y):
        self._check_input(y, "y")
        return ember.stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)],
                           dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check_input(x)
        self._check_input(y, "y")
        return ember.stack([t.log_abs_det_jacobian(xs, ys) for xs, ys, t
                            in zip(self._slice(x), self._slice(y), self.transforms)],
                           dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class IndependentTransform(Transform):
    """`base_transform` with its `reinterpreted_batch_ndims` rightmost batch dims counted as
    event dims: the log-Jacobian is summed over them."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """The rightmost dims of shape `in_shape` reshaped to `out_shape` (volume preserving)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = ember.Size(in_shape)
        self.out_shape = ember.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    @staticmethod
    def _replace_tail(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return tuple(shape[:cut]) + tuple(new)

    def forward_shape(self, shape):
        return self._replace_tail(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._replace_tail(shape, self.out_shape, self.in_shape)


class CumulativeDistributionTransform(Transform):
    """x -> distribution.cdf(x), onto [0, 1]; its log-Jacobian is the log density."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)

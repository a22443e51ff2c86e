"""What location families share: the constructor and expand of a `loc`-`scale` family
(Normal, Laplace, Cauchy), the mean and mode of one centred on `loc`."""
from numbers import Number

from .._size import Size as _Size
from . import constraints
from .utils import broadcast_all


def batch_shape_of(params, broadcast):
    """batch_shape of a distribution with `params` as given, `broadcast` one of them after
    broadcast_all: () when every parameter was a Python number, else the broadcast shape."""
    if all(isinstance(p, Number) for p in params):
        return _Size()
    return broadcast.size()


class LocScale:
    """A family of `loc` and `scale` broadcast together (a base class before Distribution)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(batch_shape_of((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        # (the family itself, not a user's subclass of it, as each family's own expand names)
        family = next(c for c in type(self).__mro__ if LocScale in c.__bases__)
        return self._expand_params(family, batch_shape, _instance, ("loc", "scale"))


class LocCentered:
    """A family symmetric and unimodal about `loc`: its mean and mode are `loc`."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

"""biject_to and transform_to: from a constraint to a transform that maps unconstrained reals
onto it (for optimising constrained parameters in unconstrained space).

`biject_to(c)` gives a bijection (so log_abs_det_jacobian is exact); `transform_to(c)` may give
a cheaper map that is not one-to-one (softmax onto the simplex). Factories are registered per
constraint class, so `biject_to(constraints.interval(0, 2))` uses the bounds of that instance.
"""
import numbers

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from constraint classes to factories `factory(constraint) -> Transform`."""

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Register `factory` for the class of `constraint` (usable as a decorator)."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint,
                                                              constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} "
                                      "constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _register_both(constraint, factory):
    biject_to.register(constraint, factory)
    transform_to.register(constraint, factory)


_register_both(constraints.real, lambda c: transforms.identity_transform)


def _independent(registry):
    def factory(constraint):
        base = registry(constraint.base_constraint)
        return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)
    return factory


biject_to.register(constraints.independent, _independent(biject_to))
transform_to.register(constraints.independent, _independent(transform_to))


# NOTE: positive is an instance of the same class as greater_than (and nonnegative of
# greater_than_eq), so one factory serves both; it shifts by the bound held by the instance.
def _greater_than(constraint):
    return transforms.ComposeTransform([
        transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)])


def _less_than(constraint):
    return transforms.ComposeTransform([
        transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)])


def _interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if (isinstance(lower, numbers.Number) and lower == 0
            and isinstance(upper, numbers.Number) and upper == 1):
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([
        transforms.SigmoidTransform(), transforms.AffineTransform(lower, upper - lower)])


for _constraint, _factory in [(constraints.greater_than, _greater_than),
                              (constraints.greater_than_eq, _greater_than),
                              (constraints.less_than, _less_than),
                              (constraints.interval, _interval),
                              (constraints.half_open_interval, _interval),
                              (constraints.corr_cholesky,
                               lambda c: transforms.CorrCholeskyTransform())]:
    _register_both(_constraint, _factory)

biject_to.register(constraints.simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: transforms.SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda c: transforms.LowerCholeskyTransform())
transform_to.register(constraints.positive_definite,
                      lambda c: transforms.PositiveDefiniteTransform())
transform_to.register(constraints.positive_semidefinite,
                      lambda c: transforms.PositiveDefiniteTransform())


def _cat(registry):
    def factory(constraint):
        return transforms.CatTransform([registry(c) for c in constraint.cseq], constraint.dim,
                                       constraint.lengths)
    return factory


def _stack(registry):
    def factory(constraint):
        return transforms.StackTransform([registry(c) for c in constraint.cseq],
                                         constraint.dim)
    return factory


for _registry in (biject_to, transform_to):
    _registry.register(constraints.cat, _cat(_registry))
    _registry.register(constraints.stack, _stack(_registry))

"""ember.distributions (torch.distributions): parameterised families with sample/rsample,
log_prob, entropy, moments, cdf/icdf, batch/event shapes, expand, argument validation, a few
transforms and closed-form KL divergences.

Seeded samples equal PyTorch's where its sampler is a transform of standard draws (Normal,
Uniform, Exponential, Laplace, Gumbel, LogNormal, Bernoulli, Geometric, Categorical,
OneHotCategorical, Multinomial, MultivariateNormal, RelaxedBernoulli); Gamma, Beta, Dirichlet,
StudentT, Chi2, Poisson and Binomial are exact in distribution but draw different numbers
(see _samplers.py).
"""
from . import constraints, transforms  # noqa: F401
from .continuous import (Beta, Chi2, Dirichlet, Exponential, Gamma, Laplace,  # noqa: F401
                         Normal, StudentT, Uniform)
from .discrete import (Bernoulli, Binomial, Categorical, Geometric,  # noqa: F401
                       Multinomial, OneHotCategorical, Poisson)
from .distribution import Distribution  # noqa: F401
from .exp_family import ExponentialFamily  # noqa: F401
from .independent import Independent  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .transformed import (Gumbel, LogNormal, LogitRelaxedBernoulli,  # noqa: F401
                          RelaxedBernoulli, TransformedDistribution)
from .transforms import (AbsTransform, AffineTransform, ComposeTransform,  # noqa: F401
                         ExpTransform, PowerTransform, SigmoidTransform, TanhTransform,
                         Transform, identity_transform)

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Chi2", "Dirichlet", "Distribution",
           "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "Independent",
           "Laplace", "LogNormal", "LogitRelaxedBernoulli", "Multinomial",
           "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson", "RelaxedBernoulli",
           "StudentT", "TransformedDistribution", "Uniform", "constraints", "kl_divergence",
           "register_kl", "transforms", "AbsTransform", "AffineTransform", "ComposeTransform",
           "ExpTransform", "PowerTransform", "SigmoidTransform", "TanhTransform", "Transform",
           "identity_transform"]

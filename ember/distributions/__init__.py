"""ember.distributions (torch.distributions): parameterised families with sample/rsample,
log_prob, entropy, moments, cdf/icdf, batch/event shapes, expand, argument validation,
transforms, the constraint registries (biject_to, transform_to) and closed-form KL divergences.

Seeded samples equal PyTorch's (to the last bit of a transcendental function or a matrix
product) for every family: transforms of standard draws draw as PyTorch does, and the families
PyTorch samples with its scalar C++ gamma, Dirichlet, Poisson and binomial samplers (Gamma,
Beta, Dirichlet, StudentT, Chi2, InverseGamma, FisherSnedecor, Poisson, Binomial,
NegativeBinomial, Wishart, LKJCholesky) replay those samplers (_scalar_samplers.py).
"""
from . import constraints, transforms  # noqa: F401
from .bounded import ContinuousBernoulli, Kumaraswamy, VonMises  # noqa: F401
from .constraint_registry import biject_to, transform_to  # noqa: F401
from .continuous import (Beta, Chi2, Dirichlet, Exponential, Gamma, Laplace,  # noqa: F401
                         Normal, StudentT, Uniform)
from .discrete import (Bernoulli, Binomial, Categorical, Geometric,  # noqa: F401
                       OneHotCategorical, Poisson)
from .distribution import Distribution  # noqa: F401
from .exp_family import ExponentialFamily  # noqa: F401
from .heavy_tailed import (Cauchy, FisherSnedecor, GeneralizedPareto,  # noqa: F401
                           HalfCauchy, Pareto)
from .independent import Independent  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
from .lowrank_multivariate_normal import LowRankMultivariateNormal  # noqa: F401
from .matrix import LKJCholesky, Wishart  # noqa: F401
from .mixture import MixtureSameFamily  # noqa: F401
from .multinomial import Multinomial  # noqa: F401
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .negative_binomial import NegativeBinomial  # noqa: F401
from .positive import HalfNormal, InverseGamma, Weibull  # noqa: F401
from .simplex_families import (LogisticNormal, OneHotCategoricalStraightThrough,  # noqa: F401
                               RelaxedOneHotCategorical)
from .transformed import (Gumbel, LogNormal, LogitRelaxedBernoulli,  # noqa: F401
                          RelaxedBernoulli, TransformedDistribution)
from .transforms import (AbsTransform, AffineTransform, CatTransform,  # noqa: F401
                         ComposeTransform, CorrCholeskyTransform,
                         CumulativeDistributionTransform, ExpTransform, IndependentTransform,
                         LowerCholeskyTransform, PositiveDefiniteTransform, PowerTransform,
                         ReshapeTransform, SigmoidTransform, SoftmaxTransform,
                         SoftplusTransform, StackTransform, StickBreakingTransform,
                         TanhTransform, Transform, identity_transform)
# registering the KL pairs of the newer families and between the older ones
from . import kl_cross_family, kl_families  # noqa: F401,E402

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "ContinuousBernoulli", "Dirichlet", "Distribution", "Exponential",
           "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric",
           "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
           "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli",
           "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
           "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform",
           "VonMises", "Weibull", "Wishart", "biject_to", "constraints", "kl_divergence",
           "register_kl", "transform_to", "transforms", "AbsTransform", "AffineTransform",
           "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform"]

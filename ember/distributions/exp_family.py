"""ExponentialFamily: densities p(x) = h(x) exp(<eta, T(x)> - A(eta)).

A family that gives its natural parameters eta (`_natural_params`), its log normaliser A
(`_log_normalizer`) and E[log h(X)] (`_mean_carrier_measure`) gets an entropy and a
same-family KL divergence from the Bregman divergence of A, whose gradient is taken by
autograd. Every ember family also has its entropy in closed form; this is the fallback for
user-defined subclasses and for pairs without a closed form (Wishart || Wishart).
"""
import ember

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def _log_normalizer_and_grads(self):
        """A(eta) at detached natural parameters, and dA/deta (= E[T(X)]) with its graph."""
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*nparams)
        grads = ember.autograd.grad(log_normalizer.sum(), nparams, create_graph=True)
        return nparams, log_normalizer, grads

    def entropy(self):
        """H = A(eta) - <eta, dA/deta> - E[log h(X)]."""
        result = -self._mean_carrier_measure
        nparams, log_normalizer, grads = self._log_normalizer_and_grads()
        result = result + log_normalizer
        for eta, g in zip(nparams, grads):
            result = result - (eta * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result

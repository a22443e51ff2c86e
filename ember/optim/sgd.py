"""SGD with momentum, dampening, Nesterov, weight decay and maximize."""
from .._tensor import _wrap
from ..autograd.graph import increment_version
from ..backends.optimizers import sgd_step
from ..sparse.coo import dense_array
from .optimizer import Optimizer, check_lr, grads_of, required

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    _sparse_grad_error = None   # (sparse gradients are taken: see sgd)

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if lr is not required:
            check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def step(self, closure=None):
        def update():
            for group in self.param_groups:
                params, grads = grads_of(group)
                momentum = group["momentum"]
                buffers = [self.state[p].get("momentum_buffer") for p in params] \
                    if momentum != 0 else None
                sgd(params, grads, buffers, weight_decay=group["weight_decay"],
                    momentum=momentum, lr=float(group["lr"]), dampening=group["dampening"],
                    nesterov=group["nesterov"], maximize=group["maximize"])
                if momentum != 0:
                    for p, buf in zip(params, buffers):
                        self.state[p]["momentum_buffer"] = buf
        return self._run_step(closure, update)


def sgd(params, grads, momentum_buffers, *, weight_decay, momentum, lr, dampening, nesterov,
        maximize):
    """The SGD kernel: updates each parameter's array in place (few array calls each).

    `momentum_buffers` is a list aligned with params, filled in for new buffers."""
    for i, (p, g_t) in enumerate(zip(params, grads)):
        g = g_t._data
        if g_t.is_sparse:
            if momentum == 0:   # (only the rows the gradient touches change)
                _sparse_step(p, g_t, lr, weight_decay, maximize)
                continue
            g = _sparse_as_dense(g_t, weight_decay)
        buf = momentum_buffers[i] if momentum != 0 else None
        new = sgd_step(p._data, g, None if buf is None else buf._data, momentum=momentum,
                       dampening=dampening, lr=lr, weight_decay=weight_decay,
                       nesterov=nesterov, maximize=maximize)
        if buf is None and new is not None:
            momentum_buffers[i] = _wrap(new, p.dtype, p._device)
        increment_version(p if buf is None else (p, buf))


def _sparse_step(p, grad, lr, weight_decay, maximize):
    """p -= lr * grad at the gradient's entries, one after another (PyTorch's dense += sparse:
    repeated coordinates are added in turn), through the public index_put_."""
    if weight_decay != 0:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")
    step = grad._values() * (lr if maximize else -lr)
    p.index_put_(tuple(grad._indices()), step.to(p.dtype), accumulate=True)


def _sparse_as_dense(grad, weight_decay):
    """A sparse gradient's dense array. NOTE: PyTorch keeps a sparse momentum buffer; ember's
    is dense, which holds the same numbers (the buffer is a running sum of gradients)."""
    if weight_decay != 0:
        # (PyTorch adds the dense weight to the sparse gradient, an addition it refuses)
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")
    return dense_array(grad)

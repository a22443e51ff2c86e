"""SGD with momentum, dampening, Nesterov, weight decay and maximize."""
from .._tensor import _wrap
from ..autograd.graph import increment_version
from ..backends.optimizers import sgd_steps
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
    """The SGD kernel, in place: all the group's parameters in one backend call
    (backends/optimizers.sgd_steps); a group holding a sparse gradient goes parameter by
    parameter, in order. `momentum_buffers` is a list aligned with params (None without
    momentum), filled in for new buffers."""
    options = dict(weight_decay=weight_decay, momentum=momentum, lr=lr, dampening=dampening,
                   nesterov=nesterov, maximize=maximize)
    if not any(g_t.is_sparse for g_t in grads):
        _dense_sgd(params, [g_t._data for g_t in grads], momentum_buffers, **options)
        return
    for i, (p, g_t) in enumerate(zip(params, grads)):
        if g_t.is_sparse and momentum == 0:   # (only the rows the gradient touches change)
            _sparse_step(p, g_t, lr, weight_decay, maximize)
            continue
        g = _sparse_as_dense(g_t, weight_decay) if g_t.is_sparse else g_t._data
        buffers = None if momentum == 0 else momentum_buffers[i:i + 1]
        _dense_sgd([p], [g], buffers, **options)
        if buffers is not None:
            momentum_buffers[i] = buffers[0]


def _dense_sgd(params, grads, buffers, *, momentum, **options):
    """sgd_steps on the parameters' arrays and the dense gradients `grads`; new momentum
    buffers are wrapped into `buffers` (None without momentum)."""
    old = [None] * len(params) if momentum == 0 else list(buffers)
    arrays = sgd_steps([p._data for p in params], grads,
                       [None if buf is None else buf._data for buf in old],
                       momentum=momentum, **options)
    if momentum != 0:
        for i, (p, buf, array) in enumerate(zip(params, old, arrays)):
            if buf is None:
                buffers[i] = _wrap(array, p.dtype, p._device)
    # (a new buffer is born at version 0: only the parameters and the buffers they had)
    increment_version(params + [buf for buf in old if buf is not None])


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

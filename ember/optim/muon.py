"""Muon (Keller Jordan, 2024) as PyTorch 2.13 defines it, for 2-D parameters: SGD momentum
whose update is orthogonalised by a few Newton-Schulz iterations (run in bfloat16, as
PyTorch's are), scaled for the matrix's shape, with decoupled weight decay."""
import math

from .. import _dtype as dt
from .._tensor import Tensor, _wrap
from ..backends.optimizer_families import newton_schulz
from .optimizer import Optimizer, grads_of

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5
_ADJUSTMENTS = ("original", "match_rms_adamw")


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUSTMENTS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                        nesterov=nesterov, ns_coefficients=ns_coefficients, eps=eps,
                        ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _buffer(self, p, g):
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        if getattr(g, "is_sparse", False):
            raise RuntimeError("Muon does not support sparse gradients")
        state = self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = g.new_zeros(g.shape)
        return state["momentum_buffer"]

    def step(self, closure=None):
        def update():
            for group in self.param_groups:
                params, grads = grads_of(group)
                buffers = [self._buffer(p, g) for p, g in zip(params, grads)]
                muon(params, grads, buffers, lr=float(group["lr"]),
                     weight_decay=group["weight_decay"], momentum=group["momentum"],
                     nesterov=group["nesterov"], ns_coefficients=group["ns_coefficients"],
                     eps=group["eps"], ns_steps=group["ns_steps"],
                     adjust_lr_fn=group["adjust_lr_fn"])
        return self._run_step(closure, update)


def orthogonalize(g, ns_coefficients, ns_steps, eps):
    """k Newton-Schulz iterations on the 2-D tensor g, in bfloat16 (the arithmetic is
    backends/optimizer_families.newton_schulz): an approximate U V^T of g = U S V^T."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if g.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = (float(v) for v in ns_coefficients)
    return _wrap(newton_schulz(g._data, a, b, c, ns_steps, eps), dt.bfloat16, g._device)


def _adjusted_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn in (None, "original"):
        return lr * math.sqrt(max(1, rows / cols))
    return lr * 0.2 * math.sqrt(max(rows, cols))   # "match_rms_adamw"


def muon(params, grads, buffers, *, lr, weight_decay, momentum, nesterov, ns_coefficients,
         eps, ns_steps, adjust_lr_fn):
    """PyTorch's single-tensor Muon, in place (under no_grad)."""
    for p, g, buf in zip(params, grads, buffers):
        if g.dim() != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf.lerp_(g, 1 - momentum)
        direction = g.lerp(buf, momentum) if nesterov else buf
        direction = orthogonalize(direction, ns_coefficients, ns_steps, eps)
        p.mul_(1 - lr * weight_decay)
        p.add_(direction, alpha=-_adjusted_lr(lr, adjust_lr_fn, p.shape))

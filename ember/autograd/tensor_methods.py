"""Tensor's autograd entry points: retain_grad, register_hook,
register_post_accumulate_grad_hook and backward.

They reach the graph's nodes and the engine, layers above the tensor's own module, so they
are defined here and attached to Tensor when ember.autograd loads (as the op registry
attaches the ops' methods).
"""
import weakref

from .._tensor import Tensor, _wrap
from . import backward as _run_backward   # (ember.autograd loads this module after it)
from .hooks import HookDict, add_hook
from .node import get_accumulator


def retain_grad(self):
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None or self._retains_grad:
        return
    ref = weakref.ref(self)

    def store(grad):
        t = ref()
        if t is not None:
            # NOTE: a copy, as PyTorch's: the engine passes this buffer on upstream.
            if t._grad is not None:
                t._grad = t._grad + grad
            elif grad._requires_grad:  # create_graph: the copy stays differentiable
                from ..ops.views import clone   # (cycle: ember.autograd loads before the ops)
                t._grad = clone(grad)
            else:
                t._grad = _wrap(grad._data.copy(), grad.dtype, grad._device)

    # retain_grad's store runs after the tensor's own hooks, whatever the order of
    # registration (PyTorch's rule), so it lives apart from them.
    node = self.grad_fn
    if node.retains is None:
        node.retains = {}
    node.retains[self._output_nr] = store
    self._retains_grad = True


def register_hook(self, hook):
    """hook(grad) -> Tensor or None, called when this tensor's gradient is computed."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                           "gradient")
    node = self.grad_fn if self.grad_fn is not None else get_accumulator(self)
    return node._add_output_hook(self._output_nr, hook)


def register_post_accumulate_grad_hook(self, hook):
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    acc = get_accumulator(self)
    if acc.post_hooks is None:
        acc.post_hooks = HookDict()
    return add_hook(acc.post_hooks, hook)


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    _run_backward(self, gradient, retain_graph, create_graph, inputs=inputs)


for _method in (retain_grad, register_hook, register_post_accumulate_grad_hook, backward):
    setattr(Tensor, _method.__name__, _method)

"""torch.autograd.graph's helpers over ember's graph: gradient edges, version bumps, hooks
over several tensors, and mutation of saved tensors (re-exported by autograd/graph.py)."""
import collections
import contextlib

from .. import _inplace  # (cycle: _inplace imports autograd) attributes read at call time
from .. import _tensor as _T
from . import graph as _graph
from .saved_hooks import saved_tensors_hooks

GradientEdge = collections.namedtuple("GradientEdge", ("node", "output_nr", "ownership_token"),
                                      defaults=(None,))
GradientEdge.__module__ = "ember.autograd.graph"
GradientEdge.__doc__ = "The edge through which a tensor's gradient flows: (node, output_nr)."


def get_gradient_edge(tensor):
    """The GradientEdge of `tensor`: its grad_fn (a leaf's AccumulateGrad) and output number."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that "
                           "does not require gradients")
    node, output_nr = _graph.edge_of(tensor)
    return GradientEdge(node, output_nr)


def increment_version(tensor):
    """Bump the version counter of `tensor` (or of each tensor of an iterable), as an in-place
    change done outside ember's ops would have."""
    tensors = (tensor,) if isinstance(tensor, _T.Tensor) else tensor
    for t in tensors:
        _inplace.bump_version(t)


class _MultiHandle:
    """The handle of register_multi_grad_hook: removes the hook of every tensor."""

    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, state):
        self.handles = state

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_MODES = ("all", "any")


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode='all': fn(grads) once per backward, with each tensor's gradient (None for the
    ones that got none); mode='any': fn(grad) once per backward, with the first gradient.

    NOTE: in 'all' mode ember calls fn when the backward pass ends (the engine does not plan
    ahead which tensors it will reach); PyTorch calls it as soon as the last of them arrives.
    The gradients passed are the same."""
    if mode not in _MODES:
        raise ValueError(f"Expects mode to be one of {_MODES} but got {mode}")
    tensors = tuple(tensors)
    count = len(tensors)
    pending = {}   # this backward's gradients by position; empty between backward calls

    def finish():
        grads = [pending.get(i) for i in range(count)]
        pending.clear()
        if mode == "all":
            fn(grads)

    def make_hook(i):
        def hook(grad):
            if not pending:
                _graph.final_callbacks.append(finish)
                if mode == "any":
                    fn(grad)
            pending[i] = grad
        return hook

    return _MultiHandle(t.register_hook(make_hook(i))
                        for i, t in enumerate(tensors) if t.requires_grad)


class _AllowMutationOnSavedContext:
    """What allow_mutation_on_saved_tensors yields: the clones it keeps for backward."""

    def __init__(self):
        self.cloned = []

    def clear(self):
        self.cloned.clear()


_mutation_context = None


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Inside, a tensor saved for backward may be changed in place afterwards: backward uses
    its value at the time it was saved.

    NOTE: PyTorch clones a saved tensor only when it is about to be mutated (a dispatch mode
    watches in-place ops); ember clones each saved tensor when it is saved. The gradients
    are the same; the memory cost is paid up front."""
    global _mutation_context
    if _mutation_context is not None:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()

    def pack(tensor):
        copy = _T._wrap(tensor._data.copy(), tensor.dtype, tensor._device)
        ctx.cloned.append(copy)
        return copy

    _mutation_context = ctx
    try:
        with saved_tensors_hooks(pack, lambda tensor: tensor):
            yield ctx
    finally:
        _mutation_context = None
        ctx.clear()

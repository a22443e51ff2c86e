"""The in-place protocol every `op_` method, `copy_` and `__setitem__` share: compute out of
place from `self` (or a snapshot of its old value when autograd needs both), check the
result's castability and shape, write it into `self`'s storage, bump its version and rewire
autograd (CopySlices when `self` is a view). Writing `out=` is the tensor layer's
(_inplace.write_out)."""
from .._inplace import bump_version, check_output
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import state
from ..autograd.node import forward_name
from ..debug.checks import check_inplace_cast
from ..debug.state import state as _guard
from ..func import _state as _func
from .registry import current_grad_fn
from .view_inplace import rebase_view


def make_inplace(fn, name):
    """`x.op_(...)`: compute `op(x, ...)`, then write it into x's storage."""
    def inplace(self, *args, **kwargs):
        return apply_inplace(self, fn, args, kwargs)
    inplace.__name__ = name
    inplace.__qualname__ = "Tensor." + name
    return inplace


def apply_inplace(self, fn, args, kwargs):
    """Compute `fn(self, *args, **kwargs)` out of place, then write it into `self`."""
    source = snapshot_for_inplace(self, args, kwargs)
    try:
        result = fn(source, *args, **kwargs)
    except NotImplementedError as missing:
        loop = getattr(missing, "loop", None)
        if loop is not None:   # (a pointwise op without a kernel for the dtype: PyTorch
            check_output(self, *loop)   # checks the output's shape and dtype first)
        raise
    return commit_inplace(self, result)


def snapshot_for_inplace(self, args, kwargs):
    """The tensor an in-place op computes from: `self`, or a copy of its old value that
    stands in the graph when autograd must see both the old and the new value."""
    if not state.enabled:
        return self
    if self._requires_grad:
        if self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        base = self._base
        if base is not None:
            if base._requires_grad and base.grad_fn is None:
                raise RuntimeError("a view of a leaf Variable that requires grad is being "
                                   "used in an in-place operation.")
            _check_multi_view(self)
    elif not (_any_requires_grad(args) or _any_requires_grad(kwargs.values())):
        return self
    old = _wrap(self._data.copy(), self.dtype, self._device)
    old._requires_grad = self._requires_grad
    old.grad_fn = self.grad_fn
    if self._base is not None and old.grad_fn is not None:
        old.grad_fn = current_grad_fn(self)
    old._output_nr = self._output_nr
    return old


def _check_multi_view(view):
    fn = view.grad_fn
    if fn.op.num_outputs > 1 and getattr(fn, "view_version", None) is not None:
        name = forward_name(fn.name())
        raise RuntimeError(
            f"Output {view._output_nr} of {name} is a view and is being modified inplace. This "
            "view is the output of a function that returns multiple views. Such functions do "
            "not allow the output views to be modified inplace. You should replace the "
            "inplace operation by an out-of-place one.")


def _any_requires_grad(values):
    for v in values:
        if isinstance(v, Tensor) and v._requires_grad:
            return True
        if isinstance(v, (list, tuple)) and _any_requires_grad(v):
            return True
    return False


def commit_inplace(self, result):
    """Write `result` into `self`'s storage (checking dtype and shape), bump its version."""
    check_output(self, result._data.shape, result.dtype)
    if _func.depth and _func.commit_inplace(self, result) is not None:
        return self   # under vmap: a batched tensor's storage is its physical batch
    if result._data is not self._data:
        if _guard.enabled:
            check_inplace_cast(self, result)
        self._data[...] = result._data
    bump_version(self)
    if result._requires_grad and result.grad_fn is not None:
        if self._base is not None and (self.grad_fn is not None or
                                       not self._base._requires_grad):
            # NOTE: a view shares its root's memory: the root's graph must see the change
            # too (CopySlices), and the view then reads from the new root.
            rebase_view(self, result)
            return self
        self.grad_fn = result.grad_fn
        self._output_nr = result._output_nr
        self._requires_grad = True
    return self

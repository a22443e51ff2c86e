"""The in-place protocol every `op_` method, `copy_`, `__setitem__` and `out=` share:
compute out of place, check castability and shape, write into the target's storage, bump its
version and rewire autograd (CopySlices for views)."""
import re

from . import _dtype as dt
from ._tensor import Tensor, _wrap
from .autograd.grad_mode import state
from .backends import array_module
from .debug.checks import check_inplace_cast
from .debug.state import state as _guard
from .func import _state as _func


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
        from .ops.registry import current_grad_fn  # (cycle: ops.registry imports this module)
        old.grad_fn = current_grad_fn(self)
    old._output_nr = self._output_nr
    return old


def _check_multi_view(view):
    fn = view.grad_fn
    if fn.op.num_outputs > 1 and getattr(fn, "view_version", None) is not None:
        name = re.sub(r"Backward\d*$", "", fn.name())
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


def bump_version(t):
    """Mark `t`'s storage as written: backward refuses saved tensors whose version moved."""
    t._vc.v += 1


def check_output(self, shape, dtype):
    """PyTorch's checks of an in-place op's output `self` against the result's `shape` and
    `dtype`, in TensorIterator's order (the broadcast shape, then the cast)."""
    if shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")
    if dtype is not self.dtype and not dt.can_cast(dtype, self.dtype):
        raise RuntimeError(f"result type {dt.type_name(dtype)} can't be cast to the "
                           f"desired output type {dt.type_name(self.dtype)}")


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
            from .ops.view_inplace import rebase_view  # (cycle: the ops import this module)
            rebase_view(self, result)
            return self
        self.grad_fn = result.grad_fn
        self._output_nr = result._output_nr
        self._requires_grad = True
    return self


def write_out(result, out):
    """Honour `out=`: resize `out` if needed (as PyTorch does) and copy `result` into it."""
    if state.enabled and result._requires_grad:
        raise RuntimeError(f"{result.grad_fn.op.name}(): functions with out=... arguments "
                           "don't support automatic differentiation, but one of the arguments "
                           "requires grad.")
    if out._requires_grad and state.enabled and (out.grad_fn is None):
        raise RuntimeError("out=... arguments don't support automatic differentiation, but "
                           "one of the arguments requires grad.")
    if result.dtype is not out.dtype and not dt.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {dt.type_name(result.dtype)} can't be cast to the "
                           f"desired output type {dt.type_name(out.dtype)}")
    if out._data.shape != result._data.shape:
        out._data = array_module(out._data).empty(result._data.shape, dtype=out.dtype.np)
    out._data[...] = result._data
    bump_version(out)
    return out

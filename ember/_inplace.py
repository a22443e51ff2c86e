"""Writing into a tensor's storage, the tensor-level half of the in-place protocol: bump the
version, check an output's shape and dtype, honour `out=`. The op-level half (compute out of
place, commit, rewire autograd) is ops/inplace.py."""
from . import _dtype as dt
from .autograd.grad_mode import state
from .backends import array_module


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
